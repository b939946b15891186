"""The errors fpt raises on purpose, in one place; this module imports nothing from fpt.

Every class derives from ``FptError``: the command line prints an ``FptError`` as one line
(``fpt COMMAND: error: ...``) because its message already names the file or field and the
fix. Any other exception is a bug in fpt (or in a library under it): the command line lets
it keep its traceback and asks for a report. Each class also derives from the built-in
exception its callers used to catch (``ValueError``, ``KeyError``, ...), so ``except
ValueError`` around a config or data call still works.

- ``ConfigError``: a configuration value that cannot be used (field, value, fix).
- ``DataError``: data that cannot be used as it is (file, column or row, fix).
- ``SchemaError``: inputs given to a trained model that do not match what it was trained on
  (a missing or extra column, an unseen category, a wrong image or series shape).
- ``RunError``: a run or export directory that cannot be used as asked; ``CheckpointError``
  (a checkpoint, export or run-directory file that is missing, corrupt or cannot be written)
  and ``RunDirBusyError`` (another live process holds the run directory's writer lock).
- ``BodyUnavailableError``: pretrained weights cannot be loaded (no network, no cache).
- ``RegistryError``: an unknown task, body or freeze policy (lists the known ones).
- ``DependencyError``: an optional package a feature needs is not installed (names the pip command).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import errno
import functools
import reprlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class FptError(Exception):
    """An error raised on purpose: its message names the file or field and the fix."""


class ConfigError(FptError, ValueError):
    """A configuration value that cannot be used; the message says where and how to fix it."""


class DataError(FptError, ValueError):
    """Input data that cannot be used as it is; the message names the file, the record and the fix."""


class SchemaError(DataError):
    """Inputs that do not match the trained model's schema; the message names the file, column and fix."""


class RunError(FptError):
    """A run or export directory that cannot be used as asked (not a run, a refused overwrite, ...)."""


class CheckpointError(RunError, RuntimeError):
    """A checkpoint or run-directory file that is missing, corrupt, or cannot be written."""


class RunDirBusyError(RunError, FileExistsError):
    """Another live process holds the run directory's lock."""


class BodyUnavailableError(FptError, RuntimeError):
    """Pretrained weights cannot be loaded (no network, no cache, bad directory)."""


