"""The closed-form fit's model (fpt.feature_map): members, blocks, poolings, padding."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from fpt.config import RunConfig
from fpt.errors import ConfigError
from fpt.feature_map import DEFAULTS, FeatureMap, block_indices, merge_tokens, options, pooling_names, resolve, scale_factors
from fpt.model import InputSpec
from fpt.pipeline import build_model


def _model(body_dir, spec=None, **fields):
    config = RunConfig(body=body_dir, init="random", fit="closed-form", **fields)
    return build_model(config, spec or InputSpec(seq_len=6, num_classes=3, token_dim=4))


def test_the_defaults_fill_unset_fields_and_are_recorded(tiny_bert_dir):
    config = resolve(RunConfig(body=tiny_bert_dir, fit="closed-form", cf_members=2))
    assert (config.cf_members, config.cf_blocks, config.cf_poolings) == (2, DEFAULTS.blocks, DEFAULTS.poolings)
    assert config.cf_standardise is DEFAULTS.standardise and config.cf_head == DEFAULTS.head
    assert options(config).members == 2


def test_small_data_takes_more_members_and_a_given_count_is_kept(tiny_bert_dir):
    base = RunConfig(body=tiny_bert_dir, fit="closed-form")
    assert resolve(base).cf_members == DEFAULTS.members  # not a --data run: no size to read
    small = (DEFAULTS.small_reads, DEFAULTS.small_fitted)
    assert resolve(base, small).cf_members == DEFAULTS.small_members
    assert resolve(base, (small[0] + 1, 10)).cf_members == DEFAULTS.members  # too much to read
    assert resolve(base, (100, small[1] + 1)).cf_members == DEFAULTS.members  # too many to fit
    assert resolve(RunConfig(body=tiny_bert_dir, fit="closed-form", cf_members=4), (10, 10)).cf_members == 4


def test_a_data_runs_members_follow_its_example_tokens(tmp_path, tiny_bert_dir, tiny_tables):
    """fpt.pipeline.resolved: every split's examples x tokens per example decides cf_members, recorded."""
    import fpt
    from fpt.pipeline import data_size

    path = tiny_tables.classification("c.csv", n=60, labels=("a", "b"), kinds="pq")
    exp = fpt.build(data=str(path), body=tiny_bert_dir, init="random", fit="closed-form")
    data = exp.data
    reads = (len(data.train.data) + sum(len(b) for b in data.eval_sets.values())) * data.spec.seq_len
    assert data_size(data) == (reads, len(data.train.data) + len(data.eval_sets["val"]), data.spec.seq_len)
    assert exp.config.cf_members == DEFAULTS.small_members and exp.model.members == DEFAULTS.small_members


def test_features_are_members_by_blocks_by_poolings(tiny_bert_dir):
    model = _model(tiny_bert_dir, cf_members=2, cf_blocks="all", cf_poolings="mean,max,last")
    assert model.blocks == (0, 1) and model.num_features == 2 * 2 * 3 * 32 + 6 * 4  # + the tokens
    x = torch.randn(5, 6, 4)
    assert model.features(x).shape == (5, 1, model.num_features)
    assert model(x).shape == (5, 1, 3)
    # only the members' input layers and the head are fitted; the body stays frozen
    trained = {n.split(".")[0] for n, p in model.named_parameters() if p.requires_grad}
    assert trained == {"input", "head"}


def test_member_zero_is_the_input_layer_a_gradient_run_starts_from(tiny_bert_dir):
    spec = InputSpec(seq_len=6, num_classes=3, token_dim=4)
    cf = _model(tiny_bert_dir, spec, cf_members=2, seed=3)
    fpt_model = build_model(RunConfig(body=tiny_bert_dir, init="random", seed=3), spec)
    assert torch.equal(cf.input[0].weight, fpt_model.input.weight)
    assert not torch.equal(cf.input[1].weight, cf.input[0].weight)


