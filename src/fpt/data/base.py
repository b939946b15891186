"""What every reader returns before tokenisation, and the choices shared by all formats.

A reader turns files into ``RawData``: the modality, one ``Split`` per split the data has
(``train``, and ``val``/``test`` where the files name them), the target column names and
where everything came from. ``finish_splits`` then fills in the missing validation/test
splits with a seeded, stratified hold-out, and ``infer_objective`` decides classification
or regression when the user did not.

Errors are ``DataError``: one line naming the file (and column or row) and the fix.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fpt.data.codes import codes_note, written_as_codes
from fpt.errors import DataError, FptWarning, column_word, near, option, row_number, row_word

TARGET_NAMES = ("target", "label", "labels", "class", "y")  # a column named so is the default target
SPLIT_COLUMN = "split"
SPLIT_NAMES = {"train": "train", "training": "train", "val": "val", "valid": "val", "validation": "val", "dev": "val",
               "test": "test", "testing": "test"}
SEEDED = "seeded"  # RawData.split_from when the data has no splits of its own
MAX_CLASS_INTEGERS = 20  # an integer target with at most this many distinct values classifies (objective=auto)


@dataclass
class Split:
    """Examples of one split. ``x`` by modality: tabular and sequence, a dict of feature columns
    (numpy arrays); image, a list of ``(H, W, C)`` uint8 arrays; timeseries, a list of ``(C, L)``
    float arrays. ``y``: (n, m) raw target values, one column per target."""

    x: Any
    y: np.ndarray
    where: str  # the file(s) it came from, for messages

    def __len__(self) -> int:
        return len(self.y)

    def take(self, idx: np.ndarray) -> Split:
        if isinstance(self.x, dict):
            x: Any = {k: v[idx] for k, v in self.x.items()}
        else:
            x = [self.x[i] for i in idx]
        return Split(x, self.y[idx], self.where)


@dataclass
class RawData:
    modality: str
    splits: dict[str, Split]  # "train", optionally "val" and "test"
    targets: list[str]  # names of the target columns
    source: str  # what was read, e.g. "CSV file bc.csv"
    split_from: str = "seeded"  # how train/val/test were decided: SEEDED, or the data's own (which)
    notes: dict[str, Any] = field(default_factory=dict)  # reader-specific facts worth printing
    # (objective, why) where the format itself says what the target is (a UCR/UEA archive file: class labels
    # unless a .ts says @targetLabel), so the values are not asked; None: inferred from the values
    declared: tuple[str, str] | None = None
    # run once the objective is classification: a reader's check that its class labels are the labels as written
    # (a CSV's "01" and "1" read as the one number 1: tables.label_text_check); None where the format keeps them
    check_labels: Callable[[], None] | None = field(default=None, repr=False, compare=False)
    # target columns of dates (fpt.data.dates), held as their text: class labels only if the user says classification
    date_targets: list[str] = field(default_factory=list)
    # target columns whose type declares categories (a pandas category, an Arrow dictionary: fpt.data.categories):
    # class labels under objective auto whatever their values (30 distinct integer codes are not a quantity)
    categorical_targets: list[str] = field(default_factory=list)
    # the content fingerprint of what was read (fpt.data.fingerprint), taken once per read: every run built from this
    # read (fold runs, ensemble members, a refit's two runs) records the same one; None where nothing was hashed
    fingerprint: dict[str, Any] | None = field(default=None, repr=False, compare=False)


@dataclass
class Inputs:
    """New examples for a trained model (``fpt predict``) in the modality's raw form (what its tokeniser takes),
    with their targets when given: a format's predict reader returns them checked (``Checks``)."""

    x: Any  # tabular/sequence: {column: (n,) array}; image: [(S, S, C) uint8]; timeseries: [(C, L) float]
    y: np.ndarray | None  # (n, m) raw target values, or None when the input has no targets
    where: str  # the file (or "inputs"), for messages
    names: list[str] | None = None  # per example, e.g. image files: written beside the predictions
    notes: list[str] = field(default_factory=list)  # what was done to the inputs (e.g. series cut), for the user
    names_as: str = "file"  # the column the names are written in (a long-format series table: its id column)
    # columns of the input written back beside the predictions: a table's dropped columns (drop_columns), such as
    # the id a submission file needs
    carried: dict[str, list[Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        if isinstance(self.x, dict):
            return len(next(iter(self.x.values()))) if self.x else 0
        return len(self.x)


@dataclass(frozen=True)
class Checks:
    """A trained model's checks of new inputs, bound to its schema (``fpt.data.inputs`` makes them): a format's
    predict reader (``fpt.data.formats``) reads its file and hands what it found to these, so that it need not
    know the model's modality."""

    schema: Any  # fpt.data.inputs.Schema
    arrays: Callable[[Any, str], Any]  # (arrays or a list of examples, where) -> the modality's raw form, checked
    # (table columns, where[, the reader's masks of missing cells: Gaps]) -> Inputs (targets if all given)
    columns: Callable[..., Inputs]
    labels: Callable[[np.ndarray, str], None]  # ((n, m) targets, where): each one the model can score
    # the user declared that the inputs hold no targets (fpt predict --no-targets): a reader whose format cannot say
    # (a UCR .tsv's first field, a .ts line's last) reads every field as a value
    no_targets: bool = False


def plain_value(v: Any) -> Any:
    """A JSON-ready Python scalar for a numpy/pandas value."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def shown(names: list[Any], limit: int = 12) -> str:
    """The first ``limit`` of ``names`` for a message, "..." after them when there are more."""
    return ", ".join(map(str, names[:limit])) + (" ..." if len(names) > limit else "")


# pandas' missing markers (pd.NA of a nullable Int64/boolean/string column, pd.NaT of a datetime one), known by
# their type's name so that pandas need not be imported: as text they were a category "<NA>", and they made a
# column of whole numbers with a gap categorical
_PANDAS_MISSING = ("NAType", "NaTType")


# the types of a text column as read (str, None) or a DataFrame's object column (str beside NaN, numbers): their
# missing entries found by C-level maps over the column rather than a Python test per value (a 500,000-row table's
# text columns took seconds); any other type present takes the test per value
_PLAIN_TYPES = frozenset({str, type(None), float, int, bool})


def _plain_missing(values: np.ndarray, kinds: set[type]) -> np.ndarray:
    """``is_missing`` of an object column holding only ``kinds`` (of ``_PLAIN_TYPES``): None, float NaN, or text
    that strips to nothing (empty, or ``isspace``: the same characters), exactly as the test per value finds them."""
    out = np.equal(values, None)  # these types compare equal to None only when they are None
    if float in kinds:
        floats = np.fromiter(map(isinstance, values, itertools.repeat(float)), dtype=bool, count=len(values))
        out[floats] = np.isnan(values[floats].astype(np.float64))
    if str in kinds:
        text = ~out if kinds <= {str, type(None)} else \
            np.fromiter(map(isinstance, values, itertools.repeat(str)), dtype=bool, count=len(values))
        strs = values[text]
        out[text] = np.equal(strs, "") | np.fromiter(map(str.isspace, strs), dtype=bool, count=len(strs))
    return out


def is_missing(values: np.ndarray) -> np.ndarray:
    """Missing entries of a column: None, NaN, pandas' NA or NaT, or empty text."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind in "mM":  # a datetime or duration column (Parquet, a DataFrame): its NaT
        return np.isnat(values)
    if values.dtype.kind in "iub":
        return np.zeros(len(values), dtype=bool)
    if values.dtype.kind == "O" and (kinds := set(map(type, values))) <= _PLAIN_TYPES:
        return _plain_missing(values, kinds)
    return np.array([v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip())
                     or type(v).__name__ in _PANDAS_MISSING for v in values], dtype=bool)


# A reader's masks of missing cells, by column name: (the column array it read, is_missing of that array). A later
# check of the same array takes its mask from here (``known_missing``) instead of reading every cell again; a check of
# another array of that name (a split's rows, a converted copy) computes its own.
Gaps = dict[str, tuple[np.ndarray, np.ndarray]]


def keep_gaps(gaps: Gaps | None, name: str, values: np.ndarray, missing: np.ndarray) -> None:
    """Record ``missing`` (``is_missing(values)``) for column ``name`` in ``gaps`` (where a caller asked for them),
    read-only: it is shared by every check that reads it."""
    if gaps is not None:
        missing.flags.writeable = False
        gaps[name] = (values, missing)


def known_missing(values: np.ndarray, name: str, gaps: Gaps | None) -> np.ndarray | None:
    """``is_missing(values)`` where a reader kept it in ``gaps`` for this very array (column ``name``), else None:
    the checks that take it compute it themselves then, where they need it."""
    entry = gaps.get(name) if gaps else None
    return entry[1] if entry is not None and entry[0] is values else None


def rows(mask: np.ndarray, limit: int = 5) -> str:
    """The rows ``mask`` marks, as the surface in force names one (``fpt.errors.row_word``): 'row(s) 3, 6 (2 in all)'
    of a file (under its header, from 1), 'X[2], X[5] (2 in all)' of an estimator's X, which its caller indexes from
    0 (a list of 'row(s) 3, 6' said 3 where one row's error said X[2])."""
    where = np.flatnonzero(mask)
    more = f"{', ...' if len(where) > limit else ''} ({len(where)} in all)"
    if row_word(0) != f"row {row_number(0)}":  # a caller's index, not a file's row
        return ", ".join(row_word(int(i)) for i in where[:limit]) + more
    return "row(s) " + ", ".join(str(row_number(int(i))) for i in where[:limit]) + more  # a file's rows under its header


def unique_names(names: Any, where: str, error: type[Exception], fix: str) -> None:
    """Every column has its own name read as text: two of one name (or 1 and "1") would become one column, the
    other's values lost without a word."""
    names = [str(n) for n in names]
    seen: set[str] = set()
    clash = next((n for n in names if n in seen or seen.add(n)), None)
    if clash is not None:
        raise error(f"{where} has {names.count(clash)} columns named {clash!r} (as text): give every column its own "
                    f"name ({fix})")


def lazy_frame(data: Any, where: str, error: type[Exception]) -> None:
    """A polars LazyFrame is a query, not its rows: refused, naming ``.collect()`` (read as anything else, it was
    one value of shape ())."""
    if type(data).__name__ == "LazyFrame" and hasattr(data, "collect"):
        raise error(f"{where}: a polars LazyFrame is a query, not its rows; collect it first and pass the DataFrame "
                    "(lf.collect())")


def sparse_matrix(data: Any, where: str, error: type[Exception]) -> None:
    """A SciPy sparse matrix (or array) is refused, naming its size dense, never densified in silence: read as an
    array it was one value of shape ()."""
    if hasattr(data, "tocsr") and hasattr(data, "nnz") and hasattr(data, "shape"):
        n, m = data.shape[0], data.shape[-1]
        raise error(f"{where} is a scipy sparse matrix {tuple(data.shape)}; fpt reads dense values: pass .toarray() if "
                    f"it fits in memory ({n * m * 8 / 2**30:.3g} GiB as float64), or reduce its columns first (e.g. "
                    "sklearn.decomposition.TruncatedSVD)")


def record_columns(data: Any, where: str, error: type[Exception]) -> dict[str, np.ndarray] | None:
    """A NumPy structured (record) array's fields as columns (DataFrame.to_records, numpy.genfromtxt(names=True)),
    or None for anything else. A field of several values per row is refused."""
    names = getattr(getattr(data, "dtype", None), "names", None)
    if not isinstance(data, np.ndarray) or not names:
        return None
    if data.ndim != 1:
        raise error(f"{where}: a structured array of shape {data.shape}; give one record per row (shape (n,))")
    wide = [n for n in names if data.dtype[n].shape]
    if wide:
        raise error(f"{where}: field {wide[0]!r} holds {data.dtype[wide[0]].shape} values per row; a table's column "
                    "holds one value per row: give each value a field of its own")
    return {n: data[n] for n in names}


def column_names(value: str | None) -> tuple[str, ...]:
    """A comma-separated list of column names (RunConfig.drop_columns) as names, each stripped; () for None."""
    return () if value is None else tuple(dict.fromkeys(n.strip() for n in str(value).split(",") if n.strip()))


def names_shown(columns: list[str], limit: int = 30) -> str:
    """A table's column names for an error, each quoted when any has spaces at its ends (a header 'a ,b ,target ')."""
    padded = any(c != c.strip() for c in columns)
    return ", ".join(map(repr, columns[:limit]) if padded else columns[:limit]) + (" ..." if len(columns) > limit else "")


def spaced_header(name: str, columns: list[str], where: str) -> None:
    """Refuse a name that is a column's but for the spaces around it in the header ('target' of 'a ,b ,target '):
    a name given to an option is stripped, so no option can name that column; the header has to change."""
    spaced = [c for c in columns if c != c.strip() and c.strip() == name.strip()]
    if spaced:
        raise DataError(f"{where}: no column {name!r}: the header names it {spaced[0]!r}, spaces included (its columns "
                        f"are {names_shown(columns)}); remove the spaces around the names in the header row")


def choose_targets(columns: list[str], target: str | None, where: str) -> list[str]:
    """The target columns: ``target`` (comma-separated names), else a conventional name, else the last column."""
    if target is not None:
        names = [t.strip() for t in str(target).split(",") if t.strip()]
        missing = [n for n in names if n not in columns]
        if not names or missing:
            if missing:
                spaced_header(missing[0], columns, where)
            hint = near(missing[0], columns) if missing else ""
            raise DataError(f"{where}: no column {', '.join(map(repr, missing or [target]))}{hint}; its columns are "
                            f"{names_shown(columns)}; give {option('target', 'NAME', placeholder=True)}")
        twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if twice is not None:  # trained as two outputs of one column, whose predictions wrote one over the other
            raise DataError(f"{where}: {option('target', target)} names the column {twice!r} twice; name each target "
                            "column once")
        return names
    for name in TARGET_NAMES:
        for col in columns:
            if col.lower() == name:
                return [col]
    candidates = [c for c in columns if c != SPLIT_COLUMN]
    if len(candidates) < 2:
        raise DataError(f"{where}: {len(candidates)} column(s) ({', '.join(candidates)}); a table needs a target "
                        "column and at least one feature column")
    return [candidates[-1]]


def check_target_values(values: np.ndarray, name: str, where: str, chosen: str = "",
                        missing: np.ndarray | None = None) -> None:
    """Every row has a target value. ``chosen``: how fpt chose the column when the user named none (said in the
    error: a user who forgot --target learns that first). ``missing``: ``is_missing(values)`` where the caller has
    it."""
    missing = is_missing(values) if missing is None else missing
    if len(missing) > 1 and missing.all():  # most often the default target, the last column, is an empty one
        raise DataError(f"{where}: target column {name!r}{chosen} is empty on every row, so it cannot be predicted; "
                        f"name the column to predict with {option('target', 'NAME', placeholder=True)}")
    if missing.any():
        other = f"; or, if it is not the target, name the target with {option('target', 'NAME', True)}" if chosen else ""
        raise DataError(f"{where}: target column {name!r}{chosen} is missing on {rows(missing)}; drop those "
                        f"rows or fill them in{other}")


# pandas.api.types.infer_dtype's names of columns of one kind (missing values skipped): text, or numbers
ONE_KIND = frozenset({"string", "empty", "integer", "floating", "mixed-integer-float", "boolean", "decimal"})


def refuse_missing_targets(values: np.ndarray, where: str, what: str = "a target") -> None:
    """One refusal of missing targets (``values`` one column of them: None, NaN, pandas' NA or NaT, empty text),
    wherever targets are given in memory: fpt.build's arrays said 'y is NaN at index 22' of the y the estimators call
    missing, a None too."""
    missing = is_missing(values)
    if missing.any():
        raise DataError(f"{where} is missing at index {int(np.flatnonzero(missing)[0])} ({int(missing.sum())} of "
                        f"{len(values)} examples: None, NaN, pandas' NA or empty text); {what} cannot be missing: "
                        "leave those examples out of X and y")


def refuse_infinite_targets(values: np.ndarray, where: str, what: str = "a target") -> None:
    """One refusal of infinite targets (``values`` one column of them, as numbers), wherever targets are read: the
    estimators' y and fpt.build's or an .npz's arrays named the same index in two wordings."""
    infinite = np.isinf(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)
    if infinite.any():
        raise DataError(f"{where} is infinite at index {int(np.flatnonzero(infinite)[0])} ({int(infinite.sum())} of "
                        f"{len(values)} examples); {what} is a finite number: fix those targets or leave those "
                        "examples out of X and y")


def one_kind_of_label(values: Any, where: str, name: str | None = "y") -> None:
    """Targets of one kind, text or numbers: 1 beside "1" is two classes or one, and neither fpt nor scikit-learn can
    order them (a list, or numpy's np.asarray of one, made both the text '1': one class, silently). ``name``: the
    expression the fix converts (``y``, ``df['label']``; None: a file's column, to be written one way). Missing
    values are left to the checks that name them, a target of another shape to its reader. Shared by the readers of
    Python objects (fpt.build's arrays and DataFrames, fpt.sklearn's estimators)."""
    if isinstance(values, np.ndarray) and values.dtype.kind != "O":  # a typed array holds one kind
        return
    values = np.asarray(values, dtype=object)
    if values.ndim not in (1, 2) or not len(values):
        return
    import pandas as pd

    for column in values.reshape(len(values), -1).T:
        # pandas' C pass names a column of text, or of numbers, without a step per value (a file's target is text)
        if pd.api.types.infer_dtype(column, skipna=True) in ONE_KIND:
            continue
        present = column[~is_missing(column)]
        text = np.fromiter((isinstance(v, str) for v in present), dtype=bool, count=len(present))
        if text.any() and not text.all():
            i = int(np.flatnonzero(text != text[0])[0])
            first, other = np.flatnonzero(~is_missing(column))[[0, i]]
            raise DataError(f"{where} mixes text and numbers: index {int(first)} is {plain_value(column[first])!r}, "
                            f"index {int(other)} is {plain_value(column[other])!r} ({int(text.sum())} of "
                            f"{len(present)} labels are text); give the labels one type: "
                            + (f"{name}.astype(str) for text labels, or numbers throughout" if name is not None
                               else "write them all as text, or all as numbers"))


def _integral(values: np.ndarray) -> bool:
    return values.dtype.kind in "iub" or (values.dtype.kind == "f" and bool(np.all(np.mod(values, 1) == 0)))


WHOLE_NUMBER = re.compile(r"[+-]?\d+")


def beyond_int64(values: np.ndarray) -> bool:
    """Whether a column holds a whole number of 2**63 or more in size (uint64's top half, a Python int of more than 64
    bits: a hash, a long id): float64's steps there are 2,048 and more, so such numbers would merge as values. They are
    names, read as text as written (``as_written``); a quantity is written with a decimal point or an exponent."""
    if values.dtype.kind == "u":
        return values.size > 0 and int(values.max()) >= 2**63
    return values.dtype.kind == "O" and any(isinstance(v, int | np.integer) and not isinstance(v, bool)
                                            and abs(int(v)) >= 2**63 for v in values)


def as_written(values: np.ndarray) -> np.ndarray:
    """A column of whole numbers (``beyond_int64``) as the text each is written as, a missing value kept missing."""
    missing = is_missing(values) if values.dtype.kind == "O" else np.zeros(len(values), dtype=bool)
    return np.array([str(int(v)) if not gone and isinstance(v, int | np.integer) else v
                     for v, gone in zip(values.tolist(), missing, strict=True)], dtype=object)


def _numbers(col: np.ndarray) -> np.ndarray:
    """A target column as numbers where every value is one (several targets of mixed kinds share an object array)."""
    if col.dtype.kind != "O":
        return col
    try:
        out = np.array([float(v) for v in col])
    except (TypeError, ValueError):
        return col
    # whole numbers beyond 64 bits are read as text (tables._wide_integer_columns): labels, which float64 would merge
    wide = [isinstance(v, str) and abs(x) >= 2**63 and WHOLE_NUMBER.fullmatch(v.strip()) for v, x in zip(col, out, strict=True)]
    return col if any(wide) else out


class ObjectiveInferred(FptWarning):
    """The objective was decided from the target's values (the user did not give it, the format does not say)."""


class ColumnNote(FptWarning):
    """A table's feature column is probably not read as its author meant: an identifier (a row number, a different
    text on every row), which as a feature can only tell the training rows apart, or numbers written with currency
    signs, thousands separators or percent signs, or beside a few texts (Excel's '#DIV/0!', '?'), which read as text
    categories; or labels or categories that differ
    only in spaces, letter case or Unicode form ("yes", "Yes "; "café" composed and decomposed: read as two). The
    note names the fix (--drop-columns, or the file)."""


# From this many training rows on, a column with a different value on every row is named (below it, a handful of
# rows are often all different by chance).
IDENTIFIER_MIN_ROWS = 20
# A number written for people: a currency sign, ',' between thousands, a percent sign ("$1,234.50", "12%", "-€3,000"):
# fpt reads plain numbers only, so such a column reads as text; the notes and errors below name the fix.
WRITTEN_NUMBER = re.compile(r"[+-]?[$€£¥]?[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?%?")
PLAIN_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")  # as fpt reads a number from text
# A decimal comma ("3,14"), as most of Europe writes numbers and to_csv(decimal=",") quotes them in a ','-separated
# file: a comma before other than three digits is no thousands separator.
DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")


def written_numbers(values: np.ndarray) -> str | None:
    """The first present value of a text column whose every present value is a number written for people (with a
    currency sign, thousands separators or a percent sign: ``WRITTEN_NUMBER``, not a plain number; or with a decimal
    comma, ``DECIMAL_COMMA``, beside plain whole numbers), else None."""
    present = [str(v).strip() for v, m in zip(values, is_missing(values), strict=True) if not m]
    if present and all(WRITTEN_NUMBER.fullmatch(v) for v in present):
        return next((v for v in present if not PLAIN_NUMBER.fullmatch(v)), None)
    if present and all(DECIMAL_COMMA.fullmatch(v) or PLAIN_NUMBER.fullmatch(v) for v in present):
        # "1,5" beside "2,250": decimal commas all (some comma is before other than three digits)
        return next((v for v in present if DECIMAL_COMMA.fullmatch(v) and not WRITTEN_NUMBER.fullmatch(v)), None)
    return None


def stray_text(present: list[str]) -> str | None:
    """The texts (up to three, quoted) of a column whose present values are at least half numbers and hold at most
    three distinct texts (Excel's '#DIV/0!', '?', '-'), else None. From nine in ten numbers on, fpt.data.tables
    refuses the column instead, naming the rows."""
    texts = [v for v in present if not reads_as_float(v)]
    kinds = list(dict.fromkeys(texts))
    if not present or not texts or len(texts) > len(present) / 2 or len(kinds) > 3:
        return None
    return ", ".join(repr(k) for k in kinds)


# Types whose values numpy's cast to float64 reads as float() does, each value alike (both call PyNumber_Float).
# Other objects are not cast so: numpy reads a bytearray as its bytes' numbers, where float() reads the text it holds.
_FLOAT_CAST = frozenset({str, float, int, bool})


def as_floats(values: np.ndarray) -> np.ndarray | None:
    """``values`` (an object array) as float64, each value as ``float`` reads it, in one cast; None where a value is
    not of a type so cast (``_FLOAT_CAST``) or ``float`` would not read one: the caller reads them one by one then,
    to name the first that does not read."""
    if not set(map(type, values)) <= _FLOAT_CAST:
        return None
    try:
        return values.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        return None


def reads_as_float(text: str) -> bool:
    """Whether ``float`` reads ``text`` as a number."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def plain_number(text: str) -> str:
    """``text`` (``written_numbers``'s example) as fpt reads a number: without currency, thousands and percent signs,
    a decimal comma as a point."""
    if DECIMAL_COMMA.fullmatch(text) and not WRITTEN_NUMBER.fullmatch(text):
        return text.replace(",", ".")
    return re.sub(r"[$€£¥,%]", "", text)


def empty_features(raw: RawData) -> list[str]:
    """The feature columns of a table's training split that hold no value on any row (an empty column of a CSV, a
    column of NaN or None): fpt keeps each as a feature, read as missing on every row, one token the same for all."""
    if raw.modality != "tabular" or not len(raw.splits["train"].y):
        return []
    train = raw.splits["train"]
    return [name for name in raw.notes.get("features", train.x) if is_missing(np.asarray(train.x[name])).all()]


def empty_note(where: str, name: str) -> str:
    """What ``empty_features`` found, of the column ``name`` (as the surface in force names it: ``column_word``)."""
    return (f"{where}: {column_word(name)} has no value on any training row, so it carries nothing: it is kept as a "
            "feature read as missing on every row (one token, the same on all); fill it in, or leave it out with "
            f"{option('drop_columns', name)}")


def column_notes(raw: RawData) -> list[str]:
    """One line per feature column of a table's training split that is probably not read as meant: numbers written
    for people ("$1,234", "12%": every present value; read as text categories), or a different value on every row that
    is either whole numbers counting through a range (a row number or an id) or text (an id, a timestamp, free
    text): as a category or a number it tells rows apart and nothing else. Real-valued measurements are never
    named. And, for any modality, target labels (text feature categories too) that differ only in spaces, letter
    case or Unicode form (NFC/NFD): two classes where the author meant one."""
    train = raw.splits["train"]
    notes = []
    for where in raw.notes.get("row_index", [])[:1]:
        notes.append(f"{where}: the first column has no name in the header: read as the row index that pandas' to_csv "
                     "(index=True, its default) and R's write.csv write, and left out of the features (fpt predict "
                     "writes it back beside the predictions); save with index=False (R: row.names=FALSE) to leave it "
                     "out of the file")
    notes += raw.notes.get("empty_rows", [])  # a CSV's rows of nothing but separators, left out
    notes += [raw.notes["white_note"]] if "white_note" in raw.notes else []  # 16-bit images of fewer bits
    for j, name in enumerate(raw.targets):  # labels of any modality: a table's column, class folders' names
        labels = np.concatenate([np.asarray(s.y, dtype=object)[:, j] for s in raw.splits.values()])
        pair = same_but_spacing(labels)
        if pair is not None:
            notes.append(f"{train.where}: target {name!r} holds labels that differ {differ_how(pair)}, read as "
                         f"different classes; {one_way('class', pair)}")
    if raw.modality == "sequence" and isinstance(train.x, dict) and len(train.x) == 1:
        (name, col), = train.x.items()
        code = codes_note(train.where, name, np.asarray(col, dtype=object), sequence=True)
        notes += [code] if code is not None else []
    if raw.modality != "tabular":
        return notes
    n = len(train.y)
    empty = empty_features(raw)
    notes += [empty_note(train.where, name) for name in empty]
    targets = target_codes(train.y)
    for name in raw.notes.get("features", []):
        col = train.x[name]
        fix = option("drop_columns", name)
        if name in empty:  # said above
            continue
        groups = gives_target_away(col, targets)
        if groups is not None:
            k, lo, hi = groups
            notes.append(f"{train.where}: {column_word(name)} gives the target away: each of its {k} values comes with one "
                         f"target value on all of its rows ({lo}-{hi} rows each). The id of a series in long format "
                         "(a row per time point), or a copy of the target? Rows of one series on both sides of the "
                         f"split make the test figure meaningless: read a series per id with "
                         f"{option('series_id', name)}, or leave the column out with {fix}")
            continue
        if name in raw.notes.get("dates", {}):  # read as dates (fpt.data.dates): a time, not an identifier
            continue
        if col.dtype.kind == "O":  # text (durations are read as seconds: fpt.data.tables.as_seconds)
            present = [str(v).strip() for v, m in zip(col, is_missing(col), strict=True) if not m]
            code = codes_note(train.where, name, col)
            if code is not None:  # and, like any text column, perhaps an identifier: said below
                notes.append(code)
            example = written_numbers(col)
            if example is not None:
                notes.append(f"{train.where}: {column_word(name)} holds numbers written with signs or separators "
                             f"({example!r}), so it is read as text categories; write them as plain numbers "
                             f"(e.g. {plain_number(example)}) to read them as numbers")
                continue
            stray = stray_text(present)
            if stray is not None:
                notes.append(f"{train.where}: {column_word(name)} holds numbers and a few texts ({stray}), so it is read "
                             "as text categories, its numbers unordered; if those texts mean missing (an Excel error, "
                             "'?', '-'), leave the cells empty to read the column as numbers")
                continue
            pair = same_but_spacing(col)
            if pair is not None:
                notes.append(f"{train.where}: {column_word(name)} holds categories that differ {differ_how(pair)}, "
                             f"read as different categories; {one_way('category', pair)}")
            # a timestamp column may have gaps: every present value different, and at most a tenth missing
            if len(present) < max(IDENTIFIER_MIN_ROWS, 0.9 * n) or len(set(present)) < len(present):
                continue
            what = "a different value on every training row that has one (an identifier, a timestamp or free " \
                   "text?): read as categories, it can only tell rows apart"
        elif col.dtype.kind in "iuf":
            values = col.astype(np.float64)
            if n < IDENTIFIER_MIN_ROWS or not np.isfinite(values).all() or (values != np.round(values)).any() \
                    or len(np.unique(values)) < n or values.max() - values.min() + 1 != n:
                continue
            what = "whole numbers counting through the rows (a row number or an id?): as a number it can only " \
                   "tell rows apart"
        else:
            continue
        notes.append(f"{train.where}: {column_word(name)} holds {what}; if it is not a feature, leave it out with {fix}")
    return notes


def target_codes(y: np.ndarray) -> np.ndarray:
    """One integer per row naming its target value (the tuple of its values, of several targets), computed once for
    the ``gives_target_away`` test of every column."""
    import pandas as pd

    rows = np.asarray(y, dtype=object)
    if rows.ndim == 1 or rows.shape[1] == 1:
        return pd.factorize(pd.Series(rows.reshape(-1), dtype=object))[0]
    each = np.stack([pd.factorize(pd.Series(rows[:, j], dtype=object))[0] for j in range(rows.shape[1])], axis=1)
    return np.unique(each, axis=0, return_inverse=True)[1].reshape(-1)


def gives_target_away(col: np.ndarray, targets: np.ndarray) -> tuple[int, int, int] | None:
    """(values, fewest rows, most rows of a value) when a feature column's values repeat (a third of the rows or
    fewer distinct values, from 20 rows) and each comes with one target value on all of its rows: a series id of a
    long-format table (tsfresh's, sktime's "pd-long"), or a copy of the target; else None. ``targets``: the rows'
    ``target_codes``. In NumPy, as a table's every feature column is tested (a wide table: thousands)."""
    import pandas as pd

    n = len(col)
    if n < IDENTIFIER_MIN_ROWS:
        return None
    keys = pd.factorize(col if col.dtype.kind in "biuf" else pd.Series(col, dtype=object))[0]
    kept = keys >= 0  # a missing feature value belongs to no group
    key, target = keys[kept], np.asarray(targets)[kept]
    if not key.size or target.min() == target.max():
        return None
    sizes = np.bincount(key)
    sizes = sizes[sizes > 0]
    if not 2 <= len(sizes) <= n / 3:
        return None
    order = np.argsort(key, kind="stable")
    key, target = key[order], target[order]
    if ((key[1:] == key[:-1]) & (target[1:] != target[:-1])).any():  # a value with two targets
        return None
    return len(sizes), int(sizes.min()), int(sizes.max())