class RegistryError(FptError, KeyError):
    """An unknown or duplicate registry key; the message lists what is available."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DependencyError(FptError, RuntimeError):
    """An optional dependency is missing (e.g. onnx for ``fpt export --onnx``); the message names the pip command."""


class FptWarning(UserWarning):
    """A warning fpt gives on purpose (a choice it made for the user, and how to change it): the command line prints
    it as one line, ``fpt COMMAND: note: ...``."""


# What the command line reports as one line: fpt's own errors, and the OS errors of a path the user
# gave (a missing file, a folder where a file was expected, no permission).
USER_ERRORS: tuple[type[BaseException], ...] = (
    FptError, FileExistsError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)

# OS errors of a path or a disk the user chose that have no class of their own (a plain OSError): what to do about each.
# ENAMETOOLONG was a traceback asking for a bug report (fpt train --out of a 300-character name).
_PATH_ERRNOS = {
    errno.ENAMETOOLONG: "give a shorter path (most file systems take at most 255 bytes per name, 4096 in all)",
    errno.ELOOP: "a link on the path loops (or is followed too often); fix or remove the link",
    errno.EROFS: "the file system is read-only; give a path on a writable one",
    errno.ENOSPC: "the disk is full; free some space or give a path on another disk",
    errno.EDQUOT: "the disk quota is used up; free some space or give a path on another disk",
}


def user_os_error(exc: BaseException) -> str | None:
    """The one-line message of an OS error that is about the user's path or disk (``_PATH_ERRNOS``): the error as
    the system words it, naming the file, then the fix; None for any other exception (a bug keeps its traceback)."""
    fix = _PATH_ERRNOS.get(getattr(exc, "errno", None)) if isinstance(exc, OSError) else None
    if fix is None:
        return None
    where = f": {show(exc.filename)}" if exc.filename is not None else ""
    return f"{exc.strerror or exc}{where}; {fix}"



@dataclass(frozen=True)
class Wording:
    """How an error names a setting its reader controls (``option``): the command line's options (``flags``: --target
    NAME), or a Python surface's arguments (target=NAME); ``names`` gives a setting (a RunConfig field, or
    ``field=value`` for one value of it) the caller's own name where it has one (fpt.sklearn: the target is ``y``,
    objective=regression is ``FPTRegressor``); ``files`` the config file that set a setting, named by its key there
    (``target: NAME in run.yaml``)."""

    flags: bool = True
    names: Mapping[str, str] = field(default_factory=dict)
    # settings this surface does not offer (fpt.sklearn has no drop_columns): what its reader does instead (``remedy``)
    instead: Mapping[str, str] = field(default_factory=dict)
    # settings read from a config file (fpt train --config FILE) that no flag overrode -> the file: the user wrote a
    # key there, not a flag, so a refusal names the key and the file (``target: NAME in run.yaml``)
    files: Mapping[str, str] = field(default_factory=dict)
    # a data column's name -> the caller's own for it, where the caller gave no names (fpt.sklearn's fit names X's
    # columns x0, x1, ...): a DataFrame's column name, or an array's column index (``column_word``, ``cell_word``)
    columns: Mapping[str, str | int] = field(default_factory=dict)
    array: str = "X"  # what the caller's input is called, for an index into it (X[0, 1])
    # how the caller indexes a row and a cell of it (``FRAME_CELLS``, ...); None: by ``columns``, X.iloc[2]['colour']
    # where the caller's columns have names, X[2, 1] where they are an array's indices
    cells: tuple[str, str] | None = None
    # what the caller calls what it gave in memory, whose examples (images, series) it indexes from 0 ("X": X[2],
    # "inputs", "X.iloc"); None: a file's examples, counted from 1 as read (image 3; ``example_word``)
    examples: str | None = None

    def __call__(self, name: str, value: str | None = None, placeholder: bool = False) -> str:
        own = self.names.get(name if value is None else f"{name}={value}")
        if own is None and value is not None:  # ``field=*``: the surface's word for any value (--resume DIR: resume=True)
            own = self.names.get(f"{name}=*")
        if own is not None:
            return own
        if name in self.files:  # as YAML writes it
            return f"{name} in {self.files[name]}" if value is None else f"{name}: {value} in {self.files[name]}"
        if self.flags:
            return f"--{name.replace('_', '-')}" + ("" if value is None else f" {value}")
        if value is None:
            return name
        # NAME stands for a value; 'image', or a column named ID, is one (a column's name in capitals is no placeholder)
        return f"{name}={value if placeholder else repr(value)}"


CLI = Wording()  # what every message says unless a Python surface is in force (``wording``)
# fpt.build's and fpt.fit's keyword arguments: fit(exp, out=DIR, resume=True) continues what --resume DIR does; a
# switch (--allow-unseen, --no-targets, --force, --onnx, --refit) is its argument set to True; train_run's live
# trackers are fpt train's --log, and its data-parallel processes are torchrun's (fpt train --nproc starts them)
PYTHON = Wording(flags=False, names={"target": "target column (target=NAME)", "resume=*": "resume=True",
                                     "log": "trackers", "nproc": "torchrun",
                                     **{switch: f"{switch}=True" for switch in ("allow_unseen", "no_targets", "force",
                                                                                "onnx", "refit", "resume")}})
# None: no surface has said how it speaks (fpt's own internals called directly): messages take the command line's words
_WORDING: contextvars.ContextVar[Wording | None] = contextvars.ContextVar("fpt_wording", default=None)


@contextlib.contextmanager
def wording(how: Wording) -> Iterator[None]:
    """Inside the block, ``option`` names settings as ``how`` does: a Python surface (fpt.sklearn's estimators,
    fpt.build of in-memory data) sets it around the work it hands down, so the one error raised deep in fpt.data names
    the argument its caller wrote, and the command line's wording stays the default."""
    token = _WORDING.set(how)
    try:
        yield
    finally:
        _WORDING.reset(token)


@contextlib.contextmanager
def entry(how: Wording = PYTHON) -> Iterator[None]:
    """``wording(how)`` unless a surface already speaks: for an entry point that Python callers and fpt's own commands
    share (fpt.build, fpt.fit, fpt.train_run, a Predictor's methods). The command line's ``main`` says CLI first, an
    estimator its own words, and those stand; a Python caller gets its keyword arguments named, not fpt train's flags."""
    if _WORDING.get() is not None:
        yield
        return
    with wording(how):
        yield