def test_pooling_reads_real_positions_only(tiny_bert_dir):
    model = _model(tiny_bert_dir, cf_members=1, cf_poolings="mean,max,last,flatten").eval()
    x = torch.randn(1, 6, 4)
    padded = torch.cat([x[:, :4], torch.full((1, 2, 4), 1e3)], dim=1)  # two padding tokens of huge values
    with torch.no_grad():
        short = model.features(x[:, :4], torch.tensor([4]))
        masked = model.features(padded, torch.tensor([4]))
    assert torch.allclose(short, masked, atol=1e-5)
    with torch.no_grad():
        h = model.body.embed(model.input[0](x[:, :4]))
        h = model.body.block(0, h, None)
    D = 32
    assert torch.allclose(short[0, 0, :D], h[0].mean(0), atol=1e-5)  # block 0 mean
    assert torch.allclose(short[0, 0, D:2 * D], h[0].amax(0), atol=1e-5)  # block 0 max
    assert torch.allclose(short[0, 0, 2 * D:3 * D], h[0, 3], atol=1e-5)  # block 0 last real token
    assert torch.all(short[0, 0, 3 * D + 4 * D:3 * D + 6 * D] == 0)  # flatten: zeros past the end


def test_blocks_and_poolings_are_checked():
    assert block_indices("all", 4) == (0, 1, 2, 3) and block_indices("last", 4) == (3,)
    assert block_indices("0,-1", 4) == (0, 3)
    for bad in ("5", "x", "0,-4"):
        with pytest.raises(ConfigError, match="cf_blocks"):
            block_indices(bad, 4)
    assert pooling_names("mean, max") == ("mean", "max")
    with pytest.raises(ConfigError, match="cf_poolings"):
        pooling_names("mean,median")
    with pytest.raises(ConfigError, match="cf_head"):
        RunConfig(fit="closed-form", cf_head="svm")
    with pytest.raises(ConfigError, match="fit"):
        RunConfig(fit="auto")  # auto cross-validates on --data only


def test_token_ids_take_embedding_members_and_count_symbols(tiny_bert_dir):
    model = _model(tiny_bert_dir, InputSpec(seq_len=5, num_classes=2, vocab_size=9), cf_members=2)
    x = torch.tensor([[3, 3, 4, 1, 2], [5, 6, 7, 0, 0]])
    assert isinstance(model, FeatureMap) and model(x, torch.tensor([5, 3])).shape == (2, 1, 2)
    counts = model.features(x, torch.tensor([5, 3]))[:, 0, -9:]
    assert counts[0].tolist() == [0, 1, 1, 2, 1, 0, 0, 0, 0] and counts[1].tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 0]
    assert _model(tiny_bert_dir, cf_inputs=False).input_features == 0


def test_merge_tokens_puts_k_consecutive_tokens_side_by_side():
    x = torch.arange(2 * 5 * 3, dtype=torch.float32).reshape(2, 5, 3)  # (B, T, d)
    merged, lengths = merge_tokens(x, torch.tensor([5, 3]), 2)
    assert merged.shape == (2, 3, 6)  # ceil(5 / 2) tokens of 2 * 3 values
    assert torch.equal(merged[0, 0], torch.cat([x[0, 0], x[0, 1]]))
    assert torch.equal(merged[1, 2], torch.cat([x[1, 4], torch.zeros(3)]))  # zeros after the last token
    assert lengths.tolist() == [3, 2]  # the merged tokens holding a real one
    same, same_lengths = merge_tokens(x, None, 1)
    assert same is x and same_lengths is None


def test_scaled_members_read_windows_of_their_own_length(tiny_bert_dir):
    spec = InputSpec(seq_len=6, num_classes=3, token_dim=4)
    model = _model(tiny_bert_dir, spec, cf_members=4, cf_scales="1,2,4", cf_blocks="0", cf_poolings="max,flatten",
                   cf_inputs=False, seed=3).eval()
    assert model.scales == (1, 2, 4, 1)  # cycled over the members
    assert [m.in_features for m in model.input] == [4, 8, 16, 4]  # k * d values per token
    D = 32
    # flatten: one set of D per merged token (6, 3 and 2 tokens), max: one set per member
    assert [model.member_width(e) for e in range(4)] == [7 * D, 4 * D, 3 * D, 7 * D]
    x = torch.randn(2, 6, 4)
    with torch.no_grad():
        feats = model.features(x, torch.tensor([6, 3]))
        assert feats.shape == (2, 1, model.num_features) and model.num_features == 21 * D
        h = model.body.block(0, model.body.embed(model.input[1](merge_tokens(x[:1], None, 2)[0])), None)
    start = model.member_width(0)
    assert torch.allclose(feats[0, 0, start:start + D], h[0].amax(0), atol=1e-5)  # member 1: max over 3 tokens
    # the member with scale 1 at seed 3 is still the input layer a gradient run starts from; the same seed and
    # scale give the same layer whatever the other members' scales
    plain = _model(tiny_bert_dir, spec, cf_members=1, seed=3)
    assert torch.equal(model.input[0].weight, plain.input[0].weight)