def same_but_spacing(values: np.ndarray) -> tuple[str, str] | None:
    """Two distinct text values that differ only in surrounding spaces, letter case or Unicode form ("yes", "Yes ": a
    data-entry slip; "café" composed (NFC) and decomposed (NFD, as macOS writes names): one text that looks the same)
    that make two classes or categories of one, or None. Numbers are never compared as text."""
    seen: dict[str, str] = {}
    for v in dict.fromkeys(v for v in values if isinstance(v, str)):
        key = unicodedata.normalize("NFC", v.strip().casefold())
        if key in seen:
            return seen[key], v
        seen[key] = v
    return None


def differ_how(pair: tuple[str, str]) -> str:
    """How the two values of ``same_but_spacing`` differ and are shown, for its note: values that differ only in
    Unicode form print alike, so they are shown with their code points escaped."""
    a, b = pair
    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return f"only in Unicode form, composed (NFC) or decomposed (NFD, as macOS writes names) ({ascii(a)} and " \
               f"{ascii(b)}: both {a!r})"
    return f"only in spaces or letter case ({a!r} and {b!r})"


def one_way(kind: str, pair: tuple[str, str]) -> str:
    """The fix in a ``same_but_spacing`` note."""
    a, b = pair
    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return f"write each {kind} in one form if they are one (Python: unicodedata.normalize('NFC', text))"
    return f"write each {kind} one way in the data if they are one"


