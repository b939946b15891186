from dataclasses import replace

import pytest
import torch

import fpt
from fpt.cache import cache_eligible
from fpt.errors import ConfigError
from fpt.model import FEATURES
from fpt.tasks.base import TensorSource


def _exp(body, freeze="output", cache="auto"):
    exp = fpt.build(task="bit-xor", body=body, init="random", freeze=freeze, dropout=0.0, steps=12, eval_every=4,
                    batch_size=8, task_options={"eval_size": 64}, cache_features=cache, device="cpu")
    finite = TensorSource(exp.data.train.batch(0, 40), seed=0)  # a fixed training set, as a dataset task has
    return replace(exp, data=replace(exp.data, train=finite))


def test_cached_probe_trains_the_same_head_as_the_uncached_path(tiny_gpt2_dir):
    cached, plain = _exp(tiny_gpt2_dir), _exp(tiny_gpt2_dir, cache="off")
    s1, s2 = fpt.fit(cached, progress=False), fpt.fit(plain, progress=False)
    assert s1["feature_cache_seconds"] is not None and s2["feature_cache_seconds"] is None
    for s in (s1, s2):  # one epoch is 40 examples at the measured training rate
        assert s["epoch_seconds"] == pytest.approx(40 / s["train_samples_per_second"], rel=1e-2)
    torch.testing.assert_close(cached.model.head.weight, plain.model.head.weight, atol=1e-5, rtol=1e-4)
    assert s1["test_accuracy"] == pytest.approx(s2["test_accuracy"])


def test_generated_streams_have_no_epoch(tiny_gpt2_dir):
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", steps=2, eval_every=2,
                    task_options={"eval_size": 8})
    assert fpt.fit(exp, progress=False)["epoch_seconds"] is None


def test_cache_only_when_nothing_below_the_head_trains(tiny_gpt2_dir):
    assert cache_eligible(_exp(tiny_gpt2_dir))[0]
    ok, why = cache_eligible(_exp(tiny_gpt2_dir, freeze="paper"))
    assert not ok and "input" in why
    generated = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", freeze="output", steps=2,
                          cache_features="on", task_options={"eval_size": 8})
    with pytest.raises(ConfigError, match="generated afresh"):
        fpt.fit(generated, progress=False)


def test_cached_checkpoint_loads_into_the_full_model(tiny_gpt2_dir, tmp_path):
    from fpt.checkpoint import load_trainable

    exp = _exp(tiny_gpt2_dir)
    fpt.fit(exp, out=tmp_path / "r", progress=False)
    fresh = _exp(tiny_gpt2_dir, cache="off")
    load_trainable(tmp_path / "r" / "best", fresh.model, fresh.body_fingerprint)  # fit leaves the selected step
    torch.testing.assert_close(fresh.model.head.weight, exp.model.head.weight)


LAST_BLOCK = "output,attention@-1,feedforward@-1"  # only the last block and the head train


def test_frozen_prefix_cache_trains_exactly_like_the_uncached_path(tiny_gpt2_dir):
    from fpt.cache import plan_cache

    cached, plain = _exp(tiny_gpt2_dir, freeze=LAST_BLOCK), _exp(tiny_gpt2_dir, freeze=LAST_BLOCK, cache="off")
    assert plan_cache(cached).start == len(cached.model.body.blocks) - 1
    s1, s2 = fpt.fit(cached, progress=False), fpt.fit(plain, progress=False)
    assert s1["feature_cache_seconds"] is not None and s2["feature_cache_seconds"] is None
    trained = {n: p for n, p in plain.model.named_parameters() if p.requires_grad}
    assert any(n.startswith("body.blocks.") for n in trained)
    for name, p in cached.model.named_parameters():
        if p.requires_grad:
            torch.testing.assert_close(p, trained[name], atol=1e-5, rtol=1e-4)
    assert s1["test_accuracy"] == pytest.approx(s2["test_accuracy"])


def test_prefix_cache_declines_with_a_reason(tiny_gpt2_dir, monkeypatch):
    import fpt.cache as cache

    exp = _exp(tiny_gpt2_dir, freeze=LAST_BLOCK)
    with_dropout = replace(exp, config=replace(exp.config, dropout=0.1))
    assert cache.plan_cache(with_dropout).why_not.startswith("dropout=0.1")
    monkeypatch.setattr(cache, "PREFIX_CACHE_MAX_BYTES", 1000)
    assert "GiB" in cache.plan_cache(exp).why_not
    assert cache.plan_cache(_exp(tiny_gpt2_dir, freeze="output,attention@0")).why_not.startswith("block 0 trains")


def test_the_cached_view_feeds_the_same_model_its_prefix_states(tiny_gpt2_dir):
    from fpt.cache import cached_view

    exp = _exp(tiny_gpt2_dir, freeze=LAST_BLOCK)
    view, _ = cached_view(exp)
    assert view.model is exp.model and view.input_start == exp.model.layers - 1  # one FPT, fed at the last block
    assert view.data.train.data.x.shape[1:] == (exp.data.spec.seq_len, exp.model.body.width)  # (N, T, D)
    x = exp.data.eval_sets[exp.data.val]
    first = x.slice(0, 4)
    cached = view.data.eval_sets[exp.data.val].slice(0, 4)
    exp.model.eval()
    with torch.no_grad():  # the cached path computes what the whole model computes from tokens
        torch.testing.assert_close(view.forward(cached.x, cached.lengths), exp.forward(first.x, first.lengths))
    probe, _ = cached_view(_exp(tiny_gpt2_dir))  # output only: the head's features are cached
    assert probe.input_start == FEATURES and probe.data.train.data.x.shape[1:] == (exp.data.spec.num_outputs,
                                                                                  exp.model.body.width)  # (N, k, D)


def _flatten_probe(body, cache="auto"):
    """A linear probe with readout flatten on bit-memory of one output token (4 bits), a fixed training set."""
    exp = fpt.build(task="bit-memory", body=body, init="random", freeze="output", dropout=0.0, steps=8, eval_every=4,
                    batch_size=8, readout="flatten", cache_features=cache, device="cpu",
                    task_options={"n_strings": 2, "n_bits": 4, "token_dim": 4, "eval_size": 16})
    finite = TensorSource(exp.data.train.batch(0, 24), seed=0)
    return replace(exp, data=replace(exp.data, train=finite))


def test_flatten_probe_caches_every_position_and_trains_the_same_head(tiny_gpt2_dir, monkeypatch):
    import fpt.cache as cache
    from fpt.cache import cached_view

    exp = _flatten_probe(tiny_gpt2_dir)
    view, _ = cached_view(exp)
    T, D = exp.data.spec.seq_len, exp.model.body.width
    assert view.input_start == FEATURES and view.data.train.data.x.shape[1:] == (1, T * D)
    cached, plain = _flatten_probe(tiny_gpt2_dir), _flatten_probe(tiny_gpt2_dir, cache="off")
    s1, s2 = fpt.fit(cached, progress=False), fpt.fit(plain, progress=False)
    assert s1["feature_cache_seconds"] is not None and s2["feature_cache_seconds"] is None
    torch.testing.assert_close(cached.model.head.weight, plain.model.head.weight, atol=1e-5, rtol=1e-4)
    monkeypatch.setattr(cache, "PREFIX_CACHE_MAX_BYTES", 1000)  # its features are as large as a prefix: as limited
    assert cache.plan_cache(exp).why_not.startswith("readout=flatten's features would take")
