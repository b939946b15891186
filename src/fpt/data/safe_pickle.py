"""Unpickling downloaded data without running the code a pickle may name, nor letting it allocate.

CIFAR-10's batches and TAPE's LMDB records are pickles. ``pickle.load`` on an untrusted file
can call anything (a reduce to ``os.system``), so both are read only by ``RestrictedUnpickler``:
it rebuilds plain Python values and numpy dtypes, scalars and arrays, and refuses every other
global before anything is called.

A type allowlist alone still lets a few bytes ask for a lot of memory (``bytes(10**9)``, a
``BINBYTES8`` opcode declaring a gigabyte, ``_reconstruct`` of a huge shape) or crash numpy
(an object array given a short element list). So, before anything is unpickled, the opcodes
are scanned and every declared length must fit in the bytes that remain; the admitted
callables are wrapped so that nothing they build is larger than the pickle itself; and
numpy arrays are assembled only after loading, from states that were checked (shape, dtype,
data length), never by calling numpy's ``__setstate__`` on what the file says.
"""

from __future__ import annotations

import builtins
import codecs
import io
import math
import pickle
import pickletools
import re
from typing import Any

import numpy as np

from fpt.errors import DataError

MAX_PICKLE_BYTES = 1 << 30  # 1 GiB: a CIFAR-10 batch is 31 MB, a TAPE record a few KB


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
_TEXT_CODECS = {"iso8859-1", "utf-8", "ascii"}  # what _codecs.encode may be asked for (pickle uses latin1)


def _allowed() -> dict[tuple[str, str], Any]:
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


class Refused(pickle.UnpicklingError):
    """A pickle that uses an admitted callable in a way no real data file does (or could crash numpy)."""


class TooLarge(Refused):
    """A pickle declared or asked to build more than it holds."""


# --- opcode scan: declared lengths must fit in the input ------------------------------------

# Opcode byte -> fixed argument bytes, or -1: newline-terminated, -2: two lines, or
# -(10 + width) for a counted argument whose little-endian length prefix is ``width`` bytes.
_ARG: dict[int, int] = {}
for _op in pickletools.opcodes:
    _code, _arg = ord(_op.code.encode("latin1")), _op.arg
    if _arg is None:
        _ARG[_code] = 0
    elif _arg.n >= 0:
        _ARG[_code] = _arg.n
    elif _arg.n == pickletools.UP_TO_NEWLINE:
        _ARG[_code] = -2 if _op.name in ("GLOBAL", "INST") else -1
    else:
        _ARG[_code] = -(10 + {pickletools.TAKEN_FROM_ARGUMENT1: 1, pickletools.TAKEN_FROM_ARGUMENT4: 4,
                            pickletools.TAKEN_FROM_ARGUMENT4U: 4, pickletools.TAKEN_FROM_ARGUMENT8U: 8}[_arg.n])
_STOP, _FRAME = ord("."), 0x95


def scan(data: bytes | memoryview) -> None:
    """Walk the opcodes of ``data``: UnpicklingError for a declared length (bytes, str, long, frame)
    beyond the input, which the C unpickler would allocate before noticing, for an unknown opcode,
    or for a pickle that does not end in STOP."""
    n, pos = len(data), 0
    view = memoryview(data)
    while pos < n:
        op = data[pos]
        pos += 1
        kind = _ARG.get(op)
        if kind is None:
            raise pickle.UnpicklingError(f"unknown opcode {op:#04x} at byte {pos - 1}")
        if op == _STOP:
            return
        if kind >= 0:
            if op == _FRAME and pos + 8 <= n:
                length = int.from_bytes(view[pos:pos + 8], "little")
                if length > n - pos - 8:
                    raise pickle.UnpicklingError(f"pickle data was truncated: a frame at byte {pos - 1} declares "
                                                 f"{length} bytes but {n - pos - 8} remain")
            pos += kind
        elif kind in (-1, -2):
            for _ in range(-kind):
                end = data.find(b"\n", pos)
                if end < 0:
                    raise pickle.UnpicklingError(f"pickle data was truncated (opcode at byte {pos - 1})")
                pos = end + 1
        else:
            width = -kind - 10
            if pos + width > n:
                break
            length = int.from_bytes(view[pos:pos + width], "little", signed=width == 4 and op in (0x54, 0x8B))
            pos += width
            if length > n - pos:
                raise pickle.UnpicklingError(f"pickle data was truncated: opcode {pickletools.code2op[chr(op)].name} "
                                             f"at byte {pos - width - 1} declares {length} bytes but {n - pos} remain")
            pos += max(length, 0)
    raise pickle.UnpicklingError("pickle data was truncated (no STOP opcode)")


