"""Values in other libraries' containers as the plain NumPy arrays fpt reads, before anything reads their shape: a
torch tensor (on any device, requiring grad, in bfloat16), a PyTorch ``TensorDataset`` of (X, y), and a NumPy masked
array (its masked values are missing values, never the numbers that happen to lie under the mask)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def is_tensor(value: Any) -> bool:
    """Whether ``value`` is a torch tensor (without importing torch when it is not loaded: nothing else can be one)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def tensor_values(value: Any, where: str, error: type[Exception]) -> np.ndarray:
    """A tensor's values as a NumPy array: detached, on the CPU, bfloat16 (and the other dtypes NumPy lacks) as
    float32, which holds every one of their values. torch's own ``.numpy()`` refuses each of these, and a 'meta'
    tensor has no values to give."""
    import torch

    if value.device.type == "meta":
        raise error(f"{where} is a torch tensor on the 'meta' device, which has a shape {tuple(value.shape)} but no "
                    "values; give the tensor of its values (on 'cpu' or 'cuda')")
    if value.layout != torch.strided:
        raise error(f"{where} is a sparse torch tensor ({value.layout}); give its values dense (tensor.to_dense())")
    value = value.detach().cpu().resolve_conj().resolve_neg()
    try:
        return value.numpy()
    except TypeError:  # a dtype NumPy has no counterpart for (bfloat16, float8 ...)
        if value.is_floating_point():
            return value.float().numpy()
        raise error(f"{where} is a torch tensor of {value.dtype}, which NumPy cannot hold; give it as float32 "
                    "(tensor.float()) or int64 (tensor.long())") from None


def inputs_array(value: Any, where: str, error: type[Exception]) -> Any:
    """Inputs ``X`` as fpt reads them: a tensor as its values (``tensor_values``), a masked array with its masked
    values NaN (a missing value, which a table's token and a series read as such and an image refuses: np.asarray
    would read the numbers under the mask as data); anything else as it is."""
    if is_tensor(value):
        value = tensor_values(value, where, error)
    if not isinstance(value, np.ma.MaskedArray):
        return value
    mask = np.ma.getmaskarray(value)
    if not mask.any():
        return np.ma.getdata(value)
    if value.dtype.kind not in "iubf":
        raise error(f"{where} is a masked array of {value.dtype} with {int(mask.sum())} masked values; give plain "
                    "values (X.filled(...))")
    floats = value.dtype if value.dtype.kind == "f" else np.float64
    values = np.ma.getdata(value).astype(floats, copy=True)
    values[mask] = np.nan
    return values


def targets_array(value: Any, where: str, error: type[Exception]) -> Any:
    """Targets ``y`` as fpt reads them: a tensor as its values; a masked array refused where any value is masked (a
    target cannot be missing), else its values; anything else as it is."""
    if is_tensor(value):
        value = tensor_values(value, where, error)
    if not isinstance(value, np.ma.MaskedArray):
        return value
    mask = np.ma.getmaskarray(value)
    if mask.any():
        rows = mask.reshape(len(mask), -1).any(axis=1) if mask.ndim else mask.reshape(1)
        raise error(f"{where} is masked at index {int(np.flatnonzero(rows)[0])} ({int(rows.sum())} of {len(rows)} "
                    "examples); a target cannot be missing: leave those examples out (keep = ~np.ma.getmaskarray(y); "
                    "X[keep], y[keep].data)")
    return np.ma.getdata(value)


def tensor_pair(data: Any, where: str, error: type[Exception]) -> tuple[Any, Any] | None:
    """A PyTorch ``TensorDataset`` of two tensors as its (X, y); None for anything that is not a torch dataset or
    loader. A ``DataLoader``, or any other torch dataset, is refused naming the fix: fpt batches and shuffles itself,
    and reads examples as arrays."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    from torch.utils.data import DataLoader, Dataset, TensorDataset

    if isinstance(data, TensorDataset):
        if len(data.tensors) != 2:
            raise error(f"{where}: a TensorDataset of {len(data.tensors)} tensors; fpt reads one of two, (X, y): "
                        "give TensorDataset(X, y), or data=(X, y)")
        return data.tensors[0], data.tensors[1]
    if isinstance(data, DataLoader):
        inner = ("data=loader.dataset (its TensorDataset)" if isinstance(data.dataset, TensorDataset) else
                 "data=(X, y), the arrays or tensors its dataset reads")
        raise error(f"{where}: a torch DataLoader serves batches, and fpt batches and shuffles the examples itself; "
                    f"give {inner}")
    if isinstance(data, Dataset):
        raise error(f"{where}: a torch {type(data).__name__} gives one example at a time; fpt reads all of them as "
                    "arrays: give data=(X, y) (e.g. stacked: X = torch.stack([x for x, _ in ds]))")
    return None


__all__ = ["inputs_array", "is_tensor", "targets_array", "tensor_pair", "tensor_values"]
