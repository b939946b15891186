"""bf16: frozen matmul weights stored in bf16 give the numbers per-call autocast casts give."""

from __future__ import annotations

import pytest
import torch

import fpt
from fpt import pipeline
from fpt.train import evaluate, train_step


def _trained(body: str, monkeypatch, precast: bool, **kw) -> tuple[list[float], dict, list[torch.Tensor], object]:
    if not precast:
        monkeypatch.setattr(pipeline, "store_frozen_bf16", lambda model: 0)
    exp = fpt.build(task="bit-xor", body=body, init="random", precision="bf16", device="cpu", batch_size=8, **kw)
    monkeypatch.undo()
    optimizer = torch.optim.Adam([p for p in exp.model.parameters() if p.requires_grad], lr=1e-3)
    torch.manual_seed(0)
    losses = [train_step(exp, optimizer, exp.data.train.batch(i, 8))[0] for i in range(4)]
    trained = [p.detach().clone() for p in exp.model.parameters() if p.requires_grad]
    return losses, evaluate(exp, sets=["val"]), trained, exp


@pytest.mark.parametrize("freeze", ["paper", "output"])
def test_bf16_weights_stored_once_give_the_per_call_cast_numbers(tiny_body_dir, monkeypatch, freeze):
    losses, metrics, trained, exp = _trained(tiny_body_dir, monkeypatch, True, freeze=freeze, cache_features="off")
    ref_losses, ref_metrics, ref_trained, ref = _trained(tiny_body_dir, monkeypatch, False, freeze=freeze,
                                                         cache_features="off")
    frozen = [p for p in pipeline._matmul_weights(exp.model) if not p.requires_grad]
    assert frozen and all(p.dtype == torch.bfloat16 for p in frozen)
    assert all(p.dtype == torch.float32 for p in pipeline._matmul_weights(ref.model))
    assert all(p.dtype == torch.float32 for p in exp.model.parameters() if p.requires_grad)  # trained in fp32
    assert losses == ref_losses
    assert metrics == ref_metrics
    assert all(torch.equal(a, b) for a, b in zip(trained, ref_trained, strict=True))


def test_fp32_keeps_every_weight_in_fp32(tiny_gpt2_dir):
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", device="cpu", precision="fp32")
    assert exp.precision == "fp32"
    assert all(p.dtype == torch.float32 for p in exp.model.parameters())


def _native_bf16(monkeypatch, native: bool, speedup: float = 2.0) -> None:
    monkeypatch.delenv("FPT_NATIVE_BF16", raising=False)  # the suite's conftest pins it; here the CPU decides
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: native)
    monkeypatch.setattr(pipeline, "bf16_speedup", lambda: speedup)


def test_auto_is_fp32_without_a_warning_on_a_cpu_without_native_bf16(tiny_gpt2_dir, monkeypatch, recwarn):
    _native_bf16(monkeypatch, False)
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", device="cpu")  # preset fast, precision auto
    assert (exp.config.preset, exp.config.precision, exp.precision) == ("fast", "auto", "fp32")
    assert all(p.dtype == torch.float32 for p in exp.model.parameters())
    assert not [w for w in recwarn if "bf16" in str(w.message)]


def test_auto_is_bf16_on_a_cpu_with_native_bf16_under_fast_only(tiny_gpt2_dir, monkeypatch, recwarn):
    _native_bf16(monkeypatch, True)
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", device="cpu")
    assert exp.precision == "bf16" and any(p.dtype == torch.bfloat16 for p in pipeline._matmul_weights(exp.model))
    assert not [w for w in recwarn if "bf16" in str(w.message)]
    # the paper preset keeps auto's old meaning (bf16 on CUDA only), so fpt reproduce does not change with the CPU
    paper = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", device="cpu", preset="paper")
    assert paper.precision == "fp32"
    assert pipeline.resolve_precision("auto", torch.device("cuda"), "paper") == "bf16"


