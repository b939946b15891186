import json

import pytest
import torch

import fpt
from fpt.errors import CLI, ConfigError, wording
from fpt.train import resume_config


def _exp(body, **kw):
    fields = dict(task="bit-xor", body=body, init="random", steps=20, batch_size=8, eval_every=5,
                  task_options={"eval_size": 64}, device="cpu")
    return fpt.build(**{**fields, **kw})


def _trained(exp):
    return {n: p.detach().clone() for n, p in exp.model.named_parameters() if p.requires_grad}


def test_fit_writes_a_complete_run_directory(tiny_gpt2_dir, tmp_path):
    summary = fpt.fit(_exp(tiny_gpt2_dir), out=tmp_path / "run", progress=False)
    files = {p.name for p in (tmp_path / "run").iterdir()}
    assert {"config.yaml", "metrics.jsonl", "summary.json", "checkpoint", "best"} <= files
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [5, 10, 15, 20]
    # training logs validation only: the test set is never looked at before the end
    assert set(rows[0]) == {"step", "wall_seconds", "train_loss", "train_accuracy", "val_accuracy", "val_loss"}
    for key in ("val_accuracy", "test_accuracy", "val_accuracy_last", "test_accuracy_last", "selected_step",
                "train_accuracy", "steps", "steps_to_target", "steps_to_converge", "wall_seconds",
                "train_samples_per_second", "baselines"):
        assert key in summary
    assert not [k for k in summary if "best_test" in k]
    best = max(rows, key=lambda r: r["val_accuracy"])  # the first of equals: selection needs a strict gain
    assert summary["selected_step"] == best["step"] and summary["val_accuracy"] == best["val_accuracy"]
    assert summary["val_accuracy_last"] == rows[-1]["val_accuracy"]
    assert summary["steps"] == 20 and (summary["val_set"], summary["test_set"]) == ("val", "test")
    assert summary["baselines"]["chance"] == 0.5 and 0.4 < summary["baselines"]["majority"]["test"] < 0.65
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == summary


def test_training_lowers_the_loss(tiny_gpt2_dir):
    exp = _exp(tiny_gpt2_dir, steps=60, eval_every=60, dropout=0.0)
    before = fpt.evaluate(exp)["test_loss"]
    fpt.fit(exp, progress=False)
    assert fpt.evaluate(exp)["test_loss"] < before - 0.02


def test_only_the_policy_groups_change(tiny_gpt2_dir):
    exp = _exp(tiny_gpt2_dir, steps=3)
    frozen = {n: p.detach().clone() for n, p in exp.model.named_parameters() if not p.requires_grad}
    trained = _trained(exp)
    fpt.fit(exp, progress=False)
    assert all(torch.equal(p, frozen[n]) for n, p in exp.model.named_parameters() if n in frozen)
    assert any(not torch.equal(p, trained[n]) for n, p in exp.model.named_parameters() if n in trained)


def test_gradient_accumulation_gives_the_same_step(tiny_gpt2_dir):
    a = _exp(tiny_gpt2_dir, steps=3, dropout=0.0, clip=0.0)
    b = _exp(tiny_gpt2_dir, steps=3, dropout=0.0, clip=0.0, grad_accum=4)
    fpt.fit(a, progress=False)
    fpt.fit(b, progress=False)
    for name, p in _trained(a).items():
        torch.testing.assert_close(_trained(b)[name], p, atol=2e-6, rtol=1e-5)


def test_resume_reproduces_an_uninterrupted_run(tiny_gpt2_dir, tmp_path):
    straight = _exp(tiny_gpt2_dir)
    s1 = fpt.fit(straight, out=tmp_path / "a", progress=False)
    first = _exp(tiny_gpt2_dir, steps=10)
    fpt.fit(first, out=tmp_path / "b", progress=False)
    config = resume_config(tmp_path / "b", {"steps": 20})
    resumed = fpt.build(config)
    s2 = fpt.fit(resumed, out=tmp_path / "b", resume=True, progress=False)
    assert s2["steps"] == 20
    for name, p in _trained(straight).items():
        torch.testing.assert_close(_trained(resumed)[name], p)
    assert s2["test_accuracy"] == s1["test_accuracy"]
    assert len((tmp_path / "b" / "metrics.jsonl").read_text().splitlines()) == 4


