"""Replacing submodules of a built body in place: the one walk fpt's kernel swaps share."""

from __future__ import annotations

from collections.abc import Callable

from torch import nn


def replace_modules(module: nn.Module, replacement: Callable[[nn.Module], nn.Module | None]) -> int:
    """Put ``replacement(child)`` in place of every submodule of ``module`` for which it is not None;
    returns how many were replaced. Parameters and buffers of untouched modules keep their names."""
    swapped = 0
    for parent in list(module.modules()):
        for name, child in list(parent.named_children()):
            new = replacement(child)
            if new is not None:
                setattr(parent, name, new)
                swapped += 1
    return swapped
