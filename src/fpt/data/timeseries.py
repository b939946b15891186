"""Time series in the UCR/UEA archive formats: ``NAME_TRAIN.ts`` + ``NAME_TEST.ts`` (sktime's
text format: univariate or multivariate, equal or unequal length, class or numeric target) and
the UCR 2018 tab-separated ``NAME_TRAIN.tsv`` + ``NAME_TEST.tsv`` (label first, then the values;
trailing NaN pads shorter series).

These are parsed here rather than through Hugging Face ``datasets``: ``.ts`` has a header of
``@`` directives and ``:``-separated channels per line that no ``datasets`` builder reads, and
the ``.tsv`` files have no header and a variable number of fields per line, which its CSV
builder would reject or pad without telling us which series was ragged.

A trained time series model's checks of new series (files and arrays) live here too (``fpt.data.modalities``).
"""

from __future__ import annotations

import fnmatch
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import SEEDED, Checks, Inputs, RawData, Split, is_missing, plain_value, shown
from fpt.data.listing import children
from fpt.data.resolution import FLOAT32_RESOLUTION
from fpt.data.sniff import check
from fpt.errors import DataError, FptWarning, SchemaError, example_word, examples_named, option, row_word

# The header directives of the sktime/aeon .ts format (lower case; files spell them @problemName, @classLabel, ...).
DIRECTIVE_NAMES = ("problemName", "timeStamps", "missing", "univariate", "dimension", "dimensions", "equalLength",
                   "seriesLength", "classLabel", "targetLabel")
DIRECTIVES = {d.lower() for d in DIRECTIVE_NAMES}


def _training_files(folder: Path) -> list[Path]:
    """The ``*_TRAIN.ts`` and ``*_TRAIN.tsv`` files of ``folder`` (as ``Path.glob`` matches them), from its one listing
    (``fpt.data.listing``: the claim and the reader ask the same)."""
    return sorted(e.path for e in children(folder) if any(fnmatch.fnmatch(e.path.name, f"*_TRAIN{suffix}")
                                                            for suffix in (".ts", ".tsv")))


def pair(path: Path) -> tuple[Path, Path | None]:
    """(TRAIN file, TEST file or None) from a ``*_TRAIN.ts|tsv`` file or a directory holding one."""
    if path.is_dir():
        found = _training_files(path)
        if not found:
            raise DataError(f"{path}: no *_TRAIN.ts or *_TRAIN.tsv file")
        if len(found) > 1:
            raise DataError(f"{path}: several training files ({', '.join(p.name for p in found)}); give one as {option('data')}")
        path = found[0]
    stem = path.name.rsplit("_TRAIN", 1)
    if len(stem) != 2:
        return path, None
    test = path.with_name(f"{stem[0]}_TEST{stem[1]}")
    return path, test if test.exists() else None


def is_ucr(path: Path) -> bool:
    if path.is_dir():
        return bool(_training_files(path))
    return path.suffix.lower() == ".ts" or (path.suffix.lower() == ".tsv" and path.stem.upper().endswith(("_TRAIN", "_TEST")))


_FLOAT32_MAX = float(np.finfo(np.float32).max)
_FLOAT32_TINY = float(np.finfo(np.float32).tiny)  # 1.18e-38: below it float32 keeps fewer digits, below 1.4e-45 none
_SMALLEST_SCALE = 1e-30  # as fpt.data.tokenisers._SMALLEST_STD: a channel varying on a smaller scale is refused


class TinyValues(FptWarning):
    """Values below float32's smallest normal number became 0 (or lost digits) where the rest of their channel is so
    much larger that float32 could not tell them from 0 beside it anyway."""


def float32_carries(s: np.ndarray) -> bool:
    """Whether float32 holds a (C, L) float64 series' every channel to ``FLOAT32_RESOLUTION`` of its own standard
    deviation (a constant channel: only if float32 holds it exactly)."""
    if not s.size:
        return True
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a channel of NaN alone: nothing to carry
        std = np.nanstd(s, axis=1)  # (C,)
        top = np.nanmax(np.abs(s), axis=1)
    for c in range(s.shape[0]):
        if not np.isfinite(top[c]):
            continue
        if std[c] > 0:
            if np.spacing(np.float32(top[c] + 4 * std[c])) / std[c] > FLOAT32_RESOLUTION:
                return False
        elif not np.array_equal(s[c].astype(np.float32), s[c], equal_nan=True):
            return False
    return True


