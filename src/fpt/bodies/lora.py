"""LoRA adapters (Hu et al., ICLR 2022) in a frozen body's attention projections, through Hugging Face PEFT.

A freeze policy with the group ``lora`` (``paper+lora``: the paper's groups plus adapters) gives each attention
projection the body names in ``lora_targets`` a trained low-rank update, W x + (alpha / r) B A x. B starts at zero,
so a run starts from exactly the pretrained body, and the frozen W never changes: the adapters are a few
thousand parameters beside it. Only bodies whose forward calls those projection modules declare targets (the
BERT and GPT-2 families); a body that read the weights directly would bypass the adapters silently.
"""

from __future__ import annotations

import re

import torch
from torch import nn

from fpt.errors import ConfigError, DependencyError

LORA_GROUP = "lora"
LORA_PARAM = re.compile(r"\.lora_(A|B)\.")  # PEFT's adapter parameters: ...query.lora_A.default.weight


def inject(body: nn.Module, name: str, rank: int, alpha: float, seed: int) -> None:
    """Add rank-``rank`` LoRA adapters to ``body``'s attention projections in place (seeded by ``seed``)."""
    targets = getattr(body, "lora_targets", None)
    if not targets:
        raise ConfigError(f"freeze: the group 'lora' needs a body whose attention takes adapters; body {name!r} has "
                          "none (use a BERT- or GPT-2-family body such as minilm, bert-base or gpt2, or drop lora from freeze)")
    try:
        import peft
    except ImportError:
        raise DependencyError("freeze: the group 'lora' needs Hugging Face PEFT: pip install 'fpt[lora]' "
                              "(or pip install peft)") from None
    config = peft.LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0, bias="none", target_modules=targets,
                             fan_in_fan_out=getattr(body, "lora_fan_in_fan_out", False))
    with torch.random.fork_rng(devices=[]):  # A's init is part of the run: the same seed, the same adapters
        torch.manual_seed(seed)
        peft.inject_adapter_in_model(config, body)


def is_lora_parameter(name: str) -> bool:
    return LORA_PARAM.search(name) is not None
