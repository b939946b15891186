"""Torch's fused kernel for the tanh-approximated GELU, in place of Hugging Face's Python formula.

GPT-2 (and T5 v1.1, GPT-Neo) use ``gelu_new``, which transformers computes as seven elementwise
tensor ops over the (B, T, 4D) feed-forward activations, each a pass over memory, and autograd keeps
their intermediates for the backward. ``nn.GELU(approximate="tanh")`` is the same formula in one
kernel (transformers' own ``gelu_pytorch_tanh``); the values agree to float rounding
(tests/bodies/test_activations.py; docs/fidelity.md). Its effect on a training step and an
evaluation forward is measured by bench/step_time.py (docs/results/performance.md).
"""

from __future__ import annotations

import sys

from torch import nn

from fpt.bodies.swap import replace_modules


def use_fused_activations(module: nn.Module) -> int:
    """Replace every Python tanh-GELU module inside ``module`` with torch's fused one; returns how many."""
    # Read from sys.modules, never imported: a module holding a NewGELUActivation has imported its class, so when
    # transformers.activations is not loaded there is nothing to replace, and a body that is not Hugging Face's
    # (the LSTMs) skips the seconds of imports it pulls in (transformers, torch.distributed.tensor, ...).
    activations = sys.modules.get("transformers.activations")
    if activations is None:
        return 0
    NewGELUActivation = activations.NewGELUActivation  # noqa: N806 (a class)

    return replace_modules(module, lambda child: nn.GELU(approximate="tanh")
                           if type(child) is NewGELUActivation else None)