def test_resume_refuses_a_different_experiment(tiny_gpt2_dir, tmp_path):
    fpt.fit(_exp(tiny_gpt2_dir, steps=5), out=tmp_path / "r", progress=False)
    with pytest.raises(ConfigError, match=r"cannot resume with changed field\(s\) \['lr'\]"):
        resume_config(tmp_path / "r", {"lr": 0.1})


def test_existing_run_directory_is_never_overwritten(tiny_gpt2_dir, tmp_path):
    fpt.fit(_exp(tiny_gpt2_dir, steps=5), out=tmp_path / "r", progress=False)
    with pytest.raises(FileExistsError, match=r"continue it with resume=True or choose another out$"):  # Python's words
        fpt.fit(_exp(tiny_gpt2_dir, steps=5), out=tmp_path / "r", progress=False)


def test_stops_at_target_and_on_patience(tiny_gpt2_dir):
    s = fpt.fit(_exp(tiny_gpt2_dir, steps=50, target=0.01), progress=False)
    assert s["stopped"] == "target" and s["steps"] == 5 and s["steps_to_target"] == 5
    s = fpt.fit(_exp(tiny_gpt2_dir, steps=500, eval_every=1, patience=2, lr=1e-9), progress=False)
    assert s["stopped"] == "patience" and s["steps"] < 500


def test_divergence_stops_and_keeps_the_best(tiny_gpt2_dir, tmp_path):
    exp = _exp(tiny_gpt2_dir, steps=50, lr=1e6, clip=0.0, freeze="none")
    s = fpt.fit(exp, out=tmp_path / "d", progress=False)
    if s["diverged_at"] is None:
        pytest.skip("did not diverge with this seed")
    assert s["stopped"] == "diverged" and s["steps"] == s["diverged_at"] < 50


def test_predict_returns_classes(tiny_gpt2_dir):
    exp = _exp(tiny_gpt2_dir)
    x = exp.data.eval_sets["test"].x[:10]
    pred = fpt.predict(exp, x)
    assert pred.shape == (10, 5) and set(pred.unique().tolist()) <= {0, 1}


def test_predict_given_an_array_or_a_frame_says_it_takes_tokens_and_what_reads_raw_inputs(tiny_gpt2_dir):
    """fpt.predict(exp, X_new) with NumPy arrays (or a DataFrame), the reflex after fpt.build(data=(X, y)), failed
    in the batching with "AttributeError: 'numpy.ndarray' object has no attribute 'to'"."""
    import numpy as np

    from fpt.errors import DataError

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(24, 3)), np.arange(24) % 2
    exp = fpt.build(data=(X, y), body=tiny_gpt2_dir, init="random", device="cpu", steps=1)
    with pytest.raises(DataError, match=r"x is a numpy.ndarray; fpt.predict takes the model's tokens as a "
                                        r"torch.Tensor.*fpt.load\(DIR\).predict\(X\)"):
        fpt.predict(exp, X[:4])
    pd = pytest.importorskip("pandas")
    with pytest.raises(DataError, match="x is a pandas.DataFrame; fpt.predict takes"):
        fpt.predict(exp, pd.DataFrame(X[:4], columns=["a", "b", "c"]))
    tokens = exp.data.eval_sets["test"].x[:4]
    with pytest.raises(DataError, match="x is a numpy.ndarray"):
        fpt.predict(exp, tokens.numpy())
    assert fpt.predict(exp, torch.as_tensor(tokens.numpy())).tolist() == fpt.predict(exp, tokens).tolist()


@pytest.mark.filterwarnings("ignore:precision=bf16 on a CPU")
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_predict_reads_float64_and_float16_tokens_as_the_model_does(tiny_gpt2_dir, precision):
    """A NumPy user's tokens are float64 (NumPy's default), and torch.as_tensor, which fpt.predict's own message
    suggests, keeps it: fpt.predict failed in the input layer (RuntimeError: mat1 and mat2 must have the same dtype,
    but got Double and Float; Double and BFloat16 under bf16). They are read as float32, as fpt.load's Predictor does."""
    import numpy as np

    exp = _exp(tiny_gpt2_dir, precision=precision)
    tokens = exp.data.eval_sets["test"].x[:6]
    expected = fpt.predict(exp, tokens).tolist()
    assert fpt.predict(exp, torch.as_tensor(tokens.numpy().astype(np.float64))).tolist() == expected
    assert fpt.predict(exp, tokens.half()).tolist() == expected  # bits 0/1: exact in float16