def python_entry(fn: F) -> F:
    """``fn`` run inside ``entry(PYTHON)``: a public function or method a Python caller reaches (``fpt.build``,
    ``fpt.fit``, ``Predictor.predict``), whose errors then name its keyword arguments unless a surface already speaks."""
    @functools.wraps(fn)
    def spoken(*args: Any, **kwargs: Any) -> Any:
        with entry(PYTHON):
            return fn(*args, **kwargs)
    return spoken  # type: ignore[return-value]


def option(name: str, value: str | None = None, placeholder: bool = False) -> str:
    """The setting ``name`` (a RunConfig field: target, objective, modality, val_fraction) with ``value`` as the
    surface in force names it (``wording``): ``--objective regression`` on the command line, ``objective='regression'``
    to fpt.build, ``FPTRegressor`` to a scikit-learn classifier's caller. ``placeholder``: ``value`` stands for one
    the reader chooses (NAME: ``target=NAME``, not ``target='NAME'``)."""
    return (_WORDING.get() or CLI)(name, value, placeholder)


def speaks_flags() -> bool:
    """Whether the surface in force names settings by the command line's flags (``Wording.flags``): for a fix that is
    a whole command, not one setting (``fpt train --resume DIR`` there, ``fpt.train_run(None, DIR, resume=True)`` to a
    Python caller), where ``option`` cannot word it."""
    return (_WORDING.get() or CLI).flags


def column_word(name: str) -> str:
    """The data column ``name`` as the surface in force names it (``Wording.columns``): ``column 'x1'`` (a file's,
    or fpt.build's DataFrame's), ``column 'colour'`` (the DataFrame an estimator was fitted on), ``X[:, 1]`` (an
    array's)."""
    own = (_WORDING.get() or CLI).columns.get(name)
    if isinstance(own, int):
        return f"{(_WORDING.get() or CLI).array}[:, {own}]"
    return f"column {name if own is None else own!r}"


# How a caller indexes what it gave, from 0 (``Wording.cells``): its row, and its cell of column {c} (as the caller
# names it), in {a} (what the caller calls it) at row {r}
FRAME_CELLS = ("{a}.iloc[{r}]", "{a}.iloc[{r}][{c!r}]")  # a pandas DataFrame
ARRAY_CELLS = ("{a}[{r}]", "{a}[{r}, {c}]")  # a 2-D array (or tensor), its columns by index
ROW_CELLS = ("{a}[{r}]", "{a}[{r}][{c!r}]")  # a list of rows: lists (columns by index), or records (by key)
COLUMN_CELLS = ("row {r} of {a} (from 0)", "{a}[{c!r}][{r}]")  # a dict of columns
ITEM_CELLS = ("{a}[{r}]", "{a}[{r}]")  # one value per example (a list of texts): the cell is the row
# a pandas Series of one value per example: by position, as its index may be another (a filter's 5, 9, 12), where
# X[1] reads the label 1 or none
SERIES_CELLS = ("{a}.iloc[{r}]", "{a}.iloc[{r}]")


def items_cells(given: Any) -> tuple[str, str]:
    """How a caller indexes ``given``, one value per example: ``SERIES_CELLS`` of a pandas Series, else ``ITEM_CELLS``."""
    return SERIES_CELLS if is_pandas_series(given) else ITEM_CELLS


def is_pandas_series(given: Any) -> bool:
    """Whether ``given`` is a pandas Series (not a DataFrame), without importing pandas."""
    return hasattr(given, "iloc") and hasattr(given, "dtype") and not hasattr(given, "columns")


def _cells(how: Wording) -> tuple[str, str]:
    if how.cells is not None:
        return how.cells
    return ARRAY_CELLS if any(isinstance(v, int) for v in how.columns.values()) else FRAME_CELLS


def cell_word(name: str, row: int) -> str:
    """Row ``row`` (from 0) of the data column ``name``, as ``column_word`` names the column: ``column 'x1', row 1`` (a
    table's rows counted from 1 under the header, as a file's are read: ``row_number``), ``X.iloc[0]['colour']`` or
    ``X[0, 1]`` for an estimator's caller, who indexes from 0."""
    how = _WORDING.get() or CLI
    own = how.columns.get(name)
    if own is None:
        return f"column {name!r}, row {row_number(row)}"
    return _cells(how)[1].format(a=how.array, r=row, c=own)


