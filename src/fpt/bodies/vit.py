"""ViT bodies: bidirectional, pre-norm blocks pretrained on images (the paper's Table 2 ViT row).

Our input layer replaces ViT's patch embedding, so the patch projection, the CLS token
and the pooler are dropped: there is no CLS token and the head reads the last tokens, as
for every other body. What is kept of the embeddings is the learned position table,
fitted to the task's length by ``resize_positions`` and then trained like any body's
positions (``vit_positions="resized"``, the default).

The official FPT code instead discards ViT's table and trains a new one of 1024 rows
initialised to zeros (``vit_pos_embed``); ``vit_positions="official"`` does the same. It
also took timm's ``vit_base_patch16_224``, which timm names as ImageNet-21k-pretrained
and ImageNet-1k-fine-tuned; ``vit-in21k-ft-in1k`` is that checkpoint on the Hugging Face
hub (``google/vit-base-patch16-224``). See docs/fidelity.md.

``vit`` is ViT-B/16 pretrained on ImageNet-21k (``google/vit-base-patch16-224-in21k``);
``--init random`` builds the same architecture offline from its known hyperparameters.
The blocks are read in the module layout of transformers 5 (``layers``,
``attention.q_proj``, ``mlp.fc1``); Hugging Face converts older checkpoints on loading.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from fpt.bodies import attention
from fpt.bodies.base import BODIES, FAMILIES, BodySpec, set_dropout
from fpt.bodies.hub import load_model
from fpt.errors import ConfigError, DependencyError

Tensor = torch.Tensor

VIT_HUB = "google/vit-base-patch16-224-in21k"
# ImageNet-21k pretrained, then fine-tuned on ImageNet-1k: what timm's vit_base_patch16_224 (the official code's) is.
VIT_HUB_FT_IN1K = "google/vit-base-patch16-224"
VIT_POSITIONS = ("resized", "official")
OFFICIAL_POSITION_ROWS = 1024  # the official code's vit_pos_embed: zeros(1, 1024, width)
# ViT-B/16, from the released config: 12 layers, width 768, 12 heads, MLP 3072, 14 x 14 patches.
VIT_BASE = {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072,
            "image_size": 224, "patch_size": 16, "layer_norm_eps": 1e-12, "qkv_bias": True}


def resize_positions(table: Tensor, seq_len: int) -> Tensor:
    """Fit a (N, D) table of patch positions to ``seq_len`` rows: (seq_len, D).

    The rows are a square grid of patches in row-major order (14 x 14 for ViT-B/16 at 224
    pixels). A task whose length is a perfect square s * s is taken to be an s x s grid too,
    so the grid is resized in 2-D with bicubic interpolation (what Hugging Face's and DINO's
    ``interpolate_pos_encoding`` do for other image sizes). Any other length has no grid
    to match, so the rows are resized as a 1-D sequence with linear interpolation whose
    end points stay the first and last rows (align_corners=True). The same length returns
    a copy unchanged.
    """
    n, width = table.shape
    grid, side = math.isqrt(n), math.isqrt(seq_len)
    source = table.detach().float()
    if seq_len == n:
        out = source.clone()
    elif grid * grid == n and side * side == seq_len:
        image = source.reshape(grid, grid, width).permute(2, 0, 1)[None]  # (1, D, g, g)
        image = F.interpolate(image, size=(side, side), mode="bicubic", align_corners=False)  # (1, D, s, s)
        out = image[0].permute(1, 2, 0).reshape(seq_len, width)  # (s * s, D), row-major like the source
    else:
        line = source.T[None]  # (1, D, N)
        line = F.interpolate(line, size=seq_len, mode="linear", align_corners=True)  # (1, D, T)
        out = line[0].T  # (T, D)
    return out.to(table.dtype).contiguous()


@FAMILIES.register("vit")
class ViTBody(nn.Module):
    causal = False
    groups = {
        "positions": r"^positions$",
        "layernorm": r"^(blocks\.\d+\.layernorm_(before|after)|layernorm)\.",
        "attention": r"^blocks\.\d+\.attention\.",
        "feedforward": r"^blocks\.\d+\.mlp\.",
    }

    def __init__(self, hf_model: nn.Module, spec: BodySpec) -> None:
        super().__init__()
        if not hasattr(hf_model, "layers") or not hasattr(hf_model.layers[0].attention, "q_proj"):
            raise DependencyError(
                "the ViT body reads the module layout of transformers >= 5 (ViTModel.layers, attention.q_proj); "
                "upgrade it: pip install -U 'transformers>=5'"
            )
        config = hf_model.config
        self.width = config.hidden_size
        self.heads = config.num_attention_heads
        self.dropout = spec.dropout
        if spec.vit_positions not in VIT_POSITIONS:
            raise ConfigError(f"vit_positions {spec.vit_positions!r} is not one of {', '.join(VIT_POSITIONS)}")
        if spec.vit_positions == "official":
            # A new zero table of 1024 rows (more if the task is longer); the pretrained one is not used.
            rows = max(OFFICIAL_POSITION_ROWS, spec.seq_len)
            self.positions = nn.Parameter(torch.zeros(rows, self.width))
        else:
            # Row 0 of the table belongs to the CLS token, which we do not use.
            table = hf_model.embeddings.position_embeddings[0, 1:]  # (N, D) patch positions
            self.positions = nn.Parameter(resize_positions(table, spec.seq_len))
        self.drop = nn.Dropout(spec.dropout)
        self.blocks = hf_model.layers
        self.layernorm = hf_model.layernorm
        set_dropout(self, spec.dropout)

    def embed(self, h: Tensor) -> Tensor:
        return self.drop(h + self.positions[: h.shape[1]])  # (B, T, D)

    def _qkv(self, index: int, h: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        layer = self.blocks[index]
        x = layer.layernorm_before(h)
        a = layer.attention
        return a.q_proj(x), a.k_proj(x), a.v_proj(x)  # 3 x (B, T, D)

    def block(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        layer = self.blocks[index]
        q, k, v = self._qkv(index, h)
        a = attention.attend(q, k, v, heads=self.heads, causal=False, pad_mask=pad_mask,
                             dropout_p=self.dropout if self.training else 0.0)
        h = h + layer.dropout(layer.attention.o_proj(a))  # (B, T, D)
        return h + layer.dropout(layer.mlp(layer.layernorm_after(h)))  # (B, T, D)

    def block_rows(self, index: int, h: Tensor, pad_mask: Tensor | None, rows: Tensor) -> Tensor:
        """Block ``index`` computed only for the tokens at ``rows`` (B, k): (B, k, D).

        Keys and values come from every token; queries, the output projection and the
        MLP run for the k tokens the head reads.
        """
        layer = self.blocks[index]
        a = layer.attention
        x = layer.layernorm_before(h)  # (B, T, D)
        q = a.q_proj(attention.gather_rows(x, rows))  # (B, k, D)
        out = attention.attend_rows(q, a.k_proj(x), a.v_proj(x), rows, heads=self.heads, causal=False,
                                    pad_mask=pad_mask, dropout_p=self.dropout if self.training else 0.0)
        out = attention.gather_rows(h, rows) + layer.dropout(a.o_proj(out))  # (B, k, D)
        return out + layer.dropout(layer.mlp(layer.layernorm_after(out)))

    def final_norm(self, h: Tensor) -> Tensor:
        return self.layernorm(h)

    def attention_weights(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        q, k, _ = self._qkv(index, h)
        return attention.probabilities(q, k, heads=self.heads, causal=False, pad_mask=pad_mask)


def vit_config():
    from transformers import ViTConfig

    return ViTConfig(**VIT_BASE)


@BODIES.register("vit")
def build_vit(spec: BodySpec) -> ViTBody:
    config = vit_config() if spec.init == "random" else None
    return ViTBody(load_model(VIT_HUB, spec.init, spec.seed, config), spec)


@BODIES.register("vit-in21k-ft-in1k")
def build_vit_ft_in1k(spec: BodySpec) -> ViTBody:
    """ViT-B/16 pretrained on ImageNet-21k and fine-tuned on ImageNet-1k: the official code's timm weights."""
    config = vit_config() if spec.init == "random" else None
    return ViTBody(load_model(VIT_HUB_FT_IN1K, spec.init, spec.seed, config), spec)
