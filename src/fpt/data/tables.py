"""Tables: CSV, TSV, JSON lines, Parquet and Arrow/Feather, read as Hugging Face ``datasets`` reads them (Arrow; a
CSV through the pandas chunks its builder reads, without importing it); and a trained tabular or sequence model's checks of new
table columns and arrays (``fpt.data.modalities``' entries).

One file (split by a ``split`` column if it has one, else held out by ``finish_splits``), or
a directory of split files ``train.csv`` + ``test.csv`` (+ ``val.csv``; any of the formats). CSV, TSV and JSON lines
may be compressed as pandas and ``datasets`` read them (``train.csv.gz``, ``.bz2``, ``.xz``, a one-file ``.zip``).
Columns: the target(s) (``--target``, comma-separated; default a column named target/label/
y/..., else the last), every other column a feature. A table whose only feature is text is a
symbol sequence (DNA, proteins, expressions); ``--modality`` overrides.
"""

from __future__ import annotations

import contextlib
import functools
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import (
    SEEDED,
    SPLIT_COLUMN,
    SPLIT_NAMES,
    WHOLE_NUMBER,
    Checks,
    Gaps,
    Inputs,
    RawData,
    Split,
    as_floats,
    as_written,
    beyond_int64,
    check_target_values,
    choose_targets,
    is_missing,
    keep_gaps,
    known_missing,
    names_shown,
    one_kind_of_label,
    plain_value,
    reads_as_float,
    rows,
    shown,
    spaced_header,
)
from fpt.data.categories import category_names, file_categories
from fpt.data.cells import refuse_infinite, refuse_nested
from fpt.data.codes import code_columns, codes_as_numbers, may_start_code, written_as_codes
from fpt.data.dates import DateKind, as_labels, find_dates, read_dates
from fpt.data.durations import as_seconds, find_durations, read_durations
from fpt.data.images import IMAGE_SUFFIXES
from fpt.data.layouts import TEXT
from fpt.data.listing import children
from fpt.data.readings import Reading, saved_reading
from fpt.data.sniff import check
from fpt.data.timeseries import (
    CHANNEL_NAMES,
    check_series,
    holds_series,
    series_from_array,
    series_from_rows,
    series_of_cells,
)
from fpt.data.timeseries import array_notes as series_array_notes
from fpt.data.tokenisers import text_of
from fpt.errors import (
    DataError,
    SchemaError,
    cell_word,
    column_word,
    file_rows,
    near,
    option,
    remedy,
    row_number,
    row_word,
)

BUILDERS = {".csv": "csv", ".tsv": "csv", ".tab": "csv", ".jsonl": "json", ".json": "json", ".ndjson": "json",
            ".parquet": "parquet", ".pq": "parquet", ".feather": "arrow", ".arrow": "arrow"}
FORMAT_NAMES = {"csv": "CSV", "json": "JSON lines", "parquet": "Parquet", "arrow": "Arrow/Feather"}
# The name a CSV's first column is read under when its header cell is empty: the row index that pandas' to_csv
# (index=True, its default) and R's write.csv write there. Never a feature: fpt predict writes it back, first.
ROW_INDEX = ""
# The compressions both readers open by the file's last suffix (pandas' compression="infer", datasets' xopen):
# archives as they are downloaded (train.csv.gz, a Kaggle train.csv.zip). Parquet compresses inside its own format.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}
TSV_SUFFIXES = {".tsv", ".tab"}
# How every CSV/TSV is parsed, at train and at predict alike: spaces after a separator are layout, not part of the
# value (R's write.table(sep=", "), hand-written and some Excel exports: 'x1, x2, label'); kept, the columns were
# ' x2' and ' label' (--target label found no column) and the labels ' a', a category apart from 'a'.
CSV_OPTIONS = {"skipinitialspace": True}
# said beside a target column the user did not name, in errors about it (a user who forgot --target learns that first)
FRAME = "a pandas DataFrame"  # columns_to_raw's source for fpt.build(data=df): its fixes are written in pandas
DEFAULT_TARGET = " (chosen by default: a column named target, label, labels, class or y, else the last)"


def table_suffix(path: Path) -> str:
    """A table file's format suffix, read past a compression suffix (``train.csv.gz`` -> ``.csv``); any other
    file's last suffix."""
    suffix = path.suffix.lower()
    if suffix in COMPRESSIONS and len(path.suffixes) > 1:
        inner = path.suffixes[-2].lower()
        if BUILDERS.get(inner) in ("csv", "json"):
            return inner
    return suffix


def format_name(path: Path) -> str:
    """How the texts name a table file's format (a .json file of one array of records is not JSON lines)."""
    suffix = table_suffix(path)
    return "JSON" if suffix == ".json" else FORMAT_NAMES[BUILDERS[suffix]]


def table_stem(path: Path) -> str:
    """The file's name without its table suffix and compression (``train.csv.gz`` -> ``train``)."""
    name = path.name
    if table_suffix(path) != path.suffix.lower():
        name = name[: -len(path.suffix)]
    return Path(name).stem


# A byte-order mark (Excel's "CSV UTF-8", pandas' to_csv(encoding='utf-8-sig')) is no part of the first column's name,
# as pandas reads it: with it, a row index's empty name was '\ufeff' (the index trained on as a feature 'Unnamed: 0')
# and 'label,x1,label' two names (pandas' 'label.1', the target chosen without a word)
_TEXT = "utf-8-sig"


def _open_bytes(path: Path) -> Any:
    """The file's bytes, decompressed as its suffix says (a .zip must hold one file: the table)."""
    kind = COMPRESSIONS.get(path.suffix.lower()) if table_suffix(path) != path.suffix.lower() else None
    if kind == "gzip":
        import gzip

        return gzip.open(path, "rb")
    if kind == "bz2":
        import bz2

        return bz2.open(path, "rb")
    if kind == "xz":
        import lzma

        return lzma.open(path, "rb")
    if kind == "zip":
        import zipfile

        try:
            archive = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise DataError(f"{path}: not a zip archive ({exc}); unzip it with another tool or give the table "
                            "file itself") from None
        members = [m for m in archive.namelist() if not m.endswith("/") and not m.startswith("__MACOSX/")]
        if len(members) != 1:
            raise DataError(f"{path}: a zip archive of {len(members)} files ({shown(members)}); it must hold one "
                            "table: unzip it and give the table file")
        return archive.open(members[0])
    return open(path, "rb")


# A compressed table may expand to at most this many times its size once past EXPANDED_FLOOR bytes: a few MB of gzip
# or bz2 can hold gigabytes (a decompression bomb), which the readers would hold in memory (datasets extracts a zip to
# disk). Real tables compress 3-20 times (a sparse one of zeros up to ~100); past both, the user decompresses it.
MAX_EXPANSION = 100
EXPANDED_FLOOR = 1 << 30
SCAN_CHUNK = 1 << 20


def _check_bytes(path: Path, builder: str) -> bool:
    """One streaming pass over the decoded bytes of a CSV/TSV or a compressed table, before a reader holds them: a
    compressed file that expands past ``MAX_EXPANSION`` times its size (and ``EXPANDED_FLOOR``), and NUL bytes in a
    CSV (pandas' C parser ends a cell at one, so a zero-filled block left by a write cut short, or UTF-16 text, would
    read as missing values or mangled names without a word). Memory: one chunk. Returns whether a CSV may hold codes
    (``fpt.data.codes.may_start_code``): only then is it read as text to find them (``_code_texts``)."""
    compressed = table_suffix(path) != path.suffix.lower()
    if not compressed and builder != "csv":
        return False
    limit = max(EXPANDED_FLOOR, MAX_EXPANSION * path.stat().st_size) if compressed else None
    total = lines = 0
    codes, before = False, b""
    with _open_bytes(path) as f:
        while chunk := f.read(SCAN_CHUNK):
            if builder == "csv" and not codes:
                codes, before = may_start_code(chunk, before), chunk
            if builder == "csv" and (at := chunk.find(b"\0")) >= 0:
                line = lines + chunk.count(b"\n", 0, at) + 1
                raise DataError(f"{path}: line {line} holds NUL bytes (0x00), which text never does: the file is damaged "
                                "(a copy or write cut short) or UTF-16 text (Excel's 'Unicode Text'); save it again as "
                                "UTF-8 CSV (pandas: to_csv(..., encoding='utf-8'))")
            total += len(chunk)
            lines += chunk.count(b"\n")
            if limit is not None and total > limit:
                raise DataError(f"{path}: expands to more than {limit >> 20} MiB, over {MAX_EXPANSION} times its "
                                f"{path.stat().st_size / (1 << 20):.1f} MiB (a decompression bomb, or a table too large "
                                "to read whole): decompress it yourself and give the table file")
    return codes


def _csv_fields(lines: list[str], sep: str) -> list[list[str]]:
    """``csv.reader``'s rows of lines already read, with no limit on a field's length: its default (128 KiB) is a
    traceback on a long text cell, or on a wide header read with the other separator (one field)."""
    import csv

    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, max(map(len, lines), default=0) + 1))
    try:
        return list(csv.reader(lines, delimiter=sep))
    finally:
        csv.field_size_limit(limit)


def allow_unseen_fix() -> str:
    """The way past a category training never saw, as the caller's surface names it (--allow-unseen, allow_unseen=True)."""
    return remedy("or pass {} to map unseen categories to the shared unknown slot", "allow_unseen")

MIXED_SHARE = 0.9  # a text column whose values are at least this share numbers is a numeric column with bad entries


def quiet_datasets():  # noqa: ANN201 (the module)
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity(datasets.logging.CRITICAL)  # its reader errors come back as our one line
    return datasets


