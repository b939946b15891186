"""Unpickling downloaded data without running the code a pickle may name.

CIFAR-10's batches and TAPE's LMDB records are pickles. ``pickle.load`` on an untrusted file
can call anything (a reduce to ``os.system``), so both are read only by ``RestrictedUnpickler``:
it rebuilds plain Python values and numpy dtypes, scalars and arrays, and refuses every other
global before anything is called.
"""

from __future__ import annotations

import builtins
import codecs
import io
import pickle
from typing import Any

from fpt.tasks.base import DataError


def _numpy_core() -> tuple[Any, Any]:
    """numpy's multiarray and numeric modules under numpy 2 (``numpy._core``) or 1 (``numpy.core``)."""
    try:
        from numpy._core import multiarray, numeric
    except ImportError:  # numpy < 1.26 has no numpy._core alias
        from numpy.core import multiarray, numeric  # type: ignore[no-redef]
    return multiarray, numeric


_MULTIARRAY, _NUMERIC = _numpy_core()
_SAFE_BUILTINS = ("bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list", "set",
                  "slice", "str", "tuple")


def _allowed() -> dict[tuple[str, str], Any]:
    import numpy as np

    return {
        **{("builtins", name): getattr(builtins, name) for name in _SAFE_BUILTINS},
        **{("__builtin__", name): getattr(builtins, name) for name in _SAFE_BUILTINS},  # Python 2 pickles
        ("_codecs", "encode"): codecs.encode,  # how protocol 2 stores bytes (numpy's array buffers)
        ("numpy", "dtype"): np.dtype,
        ("numpy", "ndarray"): np.ndarray,
        # Written by numpy 1 as numpy.core.*, by numpy 2 as numpy._core.*: the same functions.
        **{(f"numpy.{core}.multiarray", name): getattr(_MULTIARRAY, name)
           for core in ("core", "_core") for name in ("scalar", "_reconstruct")},
        **{(f"numpy.{core}.numeric", "_frombuffer"): _NUMERIC._frombuffer for core in ("core", "_core")},  # protocol 5
    }


ALLOWED: dict[tuple[str, str], Any] = _allowed()


class RefusedGlobal(pickle.UnpicklingError):
    """A pickle asked for a callable outside ``ALLOWED``."""


class RestrictedUnpickler(pickle.Unpickler):
    """Rebuilds only plain Python values and numpy dtypes, scalars and arrays (``ALLOWED``)."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return ALLOWED[(module, name)]
        except KeyError:
            raise RefusedGlobal(f"the pickle asks for {module}.{name}, which is not a plain Python or numpy type; "
                                "refusing to load it (pickle can run arbitrary code)") from None


def safe_loads(data: bytes, where: str, encoding: str = "ASCII", refused_hint: str = "") -> Any:
    """Unpickle ``data`` with ``RestrictedUnpickler``; any failure is a DataError naming ``where``.

    ``encoding`` decodes Python 2 strings (``latin1`` for CIFAR-10's original batches).
    """
    try:
        return RestrictedUnpickler(io.BytesIO(data), encoding=encoding).load()
    except RefusedGlobal as exc:
        raise DataError(f"{where}: {exc}{refused_hint}") from None
    except Exception as exc:  # a corrupt pickle can fail in many ways (EOFError, UnpicklingError, ValueError, ...)
        raise DataError(f"{where}: not a readable pickle ({type(exc).__name__}: {exc}); the file is truncated "
                        "or of another format: download it again") from None
