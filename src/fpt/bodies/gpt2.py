"""GPT-2 bodies: causal, pre-norm blocks; the paper's default.

Random GPT-2 of every size builds offline from its known hyperparameters.
"""

from __future__ import annotations

import torch
from torch import nn

from fpt.bodies import attention
from fpt.bodies.base import BODIES, FAMILIES, BodySpec, set_dropout, trimmed_positions
from fpt.bodies.hub import load_model

Tensor = torch.Tensor

# name -> (layers, width, heads), from the released GPT-2 configs.
GPT2_SIZES = {
    "gpt2": (12, 768, 12),
    "gpt2-medium": (24, 1024, 16),
    "gpt2-large": (36, 1280, 20),
    "gpt2-xl": (48, 1600, 25),
}


@FAMILIES.register("gpt2")
class GPT2Body(nn.Module):
    causal = True
    groups = {
        "positions": r"^positions$",
        "layernorm": r"^(blocks\.\d+\.ln_[12]|ln_f)\.",
        "attention": r"^blocks\.\d+\.attn\.",
        "feedforward": r"^blocks\.\d+\.mlp\.",
    }
    # fpt.bodies.lora: the attention's two projections (block_rows calls c_attn as a module once it is adapted)
    lora_targets = r"blocks\.\d+\.attn\.(c_attn|c_proj)"
    lora_fan_in_fan_out = True  # transformers' Conv1D stores its weight (in, out): PEFT must know

    def __init__(self, hf_model: nn.Module, spec: BodySpec) -> None:
        super().__init__()
        config = hf_model.config
        self.width = config.n_embd
        self.heads = config.n_head
        self.dropout = spec.dropout
        # The word embeddings (wte) are never used: inputs come from the task's input layer.
        self.positions = trimmed_positions(hf_model.wpe.weight, spec.seq_len, spec.name)
        self.drop = nn.Dropout(spec.dropout)
        self.blocks = hf_model.h
        self.ln_f = hf_model.ln_f
        set_dropout(self, spec.dropout)

    def embed(self, h: Tensor) -> Tensor:
        return self.drop(h + self.positions[: h.shape[1]])  # (B, T, D)

    def _qkv(self, index: int, h: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        block = self.blocks[index]
        return block.attn.c_attn(block.ln_1(h)).split(self.width, dim=2)  # 3 x (B, T, D)

    def block(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        # Right padding never reaches a real token through causal attention, so the
        # pad mask is not needed here and the fused causal kernel can be used.
        block = self.blocks[index]
        q, k, v = self._qkv(index, h)
        a = attention.attend(q, k, v, heads=self.heads, causal=True, pad_mask=None,
                             dropout_p=self.dropout if self.training else 0.0)
        h = h + block.attn.resid_dropout(block.attn.c_proj(a))  # (B, T, D)
        return h + block.mlp(block.ln_2(h))  # (B, T, D)

    def block_rows(self, index: int, h: Tensor, pad_mask: Tensor | None, rows: Tensor) -> Tensor:
        """Block ``index`` computed only for the tokens at ``rows`` (B, k): (B, k, D).

        Keys and values still come from every token, but queries, the output projection
        and the MLP run for k tokens instead of T: the last block's other outputs are
        never read by the head.
        """
        block = self.blocks[index]
        D = self.width
        x = block.ln_1(h)  # (B, T, D)
        if hasattr(block.attn.c_attn, "base_layer"):  # LoRA: the update is in the module's forward, not its weight
            q, k, v = block.attn.c_attn(x).split(D, dim=2)  # 3 x (B, T, D)
            q = attention.gather_rows(q, rows)  # (B, k, D)
        else:
            w, b = block.attn.c_attn.weight, block.attn.c_attn.bias  # Conv1D: x @ w + b, w (D, 3D)
            kv = x @ w[:, D:] + b[D:]  # (B, T, 2D)
            k, v = kv.split(D, dim=2)
            q = attention.gather_rows(x, rows) @ w[:, :D] + b[:D]  # (B, k, D)
        a = attention.attend_rows(q, k, v, rows, heads=self.heads, causal=True, pad_mask=None,
                                  dropout_p=self.dropout if self.training else 0.0)
        out = attention.gather_rows(h, rows) + block.attn.resid_dropout(block.attn.c_proj(a))  # (B, k, D)
        return out + block.mlp(block.ln_2(out))

    def final_norm(self, h: Tensor) -> Tensor:
        return self.ln_f(h)

    def attention_weights(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        q, k, _ = self._qkv(index, h)
        return attention.probabilities(q, k, heads=self.heads, causal=True, pad_mask=None)


def gpt2_config(name: str):
    from transformers import GPT2Config

    layers, width, heads = GPT2_SIZES[name]
    return GPT2Config(n_layer=layers, n_embd=width, n_head=heads, n_positions=1024)


@BODIES.register(*GPT2_SIZES)
def build_gpt2(spec: BodySpec) -> GPT2Body:
    config = gpt2_config(spec.name) if spec.init == "random" else None
    return GPT2Body(load_model(spec.name, spec.init, spec.seed, config), spec)