# --- guarded callables ---------------------------------------------------------------------


def _nbytes(shape: Any, dtype: np.dtype, where: str) -> int:
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise Refused(f"{where}: shape {shape!r:.60} is not a tuple of non-negative integers")
    return math.prod(shape) * dtype.itemsize


_DTYPE_CODE = re.compile(r"[biufcOSUVMm?][0-9]{0,9}")
_TIME_UNITS = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic"}


class _Dtype:
    """A numpy dtype as the pickle describes it: a type code, then (BUILD) numpy's dtype state.

    The real dtype is made by numpy's public constructors from the checked parts (``real``),
    never by ``dtype.__setstate__``, which a malformed state can crash."""

    __slots__ = ("code", "state", "limit", "made")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, code: str, limit: int) -> None:
        for name, value in (("code", code), ("state", None), ("limit", limit), ("made", None)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise Refused("the pickle sets attributes on a dtype")

    def __setstate__(self, state: Any) -> None:
        if self.state is not None or self.made is not None:
            raise Refused("the pickle sets the state of a dtype twice, or after using it")
        if not isinstance(state, tuple) or not 8 <= len(state) <= 9 or state[0] not in (3, 4):
            raise Refused(f"a dtype state {state!r:.80} is not numpy's (version 3 or 4, 8 or 9 fields)")
        object.__setattr__(self, "state", state)

    def real(self) -> np.dtype:
        if self.made is None:
            object.__setattr__(self, "made", self._make())
        return self.made

    def _make(self) -> np.dtype:
        code, state = self.code, self.state
        base = np.dtype(code)
        if state is None:
            return base
        order, subarray, names, fields, elsize = state[1:6]
        if order not in ("<", ">", "|", "="):
            raise Refused(f"a dtype byte order {order!r:.20}")
        if subarray is not None:
            if names is not None or not isinstance(subarray, tuple) or len(subarray) != 2:
                raise Refused("a dtype subarray is not (dtype, shape)")
            sub, shape = _dtype(subarray[0], self.limit), subarray[1]
            shape = (shape,) if isinstance(shape, int) and not isinstance(shape, bool) else shape
            if _nbytes(shape, sub, "a dtype subarray") > self.limit:
                raise TooLarge(f"a dtype of {math.prod(shape) * sub.itemsize} bytes per element")
            return np.dtype((sub, shape))
        if names is not None:
            if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names) or not isinstance(fields, dict) \
                    or not isinstance(elsize, int) or not 0 <= elsize <= self.limit:
                raise Refused("a structured dtype's names, fields or size are not numpy's")
            formats, offsets, titles = [], [], []
            for n in names:
                entry = fields.get(n)
                if not isinstance(entry, tuple) or len(entry) not in (2, 3) or not isinstance(entry[1], int) \
                        or isinstance(entry[1], bool) or entry[1] < 0:
                    raise Refused(f"a structured dtype's field {n!r:.40} is not (dtype, offset[, title])")
                formats.append(_dtype(entry[0], self.limit))
                offsets.append(entry[1])
                titles.append(entry[2] if len(entry) == 3 and isinstance(entry[2], str) else None)
            spec = {"names": list(names), "formats": formats, "offsets": offsets, "itemsize": elsize}
            if any(titles):
                spec["titles"] = titles
            return np.dtype(spec)
        if base.kind in "SUV" and isinstance(elsize, int) and elsize > 0:
            if elsize > self.limit:
                raise TooLarge(f"a dtype of {elsize} bytes per element")
            base = np.dtype(f"{base.kind}{elsize // 4 if base.kind == 'U' else elsize}")
        if state[7] != base.flags:  # numpy writes the flags its type code implies
            raise Refused(f"a dtype {code!r} whose state has flags {state[7]!r:.20}, not numpy's {base.flags}")
        if base.kind in "Mm":
            meta = state[8] if len(state) == 9 else None
            time = meta[1] if isinstance(meta, tuple) and len(meta) == 2 else None
            if not (isinstance(time, tuple) and len(time) == 4 and isinstance(time[0], bytes)
                    and time[0].decode("latin1") in _TIME_UNITS and isinstance(time[1], int) and 0 < time[1] < 2**31):
                raise Refused(f"a datetime dtype's unit {meta!r:.60}")
            base = np.dtype(f"{base.kind}8[{time[1]}{time[0].decode('latin1')}]")
        if order in "<>" and base.byteorder != "|":
            base = base.newbyteorder(order)
        return base


