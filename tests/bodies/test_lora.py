"""LoRA adapters through PEFT (fpt.bodies.lora): which parameters train, that the run starts from the frozen body
exactly, that training moves only the adapters inside the body, and that a run's checkpoint rebuilds them."""

from __future__ import annotations

import json
import sys

import pytest
import torch

import fpt
from fpt.checkpoint import load_trainable
from fpt.config import RunConfig
from fpt.errors import ConfigError, DependencyError
from fpt.freeze import count_parameters, group_of_parameters
from fpt.model import InputSpec
from fpt.pipeline import build, build_model
from fpt.run import Run
from fpt.train import evaluate

pytest.importorskip("peft")

SPEC = InputSpec(seq_len=8, num_classes=3, token_dim=4)


def test_adapters_train_and_the_projections_they_adapt_stay_frozen(tiny_body_dir, tiny_gpt2_dir):
    model = build_model(RunConfig(body=tiny_body_dir, init="random", freeze="paper+lora", lora_rank=4), SPEC)
    groups = group_of_parameters(model)
    lora = {n for n, g in groups.items() if g == "lora"}
    if tiny_body_dir == tiny_gpt2_dir:  # 2 blocks x (c_attn: 32 -> 96, c_proj: 32 -> 32), A and B each
        assert len(lora) == 2 * 2 * 2
        assert count_parameters(model)["lora"].trainable == 2 * (4 * 32 + 96 * 4 + 4 * 32 + 32 * 4)
    else:  # 2 blocks x (query, key, value, output dense) x (A: r x 32, B: 32 x r)
        assert len(lora) == 2 * 4 * 2
        assert count_parameters(model)["lora"].trainable == 2 * 4 * (4 * 32 + 32 * 4)
    for name, p in model.named_parameters():
        assert p.requires_grad == (groups[name] in {"input", "positions", "layernorm", "output", "lora"}), name
    assert any(n.endswith("base_layer.weight") and groups[n] == "attention" for n in groups)


def test_trained_adapters_change_the_output_on_every_path(tiny_body_dir):
    """Nonzero adapters change what the body computes, and the last block computed for the read rows only
    (last_block_rows, which on GPT-2 reads c_attn's weight when it is not adapted) agrees with the full block."""
    x = torch.randn(3, 8, 4)
    outputs = []
    for rows in (True, False):
        config = RunConfig(body=tiny_body_dir, init="random", freeze="paper+lora", seed=2, last_block_rows=rows)
        model = build_model(config, SPEC).eval()
        plain = model(x)
        torch.manual_seed(7)  # the same adapters on both paths
        with torch.no_grad():
            for name, p in model.named_parameters():
                if ".lora_B." in name:
                    p.copy_(torch.randn_like(p))
        outputs.append(model(x))
        assert not torch.allclose(outputs[-1], plain, atol=1e-4)
    torch.testing.assert_close(outputs[0], outputs[1], atol=1e-5, rtol=1e-4)


def test_a_run_starts_from_the_frozen_body_exactly(tiny_bert_dir):
    x = torch.randn(3, 8, 4)
    plain = build_model(RunConfig(body=tiny_bert_dir, init="random", freeze="paper", seed=5), SPEC).eval()
    adapted = build_model(RunConfig(body=tiny_bert_dir, init="random", freeze="paper+lora", seed=5), SPEC).eval()
    torch.testing.assert_close(adapted(x), plain(x))  # B = 0: the update is zero until trained
    again = build_model(RunConfig(body=tiny_bert_dir, init="random", freeze="paper+lora", seed=5), SPEC)
    a = dict(adapted.named_parameters())
    for name, p in again.named_parameters():  # the adapters' init is the seed's: a run rebuilds exactly
        torch.testing.assert_close(p, a[name])


def test_training_moves_the_adapters_and_a_rebuilt_run_scores_the_same(tiny_bert_dir, tmp_path):
    out = tmp_path / "run"
    exp = fpt.build(task="bit-xor", body=tiny_bert_dir, init="random", freeze="paper+lora", lora_rank=2, steps=8,
                    eval_every=4, batch_size=8, lr=1e-2, device="cpu", task_options={"eval_size": 32})
    before = {n: p.detach().clone() for n, p in exp.model.named_parameters()}
    summary = fpt.fit(exp, out=out, progress=False)
    after = dict(exp.model.named_parameters())
    groups = group_of_parameters(exp.model)
    moved = {groups[n] for n, p in after.items() if not torch.equal(p.detach(), before[n])}
    assert "lora" in moved and "attention" not in moved and "feedforward" not in moved
    assert any(n.endswith("lora_B.default.weight") and after[n].abs().sum() > 0 for n in after)
    # the checkpoint holds the trained tensors, adapters included: the run reloaded scores what training scored
    predictor = fpt.load(out)
    assert predictor.config.freeze == "paper+lora" and predictor.config.lora_rank == 2
    saved = json.loads((out / "summary.json").read_text())
    assert saved["test_accuracy"] == pytest.approx(summary["test_accuracy"])
    run = Run(out)  # as fpt eval: rebuild from config.yaml (adapters injected again), load the best checkpoint
    rebuilt = build(run.config())
    load_trainable(run.checkpoint("best"), rebuilt.model, rebuilt.body_fingerprint)
    assert evaluate(rebuilt)["test_accuracy"] == pytest.approx(summary["test_accuracy"])


def test_a_body_without_adapter_targets_is_refused():
    with pytest.raises(ConfigError, match="lora.*minilm"):
        build_model(RunConfig(body="lstm-3-w384", init="random", freeze="output,lora"), SPEC)


def test_without_peft_the_error_names_the_extra(tiny_bert_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "peft", None)  # import peft raises ImportError
    with pytest.raises(DependencyError, match=r"fpt\[lora\]"):
        build_model(RunConfig(body=tiny_bert_dir, init="random", freeze="paper+lora"), SPEC)


@pytest.mark.parametrize("field,value", [("lora_rank", 0), ("lora_alpha", 0.0)])
def test_bad_adapter_sizes_are_config_errors(field, value):
    with pytest.raises(ConfigError, match=field):
        RunConfig(**{field: value})


def test_a_block_selector_trains_one_blocks_adapters(tiny_bert_dir):
    model = build_model(RunConfig(body=tiny_bert_dir, init="random", freeze="output,lora@-1", lora_rank=4), SPEC)
    counts = count_parameters(model)["lora"]
    assert (counts.trainable, counts.total) == (4 * (4 * 32 + 32 * 4), 2 * 4 * (4 * 32 + 32 * 4))
    assert all(".blocks.1." in n for n, p in model.named_parameters() if p.requires_grad and ".lora_" in n)