def _cause(exc: BaseException) -> str:
    """The root reason of a ``datasets`` error (it wraps the reader's exception), on one line."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def read_columns(path: Path, empty: bool = False) -> dict[str, np.ndarray]:
    """Every column of one table file as a numpy array (numbers as float/int, text as object). ``empty``: a header
    with no rows is columns of no values (new inputs: a batch job's file on a day with nothing new), not an error.
    A CSV's rows of no value in any column are left out, as its blank lines are (``read_table``)."""
    return read_table(path, empty)[0]


def read_table(path: Path, empty: bool = False, aligned: bool = False, gaps: Gaps | None = None,
               numbers: list[int] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``read_columns``' columns, and the rows (0-based, under the header) of a CSV/TSV left out for holding no value
    in any column: Excel writes a row of nothing but separators (',,') for each row once formatted and now empty,
    read as an example of missing values ('target missing on row(s) ...'). ``aligned`` (new inputs, whose
    predictions are written one per row in order): only such rows at the end are left out; one between rows of values
    is refused, since leaving it out would move every prediction below it onto the row above, and reading it would
    predict from nothing; so is a one-column file's blank line between values (``_blank_lines_between``). ``gaps``:
    filled with the masks of missing cells read of the text columns, for the checks that read those columns next
    (``fpt.data.base.known_missing``). ``numbers``: filled, where a CSV's blank lines or rows of no value were left
    out, with each row's number under the header in the file (``fpt.errors.file_rows``), so that an error quoting a
    row names the file's own; left empty where they are 1, 2, ..."""
    suffix = table_suffix(path)
    builder = BUILDERS.get(suffix)
    if builder is None:
        raise DataError(f"{path}: unknown table format {path.suffix!r}; use .csv, .tsv, .jsonl, .parquet or .feather")
    if path.stat().st_size == 0:
        raise DataError(f"{path}: the file is empty; it needs a header row and one row per example")
    compressed = table_suffix(path) != path.suffix.lower()
    check(path, path.suffix.lower() if compressed else {"parquet": ".parquet", "arrow": ".feather"}.get(builder, "text"),
          format_name(path))
    may_hold_codes = _check_bytes(path, builder)
    indexed, blank = _check_header(path, "\t" if suffix in TSV_SUFFIXES else ",", empty) if builder == "csv" else \
        (False, set())
    if aligned and builder == "csv":
        _blank_lines_between(path, "\t" if suffix in TSV_SUFFIXES else ",")
    kwargs = {"sep": "\t"} if suffix in TSV_SUFFIXES else {}
    kwargs |= CSV_OPTIONS if builder == "csv" else {}
    table = _csv_table(path, kwargs.get("sep", ",")) if builder == "csv" else None
    if table is None:
        datasets = quiet_datasets()
        try:
            with tempfile.TemporaryDirectory(prefix="fpt-datasets-") as cache:
                table = datasets.load_dataset(builder, data_files=str(path), split="train", cache_dir=cache,
                                              keep_in_memory=True, **kwargs).data
        except Exception as exc:  # datasets wraps the parser's error; name the file and the parser's reason
            if _cause(exc).startswith("UnicodeDecodeError"):
                _check_utf8(path)
            if _cause(exc).startswith("OverflowError") and builder == "csv":  # _csv_table reads them as text
                name, value = _wide_integer_cell(path, kwargs.get("sep", ","))
                raise DataError(f"{path}: column {name!r} holds whole numbers beyond 64 bits ({value}), which cannot "
                                "be read as text here because a column's type changes after 10,000 rows (or the rows "
                                "do not read cleanly); write them with a decimal point to read them as numbers, or "
                                "with a letter in front as ids or labels") from None
            raise DataError(f"{path}: cannot be read as {format_name(path)} ({_cause(exc)}); fix the file or "
                            "convert it to CSV with a header row") from None
    if may_hold_codes:
        table = _with_codes(table, path, kwargs.get("sep", ","))
    lines = _row_numbers(path, kwargs.get("sep", ","), table.num_rows) if builder == "csv" else None
    with file_rows(lines):
        skipped = _empty_rows(table, path, aligned) if builder == "csv" else np.zeros(0, dtype=np.int64)
    if len(skipped):
        import pyarrow as pa

        keep = np.ones(table.num_rows, dtype=bool)
        keep[skipped] = False
        table = table.filter(pa.array(keep))
        lines = (np.arange(1, len(keep) + 1) if lines is None else np.asarray(lines))[keep].tolist()
    if numbers is not None and lines is not None:
        numbers.extend(lines)
    with file_rows(lines):
        return _table_columns(table, path, builder, indexed, blank, gaps, empty), skipped


def _table_columns(table: Any, path: Path, builder: str, indexed: bool, blank: set[int], gaps: Gaps | None,
                   empty: bool) -> dict[str, np.ndarray]:
    """``read_table``'s columns of the Arrow table it read, each checked."""
    if table.num_rows == 0 and not empty:
        raise DataError(f"{path}: no rows; it needs one row per example under the header")
    if builder == "json" and table.num_rows == 1 and all(str(t).startswith("struct") for t in table.schema.types):
        # pandas' to_json default (orient="columns"): one object of columns, each an object of row -> value
        raise DataError(f"{path}: one JSON object of columns (pandas' to_json default, orient='columns'), not a record "
                        "per example; save it as JSON lines: df.to_json('x.jsonl', orient='records', lines=True)")
    if builder == "json":
        table = _records_under_key(table, path)
    if builder == "csv":
        _repeated_header(table, path)
    columns: dict[str, np.ndarray] = {}
    for i, name in enumerate(table.column_names):
        col = table.column(name)
        kind = str(col.type)
        if _numbers_per_cell(col.type):  # a series per row, as a datasets.Dataset's List(Value("float")) column is
            columns[str(name)] = arrow_values(col)  # read (columns_to_raw: _cells_raw), each cell an array or None
            continue
        if "json" in kind or kind.startswith(("struct", "list", "large_list", "map", "fixed_size_list")):
            kind = kind if len(kind) <= 60 else kind[:57] + "..."
            raise DataError(f"{path}: column {name!r} mixes types or holds nested values ({kind}); give it one type "
                            "(numbers or text) per column")
        try:
            values = arrow_values(col)
        except Exception:  # Arrow keeps text that is not UTF-8 (a JSON lines file) until it is converted
            _check_utf8(path)
            raise
        if i in blank:
            _blank_column(values, i, path)
            continue
        key = ROW_INDEX if indexed and i == 0 else str(name)  # pandas named it 'Unnamed: 0'
        if beyond_int64(values):  # uint64's top half (a hash), names float64 would merge: as written, as wider ones
            values = as_written(values)
        if values.dtype.kind == "O" and not kind.startswith("timestamp"):  # text (a zone's timestamps: objects)
            values = _check_text_column(values, name, path, gaps, key)
        if values.dtype.kind == "f":
            refuse_infinite(np.isinf(values), f"{path}: column {name!r}", "empty (missing)")
        columns[key] = values
    return columns


def _row_numbers(path: Path, sep: str, count: int) -> list[int] | None:
    """Each of a CSV/TSV's ``count`` rows as read (pandas skips blank lines) by its number under the header, counting
    the blank lines between (as a one-column file's refusal counts them: ``_blank_lines_between``); None where they
    are 1, 2, ... (a file of no blank line: most, found by a look at its bytes), or where the csv module reads the
    rows otherwise than pandas did (a malformed file: its own error says so)."""
    import csv
    import io
    import re
    import sys

    tail = b""
    with _open_bytes(path) as raw:
        while chunk := raw.read(1 << 20):
            if re.search(rb"\n[ \t]*\r?\n", tail + chunk):
                break
            tail = chunk[-64:]
        else:
            return None
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)  # a long text cell (a protein) is no reason to stop counting
    try:
        with _open_bytes(path) as raw, io.TextIOWrapper(raw, encoding=_TEXT, errors="replace", newline="") as f:
            records = csv.reader(f, delimiter=sep)
            if next((r for r in records if not _blank_line(r)), None) is None:
                return None
            found = [row for row, record in enumerate(records, 1) if not _blank_line(record)]
    except csv.Error:
        return None
    finally:
        csv.field_size_limit(limit)
    return found if len(found) == count and found[-1:] != [count] else None


def _empty_rows(table: Any, path: Path, aligned: bool) -> np.ndarray:
    """The rows of an Arrow table read from a CSV that hold no value in any column (``read_table``)."""
    import pyarrow.compute as pc

    if table.num_rows == 0 or table.num_columns == 0:
        return np.zeros(0, dtype=np.int64)
    nothing = None
    for col in table.columns:
        null = pc.is_null(col)
        nothing = null if nothing is None else pc.and_(nothing, null)
        if not pc.any(nothing).as_py():
            return np.zeros(0, dtype=np.int64)
    at = np.flatnonzero(np.asarray(nothing))
    if aligned:
        values = np.flatnonzero(~np.asarray(nothing))
        inside = at[at < values[-1]] if len(values) else at[:0]
        if len(inside):
            raise DataError(f"{path}: row(s) {', '.join(str(row_number(int(i))) for i in inside[:5])}"
                            f"{', ...' if len(inside) > 5 else ''} under the header hold no value in any column (a row "
                            "of nothing but separators, ',,'), between rows of values; predictions are written one per "
                            "row in order, so fpt neither skips nor predicts them: delete those lines")
    return at


def _blank_lines_between(path: Path, sep: str) -> None:
    """A one-column CSV/TSV's blank lines between rows of values, refused for new inputs (``read_table``'s
    ``aligned``). pandas skips blank lines; in a file of several columns a row of no value is written ',,' and read
    (``_empty_rows``), but in a one-column file a blank line is how a row of no value is written, so skipping it
    would move every prediction below it onto the row above. Blank lines before the header and after the last value
    are the file's layout, skipped as in any CSV."""
    import csv
    import io
    import sys

    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)  # a long text cell (a protein) is no reason to stop looking
    try:
        with _open_bytes(path) as raw, io.TextIOWrapper(raw, encoding=_TEXT, errors="replace", newline="") as f:
            records = csv.reader(f, delimiter=sep)
            header = next((r for r in records if not _blank_line(r)), None)
            if header is None or len(header) != 1:
                return
            between: list[int] = []
            pending: list[int] = []
            for row, record in enumerate(records, 1):
                if _blank_line(record):
                    pending.append(row)
                else:
                    between += pending
                    pending = []
    except csv.Error:  # a malformed file: the reader says what is wrong with it
        return
    finally:
        csv.field_size_limit(limit)
    if between:
        raise DataError(f"{path}: row(s) {', '.join(map(str, between[:5]))}{', ...' if len(between) > 5 else ''} "
                        "under the header are blank lines between rows of values (in a one-column file, a row of no "
                        "value); predictions are written one per row in order, so fpt neither skips nor predicts "
                        "them: delete those lines")


def _blank_line(record: list[str]) -> bool:
    """Whether ``csv.reader``'s record is a line pandas skips: nothing, or spaces alone (skipinitialspace); a quoted
    "" ([''] here) is a value, read as missing."""
    return not record or (len(record) == 1 and bool(record[0]) and not record[0].strip())


def _numbers_per_cell(kind: Any) -> bool:
    """Whether an Arrow type is a list of numbers per cell (Parquet's list<double>, a JSON line's [0.1, 0.2])."""
    import pyarrow as pa

    lists = pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind)
    return lists and (pa.types.is_integer(kind.value_type) or pa.types.is_floating(kind.value_type))


def _records_under_key(table: Any, path: Path) -> Any:
    """A JSON file of one object holding the records under a key (``{"data": [{...}, ...]}``, as web APIs and
    ``json.dump({"data": rows})`` write them) as the table of those records; Arrow read it as one row of one column
    of lists ('column 'data' mixes types or holds nested values'). An object of several keys is refused naming them:
    which key holds the examples, and whether the others belong beside each record, it does not say."""
    import pyarrow as pa

    if table.num_rows != 1:
        return table
    records = [name for name, kind in zip(table.column_names, table.schema.types, strict=True)
               if pa.types.is_list(kind) or pa.types.is_large_list(kind)]
    records = [name for name in records if pa.types.is_struct(table.schema.field(name).type.value_type)]
    if not records:
        return table
    fix = ("save the records as JSON lines, one per line: pandas.DataFrame(obj[KEY]).to_json('x.jsonl', "
           "orient='records', lines=True)")
    if table.num_columns > 1:
        raise DataError(f"{path}: one JSON object whose key(s) {shown([repr(r) for r in records])} hold records, beside "
                        f"{shown([repr(c) for c in table.column_names if c not in records])}; which are the examples "
                        f"the file does not say: {fix.replace('KEY', repr(records[0]))}")
    rows = table.column(records[0]).combine_chunks().flatten()
    if len(rows) == 0:
        raise DataError(f"{path}: the list of records under the key {records[0]!r} is empty; it needs one record per "
                        "example")
    return pa.Table.from_struct_array(rows)


