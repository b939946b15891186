"""Torch's fused kernel for the tanh-approximated GELU, in place of Hugging Face's Python formula.

GPT-2 (and T5 v1.1, GPT-Neo) use ``gelu_new``, which transformers computes as seven elementwise
tensor ops over the (B, T, 4D) feed-forward activations, each a pass over memory, and autograd keeps
their intermediates for the backward. ``nn.GELU(approximate="tanh")`` is the same formula in one
kernel (transformers' own ``gelu_pytorch_tanh``); the values agree to float rounding
(tests/bodies/test_activations.py; docs/fidelity.md). Its effect on a training step and an
evaluation forward is measured by bench/step_time.py (docs/results/performance.md).
"""

from __future__ import annotations

from torch import nn

from fpt.bodies.swap import replace_modules


def use_fused_activations(module: nn.Module) -> int:
    """Replace every Python tanh-GELU module inside ``module`` with torch's fused one; returns how many."""
    # imported here, not with the module: fpt.bodies is imported by every task, and transformers.activations costs
    # seconds of imports that fpt data, fpt runs and the other commands that build no body never need
    from transformers.activations import NewGELUActivation

    return replace_modules(module, lambda child: nn.GELU(approximate="tanh")
                           if type(child) is NewGELUActivation else None)
