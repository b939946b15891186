import numpy as np
import pytest
import torch

from fpt.errors import ConfigError
from fpt.tasks import build_task


def test_bit_xor_shapes_and_labels():
    data = build_task("bit-xor", {}, seed=0)
    s = data.spec
    assert (s.seq_len, s.token_dim, s.num_outputs, s.num_classes) == (10, 1, 5, 2)
    b = data.train.batch(0, 64)
    assert b.x.shape == (64, 10, 1) and b.y.shape == (64, 5)
    bits = b.x[..., 0].long()
    assert torch.equal(b.y, bits[:, :5] ^ bits[:, 5:])
    assert set(b.x.unique().tolist()) == {0.0, 1.0}


def test_bit_xor_length_256():
    data = build_task("bit-xor", {"n_bits": 256, "eval_size": 8}, seed=0)
    assert data.spec.seq_len == 512 and data.spec.num_outputs == 256


def test_bit_memory_matches_the_spec():
    data = build_task("bit-memory", {"eval_size": 4}, seed=0)
    s = data.spec
    assert (s.seq_len, s.token_dim, s.num_outputs, s.per_token) == (120, 50, 20, 50)
    b = data.train.batch(0, 200)
    assert b.x.shape == (200, 120, 50) and b.y.shape == (200, 1000)
    seq = b.x.reshape(200, 6, 1000)
    strings, query = seq[:, :5], seq[:, 5]
    target = b.y.float() * 2 - 1
    # the target is one of the 5 stored strings, and the query shows it with holes
    assert torch.all((strings == target[:, None]).all(-1).any(-1))
    visible = query != 0
    assert torch.all(query[visible] == target[visible])
    assert abs(visible.float().mean().item() - 0.5) < 0.01
    # copying the visible bits and guessing the rest scores about 75%
    guess = torch.where(visible, query, torch.ones_like(query))
    assert abs((guess == target).float().mean().item() - 0.75) < 0.01


def _majority_vote_per_token(x: torch.Tensor, y: torch.Tensor, n_strings: int, token_dim: int) -> float:
    """The per-token reader the ceiling describes, run on sampled batches."""
    n = x.shape[0]
    seq = x.reshape(n, n_strings + 1, -1, token_dim)
    strings, query = seq[:, :-1], seq[:, -1]
    visible = query != 0
    match = ((strings == query[:, None]) | ~visible[:, None]).all(-1)  # (n, strings, tokens)
    votes = (strings * match[..., None]).sum(1)
    target = (y.float() * 2 - 1).reshape(n, -1, token_dim)
    right = torch.where(votes == 0, 0.5, (votes.sign() == target).float())
    return torch.where(visible, 1.0, right).mean().item()


@pytest.mark.parametrize(("n_bits", "token_dim"), [(100, 10), (100, 20)])
def test_bit_memory_per_token_ceiling_matches_the_reader_it_describes(n_bits, token_dim):
    from fpt.tasks.bit_memory import BitMemoryOptions, per_token_ceiling

    data = build_task("bit-memory", {"n_bits": n_bits, "token_dim": token_dim, "eval_size": 4}, seed=0)
    b = data.train.batch(0, 6000)
    simulated = _majority_vote_per_token(b.x, b.y, 5, token_dim)
    exact = per_token_ceiling(BitMemoryOptions(n_bits=n_bits, token_dim=token_dim))
    assert data.info["per_token_ceiling"] == pytest.approx(exact, abs=1e-6)
    assert simulated == pytest.approx(exact, abs=0.0015)
    assert (exact < 0.975) == (token_dim == 10)  # the quick scale's short tokens: below 99% by construction
    assert per_token_ceiling(BitMemoryOptions()) > 0.99999  # the paper's 50-bit tokens
    assert per_token_ceiling(BitMemoryOptions(n_strings=1)) == 1.0