def arrow_values(col: Any) -> np.ndarray:
    """An Arrow column's values as numpy holds them: decimals (a database's NUMERIC, decimal128) as float64 numbers,
    not the text of each (which read as a category per amount); timestamps with a timezone as pandas Timestamps in
    their zone (numpy's datetime64 has none: the zone, and the wall-clock time the calendar is read in, were lost);
    anything else as Arrow converts it."""
    import pyarrow as pa

    if pa.types.is_decimal(col.type):
        return col.cast(pa.float64()).to_numpy(zero_copy_only=False)
    if pa.types.is_timestamp(col.type) and col.type.tz is not None:
        return col.to_pandas().to_numpy(dtype=object)
    return col.to_numpy(zero_copy_only=False)


# datasets' CSV builder reads pandas chunks of this many rows (its CsvConfig.chunksize) and casts each to the first's
# types; _csv_table reads the same chunks
CSV_CHUNK_ROWS = 10_000


def _csv_table(path: Path, sep: str) -> Any:
    """The Arrow table ``datasets.load_dataset("csv", ...)`` reads from ``path`` (the same pandas chunks, each
    converted as its CSV builder converts them), read without ``datasets``: importing it and its builder cost a plain
    run on a 10,000-row table more than the reading. None where the two could differ (chunks of different types,
    which datasets casts to the first's) or the file does not read cleanly: ``datasets`` then reads it, so its types
    and its error messages stay the reference (tests/data/test_csv_reader.py compares the two)."""
    import pandas as pd
    import pyarrow as pa

    text: set[str] = set()
    try:
        while True:  # once, or again for each chunk that shows a column of whole numbers too wide for 64 bits
            # the reader closed too when a chunk breaks off the read (else its text wrapper is left to the collector)
            with _open_bytes(path) as f, pd.read_csv(f, sep=sep, chunksize=CSV_CHUNK_ROWS,
                                                     dtype=dict.fromkeys(text, str) or None, **CSV_OPTIONS) as reader:
                chunks = []
                for df in reader:
                    wide = _wide_integer_columns(df) - text
                    if wide:
                        text |= wide
                        break
                    chunks.append(pa.Table.from_pandas(df))
                else:
                    break
    except Exception:  # a malformed file: datasets says what is wrong with it, as it always has
        return None
    if not chunks or any(not c.schema.equals(chunks[0].schema, check_metadata=False) for c in chunks[1:]):
        return None
    return pa.concat_tables(chunks) if len(chunks) > 1 else chunks[0]


def _with_codes(table: Any, path: Path, sep: str) -> Any:
    """The Arrow table of a CSV/TSV with its columns of codes (``fpt.data.codes``: zip codes '02139', labels '007')
    as the text written, where pandas read numbers (2139, 7). The file is read again as text for them: only a file
    whose bytes hold a field that starts with '0' and a digit (``_check_bytes``)."""
    import pandas as pd
    import pyarrow as pa

    with _open_bytes(path) as f:
        texts = code_columns(pd.read_csv(f, sep=sep, dtype=str, chunksize=CSV_CHUNK_ROWS, **CSV_OPTIONS))
    for name, values in texts.items():
        at = table.column_names.index(name)
        if pa.types.is_string(table.schema.types[at]) or pa.types.is_large_string(table.schema.types[at]):
            continue  # read as text already (a wide integer's column)
        if len(values) != table.num_rows:  # one parser, the same options: the rows are the reader's rows
            raise AssertionError(f"{path}: column {name!r} read as text has {len(values)} rows, not {table.num_rows}")
        table = table.set_column(at, name, pa.array(values, type=pa.string()))
    return table


def _wide_integer_columns(df: Any) -> set[str]:
    """Columns of whole numbers beyond 64 bits (2**64 and up: a hash, a long id or label), which pandas keeps as
    Python ints that Arrow cannot convert (an OverflowError naming no column). They are read as text, as written: such
    numbers are names (as a target, class labels; as a feature, categories), and as float64 they would lose digits and
    merge; a quantity is written with a decimal point or an exponent (1.2e21), which reads as a number."""
    objects = [i for i, t in enumerate(df.dtypes) if str(t) == "object"]  # df.dtypes once: a column at a time costs seconds
    return {str(df.columns[i]) for i in objects  # on a table of 100,000 columns
            if any(isinstance(v, int) and not isinstance(v, bool) for v in df.iloc[:, i])}


def _wide_integer_cell(path: Path, sep: str) -> tuple[str, str]:
    """The first column and value of a whole number beyond 64 bits (for the error where datasets, not _csv_table,
    read the file), or ('?', '?')."""
    import pandas as pd

    try:
        with _open_bytes(path) as f:
            for df in pd.read_csv(f, sep=sep, dtype=str, chunksize=CSV_CHUNK_ROWS, on_bad_lines="skip",
                                  **CSV_OPTIONS):
                for c in df.columns:
                    for v in df[c].dropna():
                        if WHOLE_NUMBER.fullmatch(v.strip()) and abs(int(v)) >= 2**63:
                            return str(c), v.strip()
    except Exception:  # noqa: S110 (the error still names the file and the fix)
        pass
    return "?", "?"


def _check_header(path: Path, sep: str, empty: bool = False) -> tuple[bool, set[int]]:
    """A CSV/TSV header with every column named once, and at least one row under it (pandas would rename
    a repeated name to NAME.1 and an empty one to 'Unnamed: N' without a word); whether its first column is a row
    index (``ROW_INDEX``: the first name alone empty, as pandas' to_csv and R's write.csv write it), and the other
    columns of no name, which may only be empty (``_blank_column``)."""
    import io

    with _open_bytes(path) as raw, io.TextIOWrapper(raw, encoding=_TEXT, errors="replace", newline="") as f:
        sample = [line for line in (f.readline() for _ in range(64)) if line.strip()]
    lines = sample[:2]
    if not lines:
        raise DataError(f"{path}: the file is empty; it needs a header row and one row per example")
    if re.fullmatch(r"sep=.", lines[0].strip()):
        raise DataError(f"{path}: its first line ({lines[0].strip()!r}) is Excel's separator hint, not the header; "
                        "delete that line")
    header = [h.strip() for h in _csv_fields(lines[:1], sep)[0]]
    if sep == "," and len(_csv_fields(lines[:1], ";")[0]) > len(header):
        # A ';'-separated file (decimal commas): pandas would split its rows on the commas into index columns
        raise DataError(f"{path}: the header looks like ';'-separated columns ({lines[0].strip()[:60]!r}); fpt reads "
                        "','-separated CSV: save it with ',' between columns and '.' as the decimal point")
    other = "\t" if sep == "," else ","
    if len(header) == 1 and len(_csv_fields(lines[:1], other)[0]) > 1:  # every name in one: the other separator's
        kind, suffix = ("tab", ".tsv") if other == "\t" else ("','", ".csv")
        raise DataError(f"{path}: the header looks like {kind}-separated columns ({lines[0].strip()[:60]!r}), but the "
                        f"file's name says {'comma' if sep == ',' else 'tab'}-separated; name it "
                        f"{table_stem(path)}{suffix}{path.name[len(table_stem(path)) + len(table_suffix(path)):]}")
    if len(lines) > 1 and len(first := _csv_fields(lines[1:2], sep)[0]) > len(header):
        # pandas reads the extra leading fields of every row as a row index and shifts each name onto the next column
        why = "a title or comment line above the header (delete it), or a header naming too few columns" \
            if len(header) == 1 else \
            "each row ends with a ','? remove it" if not "".join(first[len(header):]).strip() else \
            "name every column in the header (R's write.table writes its row names under no name: save with " \
            "row.names=FALSE, or write.csv)"
        raise DataError(f"{path}: the first row under the header has {len(first)} fields but the header names "
                        f"{len(header)}, so every value would be read under the wrong column; {why}")
    if len(lines) > 1 and _header_is_data(header, _csv_fields(sample[1:], sep)):
        # A file saved without a header (numpy.savetxt, to_csv(header=False)): its first example would become the
        # column names, and every name a number
        shown_names = ", ".join(header[:4]) + (", ..." if len(header) > 4 else "")
        raise DataError(f"{path}: the first row looks like data, not column names ({shown_names}: values like the "
                        "rows under it); add a header row naming each column (numpy.savetxt(..., header='x1,x2,label', "
                        "comments=''); pandas: to_csv(..., header=True))")
    indexed = len(header) > 1 and not header[0]
    seen: dict[str, int] = {}
    blank = set()
    for i, name in enumerate(header, 1):
        if not name and len(header) > 1 and not (indexed and i == 1):
            blank.add(i - 1)  # Excel's columns of no name and no value (cells once formatted): left out if empty
            continue
        if name in seen:
            raise DataError(f"{path}: column {name!r} appears twice in the header (columns {seen[name]} and {i}); give "
                            "each column its own name")
        seen[name] = i
    if len(lines) < 2 and not empty:
        raise DataError(f"{path}: a header row and no data rows; add one row per example under the header")
    return indexed, blank


def _blank_column(values: np.ndarray, i: int, path: Path) -> None:
    """A column of no name must hold no value either (Excel writes ',,,' after the last column where cells were
    once formatted): left out then; one that holds values is refused, not read under a name pandas made up."""
    present = ~is_missing(values)
    if present.any():
        at = int(np.flatnonzero(present)[0])
        raise DataError(f"{path}: column {i + 1} of the header has no name but holds values (row {at + 1}: "
                        f"{plain_value(values[at])!r}); name every column in the first row")


def _repeated_header(table: Any, path: Path) -> None:
    """Refuse rows that repeat the header (CSV files joined with each one's header): in a table of text columns they
    read as an example, its label the target's name, without a word; elsewhere as a stray text value."""
    import pyarrow as pa
    import pyarrow.compute as pc

    at = None
    for name in table.column_names:
        col = table.column(name)
        if str(name).startswith("Unnamed: "):
            continue
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            same = pc.equal(col, str(name))
        elif (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)) and NUMBER.fullmatch(str(name).strip()):
            same = pc.equal(col, float(name))
        else:
            return
        same = pc.fill_null(same, False)
        at = same if at is None else pc.and_(at, same)
    if at is None or not pc.any(at).as_py():
        return
    mask = np.asarray(at)
    raise DataError(f"{path}: {rows(mask)} repeat the header row (files joined, each with its header?); delete "
                    "those lines")


NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _header_is_data(header: list[str], rows: list[list[str]]) -> bool:
    """Whether a header row is an example (a file saved without one): a name that is a number above every column
    whose first value is a number, and either those numbers out of order (three or more: numbers in order, rising or
    falling, are names, such as time points, years, the wavelengths or wavenumbers of a wide series or spectra
    table), or a name above a text column that is one of that column's values in the rows sampled (a label)."""
    rows = [r for r in rows if len(r) == len(header) and [v.strip() for v in r] != header]  # a repeated header: below
    if not rows:
        return False
    at = [i for i, v in enumerate(rows[0]) if NUMBER.fullmatch(v.strip())]
    if not at or not all(NUMBER.fullmatch(header[i]) for i in at):
        return False
    steps = np.diff([float(header[i]) for i in at])
    if len(at) >= 3 and not ((steps > 0).all() or (steps < 0).all()):
        return True
    text = [i for i in range(len(header)) if i not in at and header[i]]
    return any(header[i] in {r[i].strip() for r in rows} for i in text)