def _dtype(value: Any, limit: int) -> np.dtype:
    """A real dtype from what a pickle passes as one: our ``_Dtype``, a dtype, or a type code."""
    if isinstance(value, _Dtype):
        return value.real()
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, bytes):
        value = value.decode("latin1")
    if isinstance(value, str) and _DTYPE_CODE.fullmatch(value):
        try:
            return np.dtype(value)
        except TypeError:
            pass
    raise Refused(f"{value!r:.40} is not a numpy type code")


class _Pending:
    """A numpy array or scalar as the pickle described it, built after loading (``_resolve``).

    Unhashable, so it cannot become a dict key or set member; BUILD runs our ``__setstate__``."""

    __slots__ = ("make", "state", "limit")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, make: str, state: Any, limit: int) -> None:
        object.__setattr__(self, "make", make)
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "limit", limit)

    def __setattr__(self, name: str, value: Any) -> None:
        raise Refused("the pickle sets attributes on an array")

    def __setstate__(self, state: Any) -> None:
        if self.make != "reconstruct" or self.state is not None:
            raise Refused("the pickle sets the state of an array twice")
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise Refused("an array's state is not numpy's (version, shape, dtype, fortran, data)")
        shape, dtype, fortran, raw = state[-4:]
        dtype = _dtype(dtype, self.limit)
        size = _nbytes(shape, dtype, "an array")
        count = math.prod(shape)
        if dtype.hasobject:
            # numpy reads a list of the elements; a list of another length can crash it.
            if not isinstance(raw, list) or len(raw) != count:
                raise Refused(f"an object array of {count} element(s) comes with "
                              f"{len(raw) if isinstance(raw, list) else type(raw).__name__}")
            size = count
        elif not isinstance(raw, bytes | bytearray | str) or len(raw) != size:
            raise Refused(f"an array of shape {shape} and dtype {dtype} needs {size} bytes of data; "
                          f"the pickle gives {len(raw) if hasattr(raw, '__len__') else type(raw).__name__}")
        if size > self.limit:
            raise TooLarge(f"an array of {size} bytes, more than the {self.limit} the pickle holds")
        if not isinstance(fortran, bool | int):
            raise Refused("an array's fortran flag is not a bool")
        object.__setattr__(self, "state", (1, shape, dtype, bool(fortran), raw))

    def build(self, elements: list | None) -> Any:
        if self.make == "reconstruct":
            if self.state is None:
                raise Refused("an array without its state (no BUILD)")
            _, shape, dtype, fortran, raw = self.state
            array = _MULTIARRAY._reconstruct(np.ndarray, (0,), b"b")
            array.__setstate__((1, shape, dtype, fortran, elements if elements is not None else raw))
            return array
        if self.make == "frombuffer":
            return _NUMERIC._frombuffer(*self.state)
        return _MULTIARRAY.scalar(*self.state)