def inferred_note(objective: str, why: str, where: str) -> str:
    """The one line that says an objective was inferred from the values, and how to override it."""
    other = "regression" if objective == "classification" else "classification"
    return f"{where}: objective {objective}, inferred from the values ({why}); give {option('objective', other)} if " \
           "that is wrong"


def infer_objective(y: np.ndarray, targets: list[str], requested: str, where: str,
                    declared: tuple[str, str] | None = None, categorical: Collection[str] = ()) -> tuple[str, str]:
    """(objective, why) from the training targets (n, m); every target column must agree. ``declared``: what the
    data's format says (``RawData.declared``), used when the user gave none; else the values decide
    (``from_numbers``: the task then says so in an ``ObjectiveInferred`` warning), but for the columns of
    ``categorical`` (``RawData.categorical_targets``), whose type declares them class labels."""
    kinds = []
    for j, name in enumerate(targets):
        col = _numbers(y[:, j])
        if name in categorical:
            kinds.append(("classification", f"{name!r} is declared categorical"))
        elif (code := written_as_codes(y[:, j])) is not None:  # '007': a name, however many there are
            kinds.append(("classification", f"{name!r} holds labels written with leading zeros ({code!r}), read as "
                                            "written"))
        elif col.dtype.kind not in "iubf":
            kinds.append(("classification", f"{name!r} holds text labels"))
        elif col.dtype.kind == "b":
            kinds.append(("classification", f"{name!r} is true/false"))
        elif _integral(col) and len(np.unique(col)) <= MAX_CLASS_INTEGERS:
            kinds.append(("classification", f"{name!r} holds {len(np.unique(col))} distinct integers"))
        else:
            kinds.append(("regression", f"{name!r} holds numbers ({len(np.unique(col))} distinct values)"))
    if requested != "auto":
        for j, ((_, why), name) in enumerate(zip(kinds, targets, strict=True)):
            if requested == "regression" and _numbers(y[:, j]).dtype.kind not in "iubf":
                example = written_numbers(y[:, j])
                if example is not None:
                    raise DataError(f"{where}: objective=regression, but target {name!r} holds numbers written with "
                                    f"signs or separators ({example!r}); write them as plain numbers (e.g. "
                                    f"{plain_number(example)})")
                big = next((v for v in y[:, j] if isinstance(v, str) and WHOLE_NUMBER.fullmatch(v.strip())
                            and abs(int(v)) >= 2**63), None)
                if big is not None:
                    raise DataError(f"{where}: objective=regression, but target {name!r} holds whole numbers beyond "
                                    f"64 bits ({big!r}), read as text labels; to regress on them, write them with a "
                                    "decimal point or an exponent (e.g. 1.2e21), or use "
                                    f"{option('objective', 'classification')}")
                raise DataError(f"{where}: objective=regression, but target {name!r} is not numeric ({why}); use "
                                f"{option('objective', 'classification')} or another {option('target')}")
        return requested, "given"
    if declared is not None:
        return declared
    if len({k for k, _ in kinds}) > 1:
        raise DataError(f"{where}: the targets mix classification and regression ({'; '.join(w for _, w in kinds)}); "
                        f"give one kind of target, or {option('objective', 'classification|regression')} for all")
    return kinds[0][0], "; ".join(w for _, w in kinds)