def narrowed(series: list[np.ndarray], where: str, error: type[Exception] = DataError) -> list[np.ndarray]:
    """(C, L) float64 series as float32, as every series is read, but for a series float32 cannot carry
    (``float32_carries``: a large offset under a small variation), which stays float64 (the tokeniser normalises in
    float64, and the tokens it makes are float32 only after that). A value of 0 < |v| < 1.2e-38 (float32's smallest
    normal number; 1e-315 in a float64 file) becomes 0 or loses digits in the cast, silently. So, per channel of
    ``where`` (the file or array), such values are counted: where the whole channel is that small (every value under
    1e-30, the scale fpt.data.tokenisers refuses to standardise by), its series would read as zeros, and that is an
    ``error`` naming the channel, the count and the rescaling; where the channel holds larger values, they lie below
    float32's precision beside them (at most 1.2e-8 of its largest), so the model reads the same, and a note says so."""
    tiny: dict[int, int] = {}
    smallest: dict[int, float] = {}
    for s in series:
        if s.dtype.itemsize <= 4 or s.dtype.kind != "f":
            continue
        with np.errstate(invalid="ignore"):
            a = np.abs(s)
            under = (a < _FLOAT32_TINY) & (a > 0)
        if under.any():
            for c in np.flatnonzero(under.any(axis=1)):
                tiny[int(c)] = tiny.get(int(c), 0) + int(under[c].sum())
                smallest[int(c)] = min(smallest.get(int(c), math.inf), float(a[c][under[c]].min()))
    if tiny:
        total = sum(s.size // max(s.shape[0], 1) for s in series)
        for c, count in sorted(tiny.items()):
            largest = max((float(np.nanmax(np.abs(s[c]), initial=0.0)) for s in series if c < s.shape[0]), default=0.0)
            channel = f"{where}, channel {c + 1}" if series[0].shape[0] > 1 else where
            what = (f"{count} of {total} values below float32's smallest normal number (1.2e-38; as small as "
                    f"{smallest[c]:.3g})")
            if largest < _SMALLEST_SCALE:
                power = math.ceil(-math.log10(largest)) if largest > 0 else 300
                raise error(f"{channel}: {what}, and none above {largest:.3g}: in float32, as fpt reads series, they "
                            f"would be 0 or lose their digits; rescale the values (multiply them by 1e{power})")
            warnings.warn(f"{channel}: {what} read as 0 or with fewer digits; beside the channel's values (up to "
                          f"{largest:.3g}) they are below float32's precision, so the model reads the same; rescale "
                          "them if they matter", TinyValues, stacklevel=3)
    return [s.astype(np.float32) if s.dtype.itemsize <= 4 or s.dtype.kind != "f" or float32_carries(s) else s
            for s in series]


def _number(text: str, path: Path, line: int) -> float:
    text = text.strip()
    if text in {"?", "", "NaN", "nan"}:
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{path}, line {line}: {text[:30]!r} is not a number; a series is comma-separated numbers "
                        "('?' for missing)") from None
    if not math.isfinite(value) or abs(value) > _FLOAT32_MAX:  # float() reads inf/Infinity; series are float32
        raise DataError(f"{path}, line {line}: {text[:30]!r} is not a finite number; replace it with a finite value "
                        "or '?' for missing")
    return value


def _numbers(texts: list[str], path: Path, line: int) -> np.ndarray | list[float]:
    """``_number`` of each text. float() runs over them all in one C loop first (a 1,000-series x 1,000-point file is
    a million values): where every value it reads is finite and within float32, _number reads the same; anything
    else ('?', NaN, inf, a typo) is read value by value, so its error names it."""
    try:
        values = np.fromiter(map(float, texts), dtype=np.float64, count=len(texts))
    except ValueError:
        values = None
    if values is not None and (np.abs(values) <= _FLOAT32_MAX).all():  # False for NaN and inf
        return values
    return [_number(v, path, line) for v in texts]


def _values(channel: str, path: Path, line: int) -> np.ndarray | list[float]:
    """One channel's comma-separated values; a trailing comma ends the list, it is not a missing point."""
    parts = channel.split(",")
    if len(parts) > 1 and not parts[-1].strip():
        parts = parts[:-1]
    return _numbers(parts, path, line)


def _refuse_missing_label(target: str, missing: tuple[str, ...], path: Path, line: int, where: str) -> None:
    """A series' target written as missing (none, '?' in a .ts file, NaN in a UCR .tsv: pandas writes a missing label
    so) was trained as a class of its own ('', 'NaN'), where a table's missing target is refused."""
    if target.strip().lower() in missing:
        written = f"{target.strip()!r}, missing" if target.strip() else "none"
        raise DataError(f"{path}, line {line}: the series' target ({where}) is {written}; a target cannot be "
                        "missing: give it, or drop the line")


def _labelled(header: dict[str, str]) -> bool:
    """Whether a .ts header says each series carries a target (@classLabel true, or @targetLabel true). A header
    without @classLabel has class labels, unless it says @targetLabel false: the regression archive's file of series
    to predict, whose last channel was read as its target."""
    if "classlabel" not in header and "targetlabel" in header:
        return header["targetlabel"].lower() == "true"
    return header.get("classlabel", "true").split(" ")[0].lower() == "true" or \
        header.get("targetlabel", "false").lower() == "true"


