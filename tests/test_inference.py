"""fpt.inference.batched_outputs: outputs in order, and fpt predict's bar of the examples done (on a terminal only)."""

from __future__ import annotations

import io
import sys

import torch

from fpt.inference import batched_outputs


class _Double(torch.nn.Module):
    def forward(self, x, lengths):  # noqa: ANN001, ANN201
        return x * 2


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_shows_on_a_terminal_and_nowhere_else(monkeypatch):
    x = torch.arange(10, dtype=torch.float32)[:, None]
    for stream, shown in ((_Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        out = batched_outputs(_Double(), x, None, 4, torch.device("cpu"), "fp32", progress=True)
        assert torch.equal(out, x * 2)
        assert ("predict:" in stream.getvalue()) is shown  # tqdm draws at most every 0.1 s: the start, here
    quiet = _Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    batched_outputs(_Double(), x, None, 4, torch.device("cpu"), "fp32")  # the default: no bar (training's evaluations)
    assert quiet.getvalue() == ""
