"""Round 9 of practitioners' habits: paths, the command line and notebooks."""

from __future__ import annotations

import shutil

import fpt


def test_run_expands_a_home_folder_as_fpt_load_does(xor_run, tmp_path, monkeypatch):
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    shutil.copytree(xor_run, home / "runs" / "x")
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    # was Path('~/runs/x').absolute(): cwd/~/runs/x, 'not a run directory' of the run fpt.load('~/runs/x') reads
    run = fpt.Run("~/runs/x")
    assert run.path == home / "runs" / "x" and run == fpt.Run(home / "runs" / "x")
    assert run.is_run() and run.config().task == "bit-xor"
    assert run.config_path == home / "runs" / "x" / "config.yaml"
    assert not (cwd / "~").exists()


def _figures(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if "second" not in k}  # times and throughput differ from one fit to the next


def _trained(exp) -> list:
    return [p.detach().clone() for p in exp.model.parameters() if p.requires_grad]


def test_a_notebook_cell_of_fpt_fit_run_again_trains_afresh_as_the_first_run(tiny_bert_dir):
    import torch

    from fpt import tracking

    made = dict(task="bit-xor", body=tiny_bert_dir, init="random", batch_size=4, eval_every=2, steps=4, device="cpu",
                task_options={"eval_size": 16})
    fresh = fpt.fit(fpt.build(**made), progress=False)
    exp = fpt.build(**made)
    first = fpt.fit(exp, progress=False)
    trained = _trained(exp)
    # was trained on from where the first fit left it: 8 steps in all, summary saying 4 (val accuracy 0.5 then 0.4375)
    again = fpt.fit(exp, progress=False)
    assert _figures(first) == _figures(fresh) == _figures(again)
    assert all(torch.equal(a, b) for a, b in zip(trained, _trained(exp), strict=True))

    class Interrupt(tracking.Tracker):  # Ctrl-C in the cell, after the first evaluation
        def evaluated(self, row: dict) -> None:
            raise KeyboardInterrupt

    stopped = fpt.build(**made)
    try:
        fpt.fit(stopped, progress=False, trackers=[Interrupt()])
    except KeyboardInterrupt:
        pass
    assert _figures(fpt.fit(stopped, progress=False)) == _figures(fresh)  # was from the interrupted step's parameters
