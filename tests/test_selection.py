"""Selection reads validation only: the test set cannot change any training decision."""

import json
from dataclasses import replace

import pytest
import torch

import fpt
from fpt.tasks.base import Batch
from fpt.train import majority_accuracy, majority_classes


def _exp(body, **kw):
    fields = dict(task="bit-xor", body=body, init="random", steps=40, batch_size=8, eval_every=5, dropout=0.0,
                  task_options={"eval_size": 64}, device="cpu", patience=3)
    return fpt.build(**{**fields, **kw})


def _shuffled_test(exp, seed=1):
    test = exp.data.eval_sets["test"]
    gen = torch.Generator().manual_seed(seed)
    y = test.y[torch.randperm(len(test), generator=gen)]
    y = 1 - y  # and flipped: a test-driven decision would now go the other way
    sets = {**exp.data.eval_sets, "test": Batch(test.x, y, test.lengths)}
    return replace(exp, data=replace(exp.data, eval_sets=sets))


def _decisions(summary, run_dir):
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    keys = ("selected_step", "steps", "stopped", "steps_to_target", "steps_to_converge", "val_accuracy",
            "val_accuracy_last")
    return rows, {k: summary[k] for k in keys}


def test_shuffled_test_labels_change_no_decision(tiny_gpt2_dir, tmp_path):
    a = fpt.fit(_exp(tiny_gpt2_dir), out=tmp_path / "a", progress=False)
    b = fpt.fit(_shuffled_test(_exp(tiny_gpt2_dir)), out=tmp_path / "b", progress=False)
    rows_a, dec_a = _decisions(a, tmp_path / "a")
    rows_b, dec_b = _decisions(b, tmp_path / "b")
    strip = [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows_a]
    assert strip == [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows_b]
    assert dec_a == dec_b
    # ... while the test figures did see the new labels
    assert a["test_accuracy"] != b["test_accuracy"]
    from safetensors.torch import load_file

    from fpt.checkpoint import find

    for name in ("best", "checkpoint"):
        ta, tb = (load_file(find(tmp_path / r, name) / "trainable.safetensors") for r in ("a", "b"))
        assert ta.keys() == tb.keys() and all(torch.equal(ta[k], tb[k]) for k in ta)


def test_test_accuracy_is_at_the_selected_step(tiny_gpt2_dir, tmp_path):
    from fpt.checkpoint import load_trainable

    # a long run with patience off: the last step is rarely the selected one
    s = fpt.fit(_exp(tiny_gpt2_dir, steps=30, patience=None), out=tmp_path / "r", progress=False)
    fresh = _exp(tiny_gpt2_dir)
    load_trainable(tmp_path / "r" / "best", fresh.model, fresh.body_fingerprint)
    at_best = fpt.evaluate(fresh)
    assert s["test_accuracy"] == pytest.approx(at_best["test_accuracy"])
    assert s["val_accuracy"] == pytest.approx(at_best["val_accuracy"])
    load_trainable(tmp_path / "r" / "checkpoint", fresh.model, fresh.body_fingerprint)
    assert s["test_accuracy_last"] == pytest.approx(fpt.evaluate(fresh)["test_accuracy"])


def test_bit_tasks_draw_independent_validation_and_test_sets():
    data = fpt.build(task="bit-xor", body="lstm-3-w384", init="random", task_options={"eval_size": 200}).data
    val, test = data.eval_sets["val"], data.eval_sets["test"]
    assert not torch.equal(val.x, test.x)
    train = data.train.batch(0, 200)
    assert not torch.equal(train.x, val.x) and not torch.equal(train.x, test.x)


def test_majority_accuracy_per_output_position():
    y = torch.tensor([[0, 1], [0, 1], [1, 1], [2, 0]])  # column 0: class 0 twice of 4; column 1: class 1 three times
    assert majority_classes(y, 3).tolist() == [0, 1]
    assert majority_accuracy(y, majority_classes(y, 3)) == pytest.approx((2 + 3) / 8)
