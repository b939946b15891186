"""Replays the golden runs (tests/golden/cases.py) and finds every metric as committed.

The committed files were written before the step-11 restructuring by the code of 0ee82ed (5d30fb5's
code with these tests); a change that is meant to keep behaviour must keep this test green. One file per
processor vendor, each written by that old code on such a machine: Intel's and AMD's MKL/oneDNN kernels
round differently, and over 40 training steps that grows to 1-4% in the losses (no MKL_CBWR mode made an
AMD EPYC replay Intel's figures), so a replay is held to the figures its own kind of processor gave.
Floats are compared to a relative 1e-4 (the last bits may still differ between processors of one
vendor; a changed learning rate, data order or loss moves them by far more).
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from tests.golden.cases import NAMES, SWEEP_TRIALS, golden_file, replay_one, vendor


def _diff(a, b, path="") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: missing in replay" for k in a.keys() - b.keys()]
        out += [f"{path}.{k}: new in replay" for k in b.keys() - a.keys()]
        for k in a.keys() & b.keys():
            out += _diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} rows committed, {len(b)} replayed"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float | int) and not isinstance(b, bool):
        return [] if math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-7) else [f"{path}: {a} committed, {b} replayed"]
    return [] if a == b else [f"{path}: {a!r} committed, {b!r} replayed"]


def _derived(runs) -> list[str]:
    """Pop summary.json's ``health`` (step 12: flags derived from the curve and the figures, absent from the
    committed golden runs), ``precision`` (step 14) and the training split's evaluation (step 17) from every
    replayed run, checking each is what it must be."""
    from fpt.convergence import health

    out = []
    for name, run in runs.items():
        if "summary" not in run:
            out += _derived(run)
            continue
        recorded = run["summary"].pop("health", None)
        if recorded is None or recorded != health(run["summary"], run["metrics"], recorded["eval_examples"]):
            out.append(f"{name}: summary.health missing or not fpt.convergence.health's")
        # step 14: the precision ``auto`` resolved to; the golden runs are preset paper on a CPU, so fp32
        if run["summary"].pop("precision", None) != "fp32":
            out.append(f"{name}: summary.precision missing or not fp32")
        # step 17: the training split evaluated at the selected step (finite training sets only)
        metric = next((k for k in run["summary"] if k.startswith("train_eval_") and k != "train_eval_examples"), None)
        if metric is not None:
            value, count = run["summary"].pop(metric), run["summary"].pop("train_eval_examples", None)
            if value is None or not isinstance(count, int) or not 0 < count <= 2000:
                out.append(f"{name}: summary.{metric} or train_eval_examples not an evaluation of the training split")
    return out


def test_golden_files_cover_the_vendors_seen():
    """Both vendors this project's machines have had keep their figures, written by the same old code."""
    runs = {v: json.loads(golden_file(v).read_text()) for v in ("GenuineIntel", "AuthenticAMD")}
    assert runs["GenuineIntel"].keys() == runs["AuthenticAMD"].keys()
    # the same computation: the same figures recorded, the same step counts, the losses within the cross-vendor drift
    for name in ("csv-regression", "csv-classification", "digits", "bit-xor"):
        intel, amd = runs["GenuineIntel"][name], runs["AuthenticAMD"][name]
        assert intel["summary"].keys() == amd["summary"].keys() and intel["summary"]["steps"] == amd["summary"]["steps"]
        assert [r["step"] for r in intel["metrics"]] == [r["step"] for r in amd["metrics"]]
        for a, b in zip(intel["metrics"], amd["metrics"], strict=True):
            assert math.isclose(a["val_loss"], b["val_loss"], rel_tol=0.05), name


def test_the_replayed_cases_are_the_committed_runs():
    """The parametrised replay below covers every committed run, for each vendor's file."""
    for kind in ("GenuineIntel", "AuthenticAMD"):
        assert sorted(json.loads(golden_file(kind).read_text())) == sorted(NAMES)


def test_the_unreplayed_sweep_trial_is_the_bit_xor_case():
    """The sweep's committed lr 1e-3 trial (not replayed: cases.SWEEP_TRIALS) trained as the bit-xor case's first 20
    steps: the paper preset's lr, the same config but for steps and eval_every, and the same step-20 figures, in each
    vendor's file. So the bit-xor case's replay checks its computation."""
    import fpt

    assert fpt.build(preset="paper", task="bit-xor").config.lr == 1e-3
    for kind in ("GenuineIntel", "AuthenticAMD"):
        runs = json.loads(golden_file(kind).read_text())
        case, trial = runs["bit-xor"], runs["sweep"]["lr=0.001"]
        assert sorted(runs["sweep"]) == sorted({"lr=0.001", *SWEEP_TRIALS})
        same = ("task", "body", "init", "freeze", "global_batch_size", "body_fingerprint", "task_info", "val_set")
        assert {k: trial["summary"][k] for k in same} == {k: case["summary"][k] for k in same}
        at_20 = next(row for row in case["metrics"] if row["step"] == 20)
        assert trial["summary"]["steps"] == trial["metrics"][-1]["step"] == 20
        assert {k: trial["metrics"][-1][k] for k in ("val_loss", "val_accuracy")} == \
            {k: at_20[k] for k in ("val_loss", "val_accuracy")}, kind


# One test per run (each a minute or less of CPU), so that pytest-xdist's two workers can share them.
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_golden_runs_replay_identically(name, tmp_path):
    kind = vendor()
    if not golden_file(kind).exists():
        pytest.skip(f"no golden runs for {kind} processors: write them with the old code "
                    f"(git worktree add OLD 0ee82ed; cd OLD; python -m tests.golden.cases) as golden-{kind}.json")
    committed = {name: json.loads(golden_file(kind).read_text())[name]}
    if name == "sweep":  # the trials the spec replays (cases.SWEEP_TRIALS: the other is the bit-xor case's steps)
        committed[name] = {trial: committed[name][trial] for trial in SWEEP_TRIALS}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the committed runs used one thread; sums in another order round differently
    try:
        replayed = json.loads(json.dumps({name: replay_one(name, tmp_path)}))
    finally:
        torch.set_num_threads(threads)
    assert _derived(replayed) == []
    assert _majority_baselines(committed, replayed) == []
    assert _diff(committed, replayed) == []


def _majority_baselines(committed, replayed, path="") -> list[str]:
    """Pop ``baselines.majority`` and ``majority_class`` from both: the committed runs recorded each held-out set's own
    most frequent class's accuracy, a replay the training set's class's (silent round 3), which no constant answer
    can beat on that set: each replayed figure is at most the committed one."""
    out = []
    for name, run in committed.items():
        if "summary" not in run:
            out += _majority_baselines(run, replayed[name], f"{path}{name}.")
            continue
        old = run["summary"].get("baselines", {}).pop("majority", None)
        base = replayed[name]["summary"].get("baselines", {})
        new, answer = base.pop("majority", None), base.pop("majority_class", None)
        if old is None:
            continue
        if new is None or answer is None or new.keys() != old.keys() or any(new[k] > old[k] for k in old):
            out.append(f"{path}{name}: baselines.majority {new} (class {answer}) not the training class's, <= {old}")
    return out