def _no_numpy(args: tuple, name: str) -> None:
    for a in args:
        if isinstance(a, _Pending | _Dtype | np.ndarray | np.generic | np.dtype):
            raise Refused(f"the pickle calls {name}() on a numpy value")


class _Guarded:
    """An admitted callable whose arguments are checked so that what it builds stays small."""

    __slots__ = ("name", "func", "limit")

    def __init__(self, name: str, func: Any, limit: int) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "func", func)
        object.__setattr__(self, "limit", limit)

    def __setattr__(self, name: str, value: Any) -> None:
        raise Refused(f"the pickle sets attributes on {self.name}")

    def __setstate__(self, state: Any) -> None:
        raise Refused(f"the pickle sets the state of {self.name}")

    def __repr__(self) -> str:
        return f"<admitted {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name, limit = self.name, self.limit
        if kwargs:
            raise Refused(f"the pickle calls {name} with keyword arguments")
        if name == "numpy.ndarray":
            raise Refused("the pickle calls numpy.ndarray directly (numpy pickles use _reconstruct)")
        if name == "numpy.dtype":
            # numpy pickles call dtype(code, align=False, copy=True)
            if not 1 <= len(args) <= 3 or not isinstance(args[0], str | bytes) \
                    or not all(isinstance(a, bool | int) for a in args[1:]):
                raise Refused("numpy.dtype is called with other than (type code, align, copy)")
            _dtype(args[0], limit)  # the code must be a plain one
            return _Dtype(args[0].decode("latin1") if isinstance(args[0], bytes) else args[0], limit)
        if name == "_reconstruct":
            if len(args) != 3 or not isinstance(args[0], _Guarded) or args[0].name != "numpy.ndarray":
                raise Refused("_reconstruct is called with other than (numpy.ndarray, shape, dtype)")
            size = _nbytes(args[1], _dtype(args[2], limit), "_reconstruct")
            if size > limit:
                raise TooLarge(f"_reconstruct of {size} bytes, more than the {limit} the pickle holds")
            return _Pending("reconstruct", None, limit)
        if name == "_frombuffer":
            if len(args) != 4 or not isinstance(args[0], bytes | bytearray):
                raise Refused("_frombuffer is called with other than (buffer, dtype, shape, order)")
            dtype = _dtype(args[1], limit)
            if dtype.hasobject or _nbytes(args[2], dtype, "_frombuffer") != len(args[0]) or args[3] not in ("C", "F"):
                raise Refused(f"_frombuffer: {len(args[0])} bytes do not make shape {args[2]!r:.40} "
                              f"of {dtype} in order {args[3]!r:.10}")
            return _Pending("frombuffer", (args[0], dtype, args[2], args[3]), limit)
        if name == "scalar":
            dtype = _dtype(args[0], limit) if args else None
            if len(args) != 2 or dtype is None or dtype.hasobject \
                    or not isinstance(args[1], bytes | str) or len(args[1]) != dtype.itemsize:
                raise Refused("numpy scalar: expected (dtype, its itemsize of bytes)")
            return _Pending("scalar", (dtype, args[1]), limit)
        _no_numpy(args, name)
        if name == "_codecs.encode":
            if len(args) not in (1, 2) or not isinstance(args[0], str) or (
                    len(args) == 2 and (not isinstance(args[1], str) or _codec(args[1]) not in _TEXT_CODECS)):
                raise Refused("_codecs.encode is called with other than (text, latin1)")
            return self.func(*args)
        if name in ("bytes", "bytearray") and args and isinstance(args[0], int) and args[0] > limit:
            raise TooLarge(f"{name}({args[0]}) would build {args[0]} bytes from a pickle of {limit}")
        if name == "str" and args and isinstance(args[0], list | tuple | dict | set | frozenset):
            raise Refused("the pickle calls str() on a container (its text can be far larger)")
        return self.func(*args)


def _codec(name: str) -> str:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return ""