def test_members_of_one_scale_and_source_run_as_one_batch_and_read_what_each_reads_alone(tiny_bert_dir):
    spec = InputSpec(seq_len=6, num_classes=3, token_dim=8)  # each token: a window of 4, then its difference's
    body = _model(tiny_bert_dir, spec).body  # cf_difference is a --data series' field: the map built directly
    design = dataclasses.replace(DEFAULTS, members=8, scales="1,2", difference=True, blocks="all",
                                 poolings="mean,max,last")
    model = FeatureMap(body, spec, design, seed=1, input_init="gpt2", padding="mask").eval()
    # members 4-7 read the difference: (scale, source) groups, one body pass each
    assert model.groups() == [(0, 2), (1, 3), (4, 6), (5, 7)]
    x, lengths = torch.randn(3, 6, 8), torch.tensor([6, 4, 1])
    with torch.no_grad():
        feats = model.features(x, lengths)[:, 0]
        alone = torch.cat([model.member_features(e, x, lengths) for e in range(8)]
                          + [model.token_features(model.series(x), lengths)], dim=-1)
    assert feats.shape == alone.shape and torch.allclose(feats, alone, atol=1e-5)
    assert not torch.allclose(feats[:, :model.member_width(0)], alone[:, model.member_width(0):2 * model.member_width(0)])


def test_symbol_ids_are_never_merged_and_scales_are_checked(tiny_bert_dir):
    model = _model(tiny_bert_dir, InputSpec(seq_len=5, num_classes=2, vocab_size=9), cf_members=2, cf_scales="4")
    assert model.scales == (1, 1)
    long = _model(tiny_bert_dir, InputSpec(seq_len=3, num_classes=2, token_dim=2), cf_members=1, cf_scales="8")
    assert long.scales == (3,)  # no member merges more tokens than there are
    assert scale_factors("1, 2,4") == (1, 2, 4)
    for bad in ("0", "x", ""):
        with pytest.raises(ConfigError, match="cf_scales"):
            scale_factors(bad)


def test_ppv_pooling_counts_real_positions_above_each_threshold_and_its_thresholds_are_fitted_with_the_head(tiny_bert_dir):
    model = _model(tiny_bert_dir, cf_members=2, cf_poolings="max,ppv").eval()
    q = len(DEFAULTS.ppv_quantiles)
    assert model.member_width(0) == (1 + q) * 32 and len(model.thresholds) == 2
    trained = {n.split(".")[0] for n, p in model.named_parameters() if p.requires_grad}
    assert trained == {"input", "head", "thresholds"}  # saved with the run, as the head is
    with torch.no_grad():
        model.thresholds[0].copy_(torch.linspace(-1, 1, q)[None, :, None].expand(1, q, 32))
    x = torch.randn(1, 6, 4)
    padded = torch.cat([x[:, :4], torch.full((1, 2, 4), 1e3)], dim=1)
    with torch.no_grad():
        short = model.member_features(0, x[:, :4], torch.tensor([4]))
        masked = model.member_features(0, padded, torch.tensor([4]))
        h = model.body.block(0, model.body.embed(model.input[0](x[:, :4])), None)[0]  # (4, 32)
    assert torch.allclose(short, masked, atol=1e-6)  # padding never counted
    for i, t in enumerate(torch.linspace(-1, 1, q)):
        assert torch.allclose(short[0, 32 * (1 + i):32 * (2 + i)], (h > t).float().mean(0))
    assert model.block_states(x[:, :4], torch.tensor([4])).shape == (1, 6 * 32 + 3 * 32)  # scales 1 and 2, zero-filled


def test_the_columns_without_a_pooling_are_the_features_the_model_without_it_reads(tiny_bert_dir):
    spec = InputSpec(seq_len=6, num_classes=3, token_dim=4)
    both = _model(tiny_bert_dir, spec, cf_members=3, cf_blocks="all", cf_poolings="max,ppv,flatten").eval()
    alone = _model(tiny_bert_dir, spec, cf_members=3, cf_blocks="all", cf_poolings="max,flatten").eval()
    x = torch.randn(5, 6, 4)
    with torch.no_grad():
        for t in both.thresholds:
            t.normal_()
        kept = both.columns_without("ppv")
        assert len(kept) == alone.num_features
        torch.testing.assert_close(both.features(x)[:, 0, kept], alone.features(x)[:, 0])