def from_numbers(y: np.ndarray, requested: str, declared: tuple[str, str] | None) -> bool:
    """Whether ``infer_objective`` decided from numeric values (which could be either kind): then the task says so
    (``ObjectiveInferred``), once the data is known to train."""
    return requested == "auto" and declared is None and any(_numbers(y[:, j]).dtype.kind in "iuf"
                                                            for j in range(y.shape[1]))


def check_class_counts(y: np.ndarray, targets: list[str], where: str) -> None:
    """Classification needs examples to learn each class from: more classes than half the training examples
    is an identifier or a quantity, not a label (``y``: (n, m) training targets)."""
    n = len(y)
    for j, name in enumerate(targets):
        k = len({str(v) for v in y[:, j]})
        if k > max(2, n // 2):
            example = written_numbers(y[:, j]) if y.dtype.kind == "O" else None
            if example is not None:
                raise DataError(f"{where}: target {name!r} holds numbers written with signs or separators "
                                f"({example!r}), so they read as {k} text labels among {n} training examples; write "
                                f"them as plain numbers (e.g. {plain_number(example)}) to predict the quantity")
            raise DataError(f"{where}: target {name!r} has {k} classes among {n} training examples ({n / k:.1f} per "
                            f"class), too few to learn any class from; if it is an identifier give another {option('target')}, "
                            f"if it is a quantity use {option('objective', 'regression')}")


def stratified_indices(labels: np.ndarray, size: int, seed: int, stratify: bool) -> tuple[np.ndarray, np.ndarray]:
    """(rest, held) with exactly ``size`` held-out rows, each class's share kept when ``stratify``."""
    n = len(labels)
    if stratify:

        _, codes = np.unique(labels.astype(str), return_inverse=True)
        return stratified_split(codes, size, seed)
    held = np.sort(np.random.default_rng(seed).permutation(n)[:size])
    return np.setdiff1d(np.arange(n), held), held


def finish_splits(raw: RawData, val_fraction: float, test_fraction: float | None, seed: int, stratify: bool,
                  folds: int | None = None, fold: int | None = None) -> RawData:
    """Add the validation and test splits the data lacks, held out of train (fractions of the training examples).

    ``test_fraction=None`` holds out no test split (fpt.sklearn: the caller keeps its own test data).
    ``folds``/``fold``: validation is fold ``fold`` of ``folds`` over the training examples left once the test
    split is held out (``fold_indices``), not a ``val_fraction`` hold-out; the test split is the same either way."""
    splits = dict(raw.splits)
    train = splits["train"]
    if folds is not None and "val" in splits:
        raise DataError(f"{splits['val'].where}: the data has its own validation split, so folds (cross-validation "
                        f"folds of the training examples) cannot replace it; drop {option('folds')}/{option('fold')} or "
                        "the file's validation split")
    if stratify and raw.declared is None:  # a file that says its targets are class labels is not a quantity
        check_class_counts(train.y, raw.targets, train.where)
    # Fractions of the training examples as read: all examples when the data has no splits of its own; with its
    # own test split (UCR's small TRAIN and large TEST files) a share of TRAIN, not of TRAIN + TEST.
    total = len(train)
    carved = []
    for name, fraction, offset in (("test", test_fraction, 1), ("val", val_fraction, 2)):
        if name in splits or fraction is None:
            continue
        labels = train.y[:, 0]
        if name == "val" and folds is not None:
            rest, held = fold_indices(labels, folds, int(fold or 0), seed, stratify, train.where)
            splits[name], train = train.take(held), train.take(rest)
            carved.append(f"val fold {fold} of {folds} ({len(held)})")
            continue
        size = max(1, round(fraction * total))
        if len(train) - size < 2:
            raise DataError(f"{train.where}: {len(train)} training example(s) cannot spare {size} for a {name} "
                            f"split; add examples or lower {option(f'{name}_fraction')}")
        rest, held = stratified_indices(labels, size, seed * 1000 + offset, stratify)
        if stratify:  # a class too rare to share stays in train, where it can be learnt
            lonely = ~np.isin(labels[held].astype(str), labels[rest].astype(str))
            rest, held = np.sort(np.concatenate([rest, held[lonely]])), held[~lonely]
            if not len(held):
                raise DataError(f"{train.where}: every class has too few examples to hold any out for a {name} split; "
                                "add examples or give the data's own split")
        splits[name], train = train.take(held), train.take(rest)
        carved.append(f"{name} {len(held)}")
    splits["train"] = train
    how = raw.split_from
    if carved:
        held = f"{', '.join(carved)} held out ({'stratified, ' if stratify else ''}split_seed={seed})"
        how = f"{how}; {held} of train" if raw.split_from != SEEDED else f"seeded split of all {total} examples: {held}"
    return RawData(raw.modality, {k: splits[k] for k in ("train", "val", "test") if k in splits}, raw.targets, raw.source,
                   how, raw.notes, fingerprint=raw.fingerprint)


def fold_indices(labels: np.ndarray, folds: int, fold: int, seed: int, stratify: bool,
                 where: str) -> tuple[np.ndarray, np.ndarray]:
    """(rest, held): fold ``fold`` of a shuffled (Stratified)KFold of ``labels`` held out, seeded by ``seed``.
    Every fold's training part must keep an example of each class, so a class with one example is an error."""
    import warnings

    from sklearn.model_selection import KFold, StratifiedKFold

    n = len(labels)
    if folds > n:
        raise DataError(f"{where}: {n} training example(s) cannot make {folds} folds; lower {option('folds')} (at "
                        f"most {n})")
    keys = labels.astype(str)
    if stratify:
        classes, counts = np.unique(keys, return_counts=True)
        if counts.min() < 2:
            raise DataError(f"{where}: class {str(classes[counts.argmin()])!r} has 1 training example, so the fold that "
                            f"validates on it leaves none to learn it from; add examples of it, or drop {option('folds')}")
    # sklearn's random_state takes 32 bits; split_seed may be any 63-bit integer
    kind = StratifiedKFold if stratify else KFold
    splitter = kind(n_splits=folds, shuffle=True, random_state=seed % 2**32)
    with warnings.catch_warnings():  # a class with fewer examples than folds: sklearn warns, each fold still has it
        warnings.simplefilter("ignore", UserWarning)
        rest, held = list(splitter.split(np.zeros(n), keys))[fold]
    return np.sort(rest), np.sort(held)


__all__ = ["Checks", "ColumnNote", "Inputs", "ObjectiveInferred", "RawData", "Split", "as_written", "beyond_int64",
           "choose_targets", "column_names", "column_notes", "empty_features", "empty_note", "finish_splits", "fold_indices",
           "from_numbers", "infer_objective",
           "one_kind_of_label",
           "gives_target_away", "target_codes", "Gaps", "as_floats", "is_missing", "keep_gaps", "known_missing", "plain_value",
           "reads_as_float", "same_but_spacing", "shown"]


def stratified_split(labels: np.ndarray, test_size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, test) with exactly ``test_size`` test examples and each class's share kept.

    Classes get test places in proportion to their size (largest remainders break ties), and
    the examples within a class are drawn with ``seed``; the result depends on nothing else.
    """
    classes, counts = np.unique(labels, return_counts=True)
    if not 0 < test_size < len(labels):
        raise ValueError(f"test_size={test_size} must be between 1 and {len(labels) - 1}")
    share = counts * test_size / len(labels)
    take = np.floor(share).astype(np.int64)
    order = np.argsort(-(share - take), kind="stable")
    take[order[: test_size - take.sum()]] += 1
    rng = np.random.default_rng(seed)
    test = np.concatenate([rng.permutation(np.flatnonzero(labels == c))[:k] for c, k in zip(classes, take, strict=True)])
    test = np.sort(test)
    train = np.setdiff1d(np.arange(len(labels)), test)
    return train, test