def read_ts(path: Path, targets_needed: bool = True,
            labels: bool | None = None) -> tuple[list[np.ndarray], np.ndarray | None, dict]:
    """An sktime ``.ts`` file: series (C, L_i) float arrays, (n,) targets, header facts. With ``targets_needed``
    false (new series to predict), a file that says @classLabel false holds series only, and the targets are None.
    ``labels`` False: the user says the lines hold no target (fpt predict --no-targets), whatever the header says."""
    header: dict[str, str] = {}
    series: list[np.ndarray] = []
    targets: list[str] = []
    target_lines: list[int] = []
    said: dict[str, int] = {}  # each directive's first line
    in_data = False
    check(path, "text", "a .ts file")
    try:
        # utf-8-sig: a byte-order mark (some Windows editors write one) is not part of the first directive
        lines = path.read_text(encoding="utf-8-sig", errors="strict").splitlines()
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith(("#", "%")):  # comments: '#', and '%' (.arff-style, as some aeon files)
            continue
        if not in_data:
            if not line.startswith("@"):
                raise DataError(f"{path}, line {i}: {line[:30]!r} before @data; a .ts file starts with @ directives "
                                "then @data")
            key, _, value = line[1:].partition(" ")
            if key.lower() == "data":
                in_data = True
            elif key.lower() in DIRECTIVES:
                if header.get(key.lower(), value.strip()) != value.strip():  # the last would win without a word
                    raise DataError(f"{path}, line {i}: @{key} {value.strip()!r}, but line {said[key.lower()]} "
                                    f"says @{key} {header[key.lower()]!r}; keep the one that is true")
                header[key.lower()] = value.strip()
                said.setdefault(key.lower(), i)
            else:
                raise DataError(f"{path}, line {i}: unknown directive @{key}; a .ts header holds "
                                f"{', '.join('@' + d for d in DIRECTIVE_NAMES)} (write notes as # comments)")
            continue
        fields = line.split(":")
        # Timestamps are '(t,v)' pairs in the values; a '(' in the target after the last ':' is just a label.
        if header.get("timestamps", "false").lower() == "true" or any("(" in f for f in fields[:-1]):
            raise DataError(f"{path}, line {i}: series with timestamps '(t,v)' are not supported; write the values only")
        labelled = _labelled(header) if labels is None else labels
        if not labelled and targets_needed:
            raise DataError(f"{path}: no @classLabel/@targetLabel; each series needs its target after the last ':'")
        if labelled and len(fields) < 2:
            raise DataError(f"{path}, line {i}: no ':' before the target; write values:target")
        *dims, target = fields if labelled else [*fields, ""]
        values = [_values(d, path, i) for d in dims]
        if series and len(values) != series[0].shape[0]:
            raise DataError(f"{path}, line {i}: {len(values)} channel(s), but earlier series have {series[0].shape[0]}; "
                            "every series needs the same channels")
        lengths = {len(v) for v in values}
        if len(lengths) > 1:
            raise DataError(f"{path}, line {i}: channels of different lengths {sorted(lengths)} in one series; pad "
                            "them with '?' to one length")
        if header.get("univariate", "").lower() == "true" and len(values) > 1:
            raise DataError(f"{path}, line {i}: {len(values)} channels, but the header says @univariate true; set "
                            "@univariate false (and @dimensions) or fix the line")
        if all(np.isnan(v).all() for v in values):  # as a UCR .tsv line of no values: nothing to learn or predict from
            raise DataError(f"{path}, line {i}: a series with no values (every point missing); give it values or drop "
                            "the line")
        if labelled and targets_needed:
            _refuse_missing_label(target, ("", "?"), path, i, "after the last ':'")
        declared = header.get("classlabel", "").split()[1:]
        if declared and labelled and target.strip() not in declared:
            # @classLabel lists the labels separated by spaces, so a label with a space can never be declared
            spaced = "; a label cannot hold a space in a .ts file (@classLabel separates them by spaces): write " \
                f"{'_'.join(target.split())!r}" if len(target.split()) > 1 else ""
            raise DataError(f"{path}, line {i}: label {target.strip()!r} is not one of the classes @classLabel declares "
                            f"({', '.join(map(repr, declared[:20]))}){spaced or '; add it to @classLabel or fix the label'}")
        series.append(np.array(values, dtype=np.float64))  # narrowed to float32 below, tiny values counted
        targets.append(target.strip())
        target_lines.append(i)
    if not in_data:
        raise DataError(f"{path}: no @data line; a .ts file has @ directives, then @data, then one series per line")
    if not series:
        raise DataError(f"{path}: no series after @data")
    series = narrowed(series, str(path))
    channels = series[0].shape[0]  # every line has these (checked above)
    declared_channels = header.get("dimensions", header.get("dimension", ""))
    if declared_channels.isdigit() and int(declared_channels) != channels:
        raise DataError(f"{path}: @dimensions {declared_channels}, but the series have {channels} channel(s); fix "
                        "@dimensions, or the lines (a series' channels are separated by ':', its points by ',')")
    if header.get("univariate", "").lower() == "false" and channels == 1:
        # channels written with another separator read as one long channel: a different series, silently
        raise DataError(f"{path}: @univariate false, but every series has one channel; set @univariate true, or "
                        "separate a series' channels by ':' (its points by ',')")
    if header.get("equallength", "").lower() == "true":
        lengths = [s.shape[1] for s in series]
        bad = next((j for j, n in enumerate(lengths) if n != lengths[0]), None)
        if bad is not None:
            raise DataError(f"{path}: @equalLength true, but series {bad + 1} has {lengths[bad]} points and series 1 "
                            f"has {lengths[0]}; fix the series or set @equalLength false")
        declared_length = header.get("serieslength", "")
        if declared_length.isdigit() and int(declared_length) != lengths[0]:
            raise DataError(f"{path}: @seriesLength {declared_length}, but the series have {lengths[0]} points; fix "
                            "@seriesLength")
    if not (_labelled(header) if labels is None else labels):
        return series, None, header
    y = np.array(targets, dtype=object)
    if header.get("targetlabel", "false").lower() == "true":
        y = np.array([_number(t, path, i) for t, i in zip(targets, target_lines, strict=True)])
    return series, y, header