def target_word(name: str, row: int) -> str:
    """Row ``row`` (from 0) of the target column ``name``: ``target 'label', row 3`` of a file (under its header, from
    1), or the cell as its caller indexes what it gave in memory (``cell_word``: inputs['label'][2])."""
    if (_WORDING.get() or CLI).columns.get(name) is None:
        return f"target {name!r}, row {row_number(row)}"
    return cell_word(name, row)


@contextlib.contextmanager
def frame_rows(name: str, columns: Sequence[str] | Mapping[str, str | int],
               cells: tuple[str, str] = FRAME_CELLS) -> Iterator[None]:
    """Within: the rows of what a caller gave in memory, called ``name`` by the caller (a Predictor's ``inputs``,
    fpt.build's ``data``), are named by position from 0, as the caller indexes them (``cells``: a DataFrame's
    ``name.iloc[2]['x2']``, an array's ``name[2, 1]``, a dict's ``name['x2'][2]``), as an estimator names its X's; a
    file's rows stay its rows under the header, from 1 (predict(df) said 'column 'x2', row 3' of df.iloc[2]).
    ``columns``: the data's, each named by its own name, or a mapping of each to the caller's name or index."""
    how = _WORDING.get() or CLI
    own = columns if isinstance(columns, Mapping) else {c: str(how.columns.get(c, c)) for c in columns}
    with wording(dataclasses.replace(how, columns=dict(own), array=name, cells=cells)):
        yield


# The row numbers under the header (from 1) of the rows of the file being read, where they are not 1, 2, ...: a
# CSV's blank lines and rows of no value (',,') are left out in reading, so that the rows below one are not where
# their index says (``file_rows``). None: each row's number is its index + 1.
_ROWS: contextvars.ContextVar[Sequence[int] | None] = contextvars.ContextVar("fpt_rows", default=None)


@contextlib.contextmanager
def file_rows(numbers: Sequence[int] | None) -> Iterator[None]:
    """Within: ``row_number`` (``cell_word``, ``row_word``) names the row of index i as ``numbers[i]``, its number
    under the header of the file the columns were read from. Set only around columns in the file's order."""
    token = _ROWS.set(numbers)
    try:
        yield
    finally:
        _ROWS.reset(token)


def row_number(row: int) -> int:
    """Row ``row`` (from 0) of a file's columns as its number under the header (from 1; ``file_rows``)."""
    numbers = _ROWS.get()
    return int(numbers[row]) if numbers is not None and 0 <= row < len(numbers) else row + 1


@contextlib.contextmanager
def caller_examples(name: str, keep: bool = False) -> Iterator[None]:
    """Within: an example (an image, a series) is named as the caller indexes what it gave in memory and calls
    ``name``, from 0 (``inputs[2]``, ``X.iloc[2]``): ``example_word``. ``keep``: a name a surface above already gave
    stands (an estimator's X.iloc of a DataFrame of series, read as the array ``name``)."""
    how = _WORDING.get() or CLI
    with wording(how if keep and how.examples is not None else dataclasses.replace(how, examples=name)):
        yield


def examples_named() -> str | None:
    """What the caller calls the examples it gave in memory (``caller_examples``: X, inputs), or None: a file's."""
    return (_WORDING.get() or CLI).examples


def example_word(kind: str, i: int, alone: bool = False, at: Sequence[int] = (), joined: bool = False) -> str:
    """Example ``i`` (from 0) of ``kind`` (image, series) as the surface in force names it: ``X[2]`` or
    ``inputs[2]`` of what a caller gave in memory, which it indexes from 0 (``caller_examples``), or ``inputs`` itself
    where it is the one example given ``alone`` (a PIL image); ``image 3`` of a file's, counted from 1 as read (the
    estimators and a Predictor said 'image 3' of X[2], where their rows and cells count from 0). ``at``: a value
    inside the example (a pixel), ``X[2, 0, 1, 1]`` of an array indexed whole (``joined``), ``inputs[2][0, 1, 1]``
    of a list of arrays, ``image 3 at [0, 1, 1]`` of a file's."""
    name = (_WORDING.get() or CLI).examples
    inside = ", ".join(str(int(k)) for k in at)
    if name is None:
        return f"{kind} {i + 1}" + (f" at [{inside}]" if at else "")
    if alone:
        return f"{name}[{inside}]" if at else name
    if not at:
        return f"{name}[{i}]"
    return f"{name}[{i}, {inside}]" if joined else f"{name}[{i}][{inside}]"