def test_a_bf16_run_trains_evaluates_caches_and_reloads(tiny_gpt2_dir, tmp_path):
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", precision="bf16", device="cpu", steps=4,
                    eval_every=2, batch_size=8)
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert summary["test_accuracy"] is not None
    served = fpt.Run(tmp_path / "run").load()  # a predictor built from the run, under its precision
    test = exp.data.eval_sets["test"]
    with exp.autocast:
        direct = exp.model(test.x[:16], None).float()
    assert torch.allclose(torch.as_tensor(served.logits(test.x[:16])), direct, atol=1e-2)
    # the output-only linear probe caches features through the same bf16 path
    probe = fpt.build(task="digits", body=tiny_gpt2_dir, init="random", precision="bf16", device="cpu", steps=4,
                      eval_every=2, batch_size=8, freeze="output")
    cached = fpt.fit(probe, progress=False)
    assert cached["feature_cache_seconds"] is not None and cached["test_accuracy"] is not None


def test_bf16_on_a_cpu_without_native_bf16_warns_and_names_the_fix(tiny_gpt2_dir, monkeypatch):
    _native_bf16(monkeypatch, False)
    assert not pipeline.cpu_has_native_bf16()
    with pytest.warns(UserWarning, match="emulates.*precision=fp32"):
        fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", precision="bf16", device="cpu")


def test_a_cpu_listing_bf16_that_measures_it_slower_trains_fp32_under_auto(tiny_gpt2_dir, monkeypatch, recwarn):
    # a Xeon that lists AVX-512 BF16 but not AMX multiplies bf16 at 0.56x fp32's speed
    _native_bf16(monkeypatch, True, speedup=0.54)
    assert not pipeline.cpu_has_native_bf16()
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", device="cpu")
    assert exp.precision == "fp32" and not [w for w in recwarn if "bf16" in str(w.message)]
    with pytest.warns(UserWarning, match="measured 0.54x the speed of fp32.*precision=fp32"):
        fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", precision="bf16", device="cpu")
    _native_bf16(monkeypatch, True, speedup=pipeline.BF16_MIN_SPEEDUP)
    assert pipeline.cpu_has_native_bf16()


def test_the_bf16_probe_measures_once_per_thread_count():
    pipeline._bf16_speedup.cache_clear()
    first = pipeline.bf16_speedup()
    assert 0.05 < first < 50  # a ratio of two timings of the same matmul, not a flag
    assert pipeline.bf16_speedup() == first  # cached: later runs in the process pay nothing
    assert pipeline._bf16_speedup.cache_info().misses == 1


def test_the_bf16_probe_leaves_the_callers_torch_stream_as_it_was():
    """The probe drew its matrices from torch's global generator: on a CPU with bf16 instructions, the first
    fpt.build (preset fast, precision auto) of a process moved the caller's seeded stream on by 786,432 draws."""
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    pipeline._bf16_speedup.__wrapped__(1)  # the measurement itself, past its per-process cache
    assert torch.equal(torch.rand(3), expected)


def test_bf16_on_a_cpu_with_native_bf16_is_silent(tiny_gpt2_dir, monkeypatch, recwarn):
    _native_bf16(monkeypatch, True)
    assert pipeline.cpu_has_native_bf16()
    fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", precision="bf16", device="cpu")
    fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", precision="fp32", device="cpu")
    assert not [w for w in recwarn if "native bf16" in str(w.message)]


def test_fpt_native_bf16_overrides_what_the_cpu_says(monkeypatch):
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    monkeypatch.setenv("FPT_NATIVE_BF16", "0")
    assert not pipeline.cpu_has_native_bf16()
    assert pipeline.resolve_precision("auto", torch.device("cpu"), "fast") == "fp32"
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    monkeypatch.setenv("FPT_NATIVE_BF16", "1")
    assert pipeline.resolve_precision("auto", torch.device("cpu"), "fast") == "bf16"


def test_a_data_time_series_is_read_with_the_flatten_head_unless_a_readout_is_given(tiny_gpt2_dir, tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    np.savez(tmp_path / "s.npz", X=(rng.normal(size=(40, 1, 24)) + y[:, None, None]).astype(np.float32), y=y)
    pd = pytest.importorskip("pandas")
    # fit given: the readout is the preset's for the data (fit=auto would compare the fits first)
    common = {"body": tiny_gpt2_dir, "init": "random", "device": "cpu", "baselines": "none", "fit": "gradient"}
    assert fpt.build(data=str(tmp_path / "s.npz"), **common).config.readout == "flatten"  # fast: fitted to the data
    assert fpt.build(data=str(tmp_path / "s.npz"), readout="last", **common).config.readout == "last"  # given: kept
    assert fpt.build(data=str(tmp_path / "s.npz"), preset="paper", **common).config.readout == "last"
    table = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40), "label": y})
    assert fpt.build(data=table, **common).config.readout == "last"  # only series