def test_eval_subset_evaluates_a_fixed_part_and_confirms_the_target_on_the_whole_set(tiny_gpt2_dir, tmp_path):
    run = tmp_path / "run"
    exp = _exp(tiny_gpt2_dir, eval_subset=16, target=1.0)
    summary = fpt.fit(exp, out=run, progress=False)
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["val_examples"] for r in rows] == [16] * 4  # never at the target: always the subset
    assert all(abs(r["val_accuracy"] * 16 * 5 - round(r["val_accuracy"] * 16 * 5)) < 1e-6 for r in rows)  # of 16 x 5 bits
    # selection reads the subset; the reported figures are the whole set's at that step (the model is left there)
    assert summary["selected_step"] == max(rows, key=lambda r: r["val_accuracy"])["step"]
    assert summary["val_accuracy"] == fpt.evaluate(exp, sets=["val"])["val_accuracy"]
    # a subset at the target is checked on the whole validation set before the run stops
    reached = fpt.fit(_exp(tiny_gpt2_dir, eval_subset=16, target=0.01), out=tmp_path / "reached", progress=False)
    (row,) = [json.loads(line) for line in (tmp_path / "reached" / "metrics.jsonl").read_text().splitlines()]
    assert row["val_examples"] == 64 and reached["stopped"] == "target" and reached["steps_to_target"] == 5
    assert reached["val_accuracy"] == row["val_accuracy"]


def test_confirming_the_target_evaluates_only_the_rest_and_adds_the_subsets_tallies(tiny_gpt2_dir, monkeypatch):
    """The whole-set check after a subset reaches the target re-evaluates none of the subset: its tallies
    added to the rest's give exactly the whole set's accuracy (and its loss to rounding)."""
    from fpt import train

    exp = _exp(tiny_gpt2_dir, eval_subset=16, target=0.01)
    part, rest = train._val_subset(exp)
    assert (len(part), len(rest)) == (16, 48)
    whole = fpt.evaluate(exp, sets=["val"])
    seen = []
    real = train.tallies
    monkeypatch.setattr(train, "tallies", lambda e, b, *a: seen.append(len(b)) or real(e, b, *a))
    row = train._validate(exp, (part, rest), "val_accuracy")
    assert seen == [16, 48] and row["val_examples"] == 64
    assert row["val_accuracy"] == whole["val_accuracy"]
    assert row["val_loss"] == pytest.approx(whole["val_loss"], rel=1e-5)
    unreached = _exp(tiny_gpt2_dir, eval_subset=16, target=1.0)  # an untrained model: the subset alone
    assert train._validate(unreached, train._val_subset(unreached), "val_accuracy")["val_examples"] == 16
    assert seen[-1] == 16


def test_eval_subset_must_be_positive(tiny_gpt2_dir):
    with pytest.raises(ConfigError, match="eval_subset"):
        _exp(tiny_gpt2_dir, eval_subset=0)


def test_fused_adam_takes_the_steps_plain_adam_takes(tiny_gpt2_dir):
    from fpt.train import make_optimizer, train_step

    exps = [_exp(tiny_gpt2_dir, dropout=0.0) for _ in range(2)]
    fused = make_optimizer([p for p in exps[0].model.parameters() if p.requires_grad], 1e-2)
    plain = torch.optim.Adam([p for p in exps[1].model.parameters() if p.requires_grad], lr=1e-2)
    assert fused.defaults["fused"] and not plain.defaults["fused"]
    for i in range(5):
        for exp, opt in zip(exps, (fused, plain), strict=True):
            train_step(exp, opt, exp.data.train.batch(i, 8))
    a, b = _trained(exps[0]), _trained(exps[1])
    assert a.keys() == b.keys()
    for name in a:
        assert torch.allclose(a[name], b[name], atol=1e-5), name
    assert any(not torch.equal(a[n], _trained(_exp(tiny_gpt2_dir, dropout=0.0))[n]) for n in a)  # they did move