def row_word(row: int) -> str:
    """Row ``row`` (from 0) as the surface in force names it: ``row 3`` (a file's row under the header, from 1:
    ``row_number``), or for an estimator's caller, who indexes from 0, ``X.iloc[2]`` (a DataFrame) or ``X[2]`` (an
    array): the estimators said 'row 3' of X.iloc[2], where their cells are named X.iloc[2]['when'] (``cell_word``)."""
    how = _WORDING.get() or CLI
    if not how.columns:
        return f"row {row_number(row)}"
    return _cells(how)[0].format(a=how.array, r=row)


def config_file(name: str) -> str | None:
    """The config file the setting ``name`` was read from (``Wording.files``: fpt train --config FILE), or None (a
    flag, an argument, a default): for a refusal that names the file where the setting's key is no word of it."""
    return (_WORDING.get() or CLI).files.get(name)


def remedy(how: str, *settings: str | tuple[str, str], key: str | None = None) -> str:
    """``how``, a fix with a ``{}`` per setting of ``settings`` ('raise {} or lower {}'; a setting a field's name, or
    (name, value)), each named as the surface in force names it (``option``); where that surface does not offer the
    first (``Wording.instead``, under ``key`` where the first setting serves several fixes: an estimator sets no
    patch_size), what it says to do instead, so that no reader is told to set what they cannot."""
    words = _WORDING.get() or CLI
    pairs = [(s, None) if isinstance(s, str) else s for s in settings]
    instead = words.instead.get(key or pairs[0][0])
    return instead if instead is not None else how.format(*(words(name, value) for name, value in pairs))


__all__ = ["CLI", "PYTHON", "USER_ERRORS", "BodyUnavailableError", "CheckpointError", "ConfigError", "DataError",
           "DependencyError", "FptError", "FptWarning", "RegistryError", "RunDirBusyError", "RunError", "SchemaError",
           "Wording", "caller_examples", "config_file", "data_kind", "entry", "example_word", "examples_named",
           "file_rows", "frame_rows", "option", "python_entry", "remedy", "row_number", "row_word", "show", "speaks_flags",
           "user_os_error", "wording"]


class _OneLine(reprlib.Repr):
    """reprlib's cut-short repr, one line: an object of another library is named by its kind and shape when it holds
    data (a DataFrame's repr is its rows, on many lines: train_run(data=frame) printed the user's table in its
    error), else its repr's lines are joined."""

    def repr_instance(self, x: Any, level: int) -> str:
        held = data_kind(x)
        return held if held is not None else " ".join(super().repr_instance(x, level).split())


def data_kind(value: Any) -> str | None:
    """'a pandas DataFrame of shape (30, 2)' for an object holding data (an array, frame, tensor or dataset: it has a
    shape of one axis or more), else None (a NumPy scalar's shape is ())."""
    shape = getattr(value, "shape", None)
    if isinstance(value, type) or not isinstance(shape, tuple) or not shape:  # torch.Size is a tuple
        return None
    return f"a {type(value).__module__.split('.')[0]} {type(value).__name__} of shape {tuple(shape)}"


_SHOW = _OneLine()
_SHOW.maxstring = _SHOW.maxother = 80


def show(value: Any) -> str:
    """``repr(value)`` cut short, so an error message stays one readable line whatever the input
    (a YAML alias bomb, a 10 MB string); data (``data_kind``) is named, never printed."""
    return _SHOW.repr(value)


def closest(name: Any, known: list[Any]) -> str | None:
    """The one of ``known`` (as text) a ``name`` that is not among them probably means: the same but for letter case
    or spaces (a column 'Target' for 'target'), else the closest spelling (difflib); None when none is close."""
    import difflib

    texts = [str(k) for k in known]
    folded = [t for t in texts if "".join(t.split()).lower() == "".join(str(name).split()).lower()]
    close = folded or difflib.get_close_matches(str(name), texts, n=1)
    return close[0] if close else None


def near(name: Any, known: list[Any]) -> str:
    """' (did you mean 'x'?)' for the closest known name (``closest``), or '' when none is close: an error's hint."""
    found = closest(name, known)
    return f" (did you mean {found!r}?)" if found is not None else ""
