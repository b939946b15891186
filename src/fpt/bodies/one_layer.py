"""``no-lm``: the control without a language model. One transformer block, trained from scratch.

Tan et al. (NeurIPS 2024) and Zheng et al. (2024) found that replacing a language model by one
attention layer often does as well on time series. This body is that control for fpt: the same
input layer, positions and head as any FPT run around ONE BERT block at MiniLM's width (384,
12 heads, feed-forward 1536, post-norm), freshly initialised and TRAINED. Its block's attention
and feed-forward weights are listed in ``always_trained`` (``fpt.freeze.apply_policy`` trains
them under every policy), so ``--body no-lm`` under the default ``--freeze paper`` trains the
whole model: nothing about it is pretrained, so nothing is frozen.

There are no pretrained weights: ``--init pretrained`` (the default) and ``--init random`` build
the same seeded body.
"""

from __future__ import annotations

from dataclasses import replace

from fpt.bodies.base import BODIES, BodySpec
from fpt.bodies.bert import BertBody
from fpt.bodies.hub import load_model

NAME = "no-lm"
# MiniLM-L6-H384's block (its config.json), one block only; the vocabulary is never used (inputs are embedded by
# FPT's own input layer), so the word table is kept minimal.
MINILM_BLOCK = {"hidden_size": 384, "num_attention_heads": 12, "intermediate_size": 1536, "hidden_act": "gelu",
                "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "vocab_size": 2,
                "num_hidden_layers": 1}


class OneLayerBody(BertBody):
    """A BERT body of one freshly initialised block whose every weight trains."""

    always_trained = frozenset({"attention", "feedforward", "layernorm", "positions"})


@BODIES.register(NAME)
def build_no_lm(spec: BodySpec) -> OneLayerBody:
    from transformers import BertConfig

    config = BertConfig(**MINILM_BLOCK)
    model = load_model(NAME, "random", spec.seed, config)
    return OneLayerBody(model, replace(spec, init="random"))


__all__ = ["MINILM_BLOCK", "NAME", "OneLayerBody", "build_no_lm"]