def test_a_data_time_series_is_standardised_per_channel_unless_a_normalisation_is_given(tiny_gpt2_dir, tmp_path):
    """Preset fast: each channel by the training split's mean and std (a series keeps its level and scale, which
    here is its class); given, or under preset paper, per series."""
    import numpy as np

    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    # class 1 is class 0 shifted by 5 and scaled by 3: per-series normalisation makes the two classes alike
    X = rng.normal(size=(40, 1, 24)) * (1 + 2 * y[:, None, None]) + 5 * y[:, None, None]
    np.savez(tmp_path / "s.npz", X=X.astype(np.float32), y=y)
    # fit given: the normalisation is the data's, whichever fit reads it (fit=auto would compare the fits first)
    common = {"data": str(tmp_path / "s.npz"), "body": tiny_gpt2_dir, "init": "random", "device": "cpu",
              "baselines": "none", "fit": "gradient"}
    fast = fpt.build(**common)
    assert fast.config.series_norm == "global"
    assert fpt.build(series_norm="series", **common).config.series_norm == "series"
    assert fpt.build(preset="paper", **common).config.series_norm == "series"
    for exp, apart in ((fast, True), (fpt.build(series_norm="series", **common), False)):
        train = exp.data.train.data  # global: the classes' levels stay apart; per series: both at mean 0
        means = [float(train.x[train.y[:, 0] == c].mean()) for c in (0, 1)]
        assert (abs(means[1] - means[0]) > 1.0) is apart


def test_an_experiment_shows_itself_in_one_short_line(tiny_bert_dir):
    """A notebook prints an Experiment left on a cell's last line: it was the dataclass's repr, the whole RunConfig
    and every field (about 5,000 characters)."""

    exp = fpt.build(task="bit-xor", body=tiny_bert_dir, init="random", steps=3, device="cpu",
                    task_options={"n_bits": 4, "eval_size": 16})
    text = repr(exp)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith("Experiment(task 'bit-xor': classification, train generated, val 16, test 16; body ")
    assert "(random, freeze 'paper')" in text and "fit gradient, 3 steps at lr" in text and "device cpu" in text


def test_bf16_declared_not_native_by_the_environment_says_so_not_a_fast_measurement(tiny_gpt2_dir, monkeypatch):
    # FPT_NATIVE_BF16=0 decides before any measurement: the warning quoted one (10.98x on an AMX Xeon), saying a
    # bf16 that ran 11x faster "does not pay"
    _native_bf16(monkeypatch, True, speedup=10.98)
    monkeypatch.setenv("FPT_NATIVE_BF16", "0")
    assert not pipeline.cpu_has_native_bf16()
    with pytest.warns(UserWarning, match=r"does not pay \(FPT_NATIVE_BF16=0 declares it\); set precision=fp32") as seen:
        fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", precision="bf16", device="cpu")
    assert "10.98" not in str(seen[0].message)


def test_a_float64_default_dtype_of_the_caller_builds_trains_and_reloads_a_float32_model(tiny_gpt2_dir, tmp_path):
    """torch.set_default_dtype(torch.float64) (a scientific user's habit) made fpt's new layers float64 beside the
    body's float32 weights: fpt.fit failed at its first forward ('mat1 and mat2 must have the same dtype, but got Float
    and Double'), fpt.load of a run too. The model is float32 whatever the default, and the default is left as set."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", steps=4, batch_size=8, eval_every=2,
                        task_options={"eval_size": 16}, device="cpu")
        assert {p.dtype for p in exp.model.parameters()} == {torch.float32}
        summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
        assert summary["steps"] == 4 and 0 <= summary["test_accuracy"] <= 1
        x = exp.data.eval_sets["test"].x[:3]
        model = fpt.load(tmp_path / "run")
        assert {p.dtype for p in model.model.parameters()} == {torch.float32}
        assert torch.equal(torch.as_tensor(model.predict(x)), fpt.predict(exp, x))
        assert torch.get_default_dtype() == torch.float64
    finally:
        torch.set_default_dtype(previous)