def test_a_training_step_after_an_evaluation_trains_with_dropout_again(tiny_gpt2_dir):
    from fpt.train import evaluate, make_optimizer, train_step

    exp = _exp(tiny_gpt2_dir, dropout=0.5)
    opt = make_optimizer([p for p in exp.model.parameters() if p.requires_grad], 1e-3)
    evaluate(exp, sets=[exp.data.val])
    assert not any(m.training for m in exp.model.modules())
    train_step(exp, opt, exp.data.train.batch(0, 8))
    assert all(m.training for m in exp.model.modules())


def test_gradient_clipping_bounds_the_step_of_the_optimizer_parameters(tiny_gpt2_dir):
    from fpt.train import train_step

    exp = _exp(tiny_gpt2_dir, dropout=0.0, clip=1e-3)
    params = [p for p in exp.model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=1.0)  # plain SGD: the step is the clipped gradient itself
    before = [p.detach().clone() for p in params]
    train_step(exp, opt, exp.data.train.batch(0, 8))
    norm = torch.sqrt(sum(((p.detach() - b) ** 2).sum() for p, b in zip(params, before, strict=True)))
    assert 0 < float(norm) <= 1e-3 * (1 + 1e-4)


def test_improves_breaks_ties_on_validation_loss_only_when_asked():
    from dataclasses import replace

    from fpt.rundir import TrainState
    from fpt.train import improves

    state = TrainState(step=20, best_score=0.9, best_loss=0.4, best_step=20)
    assert improves(state, 0.95, 9.0, "first") and improves(state, 0.95, 9.0, "loss")  # a higher score always wins
    assert not improves(state, 0.9, 0.1, "first")  # the paper's: the earlier step stays
    assert improves(state, 0.9, 0.1, "loss") and not improves(state, 0.9, 0.5, "loss")
    assert not improves(state, 0.85, 0.01, "loss")  # a lower score never wins, whatever its loss
    assert improves(TrainState(), -5.0, None, "loss")  # the first one
    assert improves(replace(state, best_loss=None), 0.9, 0.3, "loss")  # resumed from a state without best_loss


def test_the_selected_step_follows_the_tie_break(tiny_gpt2_dir, tmp_path):
    import numpy as np
    import pandas as pd

    x = np.random.default_rng(0).normal(size=(60, 2))
    frame = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "label": (x[:, 0] > 0).astype(int)})  # 12 validation rows: ties
    selected = {}
    for tie_break in ("first", "loss"):
        exp = fpt.build(data=frame, body=tiny_gpt2_dir, init="random", device="cpu", steps=55, eval_every=5,
                        batch_size=8, lr=0.01, tie_break=tie_break, stop_at_target=False, baselines="none")
        selected[tie_break] = fpt.fit(exp, out=tmp_path / tie_break, progress=False)["selected_step"]
        rows = [json.loads(line) for line in (tmp_path / tie_break / "metrics.jsonl").read_text().splitlines()]
        tied = [r for r in rows if r["val_accuracy"] == max(r["val_accuracy"] for r in rows)]
        expected = tied[0] if tie_break == "first" else min(tied, key=lambda r: r["val_loss"])
        assert selected[tie_break] == expected["step"]
    assert selected["loss"] > selected["first"]  # the tie happened, and the later, lower-loss step won


def test_the_fast_preset_breaks_ties_on_loss_and_the_paper_preset_keeps_the_first(tiny_gpt2_dir):
    assert fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", device="cpu").config.tie_break == "loss"
    paper = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", device="cpu", preset="paper")
    assert paper.config.tie_break == "first"
    with pytest.raises(ConfigError, match="tie_break"):
        fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", device="cpu", tie_break="last")