def _tsv_lines(path: Path) -> list[tuple[int, list[str]]]:
    """A UCR .tsv's non-empty lines as (line number, fields): tab-separated, or comma-separated without a tab."""
    check(path, "text", "a UCR .tsv file")
    return [(i, raw.rstrip("\n").split("\t") if "\t" in raw else raw.split(","))
            for i, raw in enumerate(path.read_text().splitlines(), 1) if raw.strip()]


def read_ucr_tsv(path: Path, labelled: bool = True, lines: list[tuple[int, list[str]]] | None = None,
                 targets_needed: bool = True) -> tuple[list[np.ndarray], np.ndarray | None, dict]:
    """A UCR 2018 ``.tsv``: label, then the values; trailing NaN marks a shorter series. With ``labelled`` false
    (new series to predict, ``read_series_inputs`` decides) every field is a value and the targets are None; with
    ``targets_needed`` false (new series to predict) a missing label is read, not refused."""
    series, targets = [], []
    for i, fields in lines if lines is not None else _tsv_lines(path):
        if labelled and len(fields) < 2:
            raise DataError(f"{path}, line {i}: a label and no values; a line is label<TAB>v1<TAB>v2...")
        values = unpadded(np.array(_numbers(fields[1:] if labelled else fields, path, i), dtype=np.float64)[None, :])
        if not values.shape[1]:
            raise DataError(f"{path}, line {i}: a series with no values")
        series.append(values)
        if labelled and targets_needed:
            _refuse_missing_label(fields[0], ("", "nan"), path, i, "first on the line")
        if labelled:
            targets.append(fields[0].strip())
    if not series:
        raise DataError(f"{path}: no series; a line is label<TAB>v1<TAB>v2...")
    series = narrowed(series, str(path))
    return series, np.array(targets, dtype=object) if labelled else None, {}


def read_timeseries(path: Path) -> RawData:
    train_path, test_path = pair(path)
    reader = read_ts if train_path.suffix.lower() == ".ts" else read_ucr_tsv
    parts = {"train": (train_path, *reader(train_path))}
    if test_path is not None:
        parts["test"] = (test_path, *reader(test_path))
    channels = parts["train"][1][0].shape[0]
    for p, series, _, _ in parts.values():
        if series[0].shape[0] != channels:
            raise DataError(f"{p}: {series[0].shape[0]} channel(s), but the training file has {channels}; give both "
                            "files the same channels")
    splits = {name: Split(series, y[:, None], str(p)) for name, (p, series, y, _) in parts.items()}
    header = parts["train"][3]
    how = "the data's own TRAIN/TEST files" if test_path is not None else SEEDED
    lengths = [s.shape[1] for s in parts["train"][1]]
    declared = _declared(reader is read_ts, header, parts["train"][2])
    return RawData("timeseries", splits, ["target"], f"UCR/UEA {'.ts' if reader is read_ts else '.tsv'} file "
                   f"{train_path}" + (f" + {test_path.name}" if test_path else ""), how,
                   {"channels": channels, "train_lengths": f"{min(lengths)}..{max(lengths)}",
                    **({"problem": header["problemname"]} if "problemname" in header else {})}, declared)


def _declared(ts: bool, header: dict, y: np.ndarray) -> tuple[str, str] | None:
    """What the archive format says the target is. The UCR/UEA archives are classification archives whose labels
    are often integers (PigCVP: 1..52), which a table's rule (at most 20 distinct integers classify) would read as
    a quantity; a .ts file says @targetLabel true for a numeric target (the regression archive). A .tsv whose
    labels are not whole numbers is not a class list: the values decide."""
    if ts:
        if header.get("targetlabel", "false").lower() == "true":
            return "regression", "the .ts file says @targetLabel true"
        return "classification", "the .ts file says @classLabel true"
    try:
        numbers = np.array([float(v) for v in y])
    except ValueError:
        return "classification", "a UCR .tsv file: its first field is a class label"
    if np.all(np.mod(numbers, 1) == 0):
        return "classification", "a UCR .tsv file: its first field is a class label"
    return None


