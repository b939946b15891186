"""Small pure functions that turn raw data into tokens."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F


def chunk_tokens(bits: np.ndarray, token_dim: int) -> np.ndarray:
    """(B, L) values -> (B, L / token_dim, token_dim) tokens, in order."""
    B, L = bits.shape
    if L % token_dim:
        raise ValueError(f"sequence length {L} is not a multiple of the token dimension {token_dim}")
    return bits.reshape(B, L // token_dim, token_dim)


# --- images -------------------------------------------------------------------------------
# Images are (N, C, H, W) torch tensors. Every function works on the whole batch at once:
# augmentation runs on the training hot path, so there is no per-image Python loop or PIL.

# ITU-R 601 luma weights, as Long Range Arena (tf.image.rgb_to_grayscale) and torchvision use.
GRAY_WEIGHTS = (0.2989, 0.5870, 0.1140)


def patchify(images: torch.Tensor, patch: int) -> torch.Tensor:
    """(N, C, H, W) -> (N, (H/p) * (W/p), p * p * C) tokens.

    Patches are read row-major over the image (left to right, then down); inside a patch the
    features are ordered (row, column, channel) with the channel fastest, i.e. einops'
    ``b c (h p1) (w p2) -> b (h w) (p1 p2 c)`` as in the official code.
    """
    N, C, H, W = images.shape
    if patch < 1 or H % patch or W % patch:
        raise ValueError(f"image size {H}x{W} is not a multiple of the patch size {patch}")
    x = images.reshape(N, C, H // patch, patch, W // patch, patch)  # (N, C, h, p1, w, p2)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (N, h, w, p1, p2, C)
    return x.reshape(N, (H // patch) * (W // patch), patch * patch * C)


def pad_to(images: torch.Tensor, size: int) -> torch.Tensor:
    """Zero-pad (N, C, H, W) to (N, C, size, size), centred (an odd remainder goes bottom/right).

    MNIST's background is 0, so padding 28x28 to 32x32 adds background, not a frame.
    """
    H, W = images.shape[-2:]
    if H > size or W > size:
        raise ValueError(f"cannot pad a {H}x{W} image to {size}x{size}")
    top, left = (size - H) // 2, (size - W) // 2
    return F.pad(images, (left, size - W - left, top, size - H - top))


def grayscale_lra(images: torch.Tensor) -> torch.Tensor:
    """uint8 RGB (N, 3, H, W) -> uint8 grayscale (N, 1, H, W) as Long Range Arena makes it.

    0.2989 R + 0.5870 G + 0.1140 B, rounded half up to 0-255 (TensorFlow's float -> uint8
    conversion); computed in float64 so the rounding does not depend on accumulation order.
    """
    if images.dtype != torch.uint8 or images.ndim != 4 or images.shape[1] != 3:
        raise ValueError(f"grayscale_lra expects uint8 (N, 3, H, W) images, got {images.dtype} {tuple(images.shape)}")
    w = torch.tensor(GRAY_WEIGHTS, dtype=torch.float64).view(1, 3, 1, 1)
    gray = (images.double() * w).sum(1, keepdim=True)  # (N, 1, H, W)
    return torch.floor(gray + 0.5).clamp_(0, 255).to(torch.uint8)


def normalize(images: torch.Tensor, mean: Sequence[float], std: Sequence[float]) -> torch.Tensor:
    """(x - mean[c]) / std[c] per channel of float (N, C, H, W) images."""
    C = images.shape[1]
    if len(mean) != C or len(std) != C:
        raise ValueError(f"normalize: {C} channels but {len(mean)} means and {len(std)} stds")
    m = torch.tensor(mean, dtype=images.dtype, device=images.device).view(1, C, 1, 1)
    s = torch.tensor(std, dtype=images.dtype, device=images.device).view(1, C, 1, 1)
    return (images - m) / s


def random_crop(images: torch.Tensor, padding: int, gen: torch.Generator) -> torch.Tensor:
    """Zero-pad by ``padding`` on every side, then cut each image back to its size at a random offset.

    Same distribution as torchvision's RandomCrop(size, padding): offsets uniform in 0..2*padding.
    """
    N, C, H, W = images.shape
    padded = F.pad(images, (padding, padding, padding, padding))  # (N, C, H + 2p, W + 2p)
    offsets = torch.randint(0, 2 * padding + 1, (N, 2), generator=gen)  # (N, 2): top, left
    rows = offsets[:, :1] + torch.arange(H)  # (N, H)
    cols = offsets[:, 1:] + torch.arange(W)  # (N, W)
    n = torch.arange(N).view(N, 1, 1, 1)
    c = torch.arange(C).view(1, C, 1, 1)
    return padded[n, c, rows.view(N, 1, H, 1), cols.view(N, 1, 1, W)]  # (N, C, H, W)


def random_hflip(images: torch.Tensor, gen: torch.Generator, p: float = 0.5) -> torch.Tensor:
    """Mirror each image left-right with probability ``p``."""
    flip = torch.rand(images.shape[0], generator=gen) < p  # (N,)
    return torch.where(flip.view(-1, 1, 1, 1), images.flip(-1), images)


def rotate(images: torch.Tensor, degrees: torch.Tensor) -> torch.Tensor:
    """Rotate each float image counter-clockwise by its own angle about the centre.

    Nearest-neighbour sampling and zero fill, as torchvision's RandomRotation defaults;
    the corners that rotate in from outside the image are 0.
    """
    N, _, H, W = images.shape
    rad = torch.deg2rad(degrees.to(torch.float64))
    cos, sin = torch.cos(rad), torch.sin(rad)
    # affine_grid maps output to input in coordinates normalised to [-1, 1] per axis; the
    # H/W factors undo that scaling so non-square images rotate rigidly.
    theta = torch.zeros(N, 2, 3, dtype=torch.float64)
    theta[:, 0, 0], theta[:, 0, 1] = cos, -sin * H / W
    theta[:, 1, 0], theta[:, 1, 1] = sin * W / H, cos
    grid = F.affine_grid(theta.to(images.dtype), list(images.shape), align_corners=False)  # (N, H, W, 2)
    return F.grid_sample(images, grid, mode="nearest", padding_mode="zeros", align_corners=False)


def random_rotation(images: torch.Tensor, max_degrees: float, gen: torch.Generator) -> torch.Tensor:
    """Rotate each image by an angle drawn uniformly from [-max_degrees, max_degrees]."""
    angles = (torch.rand(images.shape[0], generator=gen, dtype=torch.float64) * 2 - 1) * max_degrees
    return rotate(images, angles)


def augment_images(images: torch.Tensor, gen: torch.Generator, crop_padding: int = 4, max_degrees: float = 20.0) -> torch.Tensor:
    """The official CIFAR-10 training augmentation, in its order: crop (pad 4), flip, rotation (20 degrees)."""
    x = random_crop(images, crop_padding, gen)
    x = random_hflip(x, gen)
    return random_rotation(x, max_degrees, gen)