def test_the_training_split_is_evaluated_at_the_selected_step_without_dropout(tiny_gpt2_dir, tmp_path):
    """Table 7's train figure: the training examples evaluated like the held-out sets (eval mode, the selected
    parameters), up to TRAIN_EVALUATION_EXAMPLES of them; not the last window's minibatch accuracy."""
    import numpy as np
    import pandas as pd

    from fpt import train

    x = np.random.default_rng(0).normal(size=(90, 2))
    frame = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "label": (x[:, 0] > 0).astype(int)})
    exp = fpt.build(data=frame, body=tiny_gpt2_dir, init="random", device="cpu", steps=30, eval_every=10,
                    batch_size=8, lr=0.01, dropout=0.5, stop_at_target=False, baselines="none")
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    n = len(exp.data.train)
    assert summary["train_eval_examples"] == n
    batch = exp.data.train.evaluation_sample(train.TRAIN_EVALUATION_EXAMPLES)
    exp.model.train()  # left in training mode: evaluate must switch dropout off itself
    assert summary["train_eval_accuracy"] == pytest.approx(train.evaluate(exp, batch)["accuracy"])
    exp.model.train()
    assert summary["train_eval_accuracy"] == pytest.approx(train.evaluate(exp, batch)["accuracy"])  # no dropout
    # a fixed seeded subset of a larger split, the same draw every time
    first = exp.data.train.evaluation_sample(20)
    assert len(first) == 20 and torch.equal(first.x, exp.data.train.evaluation_sample(20).x)
    assert fpt.fit(_exp(tiny_gpt2_dir), progress=False).get("train_eval_accuracy") is None  # a generated stream


def test_a_batch_larger_than_the_training_set_draws_the_whole_set_once_with_a_note(tiny_bert_dir, tiny_tables,
                                                                                   monkeypatch):
    # --batch-size 100000 on 20 rows (12 training examples) read every example 8,334 times a step, a permutation
    # per pass: 200 steps of a --data budget took 35 minutes, a run that seemed to hang
    import warnings

    from fpt.tasks.base import TensorSource

    drawn: list[int] = []
    batch = TensorSource.batch
    monkeypatch.setattr(TensorSource, "batch", lambda self, index, size: drawn.append(size) or batch(self, index, size))
    data = str(tiny_tables.classification("d.csv", n=20))
    fields = dict(data=data, body=tiny_bert_dir, init="random", steps=3, eval_every=3, device="cpu", baselines="none")
    exp = fpt.build(batch_size=5000, **fields)
    assert len(exp.data.train) == 12
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        capped = fpt.fit(exp, progress=False)
    assert drawn == [12, 12, 12] and capped["global_batch_size"] == 12  # was [5000, 5000, 5000]
    notes = [str(w.message) for w in caught if type(w.message).__name__ == "BatchCapped"]
    assert notes == ["batch_size=5000 is more than the 12 training examples: each step reads the whole training set "
                     "once (12), not every example 417 times over; give batch_size=12 or less to say so"]  # not a flag
    with warnings.catch_warnings(record=True) as caught, wording(CLI):  # fpt train's words: its flag
        warnings.simplefilter("always")
        fpt.fit(fpt.build(batch_size=5000, **fields), progress=False)
    assert [str(w.message) for w in caught if type(w.message).__name__ == "BatchCapped"][0].endswith(
        "give --batch-size 12 or less to say so")
    drawn.clear()
    whole = fpt.fit(fpt.build(batch_size=12, **fields), progress=False)
    assert drawn == [12, 12, 12]
    assert capped["eval"] == whole["eval"] and capped["test_accuracy"] == whole["test_accuracy"]


def test_the_whole_set_batch_still_divides_over_grad_accum_and_a_stream_is_never_cut():
    from types import SimpleNamespace

    from fpt.distributed import step_batch
    from fpt.settings import RunConfig

    def exp(train, **fields):  # noqa: ANN001, ANN202
        return SimpleNamespace(config=RunConfig(**fields), data=SimpleNamespace(train=train))

    with pytest.warns(UserWarning, match=r"each step reads 10 of them once \(10\)"):
        assert step_batch(exp([0] * 12, batch_size=1000, grad_accum=5)) == 10
    assert step_batch(exp([0] * 12, batch_size=1000, grad_accum=2), ranks=2, note=False) == 12
    assert step_batch(exp([0] * 12, batch_size=8)) == 8
    assert step_batch(exp(iter(()), batch_size=100000)) == 100000  # a generated stream has no size to cut to
    with pytest.raises(ConfigError, match="grad_accum=20 over 1 process.*holds 12 examples; give a smaller grad_accum"):
        step_batch(exp([0] * 12, batch_size=1000, grad_accum=20))


