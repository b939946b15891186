import json

import numpy as np
import pytest
import torch

from fpt.analysis import attention as A
from fpt.tasks import build_task
from fpt.tasks.base import Batch
from fpt.tasks.bit_memory import BitMemoryOptions, sample_bit_memory
from fpt.tasks.bit_xor import BitXorOptions


def test_bit_xor_layout_names_inputs_and_outputs():
    layout = A.BitXorView().layout(BitXorOptions(n_bits=5), 10)
    assert layout.labels == ["a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "b3", "b4"]
    assert layout.outputs == [5, 6, 7, 8, 9]  # the head reads the last n tokens


def test_bit_xor_targets_are_the_two_bits_each_output_xors():
    batch = build_task("bit-xor", {"eval_size": 3}, 0).eval_sets["test"]
    mask = A.BitXorView().targets(BitXorOptions(), batch)["xor_inputs"]  # (N, k, T)
    assert mask.shape == (3, 5, 10)
    for j in range(5):
        assert mask[0, j].nonzero().flatten().tolist() == [j, 5 + j]


def test_a_hand_built_attention_matrix_gives_the_expected_score():
    n, T = 5, 10
    batch = build_task("bit-xor", {"eval_size": 2}, 0).eval_sets["test"]
    targets = A.BitXorView().targets(BitXorOptions(), batch)
    allowed = A.allowed_keys(2, T, causal=True, pad_mask=None)
    attn = torch.zeros(2, 2, T, T)
    attn[:, 1] = A.uniform_attention(allowed)[:, 0]  # head 1: uniform over the causal keys
    for q in range(T):
        attn[:, 0, q, q] = 1.0  # head 0: attends to itself ...
    for j in range(n):
        attn[:, 0, n + j] = 0.0
        attn[:, 0, n + j, j] = 0.75  # ... and output token b_j splits 3:1 between a_j and itself
        attn[:, 0, n + j, n + j] = 0.25
    rows = torch.arange(n, T).expand(2, n)
    s = A.score(attn, rows, targets, allowed)
    uniform = float(np.mean([2 / (n + j + 1) for j in range(n)]))  # causal: b_j sees n + j + 1 keys
    assert s["xor_inputs"]["per_head"] == pytest.approx([1.0, uniform], abs=1e-4)
    assert s["xor_inputs"]["mean"] == pytest.approx((1.0 + uniform) / 2, abs=1e-4)
    assert s["xor_inputs"]["uniform_baseline"] == pytest.approx(uniform, abs=1e-4)
    h0_entropy = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))
    assert s["entropy"]["per_head"][0] == pytest.approx(h0_entropy, abs=1e-4)
    assert s["entropy"]["per_head"][1] > s["entropy"]["per_head"][0]  # uniform is the least sharp


def test_bit_memory_targets_find_the_queried_string():
    o = BitMemoryOptions(n_strings=4, n_bits=30, token_dim=10, eval_size=8)
    batch = sample_bit_memory(np.random.default_rng(0), 8, o)
    masks = A.BitMemoryView().targets(o, batch)
    per = 3
    strings = batch.x[:, : 4 * per].reshape(8, 4, 30)
    for b in range(8):
        chosen = int(masks["matching_string"][b, 0].nonzero()[0]) // per
        assert torch.equal((strings[b, chosen] > 0).long(), batch.y[b])  # the stored string is the answer
        assert masks["matching_string"][b].sum() == per * per  # every query token: all tokens of that string
        assert masks["matching_chunk"][b].nonzero()[:, 1].tolist() == [chosen * per + c for c in range(per)]
    layout = A.BitMemoryView().layout(o, 15)
    assert layout.labels[:4] == ["s0.0", "s0.1", "s0.2", "s1.0"] and layout.labels[-3:] == ["q.0", "q.1", "q.2"]
    assert layout.outputs == [12, 13, 14] and layout.spans[-1] == ("query", 12, 15)


def test_bit_memory_rejects_a_target_that_matches_no_string():
    o = BitMemoryOptions(n_strings=2, n_bits=10, token_dim=10, eval_size=1)
    batch = sample_bit_memory(np.random.default_rng(0), 1, o)
    with pytest.raises(ValueError, match="equals none"):
        A.BitMemoryView().targets(o, Batch(batch.x, 1 - batch.y))


def test_block_attention_is_a_causal_distribution(xor_run):
    from fpt.run import Run

    exp = Run(xor_run).experiment("checkpoint", device="cpu")
    x = exp.data.eval_sets["test"].x[:3]
    for layer in (0, 1):
        attn = A.block_attention(exp.model, x, None, layer)
        assert attn.shape == (3, 4, 10, 10)
        assert torch.allclose(attn.sum(-1), torch.ones(3, 4, 10), atol=1e-5)
        assert attn.triu(1).abs().max() == 0  # GPT-2 is causal
    with pytest.raises(ValueError, match="blocks 0..1"):
        A.block_attention(exp.model, x, None, 2)


def test_analyse_run_writes_maps_and_a_sane_score(xor_run, tmp_path):
    result = A.analyse_run(xor_run, layer=1, examples=5, device="cpu")
    doc = A.write(result, tmp_path)
    for name in ("heads.png", "mean.png", "example0.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.load(tmp_path / "attention.npy").shape == (5, 4, 10, 10)
    assert np.load(tmp_path / "attention_mean.npy").shape == (4, 10, 10)
    saved = json.loads((tmp_path / "score.json").read_text())
    assert saved == json.loads(json.dumps(doc))
    head = saved["headline"]
    assert head["name"] == "xor_inputs" and len(head["per_head"]) == 4 and 0 <= head["mean"] <= 1
    assert head["mean"] == pytest.approx(np.mean(head["per_head"]), abs=1e-3)
    assert 0 < head["uniform_baseline"] < 1
    assert saved["labels"][5] == "b0" and saved["outputs"] == [5, 6, 7, 8, 9] and saved["layer"] == 1


def test_bidirectional_body_on_bit_memory(memory_run, tmp_path):
    result = A.analyse_run(memory_run, examples=4, which="best", device="cpu")
    assert result.attn.shape == (4, 4, 8, 8)
    assert result.attn[..., :].triu(1).sum() > 0  # BERT attends both ways
    doc = A.write(result, tmp_path)
    assert set(doc["scores"]) == {"matching_string", "matching_chunk", "entropy"}
    # Bidirectional: every query token sees all 8 keys, 2 of which belong to the queried string.
    assert doc["scores"]["matching_string"]["uniform_baseline"] == pytest.approx(2 / 8)


def test_tasks_without_a_view_get_positions_and_no_score():
    view = A.view_for("mnist")
    assert view.layout(None, 4).labels == ["0", "1", "2", "3"] and view.targets(None, None) == {}


def test_bodies_without_attention_say_so():
    import fpt

    exp = fpt.build(task="bit-xor", body="lstm-3", init="random", device="cpu", task_options={"eval_size": 2})
    with pytest.raises(ValueError, match="no attention"):
        A.analyse(exp, examples=2)