def series_from_rows(X: np.ndarray, where: str) -> list[np.ndarray]:
    """A table's rows (n, columns) of numbers as univariate (1, L) float32 series, one value per column in the
    columns' order (a "wide" CSV, as aeon's and Kaggle's series often come): trailing missing values end a shorter
    series, as in a UCR .tsv; a missing value inside one stays missing (NaN)."""
    if np.isinf(X).any():
        row = int(np.flatnonzero(np.isinf(X).any(axis=1))[0])
        raise DataError(f"{where}, {row_word(row)}: an infinite value; replace it with a finite number, or leave it empty "
                        "where it is missing")
    out = []
    for i, row in enumerate(X):
        real = np.flatnonzero(~np.isnan(row))
        if not len(real):
            raise DataError(f"{where}, {row_word(i)}: a series with no values; give it values or drop the row")
        out.append(row[: real[-1] + 1].astype(np.float64)[None, :])
    return narrowed(out, where)


CHANNEL_NAMES = "channel_names"  # the task_info key: the columns of series' channels, in training order


def is_series_cell(cell: Any) -> bool:
    """A table cell that holds a channel's points (a pd.Series, an array or a list), not one value: a cell of sktime's
    nested DataFrame, of a datasets ``Sequence``/``List`` column."""
    return isinstance(cell, (list, tuple, np.ndarray)) or (hasattr(cell, "to_numpy") and hasattr(cell, "index"))


def missing_series(X: Any, named: Callable[[int], str]) -> str | None:
    """The refusal of a missing example (None, NaN, pandas' NA) among series given one by one (a list of them, a
    pandas Series or an object array of them: a DataFrame's column of lists with a NaN row after a merge), naming
    the first as ``named(i)`` says (X[0], X.iloc[3], inputs[1]); None where none is missing. Read as a series, it
    was one of shape (): 'inputs[1] has shape (); give (channels, length)', scikit-learn's 'Expected 2D array'."""
    if isinstance(X, np.ndarray) and X.dtype != object:  # an array of numbers: a NaN in it is a missing point
        return None
    cells = list(X) if isinstance(X, (list, tuple, np.ndarray)) or hasattr(X, "iloc") else []
    if not any(is_series_cell(c) for c in cells):  # numbers alone are one series' points, said elsewhere
        return None
    gone = [i for i, c in enumerate(cells) if not is_series_cell(c) and np.ndim(c) == 0
            and is_missing(np.array([c], dtype=object))[0]]
    if not gone:
        return None
    return (f"{named(gone[0])} is missing ({cells[gone[0]]!r}; {len(gone)} of {len(cells)} examples) among series; "
            "give its points (NaN where a point is missing), or leave the example out")


def holds_series(values: np.ndarray) -> bool:
    """Whether a table column holds a series per row (its first present cell is one: ``is_series_cell``)."""
    if values.dtype.kind != "O":
        return False
    return is_series_cell(next((v for v in values if v is not None and not isinstance(v, float)), None))


def caller_head(where: str, indexed: str) -> str:
    """``where`` without the caller's name for what it gave, where ``indexed`` (X.iloc, X.loc, inputs.iloc) names it
    again: 'FPTClassifier.fit: X' before X.iloc[1] is 'FPTClassifier.fit' (it read 'X, X.iloc[1]', the name twice)."""
    base = indexed.split(".", 1)[0]
    return where[: -len(base) - 2] if where.endswith(f": {base}") else where


