import numpy as np
import pytest
import torch

from fpt.transforms import (
    augment_images,
    chunk_tokens,
    grayscale_lra,
    normalize,
    pad_to,
    patchify,
    random_crop,
    random_hflip,
    random_rotation,
    rotate,
)


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_chunk_tokens():
    assert chunk_tokens(np.arange(12).reshape(2, 6), 3).tolist()[1] == [[6, 7, 8], [9, 10, 11]]
    with pytest.raises(ValueError, match="multiple"):
        chunk_tokens(np.zeros((1, 5)), 2)


def test_patchify_order_rows_then_columns_then_channels():
    N, C, H, W, p = 2, 3, 8, 12, 4
    x = torch.arange(N * C * H * W, dtype=torch.float32).view(N, C, H, W)
    t = patchify(x, p)
    assert t.shape == (N, (H // p) * (W // p), p * p * C)
    for n, c, r, col in [(0, 0, 0, 0), (1, 2, 5, 9), (0, 1, 7, 11), (1, 0, 3, 4)]:
        token = (r // p) * (W // p) + col // p
        feature = ((r % p) * p + col % p) * C + c
        assert t[n, token, feature] == x[n, c, r, col]
    assert torch.equal(patchify(x, 1)[..., 0::C].squeeze(-1), x[:, 0].reshape(N, -1))  # pixels row-major
    with pytest.raises(ValueError, match="multiple of the patch size"):
        patchify(x, 5)


def test_pad_to_centres_with_zeros():
    x = torch.ones(2, 1, 28, 28)
    y = pad_to(x, 32)
    assert y.shape == (2, 1, 32, 32) and y.sum() == x.sum()
    assert torch.equal(y[:, :, 2:30, 2:30], x) and y[:, :, :2].abs().sum() == 0
    assert pad_to(x, 28) is not None and torch.equal(pad_to(x, 28), x)
    with pytest.raises(ValueError):
        pad_to(x, 27)


def test_grayscale_lra_formula_and_rounding():
    rgb = torch.tensor([[255, 255, 255], [0, 0, 0], [100, 50, 200], [1, 2, 3], [10, 0, 0]], dtype=torch.uint8)
    images = rgb.T.reshape(1, 3, 1, 5).contiguous()  # 5 pixels in one row
    g = grayscale_lra(images)
    assert g.shape == (1, 1, 1, 5) and g.dtype == torch.uint8
    expected = [int(np.floor(0.2989 * r + 0.5870 * gg + 0.1140 * b + 0.5)) for r, gg, b in rgb.tolist()]
    assert g.flatten().tolist() == expected == [255, 0, 82, 2, 3]  # 0.2989 * 10 = 2.989 rounds to 3
    with pytest.raises(ValueError, match="uint8"):
        grayscale_lra(images.float())


def test_normalize_per_channel():
    x = torch.ones(1, 3, 2, 2) * torch.tensor([0.5, 1.0, 0.0]).view(1, 3, 1, 1)
    y = normalize(x, (0.5, 0.5, 0.5), (0.5, 0.25, 1.0))
    assert y[0, :, 0, 0].tolist() == [0.0, 2.0, -0.5]
    with pytest.raises(ValueError, match="channels"):
        normalize(x, (0.5,), (1.0,))


def test_random_crop_is_a_shifted_window_and_reproducible():
    x = torch.rand(16, 3, 8, 8) + 1  # nonzero everywhere, so the zero padding is visible
    a, b = random_crop(x, 4, gen(1)), random_crop(x, 4, gen(1))
    assert a.shape == x.shape and torch.equal(a, b)
    assert not torch.equal(a, random_crop(x, 4, gen(2)))
    padded = torch.nn.functional.pad(x, (4, 4, 4, 4))
    for n in range(16):  # each output is one 8x8 window of its padded image, channels aligned
        windows = [(i, j) for i in range(9) for j in range(9) if torch.equal(padded[n, :, i:i + 8, j:j + 8], a[n])]
        assert windows


def test_flip_and_rotation():
    x = torch.rand(4, 3, 6, 6)
    assert torch.equal(random_hflip(x, gen(), p=1.0), x.flip(-1))
    assert torch.equal(random_hflip(x, gen(), p=0.0), x)
    assert torch.equal(rotate(x, torch.full((4,), 90.0)), torch.rot90(x, 1, (-2, -1)))  # counter-clockwise
    assert torch.equal(rotate(x, torch.zeros(4)), x)
    r = random_rotation(x, 20, gen(3))
    assert r.shape == x.shape and torch.equal(r, random_rotation(x, 20, gen(3)))
    angles = (torch.rand(4, generator=gen(3), dtype=torch.float64) * 2 - 1) * 20  # the angles it drew
    assert angles.abs().max() <= 20 and angles.std() > 0 and torch.equal(r, rotate(x, angles))
    assert set(r.unique().tolist()) <= set(x.unique().tolist()) | {0.0}  # nearest: moved pixels or zero fill


def test_augment_images_reproducible_per_generator():
    x = torch.rand(8, 3, 32, 32)
    a, b, c = augment_images(x, gen(5)), augment_images(x, gen(5)), augment_images(x, gen(6))
    assert a.shape == x.shape and a.dtype == x.dtype
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a.min() >= 0 and a.max() <= x.max()  # nearest sampling: no new values, only zero fill