def test_the_final_evaluation_reuses_the_validation_figures_training_computed(tiny_gpt2_dir, tmp_path, monkeypatch):
    """At the end of training the last and the selected steps' parameters were already evaluated on the whole
    validation set: the summary takes those figures (the same numbers) and evaluates only the other held-out sets.
    Each evaluated validation a second time (bit-xor's 1,000 examples: a third of a short run's time)."""
    from fpt import train

    exp = _exp(tiny_gpt2_dir, steps=30, lr=0.02, stop_at_target=False)
    val, test = exp.data.eval_sets["val"], exp.data.eval_sets["test"]
    seen = []
    real = train.tallies
    monkeypatch.setattr(train, "tallies", lambda e, b, *a: seen.append("val" if b is val else "test" if b is test
                                                                         else "other") or real(e, b, *a))
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert summary["selected_step"] not in (None, rows[-1]["step"])  # both the selected and the last step reported
    assert seen.count("val") == len(rows) == 6 and seen.count("test") == 2  # was 8 and 2
    selected = next(r for r in rows if r["step"] == summary["selected_step"])
    assert summary["eval"]["val_loss"] == selected["val_loss"] and summary["eval_last"]["val_loss"] == rows[-1]["val_loss"]
    # the model is left at the selected step: evaluated afresh there, every figure is the summary's
    assert fpt.evaluate(exp) == summary["eval"]


def test_fit_draws_from_its_seed_and_leaves_the_callers_torch_stream_as_it_was(tiny_gpt2_dir):
    """fpt.fit reseeded torch's global generator with config.seed and advanced it: after torch.manual_seed(123) and
    fpt.fit, the caller's next torch.rand was fpt's training stream, not the one it seeded (the estimators forked it;
    fpt.fit, the library's own call, did not). fpt.build and fpt.fit leave it as if they had not run; the config's seed
    still decides training, whatever the caller seeded."""
    torch.manual_seed(123)
    expected = torch.rand(3)
    runs = []
    for caller_seed in (123, 7):
        torch.manual_seed(caller_seed)
        ahead = torch.rand(3) if caller_seed == 7 else None
        torch.manual_seed(caller_seed)
        exp = _exp(tiny_gpt2_dir, steps=6, eval_every=3, dropout=0.1)  # fpt.build draws from forks too
        fpt.fit(exp, progress=False)
        after = torch.rand(3)
        assert torch.equal(after, expected if caller_seed == 123 else ahead)  # as if fit had not run
        runs.append(_trained(exp))
    assert all(torch.equal(runs[0][name], runs[1][name]) for name in runs[0])  # the config's seed decided training
    # own data in memory: its build drew from the caller's stream too (fpt.build's first data experiment)
    rng = torch.Generator().manual_seed(0)
    x, y = torch.randn(40, 3, generator=rng).numpy(), (torch.arange(40) % 2).numpy()
    torch.manual_seed(123)
    exp = fpt.build(data=(x, y), objective="classification", body=tiny_gpt2_dir, fit="gradient", steps=4, eval_every=2,
                    device="cpu")
    fpt.fit(exp, progress=False)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_fit_trains_inside_the_callers_no_grad_or_inference_mode(tiny_gpt2_dir, mode):
    """fpt.fit inside torch.no_grad(), torch.inference_mode() or after torch.set_grad_enabled(False) (a notebook's
    earlier inference cell) failed at its first backward with torch's 'element 0 of tensors does not require grad
    and does not have a grad_fn'; it trains as it does outside them (Lightning's Trainer.fit does so too), and the
    caller's mode is as it was after."""
    exp = _exp(tiny_gpt2_dir, steps=4, eval_every=2)
    before = _trained(exp)
    context = {"no_grad": torch.no_grad(), "inference_mode": torch.inference_mode(),
               "set_grad_enabled": torch.set_grad_enabled(False)}[mode]
    try:
        with context:
            summary = fpt.fit(exp, progress=False)
            assert not torch.is_grad_enabled()
            assert torch.is_inference_mode_enabled() == (mode == "inference_mode")
    finally:
        torch.set_grad_enabled(True)
    assert summary["steps"] == 4
    assert all(not torch.equal(before[name], value) for name, value in _trained(exp).items())
