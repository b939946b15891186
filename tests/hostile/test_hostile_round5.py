"""Hostile inputs, round 5: the settings a config file or a command line can give (--compile, a key given twice,
numbers that are not finite), paths the system refuses (too long) or that a shell did not expand (~), and a run
directory read from another working directory."""

from __future__ import annotations

import functools

import torch
from hostile_helpers import FAST, table

import fpt


def test_compile_trains(tiny_bert_dir, tmp_path, monkeypatch):
    # every --compile run failed at its first step: `compiled or model` asked a compiled module for bool(), which it
    # hands to the model's __len__ (TypeError). The eager backend keeps the compiled module, not inductor's minutes.
    monkeypatch.setattr(torch, "compile", functools.partial(torch.compile, backend="eager"))
    exp = fpt.build(data=str(table(tmp_path / "d.csv")), body=tiny_bert_dir, **{**FAST, "compile": True})
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert summary["steps"] == 2 and exp._compiled is not None