def series_of_cells(rows: Any, names: list[str], where: str, error: type[Exception] = DataError,
                    indexed: str | None = None) -> list[np.ndarray]:
    """Rows of cells, each cell one channel's points (columns ``names``), as (C, L) float64 series. A cell of a 2-D
    array is refused: read flat it was one channel of its rows laid end to end, and whether it is (channels, length)
    or (length, channels) no cell says. A row is named as the caller indexes what it gave, from 0: ``indexed`` ('X.iloc':
    X.iloc[1]), else ``row_word`` (a DataFrame's rows in ``frame_rows``' words; a file's 'row 2', under its header):
    an estimator's X.iloc[1] was 'row 2'."""
    series = []
    for i, row in enumerate(rows):
        # the caller's cell, X.iloc[1]['c'] (it read 'X, X.iloc[1]: column 'c''), or a file's row and column
        at = f"{caller_head(where, indexed)}: {indexed}[{i}]" if indexed is not None else f"{where}, {row_word(i)}"
        channels = []
        for name, cell in zip(names, row, strict=True):
            column = f"{at}[{name!r}]" if indexed is not None else f"{at}: column {name!r}"
            if cell is None or (isinstance(cell, float) and np.isnan(cell)):
                raise error(f"{column} has no series (missing); leave the rows without one out, or give them their "
                            "points")
            try:
                values = np.asarray(cell.to_numpy() if hasattr(cell, "to_numpy") else cell, dtype=np.float64)
            except (TypeError, ValueError):
                if all(isinstance(v, str) for v in cell):  # a Sequence(Value("string")) column: words, not points
                    raise error(f"{at}: a cell that is not a series of numbers: column {name!r} "
                                "holds a list of text; give each row's words as one text (' '.join(words)), which is "
                                "read as a sequence of symbols") from None
                raise error(f"{at}: a cell that is not a series of numbers; every cell of a nested "
                            "DataFrame is one channel's points (a pd.Series or an array of numbers)") from None
            if values.ndim == 0 or sum(n > 1 for n in values.shape) > 1:
                what = "one value, not a series" if values.ndim == 0 else f"an array of shape {values.shape}"
                raise error(f"{column} holds {what}; a cell holds one channel's points: "
                            "give a column per channel, or (X, y) arrays of shape (n, channels, length)")
            values = values.ravel()
            if not len(values):  # said after the read as 'series 2 has no points', counted from 0, unnamed
                raise error(f"{column} has no points; give every series at least one point, or "
                            "leave the row out")
            if np.isinf(values).any():
                raise error(f"{column} is infinite at point "
                            f"{int(np.flatnonzero(np.isinf(values))[0])}; replace it with a finite number, or NaN "
                            "where a value is missing")
            channels.append(values)
        if len({len(c) for c in channels}) > 1:
            raise error(f"{at}: channels of {sorted({len(c) for c in channels})} points in one "
                        "series; give every channel of a series the same length (NaN where a point is missing)")
        series.append(np.stack(channels))
    return series


class SeriesLayout(FptWarning):
    """An (n, a, b) series array with more channels than points: read as (n, channels, length), as aeon and sktime
    lay it out, though tslearn and Keras lay out (n, length, channels)."""


def check_series_layout(X: Any, where: str) -> None:
    """Refuse an (n, L, 1) array (a series of one point is no series: it is tslearn's or Keras' (n, length,
    channels) layout) and say so where (n, a, b) holds more channels than points, which is that layout too, or a
    short recording of many sensors."""
    if isinstance(X, list) or np.ndim(X) != 3 or X.shape[1] <= X.shape[2]:
        return
    transpose = "if it is (n, length, channels) (tslearn, Keras), give X.transpose(0, 2, 1)"
    if X.shape[2] == 1:
        raise DataError(f"{where} has shape {X.shape}: read as (n, channels, length), as aeon and sktime lay series out, "
                        f"that is {X.shape[1]} channels of 1 point each; {transpose}; a table of features is X of "
                        "shape (n, features)")
    warnings.warn(f"{where} has shape {X.shape}, read as (n, channels, length) as aeon and sktime lay series out: "
                  f"{X.shape[1]} channels of {X.shape[2]} points each; {transpose}", SeriesLayout, stacklevel=3)


def unpadded(s: np.ndarray) -> np.ndarray:
    """A (C, L) series without its trailing points that are NaN in every channel: the padding of a shorter series in
    an array of equal rows, as tslearn's ``to_time_series_dataset`` and the UCR archive's .tsv files pad (read as
    missing points, the padding made every series the longest one's length, its tail the training mean)."""
    real = np.flatnonzero(~np.isnan(s).all(axis=0))
    return s[:, : real[-1] + 1] if len(real) else s[:, :0]


def series_from_array(X: Any, channels: str, image_size: int, where: str) -> list[np.ndarray]:
    """(n, channels, length) or (n, length) arrays, or a list of (C, L) series (``fpt.data.arrays.series_list``),
    as a list of float32 (C, L) series, each without its trailing NaN padding (``unpadded``)."""
    if not isinstance(X, list):
        if X.ndim == 2:
            X = X[:, None, :]
        if X.ndim != 3:
            raise DataError(f"{where}: {option('modality', 'timeseries')} needs X of shape (n, channels, length), not {X.shape}")
    out = [unpadded(s) for s in narrowed([np.asarray(s, dtype=np.float64) if np.asarray(s).dtype.kind != "f" else
                                          np.asarray(s) for s in X], where)]
    empty = next((i for i, s in enumerate(out) if not s.shape[1] and X[i].shape[-1]), None)
    if empty is not None:  # as a .ts or .tsv line of no values: nothing to learn from
        # named as the caller indexes its array (X[3]), or a table's row (data.iloc[3], a file's 'row 4'): 'series 3'
        # was neither, counted from 0
        at = example_word("series", empty) if examples_named() else row_word(empty)
        raise DataError(f"{where}: {at} has no values (every point missing); give it values or drop it")
    return out