def _resolve(obj: Any, memo: dict[int, Any], active: set[int]) -> Any:
    """``obj`` with every _Pending replaced by the numpy value it describes (in place for lists and dicts)."""
    if isinstance(obj, str | bytes | int | float | complex | bool | type(None) | np.dtype | bytearray):
        return obj
    if isinstance(obj, _Dtype):
        return obj.real()
    key = id(obj)
    if key in memo:
        return memo[key]
    if key in active:
        raise Refused("the pickle holds a reference cycle through an array or tuple")
    active.add(key)
    if isinstance(obj, _Pending):
        elements = None
        if obj.make == "reconstruct" and obj.state is not None and obj.state[2].hasobject:
            elements = [_resolve(e, memo, active) for e in obj.state[4]]
        out = obj.build(elements)
    elif isinstance(obj, list):
        memo[key] = obj  # a list may contain itself; that is plain Python
        obj[:] = [_resolve(e, memo, active) for e in obj]
        out = obj
    elif isinstance(obj, dict):
        memo[key] = obj
        for k, v in obj.items():
            obj[k] = _resolve(v, memo, active)
        out = obj
    elif isinstance(obj, tuple):
        items = [_resolve(e, memo, active) for e in obj]
        out = obj if all(a is b for a, b in zip(items, obj, strict=True)) else tuple(items)
    elif isinstance(obj, _Guarded):
        out = obj.func if isinstance(obj.func, type) else obj  # a type stored as a value
    else:
        out = obj  # sets, frozensets, slices: cannot hold a _Pending (unhashable)
    active.discard(key)
    memo[key] = out
    return out


class RestrictedUnpickler(pickle.Unpickler):
    """Rebuilds only plain Python values and numpy dtypes, scalars and arrays (``ALLOWED``), each no
    larger than ``limit`` bytes (default: the size of the input)."""

    def __init__(self, file: Any, *, limit: int | None = None, **kw: Any) -> None:
        super().__init__(file, **kw)
        self.limit = MAX_PICKLE_BYTES if limit is None else limit
        self.pending = False

    def find_class(self, module: str, name: str) -> Any:
        try:
            func = ALLOWED[(module, name)]
        except KeyError:
            raise RefusedGlobal(f"the pickle asks for {module}.{name}, which is not a plain Python or numpy type; "
                                "refusing to load it (pickle can run arbitrary code)") from None
        label = {"dtype": "numpy.dtype", "ndarray": "numpy.ndarray", "encode": "_codecs.encode"}.get(name, name)
        self.pending = self.pending or module.startswith("numpy")
        return _Guarded(label, func, self.limit)

    def load(self) -> Any:
        obj = super().load()
        return _resolve(obj, {}, set()) if self.pending or isinstance(obj, _Guarded) else obj


def safe_loads(data: bytes, where: str, encoding: str = "ASCII", refused_hint: str = "",
               max_bytes: int = MAX_PICKLE_BYTES) -> Any:
    """Unpickle ``data`` with ``RestrictedUnpickler``; any failure is a DataError naming ``where``.

    ``encoding`` decodes Python 2 strings (``latin1`` for CIFAR-10's original batches). Input over
    ``max_bytes`` is refused unread; nothing the pickle builds may be larger than the input.
    """
    if len(data) > max_bytes:
        raise DataError(f"{where}: {len(data):,} bytes, more than the {max_bytes:,} a pickle may have here; "
                        "is this the right file?")
    try:
        scan(data)
        return RestrictedUnpickler(io.BytesIO(data), encoding=encoding, limit=len(data)).load()
    except RefusedGlobal as exc:
        raise DataError(f"{where}: {exc}{refused_hint}") from None
    except Refused as exc:
        raise DataError(f"{where}: refused: {exc}; the file is corrupted or crafted: download it again") from None
    except Exception as exc:  # a corrupt pickle can fail in many ways (EOFError, UnpicklingError, ValueError, ...)
        raise DataError(f"{where}: not a readable pickle ({type(exc).__name__}: {exc}); the file is truncated "
                        "or of another format: download it again") from None