def _check_utf8(path: Path) -> None:
    """After a reader failed: text in another encoding (Excel's Windows-1252, Latin-1) is an error naming the first
    line that is not UTF-8 and the fix; a file that is all UTF-8 returns, so the reader's own error stands."""
    with _open_bytes(path) as f:
        for n, line in enumerate(f, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as bad:
                raise DataError(f"{path}: line {n} is not UTF-8 text (byte {line[bad.start]:#04x} at column "
                                f"{bad.start + 1}); save the file as UTF-8 (Excel: 'CSV UTF-8'; pandas: "
                                "to_csv(..., encoding='utf-8'))") from None


def _check_text_column(values: np.ndarray, name: str, path: Path, gaps: Gaps | None = None,
                       key: str | None = None) -> np.ndarray:
    """A text column that is almost all numbers has stray entries: name them instead of guessing. Its missing cells
    become None; a column of text alone has its mask kept in ``gaps`` under ``key`` (its present cells, non-empty
    text, are the cells the mask of the column returned says are present)."""
    present = ~is_missing(values)
    only_text = set(map(type, values[present])) <= {str}
    numeric = _text_numbers(values, present) if only_text else _numbers_per_value(values, present)
    n = int(present.sum())
    if n and MIXED_SHARE <= numeric[present].mean() < 1:
        bad = np.flatnonzero(present & ~numeric)
        shown = ", ".join(f"{row_word(int(i))}: {values[i]!r}" for i in bad[:3])
        raise DataError(f"{path}: column {name!r} mixes numbers and text ({shown}); fix those values or leave them "
                        "empty (missing)")
    if only_text:
        out = values.copy()
        out[~present] = None
        keep_gaps(gaps, str(name) if key is None else key, out, ~present)
        return out
    if n and set(map(type, values[present])) <= {bool}:
        # booleans with gaps (a Parquet boolean with nulls, a CSV's True/False beside blanks), which Arrow gives as
        # objects: kept as booleans, read as numbers as the same column without a gap is (and a DataFrame's
        # nullable boolean with gaps), not as the categories 'True' and 'False', which 1/0 at predict were not
        out = values.copy()
        out[~present] = None
        return out
    return np.array([None if not p else str(v) for v, p in zip(values, present, strict=True)], dtype=object)


# every text that float() reads starts so (after whitespace, a sign: a digit, a point, inf or nan): \s and \d are
# the same Unicode classes float() strips and reads as digits, so a text this does not match is never a number
_MAY_BE_NUMBER = re.compile(r"\s*[+-]?(?:\d|\.|inf|nan)", re.IGNORECASE)


def _text_numbers(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Which present cells of a column of text read as numbers (``float``), as ``_numbers_per_value`` finds them: each
    distinct text tried once, and only one that may be a number (a column of codes repeats a few texts, none of them
    numbers; a float() per cell, most of them raising, took seconds on a 500,000-row table)."""
    texts = values[present]
    verdict = dict.fromkeys(texts, False)
    for text in filter(_MAY_BE_NUMBER.match, list(verdict)):
        verdict[text] = reads_as_float(text)
    numeric = np.zeros(len(values), dtype=bool)
    numeric[present] = np.fromiter(map(verdict.__getitem__, texts), dtype=bool, count=len(texts))
    return numeric


def _numbers_per_value(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Which present cells read as numbers, a float() per cell: a column of other objects than text (a JSON lines
    file's, an Arrow type numpy holds as objects)."""
    numeric = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if present[i]:
            try:
                float(v)
                numeric[i] = True
            except (TypeError, ValueError):
                pass
    return numeric


SPLIT_FILE_STEMS = {"train": "train", "val": "val", "valid": "val", "validation": "val", "dev": "val", "test": "test"}


def split_files(directory: Path) -> dict[str, Path]:
    """``train.csv``/``val.csv``/``test.csv`` (any table format) in ``directory``: split -> file."""
    found: dict[str, Path] = {}
    for p, _ in children(directory):
        split = SPLIT_FILE_STEMS.get(table_stem(p).lower())
        if split and table_suffix(p) in BUILDERS and p.is_symlink() and not p.exists():
            # a dangling link or a loop would be skipped, and part of train become the test split in its place
            raise DataError(f"{p}: a symbolic link that leads to no file (dangling, or a loop); fix the link or remove "
                            f"it (without {p.name}, fpt holds out its own {split} split)")
        if split and p.is_file() and table_suffix(p) in BUILDERS:
            if split in found:
                raise DataError(f"{directory}: two files for the {split} split ({found[split].name}, {p.name}); keep one")
            found[split] = p
    return found


def read_tables(path: Path, target: str | None, modality: str, drop: tuple[str, ...] = (),
                series: tuple[str, ...] = ()) -> RawData:
    """A table file, or a directory of split files, as tabular or sequence ``RawData`` (``drop``: columns left out)."""
    in_file: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if path.is_dir():
        files = split_files(path)
        if "train" not in files:
            raise DataError(f"{path}: no train.csv (or .tsv/.jsonl/.parquet/.feather) split file")
        gaps: dict[str, Gaps] = {split: {} for split in files}
        read = {split: read_table(f, gaps=gaps[split]) for split, f in files.items()}
        parts = {split: (cols, str(files[split])) for split, (cols, _) in read.items()}
        empty = [empty_rows_note(str(files[split]), len(at)) for split, (_, at) in read.items() if len(at)]
        split_from = f"the data's own split files ({', '.join(f.name for f in files.values())})"
        source = f"{format_name(files['train'])} split files in {path}"
        paths = list(files.values())
    else:
        gaps = {"train": {}}  # a split column's rows are arrays of their own, checked afresh (known_missing)
        numbers: list[int] = []
        cols, at = read_table(path, gaps=gaps["train"], numbers=numbers)
        parts = _by_split_column(cols, path)
        if len(parts) == 1 and numbers:  # the checks below name a row by its number in the file
            in_file = file_rows(numbers)
        empty = [empty_rows_note(str(path), len(at))] if len(at) else []
        split_from = f"the {SPLIT_COLUMN!r} column" if len(parts) > 1 else SEEDED
        source = f"{format_name(path)} file {path}"
        paths = [path]
    indexed = [where for cols, where in parts.values() if ROW_INDEX in cols]
    parts = {split: ({k: v for k, v in cols.items() if k != ROW_INDEX}, where) for split, (cols, where) in parts.items()}
    # a column the training file's type declares categorical (df.to_parquet of a category of ints) reads as categories
    train = files["train"] if path.is_dir() else path
    declared = file_categories(train, BUILDERS[table_suffix(train)])
    with in_file:
        raw = columns_to_raw(parts, target, modality, source, split_from, drop, series, gaps, declared)
    if indexed:
        raw.notes["row_index"] = indexed
    if empty:
        raw.notes["empty_rows"] = empty
    if not series:
        csv = [p for p in paths if BUILDERS[table_suffix(p)] == "csv"]
        # codes ('007', read as written: fpt.data.codes) are checked too: '007' beside '7' is a slip, or two classes
        numeric = [t for t in raw.targets if any(t in cols and (cols[t].dtype.kind in "iuf" or written_as_codes(cols[t])
                                                                is not None) for cols, _ in parts.values())]
        if csv and numeric:  # run only for a classification (fpt.tasks.user_data), so a regression reads once;
            # once per reading (fpt.data.read_once hands the same RawData to every fold and candidate)
            raw.check_labels = functools.cache(lambda: label_text_check(csv, numeric))
    return raw


def label_text_check(paths: list[Path], targets: list[str]) -> None:
    """A CSV's target column read as numbers (``read_columns``) holds the labels as written: no two texts of it read
    as one number ("01" and "1", "1.0" and "1", "007" and "7"), which would train as one class. JSON lines and Parquet
    keep "01" as text (a quoted string) apart from a number; a CSV's quotes do not (pandas and datasets read a quoted
    "01" as the number 1; codes, "007" beside "010", are read as written: fpt.data.codes, yet "007" beside "7" is
    checked here too). Each target column alone is read again, as text.
    The texts are compared as a whole column (``_label_clash``); the pair named is looked for only once two clash."""
    import pandas as pd

    for t in targets:
        seen: dict[float, tuple[str, Path]] = {}
        for k, p in enumerate(paths):
            sep = "\t" if table_suffix(p) in TSV_SUFFIXES else ","
            try:
                with _open_bytes(p) as f:
                    texts = pd.read_csv(f, sep=sep, usecols=[t], dtype=str, na_filter=False, **CSV_OPTIONS)[t]
            except Exception:  # noqa: S112 (read once already; a file that differs now has nothing more to say here)
                continue
            # each distinct text stripped once, in order of first appearance (that of the stripped column's own)
            distinct = pd.unique(pd.Series(pd.unique(texts), dtype=texts.dtype).str.strip())
            labels = np.asarray(distinct, dtype=object)
            numbers = _label_numbers(labels)
            if _label_clash(labels, numbers, seen):
                _name_label_clash(labels, seen, t, p)
            if k < len(paths) - 1:  # the next file's texts are compared with these
                for text, number in zip(labels, numbers, strict=True):
                    if not np.isnan(number):
                        seen.setdefault(float(number), (text, p))


def _label_numbers(labels: np.ndarray) -> np.ndarray:
    """Each text as the number ``float`` reads, NaN where it reads none (NaN never clashes: two NaNs are never
    equal, as ``float("nan")`` keys are not in a dict)."""
    try:
        return labels.astype(np.float64)  # every text a number (a numeric target's): one cast
    except ValueError:
        numbers = np.full(len(labels), np.nan)
        for i, text in enumerate(labels):  # per distinct text, not per row
            try:
                numbers[i] = float(text)
            except ValueError:
                pass
        return numbers


def _label_clash(labels: np.ndarray, numbers: np.ndarray, seen: dict[float, tuple[str, Path]]) -> bool:
    """Whether two of the distinct ``labels`` read as one number, or one reads as a number an earlier file wrote
    otherwise (``seen``)."""
    known = ~np.isnan(numbers)
    ordered = np.sort(numbers[known])
    if (ordered[1:] == ordered[:-1]).any():  # float equality, as a dict's keys: 0 and -0 are one number
        return True
    return any(seen.get(number, (text,))[0] != text for text, number in
               zip(labels[known], numbers[known].tolist(), strict=True)) if seen else False


def _name_label_clash(labels: np.ndarray, seen: dict[float, tuple[str, Path]], t: str, p: Path) -> None:
    """The error of ``label_text_check`` naming the first clashing pair, read text by text (``_label_clash`` found
    one)."""
    seen = dict(seen)
    for text in labels:
        try:
            number = float(text)
        except ValueError:
            continue
        first, where = seen.setdefault(number, (text, p))
        if first != text:
            also = "" if where == p else f" ({first!r} in {where})"
            raise DataError(
                f"{p}: target column {t!r} holds {first!r} and {text!r}{also}, two labels as written that read "
                f"as the one number {number:g}, so they would train as one class (quoting them in the CSV does "
                f"not keep them apart); if they are different classes write them as distinct text (e.g. "
                f"'a{first}' and 'a{text}'), if the same class write them the same way, or if the target is a "
                f"quantity give {option('objective', 'regression')}")
    # _label_clash and this loop read the same texts with float(): a clash found is always named above
    raise AssertionError(f"{p}: target column {t!r}: labels that clash were found but not named")


def columns_to_raw(parts: dict[str, tuple[dict[str, np.ndarray], str]], target: str | None, modality: str,
                   source: str, split_from: str, drop: tuple[str, ...] = (), series: tuple[str, ...] = (),
                   gaps: dict[str, Gaps] | None = None, categorical: frozenset[str] = frozenset()) -> RawData:
    """Split -> (columns, where) as tabular or sequence ``RawData``: targets chosen and checked; the columns of
    ``drop`` (--drop-columns) left out before anything is read of them (a split file may lack them), and named in
    the notes (``dropped``) so that fpt predict ignores them in new inputs. ``series`` (--series-id ID[,ORDER]): a
    long-format table of series, its rows grouped into one series per ID (``long_series``). ``gaps``: split -> the
    reader's masks of missing cells (``read_table``). ``categorical``: the columns whose type declares them
    categorical (fpt.data.categories), a feature among them read as categories whatever its values (a target keeps
    its values, class labels under objective auto: ``RawData.categorical_targets``)."""
    train_cols, train_where = parts["train"]
    names = [c for c in train_cols if c != SPLIT_COLUMN]
    _check_named(drop, names, option("drop_columns"), train_where)
    if series:
        _check_named(series, names, option("series_id"), train_where)
        return _long_raw(parts, target, modality, source, split_from, drop, series)
    targets = choose_targets(names, target, train_where)
    chosen = "" if target is not None else DEFAULT_TARGET
    both = [c for c in drop if c in targets]
    if both:
        raise DataError(f"{train_where}: {both[0]!r} is the target{chosen} and in {option('drop_columns')}; a target "
                        f"is never a feature: take it out of {option('drop_columns')}, or name the target with "
                        f"{option('target', 'NAME', placeholder=True)}")
    features = [c for c in names if c not in targets and c not in drop]
    if not features:
        raise DataError(f"{train_where}: every column is a target ({', '.join(targets)})"
                        + (f" or dropped ({', '.join(drop)})" if drop else "") + "; a table needs at least one "
                        "feature column")
    if any(holds_series(np.asarray(train_cols[c])) for c in features):  # a list of numbers per cell: read as text,
        # each number was a word of the symbol sequence 'sequence' modality made of the column
        return _cells_raw(parts, features, targets, modality, source, split_from, drop, chosen)
    if modality != "sequence":  # asked for as symbols, a column of file names is read as the user said
        _refuse_image_paths(train_cols, features, train_where)
    # dates are read as dates (fpt.data.dates) in a table, not in the one text column of symbols asked for
    dated = {c: kind for c in features if modality in ("auto", "tabular") and c not in categorical
             and (kind := _dates_of(c, np.asarray(train_cols[c]), f"{train_where}: column {c!r}")) is not None}
    # durations written as text as seconds (fpt.data.durations), as a table's duration type is
    timed = {c: kind for c in features if modality in ("auto", "tabular") and c not in dated and c not in categorical
             and (kind := _durations_of(c, np.asarray(train_cols[c]), f"{train_where}: column {c!r}"))}
    # columns a resumed run reads as text, as it started, where fpt finds otherwise now: said, not read anew
    kept = {c: [r.words(), found] for c in features if modality in ("auto", "tabular")
            and (r := saved_reading(c)) is not None and r.kind == "text"
            and (found := _found_anew(np.asarray(train_cols[c]), f"{train_where}: column {c!r}"))}
    # codes ('02139', labels '007') a resumed run read as numbers, before fpt.data.codes read them as written: numbers,
    # as it started
    numbered = [c for c in [*features, *targets] if (r := saved_reading(c)) is not None and r.kind == "numbers"
                and written_as_codes(np.asarray(train_cols[c])) is not None]
    kept |= {c: [Reading("numbers").words(), "class labels as written" if c in targets else "codes (text categories)"]
             for c in numbered}
    date_targets = [t for t in targets if _date_target(np.asarray(train_cols[t]))]
    splits = {}
    for split, (cols, where) in parts.items():
        known = (gaps or {}).get(split)
        if numbered:
            cols = {**cols, **{c: codes_as_numbers(np.asarray(cols[c])) for c in numbered}}
        _check_split_columns(cols, targets, features, where, chosen, known)
        for t in targets:  # a DataFrame's object column can hold 1 beside "1"; a file's is text (JSON lines aside)
            one_kind_of_label(cols[t], f"{where}: target column {t!r}", f"df[{t!r}]" if source == FRAME else None)
        # dates as class labels: the text they are written as (a datetime64's item() is an integer of nanoseconds)
        y = _stack_targets([as_labels(np.asarray(cols[t])) if t in date_targets else cols[t] for t in targets])
        splits[split] = Split({c: read_dates(np.asarray(cols[c]), dated[c].zone, f"{where}: column {c!r}", DataError,
                                             dated[c].format) if c in dated
                               else category_names(cols[c]) if c in categorical
                               else read_durations(np.asarray(cols[c]), timed[c], f"{where}: column {c!r}", DataError)
                               if c in timed else numbers_column(np.asarray(cols[c]), f"{where}: column {c!r}",
                                                                 known_missing(np.asarray(cols[c]), c, known))
                               for c in features}, y, where)
    if modality == "auto":
        only = splits["train"].x[features[0]]
        modality = "sequence" if len(features) == 1 and only.dtype.kind == "O" and features[0] not in dated \
            else "tabular"
    if modality == "timeseries":
        return _series_raw(splits, features, targets, source, split_from, drop)
    if modality not in {"tabular", "sequence"}:
        raise DataError(f"{train_where}: a table is tabular data, a text column of symbols, or a series per row "
                        f"({option('modality', 'tabular|sequence|timeseries', placeholder=True)}), not {modality}")
    if modality == "sequence":
        text = [c for c in features if splits["train"].x[c].dtype.kind == "O"]
        if not text:  # leaving columns out makes none hold text: that fix was said here too
            raise DataError(f"{train_where}: {option('modality', 'sequence')} needs a text feature column, but none "
                            f"of {', '.join(map(repr, features))} holds text (each is read as numbers, dates or "
                            "durations, or is empty); give the column of texts (symbols or words)")
        if len(text) != 1:
            raise DataError(f"{train_where}: {option('modality', 'sequence')} needs exactly one text feature column "
                            f"(found {', '.join(text)} among {', '.join(features)}); leave the others out "
                            f"with {option('drop_columns')}")
        for s in splits.values():
            s.x = {text[0]: s.x[text[0]]}
            refuse_word_lists(s.x[text[0]], text[0], s.where, DataError)  # before the seeded split: the caller's rows
        _refuse_no_symbols(splits["train"].x[text[0]], text[0], splits["train"].where)
        features = text
    notes: dict[str, Any] = {"features": features, **({"dropped": list(drop)} if drop else {}),
                             **({"dates": {c: k.zone or "naive" for c, k in dated.items()}} if dated else {}),
                             **({"date_formats": formats} if (formats := {c: k.format for c, k in dated.items()
                                                                         if k.format}) else {}),
                             **({"durations": timed} if timed else {}), **({"as_started": kept} if kept else {})}
    return RawData(modality, {k: splits[k] for k in ("train", "val", "test") if k in splits}, targets, source,
                   split_from, notes, date_targets=date_targets,
                   categorical_targets=[t for t in targets if t in categorical])


def _date_target(values: np.ndarray) -> bool:
    """Whether a target column holds dates (its type, or text of ISO dates on every row)."""
    try:
        return find_dates(values, "", DataError) is not None
    except DataError:  # a few labels among dates, or times with and without offsets: labels, as written
        return False


# the columns a Hugging Face tokenizer adds to a dataset (Dataset.map(tokenizer)): lists of integers, not series
TOKENIZER_COLUMNS = ("input_ids", "attention_mask", "token_type_ids")


def _check_split_columns(cols: dict[str, Any], targets: list[str], features: list[str], where: str,
                         chosen: str, gaps: Gaps | None = None) -> None:
    """A split file holds the training file's columns, and a value of every target on every row (``gaps``: the
    reader's masks of missing cells)."""
    missing = [c for c in (*targets, *features) if c not in cols]
    if missing:
        raise DataError(f"{where}: no column(s) {', '.join(map(repr, missing))}, which the training file has; "
                        "give every split file the same columns")
    for t in targets:
        check_target_values(cols[t], t, where, chosen, known_missing(cols[t], t, gaps))


def _cells_raw(parts: dict[str, tuple[dict[str, np.ndarray], str]], features: list[str], targets: list[str],
               modality: str, source: str, split_from: str, drop: tuple[str, ...], chosen: str) -> RawData:
    """A table whose feature cells are series (a datasets ``Sequence``/``List`` column, sktime's nested DataFrame:
    ``holds_series``; a Parquet, Feather or JSON lines column of lists of numbers: ``_numbers_per_cell``) as series
    ``RawData``: each feature column a channel, read by name at predict (``CHANNEL_NAMES``), the target column(s)
    beside them by name."""
    train_cols, train_where = parts["train"]
    wide = [t for t in targets if holds_series(np.asarray(train_cols[t]))]
    if wide:
        raise DataError(f"{train_where}: target column {wide[0]!r}{chosen} holds a series per row; name the column of "
                        f"one target per row with {option('target', 'NAME', placeholder=True)}, or pass the series "
                        "and their "
                        "targets apart, as (X, y)")
    ids = [c for c in features if c in TOKENIZER_COLUMNS]
    if ids:  # read as series, token ids were magnitudes; fpt makes the tokens of a text column itself
        raise DataError(f"{train_where}: column {ids[0]!r} holds a tokenizer's token ids, which are not a series' "
                        "values; give the text column itself (fpt makes its tokens: modality sequence) and leave "
                        f"{', '.join(c for c in features if c in TOKENIZER_COLUMNS)} out ({option('drop_columns')})")
    flat = [c for c in features if not holds_series(np.asarray(train_cols[c]))]
    if flat:
        nested = next(c for c in features if c not in flat)
        raise DataError(f"{train_where}: column {nested!r} holds a series per row (a list of numbers) beside column "
                        f"{flat[0]!r} of one value per row; the series' columns are its channels: leave {flat[0]!r} "
                        f"out ({option('drop_columns')})")
    if modality not in ("auto", "timeseries"):
        raise DataError(f"{train_where}: column {features[0]!r} holds a list of numbers per row, which fpt reads as a "
                        f"series (modality timeseries), not as {modality}"
                        + ("; token ids as text are ' '.join(map(str, ids))" if modality == "sequence" else "")
                        + "; give modality auto or timeseries")
    splits = {}
    for split, (cols, where) in parts.items():
        _check_split_columns(cols, targets, features, where, chosen)
        cells = series_of_cells(zip(*(cols[c] for c in features), strict=True), features, where)
        splits[split] = Split(series_from_array(cells, "", 0, where), _stack_targets([cols[t] for t in targets]),
                              where)
    notes = {**series_array_notes(splits, ""), CHANNEL_NAMES: list(features), **({"dropped": list(drop)} if drop else {})}
    return RawData("timeseries", {k: splits[k] for k in ("train", "val", "test") if k in splits}, targets, source,
                   split_from, notes)


def _refuse_image_paths(cols: dict[str, np.ndarray], features: list[str], where: str) -> None:
    """A feature column of image file names (Kaggle's train.csv of ``filepath,label``, a Dataset of paths not cast to
    images) would be read as text, one token per character: a model of the names' letters, whose accuracy says
    nothing of the images (a path through a class folder spells its label). fpt opens no file a table names."""
    for c in features:
        values = cols[c]
        if values.dtype.kind not in "OU":
            continue
        sample = [v for v in values[:1000] if isinstance(v, str) and v.strip()]
        if sample and all(Path(v.strip()).suffix.lower() in IMAGE_SUFFIXES for v in sample):
            folder = option("data", "DIR", placeholder=True)
            raise DataError(f"{where}: column {c!r} holds image file names ({sample[0]!r}), which would be read as "
                            f"text, not opened; put the images in class folders and give the folder ({folder}, "
                            "DIR/<class>/*.png), or the table beside the one folder of images it names and give their "
                            f"folder ({folder}: DIR/labels.csv + DIR/train/*.png), or in Python a datasets.Dataset "
                            f"with the column cast to images (ds.cast_column({c!r}, datasets.Image()))")


def _dates_of(name: str, values: np.ndarray, where: str) -> DateKind | None:
    """The column's dates as a resumed run read them (fpt.data.readings), else as found in its training values."""
    saved = saved_reading(name)
    if saved is not None:
        return DateKind(saved.zone, saved.format) if saved.kind == "dates" else None
    return find_dates(values, where, DataError)


def _durations_of(name: str, values: np.ndarray, where: str) -> str | None:
    """The column's durations kind as a resumed run read it (fpt.data.readings), else as found in its values."""
    saved = saved_reading(name)
    if saved is not None:
        return saved.duration if saved.kind == "durations" else None
    return find_durations(values, where, DataError)


def _found_anew(values: np.ndarray, where: str) -> str | None:
    """What fpt finds a column of text to be when not told how a run read it, in words: dates, durations, or None
    (text; or an error finding them, which a run that read the column as text is not stopped by)."""
    try:
        if (kind := find_dates(values, where, DataError)) is not None:
            return Reading("dates", kind.zone, kind.format).words()
        if find_durations(values, where, DataError) is not None:
            return Reading("durations").words()
    except DataError:
        return None
    return None


def _check_named(given: tuple[str, ...], names: list[str], option: str, where: str) -> None:
    """Every column an option names is a column of the training table."""
    unknown = [c for c in given if c not in names]
    if unknown:
        spaced_header(unknown[0], names, where)
        raise DataError(f"{where}: {option} names {unknown[0]!r}, which is not a column{near(unknown[0], names)}; its "
                        f"columns are {names_shown(names, 12)}")


def _long_raw(parts: dict[str, tuple[dict[str, np.ndarray], str]], target: str | None, modality: str, source: str,
              split_from: str, drop: tuple[str, ...], series: tuple[str, ...]) -> RawData:
    """A long-format table (a row per time point) as series ``RawData``: one example per series id, every feature
    column a channel; a series' rows never straddle two splits."""
    train_cols, train_where = parts["train"]
    names = [c for c in train_cols if c != SPLIT_COLUMN]
    if modality not in {"auto", "timeseries"}:
        raise DataError(f"{train_where}: {option('series_id')} reads a long-format table as time series, not "
                        f"{modality}; drop {option('modality')} (or {option('series_id')})")
    both = [c for c in series if c in drop]
    if both:
        raise DataError(f"{train_where}: {both[0]!r} is in {option('series_id')} and {option('drop_columns')}; the "
                        "series' id (and order) columns are read to group the rows and never features: take it out "
                        f"of {option('drop_columns')}")
    # by default the target is chosen among the other columns (the id is often the last one)
    targets = choose_targets(names if target is not None else [c for c in names if c not in series], target,
                             train_where)
    clash = [c for c in series if c in targets]
    if clash:
        raise DataError(f"{train_where}: {clash[0]!r} is the target and in {option('series_id')}; the series' id (and "
                        f"order) group the rows: name another target, or other {option('series_id')} columns")
    chosen = "" if target is not None else DEFAULT_TARGET
    channels = [c for c in names if c not in targets and c not in drop and c not in series]
    if not channels:
        raise DataError(f"{train_where}: no column is left for the series' values (the target: {', '.join(targets)}; "
                        f"{option('series_id')}: {', '.join(series)}); a long-format table needs one value column per channel")
    splits, owner = {}, {}
    for split, (cols, where) in parts.items():
        missing = [c for c in (*series, *targets, *channels) if c not in cols]
        if missing:
            raise DataError(f"{where}: no column(s) {', '.join(map(repr, missing))}, which the training file has; "
                            "give every split file the same columns")
        for t in targets:
            check_target_values(cols[t], t, where, chosen)
        x, y, ids = long_series(cols, series, channels, targets, where, DataError)
        for i in ids:  # one series on both sides of a split would be tested on rows it trained on
            if owner.setdefault(i, split) != split:
                raise DataError(f"{where}: series {i!r} also has rows in the {owner[i]} split; give each series' rows "
                                "one split")
        splits[split] = Split(x, y, where)
    lengths = [s.shape[1] for s in splits["train"].x]
    if max(lengths) == 1:  # a row id named as the series' id: every row its own series
        raise DataError(f"{train_where}: {option('series_id', series[0])} gives every row a series of its own (one "
                        "point each); name the column that the rows of one series share, or drop "
                        f"{option('series_id')} to read the "
                        "rows as examples of a table")
    notes = {"features": channels, "series_id": list(series), "channels": len(channels),
             "train_lengths": f"{min(lengths)}..{max(lengths)}", **({"dropped": list(drop)} if drop else {})}
    return RawData("timeseries", {k: splits[k] for k in ("train", "val", "test") if k in splits}, targets, source,
                   split_from, notes)


def long_series(cols: dict[str, Any], series: tuple[str, ...], channels: list[str], targets: list[str], where: str,
                error: type[Exception]) -> tuple[list[np.ndarray], np.ndarray | None, list[Any]]:
    """A long-format table's rows (tsfresh's, sktime's "pd-long": a row per time point) as (C, L) float32 series, one
    per value of the id column ``series[0]`` in order of first appearance, its points in the order of the column
    ``series[1]`` when given (else as the rows come), a channel per column of ``channels``; with the targets of each
    series ((n, m), one value per series: every row of a series must agree; None where ``targets`` is empty) and the
    ids. A missing value is missing (NaN) at its point."""
    import pandas as pd

    ids = np.asarray(cols[series[0]])
    gaps = is_missing(ids)
    if gaps.any():
        raise error(f"{where}: column {series[0]!r} ({option('series_id')}) is empty on {rows(gaps)}; every row needs the "
                    "id of its series")
    keys, uniques = pd.factorize(pd.Series(ids, dtype=object), sort=False)
    order = np.argsort(keys, kind="stable")
    if len(series) > 1:
        when = np.asarray(cols[series[1]])
        if is_missing(when).any():
            raise error(f"{where}: column {series[1]!r} (the order of {option('series_id')}) is empty on "
                        f"{rows(is_missing(when))}; give every row its time")
        if when.dtype.kind == "O":  # a CSV's timestamps are text: read as datetimes, or refused
            import warnings

            try:
                with warnings.catch_warnings():  # pandas' "could not infer format": each value is parsed, or refused
                    warnings.simplefilter("ignore", UserWarning)
                    when = pd.to_datetime(pd.Series(when)).to_numpy()
            except (ValueError, TypeError):
                raise error(f"{where}: column {series[1]!r} orders each series' rows, but holds text that is not a "
                            f"date or time ({when[0]!r}); give numbers or datetimes (or leave the order out: the rows' "
                            "own order)") from None
        order = np.lexsort((when, keys))
        repeated = (keys[order][1:] == keys[order][:-1]) & (when[order][1:] == when[order][:-1])
        if repeated.any():
            first, r = order[:-1][repeated][0], order[1:][repeated][0]
            # rows as the caller names them (data.iloc[3] of a DataFrame; a file's under its header, blank lines counted)
            raise error(f"{where}: series {plain_value(ids[r])!r} has two rows at {series[1]} = "
                        f"{plain_value(when[r])!r} ({row_word(int(first))} and {row_word(int(r))}); give one row per "
                        "time point, a column per channel")
    values = _series_values(cols, channels, where, error, long=True)[order]
    if np.isinf(values).any():
        r = int(order[np.flatnonzero(np.isinf(values).any(axis=1))[0]])
        raise error(f"{where}, row {r + 1}: an infinite value; replace it with a finite number, or leave it empty "
                    "where it is missing")
    starts = np.flatnonzero(np.r_[True, keys[order][1:] != keys[order][:-1]])
    stops = np.r_[starts[1:], len(order)]
    from fpt.data.timeseries import narrowed

    x = narrowed([values[a:b].T.astype(np.float64) for a, b in zip(starts, stops, strict=True)], where, error)
    per_series = []
    for t in targets:
        col = np.asarray(cols[t])[order]
        for a, b in zip(starts, stops, strict=True):
            labels = list(dict.fromkeys(plain_value(v) for v in col[a:b]))
            if len(labels) > 1:
                raise error(f"{where}: target {t!r} changes within series {plain_value(ids[order[a]])!r} "
                            f"({labels[0]!r}, {labels[1]!r}); a series has one target value: give it on every row "
                            "of the series")
        per_series.append(col[starts])
    return x, _stack_targets(per_series) if per_series else None, [plain_value(v) for v in uniques]


def _series_values(cols: dict[str, Any], features: list[str], where: str, error: type[Exception],
                   long: bool = False, gaps: Gaps | None = None) -> np.ndarray:
    """(n, len(features)) numbers: a table's feature columns as the points of one series per row (``long``: the
    channels of a long-format table, a point per row; ``gaps``: the reader's masks of missing cells)."""
    values = []
    for name in features:
        col = np.asarray(cols[name])
        col = column(col, f"{where}, column {name!r}", known_missing(col, name, gaps))
        if col.dtype.kind != "f":
            what = f"a long-format table's ({option('series_id')}) feature columns are its channels, a number per " \
                "row" if long else f"read as series ({option('modality', 'timeseries')}), a table's feature columns " \
                "are the points of one series per row, a number each"
            raise error(f"{where}: column {name!r} holds text; {what} (leave it out with {option('drop_columns')}, or "
                        "fix its values)")
        values.append(col)
    return np.stack(values, axis=1)


def _series_raw(splits: dict[str, Split], features: list[str], targets: list[str], source: str, split_from: str,
                drop: tuple[str, ...]) -> RawData:
    """A table read as series (--modality timeseries): each row one univariate series, its feature columns the points
    in order, trailing empty cells a shorter series (``fpt.data.timeseries.series_from_rows``)."""
    for s in splits.values():
        s.x = series_from_rows(_series_values(s.x, features, s.where, DataError), s.where)
    lengths = [x.shape[1] for x in splits["train"].x]
    notes = {"features": features, "channels": 1, "train_lengths": f"{min(lengths)}..{max(lengths)}",
             **({"dropped": list(drop)} if drop else {})}
    return RawData("timeseries", {k: splits[k] for k in ("train", "val", "test") if k in splits}, targets, source,
                   split_from, notes)


def _stack_targets(cols: list[np.ndarray]) -> np.ndarray:
    if all(c.dtype.kind in "iubf" for c in cols):
        return np.stack([c.astype(np.float64) if c.dtype.kind == "f" else c for c in cols], axis=1)
    return np.stack([c.astype(object) for c in cols], axis=1)


def _by_split_column(columns: dict[str, np.ndarray], path: Path) -> dict[str, tuple[dict[str, np.ndarray], str]]:
    if SPLIT_COLUMN not in columns:
        return {"train": (columns, str(path))}
    values = np.array([str(v).strip().lower() for v in columns[SPLIT_COLUMN]])
    unknown = sorted(set(values) - set(SPLIT_NAMES))
    if unknown:
        raise DataError(f"{path}: column {SPLIT_COLUMN!r} holds {', '.join(map(repr, unknown[:5]))}; its values must be "
                        "train, val or test (or rename the column if it is a feature)")
    mapped = np.array([SPLIT_NAMES[v] for v in values])
    if not (mapped == "train").any():
        raise DataError(f"{path}: no row has {SPLIT_COLUMN}=train; mark the training rows")
    out = {}
    for split in ("train", "val", "test"):
        idx = np.flatnonzero(mapped == split)
        if len(idx):
            out[split] = ({k: v[idx] for k, v in columns.items() if k != SPLIT_COLUMN}, f"{path} ({SPLIT_COLUMN}={split})")
    return out


def _real(values: np.ndarray, missing: np.ndarray, where: str,
          kinds: set[type]) -> tuple[np.ndarray, np.ndarray, set[type]]:
    """``values``, its present values and their types (``kinds``, the present values' on entry), complex numbers of no
    imaginary part read as the real numbers they are: an estimator's DataFrame of a float column beside a complex one
    is one complex array, and fit refused the float column as 'holds complex numbers (0j)', where predict reads them
    as real. A value with an imaginary part is refused (``_complex``)."""
    if values.dtype.kind != "c" and not any(issubclass(t, complex | np.complexfloating) for t in kinds):
        return values, values[~missing], kinds
    _complex(values, values[~missing], where, kinds)
    values = values.real if values.dtype.kind == "c" else np.array(
        [v.real if isinstance(v, complex | np.complexfloating) else v for v in values], dtype=object)
    present = values[~missing]
    return values, present, set(map(type, present))


def _complex(values: np.ndarray, present: np.ndarray, where: str, kinds: set[type] | None = None) -> None:
    """A column of complex numbers (a complex dtype, or complex values among objects) with an imaginary part is
    refused: neither a number a token holds nor a category. ``kinds``: the types of ``present``, where the caller has
    them."""
    # a type test per distinct type, not per value: one pass over a 500,000-row column of text took a second
    kinds = set(map(type, present)) if kinds is None else kinds
    if values.dtype.kind == "c" or any(issubclass(t, complex | np.complexfloating) for t in kinds):
        imaginary = [v for v in present if isinstance(v, complex | np.complexfloating) and v.imag]
        if not imaginary:
            return
        first = plain_value(imaginary[0])
        raise DataError(f"{where}: holds complex numbers ({first!r}); a feature is real numbers or text: give the real "
                        "and imaginary parts as two columns (numpy.real, numpy.imag), or its magnitude (numpy.abs)")


def _all_numbers(kinds: set[type]) -> bool:
    """Whether values of these types are all numbers (``numbers.Number``): a test per distinct type, not per value."""
    import numbers

    return all(issubclass(k, numbers.Number) for k in kinds)


def numbers_column(values: np.ndarray, where: str, missing: np.ndarray | None = None) -> np.ndarray:
    """A table's column as given, or as float64 (missing: NaN) where it is an object column whose present values are
    all numbers (a DataFrame's column of Decimals from a database, of ints and floats beside None, a nullable boolean
    with gaps): read as numbers, as a column of a numeric dtype is, not as a category per value. Complex numbers
    are refused. ``missing``: ``is_missing(values)`` where the caller has it."""
    if (seconds := as_seconds(values)) is not None:
        return seconds
    if values.dtype.kind not in "Oc":
        return values
    missing = is_missing(values) if missing is None else missing
    kinds = set(map(type, values[~missing]))
    values, present, kinds = _real(values, missing, where, kinds)
    if len(present) and _all_numbers(kinds):
        return column(values, where, missing)
    return values


def column(values: np.ndarray, where: str, missing: np.ndarray | None = None) -> np.ndarray:
    """One table column as the tabular tokeniser reads it: numbers as float64 (missing: NaN); a column of an object
    array (a DataFrame with text or category columns) whose present values are all numbers likewise, else text
    (a categorical column: each value as ``str``, missing as None). Complex numbers are refused. ``missing``:
    ``is_missing(values)`` where the caller has it."""
    if values.dtype.kind in "iubf":
        return values.astype(np.float64)
    if (seconds := as_seconds(values)) is not None:
        return seconds
    missing = is_missing(values) if missing is None else missing
    kinds = set(map(type, values[~missing]))
    values, present, kinds = _real(values, missing, where, kinds)
    refuse_nested(values, kinds, where)  # str() of each was read as a category
    if _all_numbers(kinds):
        out = np.full(len(values), np.nan)
        out[~missing] = present.astype(np.float64)
        refuse_infinite(np.isinf(out), where)
        return out
    return _as_text(values, missing, kinds)


def _as_text(values: np.ndarray, missing: np.ndarray, kinds: set[type]) -> np.ndarray:
    """Each present value as ``str``, missing as None (an object array). A column of text (``kinds``, the present
    values' types, only ``str``) is its own text: copied, its missing cells set, not a ``str()`` per value."""
    if values.dtype.kind == "O" and kinds <= {str}:
        out = values.copy()
        out[missing] = None
        return out
    return np.array([None if m else str(v) for v, m in zip(values, missing, strict=True)], dtype=object)


def _array_column(where: str, j: int) -> str:
    """Column ``j`` of an array's table (named x0, x1, ...) in ``where``: by the caller's own name where the surface
    has one (an estimator's DataFrame column, or X[:, j]: ``column_word``), else by its index."""
    name = f"x{j}"
    word = column_word(name)
    return f"{where}, {word if word != f'column {name!r}' else f'column {j}'}"


def table_from_array(X: np.ndarray, channels: str, image_size: int, where: str,
                     date_formats: dict[str, str] | None = None, durations: dict[str, str] | None = None
                     ) -> dict[str, np.ndarray]:
    """(n, features) arrays (an .npz's X, Python's) as a table's columns x0, x1, ...; a column of dates (a
    DataFrame's datetime column, which fpt.sklearn passes as objects) as dates. ``date_formats`` and ``durations``:
    the training array's text dates and durations (``table_readings``), read so in every split."""
    if X.ndim != 2:
        raise DataError(f"{where}: {option('modality', 'tabular')} needs X of shape (n, features), not {X.shape}")
    formats, timed = date_formats or {}, durations or {}
    out = {}
    for j in range(X.shape[1]):
        name, at = f"x{j}", _array_column(where, j)
        if name in formats:
            out[name] = read_dates(X[:, j], None, at, DataError, formats[name])
        elif name in timed:
            out[name] = read_durations(X[:, j], timed[name], at, DataError)
        else:  # ISO text, or dates typed as dates
            kind = find_dates(X[:, j], at, DataError, written=False)
            out[name] = column(X[:, j], at) if kind is None else read_dates(X[:, j], kind.zone, at, DataError)
    return out


def table_readings(X: np.ndarray, where: str) -> dict[str, Any]:
    """How the text columns of a training array (an object array: a DataFrame's values, fpt.sklearn's X) are read in
    every split and at predict, as a table file's are (``columns_to_raw``): {"date_formats": {column: format}} for
    dates written other than ISO (``fpt.data.date_formats``), {"durations": {column: kind}} for durations written as
    text (``fpt.data.durations``), each only where there are some. Found per split, a format would not reach the
    tokeniser, which reads new text by it: these go in the run's notes, which the tokeniser keeps."""
    formats, timed = {}, {}
    if X.ndim == 2 and X.dtype.kind == "O":
        for j in range(X.shape[1]):
            name, at = f"x{j}", _array_column(where, j)
            kind = find_dates(X[:, j], at, DataError)
            if kind is not None and kind.format is not None:
                formats[name] = kind.format
            elif kind is None and (duration := find_durations(X[:, j], at, DataError)) is not None:
                timed[name] = duration
    return {**({"date_formats": formats} if formats else {}), **({"durations": timed} if timed else {})}


# ---------------------------------------------------------------------------------------------- new inputs


def read_table_inputs(path: Path, checks: Checks) -> Inputs:
    """``fpt predict``'s reader of one table file: its columns, checked as the model's features (and targets). Rows
    of no value at the file's end are left out, said in a note (one between rows of values is refused: the
    predictions are written one per row, in order)."""
    gaps: Gaps = {}
    numbers: list[int] = []
    columns, skipped = read_table(path, empty=True, aligned=True, gaps=gaps, numbers=numbers)
    with file_rows(numbers or None):  # the checks name a bad cell by its row in the file
        inputs = checks.columns(columns, str(path), gaps)
    if len(skipped):
        inputs.notes.append(empty_rows_note(str(path), len(skipped)))
    return inputs


def empty_rows_note(where: str, count: int) -> str:
    """What a CSV's rows of no value became, for the user."""
    return (f"{where}: {count} row(s) hold no value in any column (rows of nothing but separators, ',,', as Excel "
            "writes once-formatted rows) and were left out, as blank lines are")


def tabular_columns(cols: dict[str, np.ndarray], schema: Any, where: str, allow_unseen: bool = False,
                    gaps: Gaps | None = None) -> dict[str, Any]:
    """A tabular model's feature columns (each present) checked against its tokeniser's: numbers where it read
    numbers, categories it saw (or, with ``allow_unseen``, its unknown slot). ``gaps``: the reader's masks of missing
    cells (``read_table``)."""
    entry = {f["name"]: f for f in schema.prep.tokeniser.features}  # a date column's parts share its zone
    return {name: _check_feature(cols[name], entry[name], where, schema.max_categories, allow_unseen,
                                 known_missing(cols[name], name, gaps))
            for name in schema.prep.tokeniser.columns}


def unseen_categories(columns: dict[str, Any], schema: Any) -> dict[str, tuple[int, list[str]]]:
    """Of ``tabular_columns``' result read with ``allow_unseen``: each categorical feature's count of values training
    never saw (each read as the shared unknown slot) and the first four distinct ones, in the feature order; only where
    training kept every category it saw (``_check_feature``'s rule: a longer list folded rare ones into that slot)."""
    out = {}
    for f in schema.prep.tokeniser.features:
        if f["kind"] != "categorical" or f["name"] not in columns or len(f["categories"]) >= schema.max_categories:
            continue
        values = columns[f["name"]]
        present = values[np.not_equal(values, None)]
        new = present[~np.isin(present, np.array(f["categories"], dtype=object))]
        if len(new):
            out[f["name"]] = (len(new), list(dict.fromkeys(new.tolist()))[:4])
    return out


def series_columns(cols: dict[str, np.ndarray], schema: Any, where: str, allow_unseen: bool = False,
                   gaps: Gaps | None = None) -> list[np.ndarray]:
    """A series model trained on a table's rows (--modality timeseries): each row's feature columns as one series,
    checked as any new series are (``fpt.data.timeseries.check_series``). ``gaps``: the reader's masks of missing
    cells."""
    rows = series_from_rows(_series_values(cols, schema.features, where, SchemaError, gaps=gaps), where)
    return check_series(rows, schema, where, allow_unseen)


_NOT_TEXT = (list, tuple, dict, set, frozenset, np.ndarray)  # a text column's cells that are no text (words, ...)


def refuse_word_lists(col: np.ndarray, name: str, where: str, error: type[Exception]) -> None:
    """Refuse a text column's first cell that is a list of words (a tuple, a dict, an array), named as the surface in
    force names cells (``cell_word``): read as its repr, "['a', 'b']", it trained the symbols [, ', ',', ] and
    predicted without a word. The types are tested first, so that a column of texts is not read value by value."""
    if not any(issubclass(k, _NOT_TEXT) for k in set(map(type, col))):
        return
    at = next(i for i, v in enumerate(col) if isinstance(v, _NOT_TEXT))
    raise error(f"{where}: {cell_word(name, at)} is a {type(col[at]).__name__}, not a text; a sequence model reads "
                "one text per example: give its words as one text (' '.join(words))")


def _refuse_no_symbols(col: np.ndarray, name: str, where: str) -> None:
    """Refuse training texts of which none holds a symbol (each empty, blank or missing: a column of "" built by hand,
    the wrong column): the vocabulary was empty, every example the same empty sequence, and a model that could learn
    nothing was trained without a word, where a file's column of empty cells is refused as holding no text."""
    if any(text_of(v).strip() for v in col):
        return
    column = "" if name == TEXT else f" (column {name!r})"
    raise DataError(f"{where}: every training text{column} is empty or blank ({len(col)} of {len(col)}), so a sequence "
                    "model has no symbol to learn from; give the texts themselves")


def sequence_columns(cols: dict[str, np.ndarray], schema: Any, where: str, allow_unseen: bool = False,
                     gaps: Gaps | None = None) -> dict[str, Any]:
    """A sequence model's one text column, each value as text (missing: None). ``gaps`` (the reader's masks) are not
    read: a text column is taken as read, and the reader keeps no mask of another."""
    (name,) = schema.features
    col = cols[name]
    if col.dtype.kind == "O":
        # a cell of a list of words (or a dict, an array) was read as its repr, "['a', 'b']", and predicted unsaid
        refuse_word_lists(col, name, where, SchemaError)
        # NaN or pandas' NA among texts (a list's, a DataFrame's) is no text, as None is: it was the text 'nan'
        gone = is_missing(col) & np.array([not isinstance(v, (str, bytes)) for v in col], dtype=bool)
        texts = col
        if gone.any():  # a copy: the caller's column may be read-only (a DataFrame's, under pandas' copy-on-write)
            texts = col.copy()
            texts[gone] = None
    else:
        texts = np.array([None if m else text_of(plain_value(v)) for v, m in zip(col, is_missing(col), strict=True)],
                         dtype=object)
    if not allow_unseen:
        _symbols_known(texts, schema.prep.tokeniser, name, where)
    return {name: texts}


def _symbols_known(texts: np.ndarray, tok: Any, name: str, where: str) -> None:
    """Refuse texts none of whose symbols the model was trained on, as a table's unseen category is refused: each is
    read as the unknown symbol alone, and predicted as an empty text would be (DNA in lower case for a model trained
    on upper case was predicted without a word)."""
    unknown = tok.unknown_only(texts)
    if not unknown.any():
        return
    i = int(np.flatnonzero(unknown)[0])
    text = str(texts[i])
    why = "written in another letter case than the training texts; write them in theirs" \
        if tok.recased(text) is not None else "fix the text"
    symbols = "symbol" if tok.mode == "chars" else "word"
    raise SchemaError(f"{where}: {cell_word(name, i)}: {_shown_text(text)} holds no {symbols} the model was "
                      f"trained on ({int(unknown.sum())} of {len(texts)} texts hold none; it knows "
                      f"{shown([repr(v) for v in tok.vocab], 10)}): {why}, "
                      f"{remedy('or pass {} to read them as the unknown symbol', 'allow_unseen', key='unseen_symbols')}")


def _shown_text(text: str, most: int = 30) -> str:
    """``text`` quoted, cut to ``most`` characters."""
    return repr(text if len(text) <= most else text[:most] + "...")


def check_table(X: Any, schema: Any, where: str, allow_unseen: bool = False) -> dict[str, Any]:
    """(n, features) values in the training feature order, as a tabular model's columns."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise SchemaError(f"{where}: shape {X.shape}; a table model takes (n, {len(schema.features)}) values, one column "
                          f"per feature ({shown(schema.features)})")
    if X.shape[1] != len(schema.features):
        raise SchemaError(f"{where}: {X.shape[1]} column(s), but the model was trained on {len(schema.features)} "
                          f"features ({shown(schema.features)}); give them in that order")
    return tabular_columns({name: X[:, j] for j, name in enumerate(schema.features)}, schema, where, allow_unseen)


def check_texts(X: Any, schema: Any, where: str, allow_unseen: bool = False) -> dict[str, Any]:
    """Texts, (n,) or a column (n, 1), as a sequence model's text column. An example given as its symbols (a list, or
    a row of a 2-D array) is refused: its symbols were read as texts of their own, a prediction each, or the list as
    the text of its repr."""
    texts = np.asarray(X, dtype=object)
    if texts.ndim == 2 and texts.shape[1] == 1:
        texts = texts.reshape(-1)
    split = texts.ndim != 1 or any(isinstance(v, (list, tuple, np.ndarray)) for v in texts)
    if split and texts.ndim == 1 and any(isinstance(v, str | bytes) for v in texts):
        # a list of words among texts is that one example's (it said 'examples given as lists of symbols')
        refuse_word_lists(texts, schema.features[0], where, SchemaError)
    if split:
        join = "' '.join(s)" if schema.prep.tokeniser.mode == "words" else "''.join(s)"
        shape = f"shape {texts.shape}" if texts.ndim != 1 else "examples given as lists of symbols"
        raise SchemaError(f"{where}: {shape}; a sequence model reads one text per example: join each example's "
                          f"symbols into its text, [{join} for s in X]")
    return sequence_columns({schema.features[0]: texts}, schema, where, allow_unseen)


def _finite(col: np.ndarray, name: str, where: str) -> np.ndarray:
    """A numeric feature column of new inputs, unless it holds an infinite value: a DataFrame's inf given to predict
    was refused as 'example 2 gives values beyond float32's range once standardised', naming no column (a file's is
    refused as it is read)."""
    if col.dtype.kind == "f" and np.isinf(col).any():
        i = int(np.flatnonzero(np.isinf(col))[0])
        raise SchemaError(f"{where}: {cell_word(name, i)}: {float(col[i])} is infinite, but the model reads finite "
                          "numbers; give a finite number or leave it missing (NaN)")
    return col


# the texts Arrow's CSV reader reads as booleans (its default true_values and false_values): a file's column of them
# is 1/0 at predict, so the same texts in a DataFrame (read with dtype=str) are too; they were 'not a number'
_ARROW_BOOLS = {"True": 1.0, "TRUE": 1.0, "true": 1.0, "False": 0.0, "FALSE": 0.0, "false": 0.0}


def _check_feature(col: np.ndarray, f: dict[str, Any], where: str, max_categories: int, allow_unseen: bool,
                   missing: np.ndarray | None = None) -> np.ndarray:
    """One feature column of new inputs as the model's tokeniser reads it (``missing``: ``is_missing(col)`` where the
    reader has it). Each check runs on the whole column at once; the first offending row, for the error, is looked
    for only once a check has failed."""
    name = f["name"]
    if f["kind"] == "datetime":  # read as training read the column (out of its range too: the time extrapolates)
        return read_dates(col, f["tz"], f"{where}: {column_word(name)}", SchemaError, f.get("format"))
    if f["kind"] == "numeric":
        if "duration" in f:  # durations written as text, read as training read them (a number has no unit: refused)
            return read_durations(col, f["duration"], f"{where}: {column_word(name)}", SchemaError)
        if col.dtype.kind in "iubf":
            return _finite(col, name, where)
        if col.dtype.kind == "c":  # float() of a NumPy complex drops its imaginary part with only a warning
            at = np.flatnonzero(np.asarray(col).imag != 0)
            i = int(at[0]) if len(at) else 0
            raise SchemaError(f"{where}: {cell_word(name, i)}: {complex(col[i])!r} is a complex number, but the model "
                              "was trained on real numbers in this column; give real values (x.real, or abs(x))")
        if (seconds := as_seconds(col)) is not None:  # durations, as training read them
            return seconds
        missing = is_missing(col) if missing is None else missing
        present = col[~missing]
        out = np.full(len(col), np.nan)
        if (numbers := as_floats(present)) is not None:
            out[~missing] = numbers
            return _finite(out, name, where)
        for i in np.flatnonzero(~missing):  # a value float() may not read: the first is named
            try:
                out[i] = _ARROW_BOOLS[col[i]] if isinstance(col[i], str) and col[i] in _ARROW_BOOLS else float(col[i])
            except (TypeError, ValueError):
                raise SchemaError(f"{where}: {cell_word(name, i)}: {plain_value(col[i])!r} is not a number, but the model "
                                  "was trained on numbers in this column; fix the value or leave it empty "
                                  "(missing)") from None
        return _finite(out, name, where)
    missing = is_missing(col) if missing is None else missing
    values = _category_names(col, missing)
    categories = f["categories"]
    if col.dtype.kind == "O":
        # a number among objects matched by value, as a column of numbers is (plain_value): fpt.sklearn's X beside a
        # text column holds a float column's 10.0, which is the category '10' of a declared category of ints
        known = set(categories)
        for i in np.flatnonzero(~missing):
            v = col[i]
            if not isinstance(v, str) and values[i] not in known and str(plain_value(v)) in known:
                values[i] = str(plain_value(v))
    # Training kept the max_categories most frequent categories; a shorter list holds every category it saw,
    # so anything else is new to the model (a longer one may have dropped rare ones into the unknown slot).
    complete = len(categories) < max_categories
    if complete and not allow_unseen:
        known = set(categories)
        if not set(values[~missing]) <= known:
            for i in np.flatnonzero(~missing):
                if values[i] not in known:
                    raise SchemaError(f"{where}: {cell_word(name, int(i))}: category {values[i]!r} was not seen in "
                                      f"training (the model knows {shown([repr(c) for c in categories], 10)}); fix "
                                      f"the value, {allow_unseen_fix()}")
    return values


def _category_names(col: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """A categorical feature's values as the categories they name (an object array, missing as None): a number as it
    is written (``plain_value``: 1.0 is '1'), anything else as ``str``. A column of numbers is named per distinct
    value, a column of text is its own names (``_as_text``)."""
    if col.dtype.kind in "iubf":
        out = np.full(len(col), None, dtype=object)
        distinct, at = np.unique(col[~missing], return_inverse=True)  # -0.0 and 0.0 are one: both '0'
        out[~missing] = np.array([str(plain_value(v)) for v in distinct], dtype=object)[at.reshape(-1)]
        return out
    return _as_text(col, missing, set(map(type, col[~missing])))


__all__ = ["BUILDERS", "arrow_values", "COMPRESSIONS", "ROW_INDEX", "check_table", "check_texts", "column",
           "format_name", "label_text_check", "long_series", "numbers_column", "read_columns", "read_table", "read_table_inputs",
           "read_tables", "sequence_columns",
           "series_columns", "split_files", "table_from_array", "table_readings", "table_stem", "table_suffix", "tabular_columns",
           "unseen_categories"]