def array_notes(splits: dict[str, Split], channels: str) -> dict[str, Any]:
    """The input contract a model trained on series arrays checks new series against (fpt.data.inputs): the
    channels and the training lengths; a split of other channels is refused."""
    series = splits["train"].x
    lengths = [s.shape[1] for s in series]
    notes = {"channels": int(series[0].shape[0]), "train_lengths": f"{min(lengths)}..{max(lengths)}"}
    for split in splits.values():
        other = next((i for i, s in enumerate(split.x) if s.shape[0] != notes["channels"]), None)
        if other is not None:
            raise DataError(f"{split.where}: series {other} has {split.x[other].shape[0]} channel(s), but the "
                            f"training series have {notes['channels']}; give every series the same channels")
    return notes


# ---------------------------------------------------------------------------------------------- new inputs


class TargetsRead(FptWarning):
    """A .tsv of new series was read label first (the format's layout) where the model cannot tell: say so."""


def read_series_inputs(path: Path, checks: Checks) -> Inputs:
    """``fpt predict``'s reader of one UCR/UEA file (e.g. ``NAME_TEST.ts``): its series and their labels, checked.
    ``checks.no_targets`` (fpt predict --no-targets): the user says the lines hold the series alone."""
    notes = []
    if path.suffix.lower() == ".ts":
        series, y, _ = read_ts(path, targets_needed=False, labels=False if checks.no_targets else None)
    else:
        lines = _tsv_lines(path)
        labelled = not checks.no_targets and _tsv_labelled(path, lines, checks.schema)
        series, y, _ = read_ucr_tsv(path, labelled, lines, targets_needed=False)
        classes = _classes(checks.schema)
        lengths = train_lengths(checks.schema.info)
        if labelled and classes is None and (lengths is None or lengths[0] != lengths[1]):
            # any number is a target, so nothing shows a file of the series alone read label first (its first value
            # taken for the target, the series one point short, scored against it): say how it was read
            notes.append(f"{path}: read each line's first field as its target (a UCR .tsv line is the label, then the "
                         "series; the training series varied in length, so the number of values cannot tell); if "
                         f"the lines hold the series alone, give {option('no_targets')}")
            warnings.warn(notes[-1], TargetsRead, stacklevel=3)
        if y is not None and classes is not None:
            bad = next(((i, f[0]) for i, f in lines if f[0].strip() not in classes), None)
            if bad is not None:  # the values alone, read label first: say why, not "fix the label"
                raise SchemaError(f"{path}, line {bad[0]}: {bad[1].strip()[:30]!r} is not one of the model's classes "
                                  f"({shown(sorted(classes), 10)}); a UCR .tsv line starts with its label. Series to "
                                  f"predict without labels: give {option('no_targets')}, or a .ts file that says "
                                  "@classLabel false, or an .npz of X")
    checked = checks.arrays(series, str(path))
    if y is None:  # a .ts of new series that says @classLabel false, a .tsv of values alone: predicted, not scored
        return Inputs(checked, None, str(path), notes=notes)
    y2 = y[:, None].astype(object)
    checks.labels(y2, str(path))
    return Inputs(checked, y2, str(path), notes=notes)


def _tsv_labelled(path: Path, lines: list[tuple[int, list[str]]], schema: Any) -> bool:
    """Whether a .tsv of new series starts each line with a label. A UCR .tsv has no header to say so, and a file of
    series to predict often holds the values alone: read as labelled, its first value was taken for a label (a
    regression model scored the shifted series against it). A model of one training length L decides by the fields:
    L + 1 on every line is a label and the series, L the series alone; anything else is an error naming the line.
    A model of varied lengths cannot tell, so the file is read as the format defines it, label first."""
    lengths = train_lengths(schema.info)
    if lengths is None or lengths[0] != lengths[1] or not lines:
        return True
    n = lengths[0]
    counts = {len(fields) for _, fields in lines}
    if counts == {n + 1}:
        return True
    layout = (f"a line of a UCR .tsv is a label and the series' {n} points ({n + 1} values), or, to predict without "
              f"scoring, the {n} points alone (give {option('no_targets')} to say so); every line alike")
    if counts != {n}:
        i, fields = next((i, f) for i, f in lines if len(f) != len(lines[0][1]) or len(f) not in (n, n + 1))
        raise SchemaError(f"{path}, line {i}: {len(fields)} values, but every training series had {n} points: {layout}")
    classes = _classes(schema)
    if classes is not None and all(f[0].strip() in classes for _, f in lines):
        # label + n - 1 points reads the same; a first value that is always a class is a label, the series too short
        raise SchemaError(f"{path}: every line has {n} values and starts with one of the model's classes: as a label, "
                          f"the series that follows has {n - 1} points, but every training series had {n}; {layout}")
    return False


def _classes(schema: Any) -> set[str] | None:
    """The texts of a classifier's classes (a .tsv's first field is text; a class trained from arrays may be 1), or
    None for regression."""
    classes = getattr(schema.prep, "classes", None)
    return {str(plain_value(c)) for c in classes[0]} if classes else None