@pytest.mark.parametrize("task", ["bit-xor", "bit-memory"])
def test_batches_are_deterministic_and_eval_differs_from_train(task):
    a, b = build_task(task, {"eval_size": 16}, seed=3), build_task(task, {"eval_size": 16}, seed=3)
    assert torch.equal(a.train.batch(7, 4).x, b.train.batch(7, 4).x)
    assert not torch.equal(a.train.batch(7, 4).x, a.train.batch(8, 4).x)
    assert torch.equal(a.eval_sets["test"].x, b.eval_sets["test"].x)
    assert not torch.equal(a.eval_sets["test"].x[:4], a.train.batch(0, 4).x)
    c = build_task(task, {"eval_size": 16}, seed=4)
    assert not torch.equal(a.eval_sets["test"].x, c.eval_sets["test"].x)


def test_bad_options_are_named():
    with pytest.raises(ConfigError, match=r"task 'bit-memory' options.*multiple of token_dim"):
        build_task("bit-memory", {"n_bits": 99}, seed=0)
    with pytest.raises(ConfigError, match="unknown field"):
        build_task("bit-xor", {"bits": 5}, seed=0)


def test_tensor_source_epochs_are_permutations():
    from fpt.tasks.base import Batch, TensorSource

    data = Batch(torch.arange(10).float()[:, None, None], torch.arange(10)[:, None])
    src = TensorSource(data, seed=0)
    seen = torch.cat([src.batch(i, 5).y for i in range(2)]).flatten().tolist()
    assert sorted(seen) == list(range(10))
    nxt = torch.cat([src.batch(i, 5).y for i in range(2, 4)]).flatten().tolist()
    assert sorted(nxt) == list(range(10)) and nxt != seen
    # a batch straddling an epoch boundary is still deterministic
    assert torch.equal(src.batch(1, 7).y, TensorSource(data, seed=0).batch(1, 7).y)
    assert np.unique(src.batch(0, 10).y.numpy()).size == 10


def test_length_buckets_keep_epochs_whole_and_cut_padding():
    from fpt.tasks.base import Batch, TensorSource

    n, size = 400, 8
    lengths = torch.from_numpy(np.random.default_rng(1).integers(1, 200, n))
    data = Batch(torch.arange(n)[:, None], torch.arange(n)[:, None], lengths)
    plain, bucketed = TensorSource(data, seed=3), TensorSource(data, seed=3, bucket=10)
    for epoch in range(2):  # every example exactly once per epoch, in a seeded order
        rows = torch.cat([bucketed.batch(epoch * n // size + i, size).y for i in range(n // size)]).flatten()
        assert sorted(rows.tolist()) == list(range(n))
    assert torch.equal(bucketed.batch(7, size).y, TensorSource(data, seed=3, bucket=10).batch(7, size).y)

    def padded(src):  # tokens a batch computes once trimmed to its longest example
        return sum(int(src.batch(i, size).lengths.max()) * size for i in range(n // size))

    assert padded(bucketed) < 0.7 * padded(plain)
    # batch order inside a window is shuffled: the first window's batches do not grow steadily
    firsts = [int(bucketed.batch(i, size).lengths.max()) for i in range(10)]
    assert firsts != sorted(firsts)


def test_bucketing_is_applied_to_variable_length_tasks_only(tmp_path):
    from fpt.pipeline import build

    options = {"generate": True, "generate_train": 40, "generate_val": 8, "generate_test": 8, "max_len": 64}
    listops = build(task="listops", task_options=options, data_dir=str(tmp_path), body="lstm-3-w384", init="random")
    assert listops.data.train.bucket == 50 and listops.data.train.data.lengths is not None
    off = build(task="listops", task_options=options, data_dir=str(tmp_path), body="lstm-3-w384", init="random",
                bucket_batches=0)
    assert off.data.train.bucket == 0
    assert build(task="digits", body="lstm-3-w384", init="random").data.train.bucket == 0  # fixed length: nothing to sort
