"""Every body family: same outputs as Hugging Face's own forward, groups cover every parameter."""

import re
import time

import pytest
import torch

from fpt.bodies import BODIES, FAMILIES, BodySpec, build_body
from fpt.bodies.gpt2 import GPT2_SIZES, gpt2_config
from fpt.errors import BodyUnavailableError


def _hf_reference(path: str, x: torch.Tensor, pad_mask=None) -> torch.Tensor:
    from transformers import AutoModel

    model = AutoModel.from_pretrained(path).eval()
    kwargs = {"attention_mask": pad_mask.long()} if pad_mask is not None else {}
    return model(inputs_embeds=x, **kwargs).last_hidden_state


def _run(body, x, pad_mask=None):
    h = body.embed(x)
    for i in range(len(body.blocks)):
        h = body.block(i, h, pad_mask)
    return body.final_norm(h)


@torch.no_grad()
def test_forward_matches_huggingface(tiny_body_dir):
    body = build_body(BodySpec(tiny_body_dir, "pretrained", seq_len=12, dropout=0.1)).eval()
    x = torch.randn(3, 12, body.width)
    torch.testing.assert_close(_run(body, x), _hf_reference(tiny_body_dir, x), atol=1e-5, rtol=1e-4)


@torch.no_grad()
def test_padding_mask_matches_huggingface(tiny_bert_dir):
    body = build_body(BodySpec(tiny_bert_dir, "pretrained", seq_len=10)).eval()
    x = torch.randn(2, 10, body.width)
    mask = torch.tensor([[True] * 10, [True] * 6 + [False] * 4])
    ours, ref = _run(body, x, mask), _hf_reference(tiny_bert_dir, x, mask)
    torch.testing.assert_close(ours[1, :6], ref[1, :6], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(ours[0], ref[0], atol=1e-5, rtol=1e-4)


def test_groups_cover_every_parameter_exactly_once(tiny_body_dir):
    body = build_body(BodySpec(tiny_body_dir, "random", seq_len=8))
    patterns = {g: re.compile(p) for g, p in body.groups.items()}
    for name, _ in body.named_parameters():
        hits = [g for g, p in patterns.items() if p.search(name)]
        assert len(hits) == 1, (name, hits)
    counts = {g: sum(p.numel() for n, p in body.named_parameters() if patterns[g].search(n)) for g in patterns}
    assert counts["positions"] == 8 * 32
    assert counts["layernorm"] == (2 * 2 * 2 + 2) * 32  # 2 norms per block (+ final / embedding norm)


def test_positions_are_trimmed_and_checked(tiny_body_dir):
    body = build_body(BodySpec(tiny_body_dir, "random", seq_len=5))
    assert tuple(body.positions.shape) == (5, 32)
    with pytest.raises(ValueError, match="needs 500 positions .* has only 128"):
        build_body(BodySpec(tiny_body_dir, "random", seq_len=500))


def test_random_init_is_seeded_and_differs_from_pretrained(tiny_gpt2_dir):
    a = build_body(BodySpec(tiny_gpt2_dir, "random", seq_len=4, seed=1))
    b = build_body(BodySpec(tiny_gpt2_dir, "random", seq_len=4, seed=1))
    c = build_body(BodySpec(tiny_gpt2_dir, "random", seq_len=4, seed=2))
    p = build_body(BodySpec(tiny_gpt2_dir, "pretrained", seq_len=4))
    w = "blocks.0.attn.c_attn.weight"
    sd = [m.state_dict()[w] for m in (a, b, c, p)]
    assert torch.equal(sd[0], sd[1]) and not torch.equal(sd[0], sd[2]) and not torch.equal(sd[0], sd[3])


def test_dropout_setting_reaches_every_dropout(tiny_gpt2_dir):
    body = build_body(BodySpec(tiny_gpt2_dir, "random", seq_len=4, dropout=0.3))
    ps = {m.p for m in body.modules() if isinstance(m, torch.nn.Dropout)}
    assert ps == {0.3} and body.dropout == 0.3


def test_attention_weights_are_distributions(tiny_body_dir):
    body = build_body(BodySpec(tiny_body_dir, "random", seq_len=6)).eval()
    a = body.attention_weights(0, body.embed(torch.randn(2, 6, body.width)), None)
    assert a.shape == (2, 4, 6, 6)
    torch.testing.assert_close(a.sum(-1), torch.ones(2, 4, 6))
    if body.causal:
        assert torch.all(a.triu(1) == 0)


def test_gpt2_sizes_build_offline_from_known_hyperparameters():
    assert GPT2_SIZES == {"gpt2": (12, 768, 12), "gpt2-medium": (24, 1024, 16),
                          "gpt2-large": (36, 1280, 20), "gpt2-xl": (48, 1600, 25)}
    c = gpt2_config("gpt2-xl")
    assert (c.n_layer, c.n_embd, c.n_head, c.n_positions) == (48, 1600, 25, 1024)


def test_minilm_ships_with_its_package_and_matches_huggingface():
    from fpt.bodies.bert import minilm_dir

    body = build_body(BodySpec("minilm", "pretrained", seq_len=7)).eval()
    assert (body.width, len(body.blocks), body.heads) == (384, 6, 12)
    x = torch.randn(2, 7, 384)
    with torch.no_grad():
        torch.testing.assert_close(_run(body, x), _hf_reference(str(minilm_dir()), x), atol=1e-4, rtol=1e-4)


def test_unreachable_hub_fails_fast_naming_the_offline_body(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.setenv("HF_HOME", "/nonexistent-fpt-test-cache")
    start = time.monotonic()
    with pytest.raises(BodyUnavailableError, match=r"not in the local Hugging Face cache.*--body minilm"):
        build_body(BodySpec("gpt2", "pretrained", seq_len=4))
    assert time.monotonic() - start < 15


def test_offline_flag_is_named_in_the_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-fpt-test-cache")
    with pytest.raises(BodyUnavailableError, match="HF_HUB_OFFLINE is set.*--body minilm"):
        build_body(BodySpec("bert-base-uncased", "pretrained", seq_len=4))


def test_bad_local_directory_is_named(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(BodyUnavailableError, match=str(tmp_path)):
        build_body(BodySpec(str(tmp_path), "pretrained", seq_len=4))


def test_a_missing_body_folder_is_named_before_transformers_is_imported(tmp_path, monkeypatch):
    """A body given as a path that is no folder was read as a hub id after transformers' import ('not in the local
    Hugging Face cache and the hub cannot be reached'): seconds in each worker of a sweep or table before the wrong
    reason. A hub id ('org/name', a relative folder name) is still a hub id."""
    import builtins

    real = builtins.__import__

    def no_transformers(name, *args, **kwargs):
        if name == "transformers" or name.startswith("transformers."):
            raise AssertionError("transformers was imported before the missing folder was said")
        return real(name, *args, **kwargs)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(builtins, "__import__", no_transformers)
    for body in (str(tmp_path / "no-such-body"), "./no-such-body", "../no-such-body", "~/no-such-fpt-body"):
        with pytest.raises(BodyUnavailableError) as err:
            build_body(BodySpec(body, "random", seq_len=4))
        assert str(err.value).startswith(f"cannot load the model config for {body!r}: no such folder. Use --body "
                                         "minilm"), err.value
    with pytest.raises(AssertionError, match="transformers was imported"):  # a hub id: transformers looks it up
        build_body(BodySpec("no-such-org/no-such-body", "random", seq_len=4))


def test_weights_that_lack_a_block_are_refused_naming_it(tiny_gpt2_dir, tmp_path):
    """A local directory whose model.safetensors lacked block 1 built a 'pretrained' body whose block 1 was random:
    transformers' note of the missing weights is silenced on the command line, and fpt train trained on it."""
    import shutil

    from safetensors.torch import load_file, save_file

    shutil.copytree(tiny_gpt2_dir, tmp_path / "partial")
    weights = load_file(tmp_path / "partial" / "model.safetensors")
    save_file({k: v for k, v in weights.items() if not k.startswith("h.1.")}, tmp_path / "partial" / "model.safetensors",
              metadata={"format": "pt"})
    with pytest.raises(BodyUnavailableError, match=r"its weights lack h\.1\.attn\.c_attn\.bias, h\.1\.attn\.c_attn\."
                                                   r"weight, .* \(12 in all\) of the GPT2Model .*--init random"):
        build_body(BodySpec(str(tmp_path / "partial"), "pretrained", seq_len=4))
    build_body(BodySpec(str(tmp_path / "partial"), "random", seq_len=4))  # its architecture, drawn on purpose


def test_a_masked_language_models_directory_loads_without_its_pooler(tmp_path):
    """save_pretrained() of BertForMaskedLM (and of roberta-base, an image classifier's ViT) writes no pooler, which no
    body reads: the body loads, its blocks the saved ones."""
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    mlm = BertForMaskedLM(BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                                     max_position_embeddings=128, vocab_size=50))
    mlm.save_pretrained(tmp_path / "mlm")
    body = build_body(BodySpec(str(tmp_path / "mlm"), "pretrained", seq_len=4))
    saved = dict(mlm.bert.encoder.layer[1].named_parameters())
    for name, value in body.blocks[1].named_parameters():
        torch.testing.assert_close(value, saved[name], rtol=0, atol=0)


def test_registries_list_every_body_and_family():
    assert set(GPT2_SIZES) | {"minilm"} <= set(BODIES.names())
    assert {"gpt2", "bert", "roberta"} <= set(FAMILIES.names())