def train_lengths(info: dict[str, Any]) -> tuple[int, int] | None:
    """(shortest, longest) training series, as the run's summary recorded them ("lo..hi"), or None."""
    text = info.get("train_lengths")
    try:
        lo, hi = (int(v) for v in str(text).split(".."))
        return lo, hi
    except ValueError:
        return None


def check_series(X: Any, schema: Any, where: str, allow_unseen: bool = False) -> list[np.ndarray]:
    """Series (n, C, L), (n, L) or a list of (C, L) / (L,) arrays: the training channels and lengths."""
    tok = schema.prep.tokeniser
    if isinstance(X, np.ndarray) and X.ndim == 2:
        X = X[:, None, :]
    out = []
    lengths = train_lengths(schema.info)
    said = missing_series(X, lambda i: example_word("series", i))
    if said:
        raise SchemaError(f"{where}: {said}")
    raw = [np.asarray(s) for s in X]
    complex_at = [i for i, r in enumerate(raw) if r.dtype.kind == "c"]
    if complex_at:  # a cast to floats drops the imaginary part with only a warning: a prediction from half the input
        raise SchemaError(f"{where}: {example_word('series', complex_at[0])} holds complex numbers, but the model was trained on "
                          "real ones; give real values (x.real, or abs(x))")
    X = [np.asarray(s, dtype=np.float64) if r.dtype.kind != "f" else r for s, r in zip(X, raw, strict=True)]
    for i, s in enumerate(X):  # float32's cast makes 1e40 inf: it was refused as "an infinite value"
        with np.errstate(invalid="ignore"):
            beyond = np.isfinite(s) & (np.abs(s) > _FLOAT32_MAX)
        if beyond.any():
            raise SchemaError(f"{where}: {example_word('series', i)} holds a value beyond float32's range (±3.4e38), "
                              "which the model computes in; rescale the inputs (e.g. divide by a power of ten)")
    if X and all(s.ndim == 0 for s in X):  # one series' points given alone: each read as a series was "shape ()"
        raise SchemaError(f"{where}: {len(X)} numbers, not a batch of series; one series of {len(X)} points goes in a "
                          f"batch of one: [x], or np.asarray(x)[None] (shape (1, {len(X)}))")
    if all(s.ndim in (1, 2) for s in X):
        X = narrowed([s[None, :] if s.ndim == 1 else s for s in X], where, SchemaError)
    for i, s in enumerate(X):
        s = np.asarray(s, dtype=np.float64 if np.asarray(s).dtype == np.float64 else np.float32)  # as narrowed kept it
        s = s[None, :] if s.ndim == 1 else s
        if s.ndim != 2:
            raise SchemaError(f"{where}: {example_word('series', i)} has shape {s.shape}; give (channels, length)")
        if not s.shape[1] or np.isnan(s).all():
            # training refuses such a series (nothing to learn from); here it was a prediction from padding alone
            what = "every point missing" if s.shape[1] else "no points"
            raise SchemaError(f"{where}: {example_word('series', i)} has no values ({what}); give it values or leave it out")
        if np.isinf(s).any():
            raise SchemaError(f"{where}: {example_word('series', i)} holds an infinite value; replace it with a finite "
                              "number, or NaN where a value is missing")
        if s.shape[0] != tok.channels:
            flipped = "; it looks like (length, channels): transpose it" if s.shape[1] == tok.channels else ""
            raise SchemaError(f"{where}: {example_word('series', i)} has {s.shape[0]} channel(s), but the model was trained on "
                              f"{tok.channels}; give series of {tok.channels} channel(s) in the training order{flipped}")
        if lengths is None or lengths[0] != lengths[1]:
            s = unpadded(s)  # as training read its series: trailing NaN is the padding of a shorter one
        elif s.shape[1] > lengths[0] and np.isnan(s[:, lengths[0]:]).all():
            s = s[:, : lengths[0]]  # NaN past the one training length pads; up to it, NaN is a missing point
        n = s.shape[1]
        if lengths is not None and lengths[0] == lengths[1] and n != lengths[0]:
            raise SchemaError(f"{where}: {example_word('series', i)} has {n} points, but every training series had {lengths[0]}; "
                              f"resample or pad it to {lengths[0]} points")
        # Training of varied lengths: a series longer than the model reads (max_points) is kept, and the tokeniser
        # cuts it to its first windows, as it cut the longer series of the run's own test split (JapaneseVowels'
        # TEST file has series longer than any training one); Predictor.tokens says so in a warning and the notes.
        out.append(s)
    if not out:
        raise SchemaError(f"{where}: no series")
    return out


__all__ = ["SeriesLayout", "TargetsRead", "TinyValues", "array_notes", "caller_head", "check_series",
           "check_series_layout", "is_ucr", "missing_series", "narrowed", "pair", "read_series_inputs", "read_timeseries",
           "read_ts", "read_ucr_tsv", "series_from_array", "train_lengths", "unpadded"]
