"""New inputs for a trained model (``fpt predict``, ``fpt.load(...).predict``), checked against its schema.

A trained model's schema is what its run saved (``data.json``: the modality, the fitted tokeniser,
the feature and target columns, the class map) plus facts its training summary recorded about the
training files (``X_shape`` of an .npz, ``train_lengths`` of time series). New inputs come in the
formats ``--data`` reads, one set of examples at a time:

==========================================  =====================================================
input                                        read as
==========================================  =====================================================
``x.csv``/``.tsv``/``.jsonl``/``.parquet``   a table: the training feature columns, optionally the
                                             target column(s) (then the predictions are scored)
``DIR/*.png`` or ``DIR/<class>/*.png``       images, unlabelled or labelled by their class folder
``DIR/labels.csv`` + ``DIR/train/*.png``     images named by a table's rows, labelled if it holds labels
``NAME.ts``/``NAME_TEST.tsv`` (UCR/UEA)      time series with their labels
``x.npz``                                    ``X`` (and optionally ``y``), or ``X_test``/``y_test``
==========================================  =====================================================

Nothing is refitted: the tokeniser, class map and target scaler are the training run's. What
does not match (a missing or extra column, text in a numeric column, a category never seen in
training, an image of other channels or array shape, a series of other channels or length) is a
one-line ``SchemaError`` naming the file, the column or example, and the fix.

Each format's predict reader (``fpt.data.formats``: ``for_inputs`` picks it by the path and the model's
modality) reads its file and hands what it found to the checks here (``Checks``), which are the modality's
(``fpt.data.modalities``: ``check`` for arrays, ``columns`` for table columns).
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.arrays import CHANNEL_NAMES, in_trained_order, is_multiindex_frame, is_nested_frame, load_npz, series_frame
from fpt.data.base import (
    SPLIT_COLUMN,
    Checks,
    Gaps,
    Inputs,
    as_floats,
    check_target_values,
    is_missing,
    known_missing,
    lazy_frame,
    plain_value,
    record_columns,
    shown,
    sparse_matrix,
    unique_names,
)
from fpt.data.codes import codes_as_numbers, written_as_codes
from fpt.data.dates import as_labels, held_dates
from fpt.data.formats import FORMATS, for_inputs
from fpt.data.frames import flattened
from fpt.data.host import inputs_array
from fpt.data.hub import LABEL_COLUMNS, dataset_columns, is_datasets
from fpt.data.images import check_images
from fpt.data.listing import listed_once
from fpt.data.modalities import modality
from fpt.data.tables import ROW_INDEX, table_suffix
from fpt.data.timeseries import check_series, series_of_cells
from fpt.data.written import as_written
from fpt.errors import (
    ARRAY_CELLS,
    COLUMN_CELLS,
    ROW_CELLS,
    SchemaError,
    caller_examples,
    closest,
    frame_rows,
    is_pandas_series,
    items_cells,
    option,
    speaks_flags,
    target_word,
)
from fpt.settings import RunConfig


class CutInputWarning(UserWarning):
    """Inputs longer than the model reads were cut, as training cut its own longer examples."""


class RowIdColumn(CutInputWarning):
    """A first column that was not a feature, a different id on every row (a named index that pandas' to_csv wrote),
    was read as the rows' id and written back beside the predictions."""


class DatesBeyondWarning(CutInputWarning):
    """Dates beyond the training dates were read as the training range's nearest end in their trend parts."""


@dataclass(frozen=True)
class Schema:
    """What a model was trained on: the run's fitted preprocessing and facts about its training data."""

    prep: Any  # fpt.tasks.user_data.Preprocessing
    info: dict[str, Any] = field(default_factory=dict)  # the summary's task_info (X_shape, train_lengths, ...)
    max_categories: int = RunConfig.max_categories  # the run's: a shorter category list is every training category

    @property
    def modality(self) -> str:
        return self.prep.modality

    @property
    def features(self) -> list[str]:
        """The feature columns; a table from arrays (an .npz, the scikit-learn estimators) names them x0, x1, ...
        in its tokeniser only (images and series have none)."""
        if not self.prep.features:  # a date column makes several tokens of one column
            return list(dict.fromkeys(f["name"] for f in getattr(self.prep.tokeniser, "features", [])))
        return list(self.prep.features)

    @property
    def targets(self) -> list[str]:
        return list(self.prep.targets)

    def describe(self) -> dict[str, Any]:
        """The input schema in words and numbers (the model card and config.json show it)."""
        out: dict[str, Any] = {"modality": self.modality, "targets": self.targets,
                               **modality(self.modality).describe(self.prep.tokeniser, self.features, self.info)}
        if "X_shape" in self.info:
            out["npz_X_shape"] = self.info["X_shape"]
        if getattr(self.prep, "dropped", None):  # in the training table, left out; read past in new inputs
            out["dropped_columns"] = list(self.prep.dropped)
        if getattr(self.prep, "series_id", None):  # a long-format table: rows grouped into series by these
            out["series_id"] = list(self.prep.series_id)
        return out


# ---------------------------------------------------------------------------------------------- reading


def checks(schema: Schema, allow_unseen: bool = False, no_targets: bool = False) -> Checks:
    """The model's checks of new inputs, for a format's predict reader."""
    return Checks(schema, lambda x, where: check_arrays(x, schema, where, allow_unseen),
                  lambda cols, where, gaps=None: check_columns(cols, schema, where, allow_unseen, gaps),
                  lambda y, where: check_labels(y, schema, where), no_targets)


def read_inputs(path: str | Path, schema: Schema, allow_unseen: bool = False, no_targets: bool = False) -> Inputs:
    """Read and check the examples in ``path`` (one set: a file, or a folder of images). ``no_targets``: the user
    says the file holds no targets (a UCR .tsv of the series alone); one that shows targets by its own layout (a
    table's target column, class folders, an .npz's y) is then an error, not read past."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    with listed_once():  # the format's claim and its reader list a folder (of many images) once, not once each
        fmt = for_inputs(p, schema.modality)
        tables = FORMATS["tables"]
        if schema.features and p.is_file() and table_suffix(p) in tables.suffixes and tables.predicts(schema.modality):
            fmt = tables  # a model of a table's columns (a series per row) reads a .tsv as a table, not as a UCR file
        return _no_targets(fmt.predict(p, checks(schema, allow_unseen, no_targets)), no_targets)


def _no_targets(read: Inputs, no_targets: bool) -> Inputs:
    """``read``, unless the user declared no targets and its layout holds them."""
    if no_targets and read.y is not None:
        raise SchemaError(f"{read.where}: {option('no_targets')} says it holds no targets, but its layout gives them (a target "
                          "column, class folders, an array y); drop the option to score them, or leave them out")
    return read


def as_inputs(data: Any, schema: Schema, allow_unseen: bool = False, no_targets: bool = False) -> Inputs:
    """In-memory inputs (Python API): a file path, a pandas DataFrame, a dict of columns, or arrays / lists.
    ``no_targets``: the inputs hold no targets (``read_inputs``). A string is a path, never an example: a
    symbol-sequence model's one text goes in a list (``["ACGT"]``); a string naming no file is refused saying so."""
    return _no_targets(_as_inputs(data, schema, allow_unseen, no_targets), no_targets)


def _no_such_inputs(data: str | Path, modality: str) -> str:
    """The refusal of a path that names nothing, saying what the model takes instead. A FileNotFoundError named the
    path alone, and predict(Path("ACGT")) of a sequence model said nothing of the list of texts it takes; fpt predict
    RUN nope.csv of a sequence model told the command line's user to call predict(['nope.csv'])."""
    if speaks_flags():  # fpt predict RUN INPUT: a path is all the command takes
        where = "" if Path(data).expanduser().is_absolute() else f" (relative to the current directory {Path.cwd()})"
        return (f"INPUT {data}: no such file or folder{where}; give the path of an existing file (or folder) of the "
                "inputs, or - to read a table from standard input")
    if modality != "sequence":
        return (f"{data}: no such file or folder; pass the path of an existing file (or folder) of the inputs, or the "
                "inputs themselves in memory (a DataFrame, a dict of columns, or arrays)")
    # A string is always a path: read as the one sequence when no file has its name, a mistyped file name would be
    # predicted as a text without a word. So the sequence goes in a list, and this says how.
    text = str(data) if len(str(data)) <= 40 else str(data)[:37] + "..."
    if isinstance(data, str):
        return (f"{text!r}: no such file or folder (a string given alone is read as a file's path); the model reads "
                f"texts: to predict one, pass it in a list, predict([{text!r}])")
    return (f"{data}: no such file or folder (a Path is read as a file's path); pass the path of an existing file of "
            f"the texts, or the texts themselves in a list of strings, predict([{text!r}])")


def _as_inputs(data: Any, schema: Schema, allow_unseen: bool, no_targets: bool) -> Inputs:
    if isinstance(data, (str, Path)) and not Path(data).exists():
        raise SchemaError(_no_such_inputs(data, schema.modality))
    if isinstance(data, (str, Path)):
        return read_inputs(data, schema, allow_unseen, no_targets)
    lazy_frame(data, "inputs", SchemaError)
    sparse_matrix(data, "inputs", SchemaError)
    data = record_columns(data, "inputs", SchemaError) or data  # a record array's fields: a table's columns
    if is_datasets(data):  # read by its features, as fpt.build(data=Dataset) reads one
        where = f"the {type(data).__name__}"
        columns, image = dataset_columns(data, where)
        if schema.modality != "image":
            data = {k: v for k, v in columns.items() if k != image}
        elif image is None:
            raise SchemaError(f"{where}: no Image() column (columns {shown(list(columns))}), but the model was trained "
                              "on images; cast the column of images or paths: ds.cast_column(NAME, datasets.Image())")
        else:
            # the model's target, else the label column training would choose (a model of class folders, whose
            # target is 'class', scoring a Dataset's 'label')
            given = [t for t in (*schema.targets, *LABEL_COLUMNS) if t in columns]
            y = np.array(columns[given[0]], dtype=object)[:, None] if given else None
            if y is not None:
                check_labels(y, schema, where)
            # its images as the caller indexes them, inputs['image'][2] as its other columns' cells are: 'image 3'
            with caller_examples(f"inputs[{image!r}]"):
                return Inputs(check_images(columns[image], schema, where, allow_unseen), y, where)
    given = data
    data = _rows_as_columns(data, schema)
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):  # a pandas DataFrame, without importing pandas
        if not {str(c) for c in data.columns} & {*schema.features, *schema.targets}:
            # MultiIndex columns by the flat names training gave them; a run trained before named them as tuples
            data = flattened(data, "inputs", SchemaError)
        series_id = list(getattr(schema.prep, "series_id", None) or [])
        if series_id and is_multiindex_frame(data) and set(data.index.names) & set(series_id):
            data = data.reset_index()  # a long table indexed by its id and order, as fpt.build(data=...) reads it
        elif schema.modality == "timeseries" and not schema.features and not series_id and not (
                schema.info.get(CHANNEL_NAMES) and is_nested_frame(data)):  # that: its columns, targets beside, below
            data = in_trained_order(data, schema.info.get(CHANNEL_NAMES), "inputs")  # channels by name
            frame = series_frame(data, "inputs", indexed="inputs.iloc")  # sktime's nested or multi-indexed DataFrame of series
            if frame is not None:  # its series inputs.iloc[2], as the caller indexes them
                with caller_examples("inputs.iloc"):
                    return Inputs(check_arrays(frame, schema, "inputs", allow_unseen), None, "inputs")
        unique_names(data.columns, "inputs", SchemaError, "df.columns = [...]")
        labels = {} if series_id else row_labels(data)
        data = {str(c): data[c].to_numpy() for c in data.columns}
        rows = frame_rows("inputs", list(data))  # its rows as the caller indexes them, inputs.iloc[2]
    else:
        labels, rows = {}, _caller_rows(given, data, schema)
    if isinstance(data, Mapping):
        with rows:
            read = check_columns(data, schema, "inputs", allow_unseen)
        # the DataFrame's row labels first, as a file's row index is (unless a column of that name is written)
        read.carried = {**{k: v for k, v in labels.items() if k not in read.carried and k not in data},
                        **read.carried}
        return read
    # a masked array's masked values missing (NaN), not the numbers under the mask
    with rows:
        return Inputs(check_arrays(inputs_array(data, "inputs", SchemaError), schema, "inputs", allow_unseen), None,
                      "inputs")


def _caller_rows(given: Any, data: Any, schema: Schema) -> contextlib.AbstractContextManager[None]:
    """How errors name the rows and cells of inputs given in memory (``frame_rows``): as the caller indexes what it
    gave, from 0, as the estimators name their X's (``inputs['x1'][2]`` of a dict of columns, ``inputs[2]['x1']`` of
    a list of records, ``inputs[2, 0]`` of an array, ``inputs[2][0]`` of a list of rows, ``inputs[2]`` of a list of
    texts, ``inputs[2]`` of an image or a series); they said 'column 'x1', row 3', a file's row under its header, and
    'image 3'. ``data``: ``given`` as read so far."""
    if isinstance(data, Mapping):
        if given is data:
            return frame_rows("inputs", list(data), COLUMN_CELLS)
        if isinstance(given, (list, tuple)):  # records
            return frame_rows("inputs", list(data), ROW_CELLS)
        return frame_rows("inputs", list(data), ("inputs", "inputs[{c!r}]"))  # one row, a pandas Series
    if schema.modality == "tabular":
        cells = ROW_CELLS if isinstance(data, (list, tuple)) else ARRAY_CELLS
        return frame_rows("inputs", {name: j for j, name in enumerate(schema.features)}, cells)
    if schema.modality == "sequence" and schema.features:  # a Series' by position: inputs.iloc[2]
        return frame_rows("inputs", {schema.features[0]: 0}, items_cells(given))
    if schema.modality in ("image", "timeseries"):  # an image or a series: inputs[2], not 'image 3'
        return caller_examples("inputs.iloc" if is_pandas_series(given) else "inputs")
    return contextlib.nullcontext()


def row_labels(frame: Any) -> dict[str, list[Any]]:
    """A pandas DataFrame's row labels, to be written beside its predictions as a file's row index is: an unnamed
    index under the name ``ROW_INDEX`` (as pandas' to_csv writes it, so read_csv(..., index_col=0) reads the table
    back by it), a named one (``df.set_index("id")``) under its name, a MultiIndex a column per level (``level_0``,
    ... where unnamed, as reset_index names them); none for the default 0..n-1. Left out, the predictions of
    ``df.loc[chosen]`` or of a DatetimeIndex frame could not be told apart but by position."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(frame, pd.DataFrame):
        return {}
    index = frame.index
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return {}
    if index.nlevels == 1:
        names = [ROW_INDEX if index.name is None else str(index.name)]
    else:
        names = [f"level_{i}" if name is None else str(name) for i, name in enumerate(index.names)]
    return {name: as_written(np.asarray(index.get_level_values(i))) for i, name in enumerate(names)}


def _rows_as_columns(data: Any, schema: Schema) -> Any:
    """Rows of a table model's inputs as its columns: a list of records (``df.to_dict('records')``, a JSON API's
    body, as a .json file of records is read; a key a record lacks is missing there), or a pandas Series of one row
    (``df.iloc[i]``: its index the column names, as one {column: value} dict is read). Read as arrays, a list of
    records was a 1-D array of dicts and a row was its values in its own order, both refused as 'shape (n,)'.
    Anything else as it is."""
    if not schema.features:
        return data
    if isinstance(data, (list, tuple)) and data and all(isinstance(row, Mapping) for row in data):
        names = list(dict.fromkeys(k for row in data for k in row))
        columns = {}
        for k in names:
            column = np.empty(len(data), dtype=object)  # values as given (a list of lists would become 2-D)
            column[:] = [row.get(k) for row in data]
            columns[k] = column
        return columns
    if not hasattr(data, "columns") and hasattr(data, "index") and hasattr(data, "to_numpy") and \
            getattr(data, "ndim", 0) == 1 and set(schema.features) <= {str(k) for k in data.index}:
        unique_names(list(data.index), "inputs", SchemaError, "one index label per column")
        return {str(k): v for k, v in data.items()}
    return data


def check_arrays(X: Any, schema: Schema, where: str, allow_unseen: bool = False) -> Any:
    """An input array (or list) in the modality's raw form, checked (the modality's own check); tables take
    (n, features) in feature order."""
    return modality(schema.modality).check(X, schema, where, allow_unseen)


def _column(values: Any, cells: bool) -> np.ndarray:
    """A column as an array: a list of lists of several lengths (numpy's 'inhomogeneous shape' traceback), or with
    ``cells`` any list holding lists or arrays, as one object cell per item, for the modality's check to name (a
    sequence model's column of lists was a 2-D array, read as the text "['a', 'b']")."""
    try:
        column = np.asarray(values)
        if not (cells and column.ndim > 1 and isinstance(values, (list, tuple))):
            return column
    except ValueError:
        if not isinstance(values, (list, tuple)):
            raise
    column = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        column[i] = v
    return column


def check_columns(columns: Mapping[str, Any], schema: Schema, where: str, allow_unseen: bool = False,
                  gaps: Gaps | None = None) -> Inputs:
    """Table columns as the model's inputs: the training features (and, if every one is there, its targets).
    ``gaps``: the reader's masks of missing cells (``fpt.data.tables.read_table``), read where a check of the same
    column needs them."""
    channels = schema.info.get(CHANNEL_NAMES)
    if schema.modality == "timeseries" and channels and not schema.features:  # columns of series cells, by name
        return channel_columns(columns, schema, channels, where, allow_unseen)
    from_columns = modality(schema.modality).columns
    if from_columns is None:
        raise SchemaError(f"{where}: columns of a table, but the model was trained on {schema.modality} data")
    unique_names(columns, where, SchemaError, "one key per column")
    # a column of a torch tensor as its values (on any device, requiring grad), as training reads one
    cols = {str(k): _column(inputs_array(v, f"{where}: column {k!r}", SchemaError), schema.modality == "sequence")
            for k, v in columns.items()
            if str(k) != SPLIT_COLUMN}
    if not cols:
        raise SchemaError(f"{where}: no columns; the model needs {shown(schema.features)}")
    scalars = [k for k, v in cols.items() if v.ndim == 0]
    if len(scalars) == len(cols):  # one example as {column: value} (a JSON request's record): a table of one row
        cols = {k: v.reshape(1) for k, v in cols.items()}
    elif scalars:
        raise SchemaError(f"{where}: column {scalars[0]!r} is one value but others are lists; give one value per "
                          "column (one example) or a list per column (one value per row in each)")
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise SchemaError(f"{where}: columns of different lengths {sorted(lengths)}; give one value per row in each")
    features, targets = schema.features, schema.targets
    if not features:  # a series model trained on series files or arrays: no column names to read a table by
        others = [f.takes for f in FORMATS.values() if f.predicts(schema.modality) and f.takes
                  and "tabular" not in (f.holds or ())]  # what reads its examples, a table file aside
        raise SchemaError(f"{where}: columns of a table, but the model was trained on {schema.modality} data from "
                          f"files or arrays, not on a table's columns; give {' or '.join(others) or 'arrays'}")
    series_id = list(getattr(schema.prep, "series_id", []))
    missing = [f for f in (*series_id, *features) if f not in cols]
    if missing and list(cols) == [str(i) for i in range(len(cols))] and not series_id:
        # pandas numbers the columns of a DataFrame made from an array: '1' is no misspelt 'x1', whatever difflib says
        raise SchemaError(f"{where}: its columns are named 0..{len(cols) - 1} (pandas' numbers for a DataFrame made "
                          f"without column names), but the model reads its features by name: {shown(features)}; name the columns "
                          "(df.columns = [...], the features in that order), or give the values alone, df.to_numpy(), "
                          "in that order")
    if missing:
        other = closest(missing[0], [c for c in cols if c not in features])
        raise SchemaError(f"{where}: no column {missing[0]!r}" + (f" (nor {shown(missing[1:], 5)})" if len(missing) > 1
                                                                  else "")
                          + (f" (the input has {other!r}: rename it to {missing[0]!r})" if other is not None else "")
                          + f", which the model was trained on; add it (empty values count as missing). The model's "
                          f"feature columns: {shown(features)}")
    dropped = getattr(schema.prep, "dropped", [])  # left out in training (drop_columns): read past here too
    extra = [c for c in cols if c not in features and c not in targets and c not in dropped and c not in series_id
             and c != ROW_INDEX]
    ids = extra[:1] if extra and extra[0] == next(iter(cols)) and _row_ids(cols[extra[0]], extra[0], gaps) else []
    extra = extra[len(ids):]
    if extra:
        raise SchemaError(f"{where}: column {extra[0]!r}" + (f" (and {shown(extra[1:], 5)})" if len(extra) > 1 else "")
                          + f" was not a feature when the model was trained; drop it. The model's feature columns: "
                          f"{shown(features)}; target(s): {', '.join(targets)}")
    given, notes = _scored(cols, targets, where, gaps)
    if ids:  # said, as a choice fpt made: the column is not read, only written back
        notes.append(f"{where}: column {ids[0]!r}, the first, was not a feature when the model was trained and holds a "
                     "different id on every row (as pandas' to_csv writes a named index): read as the rows' id, written "
                     "beside the predictions and not predicted from; if it is not an id, drop it")
        warnings.warn(notes[-1], RowIdColumn, stacklevel=2)
        dropped = [*ids, *dropped]
    if given and len(given) != len(targets):
        absent = [t for t in targets if t not in given]
        raise SchemaError(f"{where}: target column(s) {', '.join(map(repr, given))} but not {', '.join(map(repr, absent))}; "
                          "give every target column (to score the predictions) or none")
    if series_id:  # a long-format table: its rows grouped into series, a prediction per id
        from fpt.data.tables import long_series

        for t in given:
            check_target_values(cols[t], t, where)
        x, y, ids = long_series(cols, tuple(series_id), features, given, where, SchemaError)
        if y is not None:
            check_labels(y, schema, where)
        return Inputs(check_series(x, schema, where, allow_unseen), y, where, [str(i) for i in ids], notes,
                      names_as=series_id[0])
    x = from_columns(cols, schema, where, allow_unseen, gaps=gaps)
    y = None
    if given:
        for t in targets:
            check_target_values(cols[t], t, where, missing=known_missing(cols[t], t, gaps))
        # dates as the class labels training made of them (fpt.data.dates.as_labels); other values as they are
        y = np.stack([as_labels(cols[t]) if held_dates(cols[t]) is not None
                      else _as_codes(cols[t].astype(object), schema.prep.classes, j) for j, t in enumerate(targets)],
                     axis=1)
        check_labels(y, schema, where)
    # a row index first, as its writer placed it (pandas reads the predictions back with read_csv(..., index_col=0))
    carried = [c for c in (ROW_INDEX, *dropped) if c in cols]
    written = {c: as_written(cols[c], known_missing(cols[c], c, gaps)) for c in carried}
    return Inputs(x, y, where, notes=notes, carried=written)


def _as_codes(col: np.ndarray, classes: list[list[Any]] | None, j: int) -> np.ndarray:
    """Target ``j``'s labels as the model's classes are written where those are codes ('007', '100': read as
    written at training, fpt.data.codes): a file whose labels hold no leading zero reads them as numbers (100), each
    now its text ('100'), so the saved reading wins; 7 becomes '7', which no code '007' is (refused, not matched).
    Classes that are numbers (7, 10, 100: a model trained before fpt.data.codes read '007' as 7) read a file's codes
    as numbers, as the model was trained."""
    if classes is None:
        return col
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in classes[j]) and written_as_codes(col):
        return codes_as_numbers(col).astype(object)
    if written_as_codes(np.asarray(classes[j], dtype=object)) is None:
        return col
    return np.array([str(plain_value(v)) if isinstance(v, int | float | np.integer | np.floating)
                     and not isinstance(v, bool) and not m else v
                     for v, m in zip(col, is_missing(col), strict=True)], dtype=object)


def _row_ids(values: np.ndarray, name: str, gaps: Gaps | None) -> bool:
    """Whether a column is a row id, as a named index written by pandas' to_csv is: whole numbers or text (a
    measurement's real values are never an id), none missing, a different one on every row."""
    if values.dtype.kind == "f" and not (np.isfinite(values).all() and (values == np.round(values)).all()):
        return False
    if values.dtype.kind not in "iufOU" or _missing(values, name, gaps).any():
        return False
    if values.dtype.kind == "O" and not all(isinstance(v, str | int | np.integer) for v in values):
        return False
    return len(set(values.tolist())) == len(values)


def _scored(cols: Mapping[str, Any], targets: list[str], where: str,
            gaps: Gaps | None = None) -> tuple[list[str], list[str]]:
    """(the target columns given with values, to score; notes). A target column with no value on any row (the training
    file's layout with its answers left blank, a template to fill in) holds nothing to score: the rows are predicted as
    if it were absent, with a note (it was an error naming --target, which fpt predict does not take); one with values
    on some rows only is still an error naming the rows (check_target_values)."""
    given = [t for t in targets if t in cols]
    blank = [t for t in given if len(cols[t]) and _missing(cols[t], t, gaps).all()]
    notes = [f"{where}: target column {t!r} is empty on every row: predicted without scoring" for t in blank]
    return [t for t in given if t not in blank], notes


def _missing(values: Any, name: str, gaps: Gaps | None) -> np.ndarray:
    """The missing cells of column ``name``: the reader's mask where it kept one for this array, else computed."""
    values = values if isinstance(values, np.ndarray) else np.asarray(values)
    kept = known_missing(values, name, gaps)
    return is_missing(values) if kept is None else kept


def channel_columns(columns: Mapping[str, Any], schema: Schema, channels: list[str], where: str,
                    allow_unseen: bool = False) -> Inputs:
    """Columns of series cells (a nested DataFrame's, a datasets ``List`` column's, a dict's) for a model trained on
    such columns: its channels read by name (``CHANNEL_NAMES``), and its target columns beside them, where given, as
    the labels to score (they were 'channels x, label, but the model was trained on x')."""
    unique_names(columns, where, SchemaError, "one key per column")
    cols = {str(k): v for k, v in columns.items() if str(k) != SPLIT_COLUMN}
    given, notes = _scored(cols, schema.targets, where)
    names = [c for c in cols if c not in given and c not in schema.targets]
    if sorted(names) != sorted(channels):
        raise SchemaError(f"{where}: channels (columns) {shown(names)}, but the model was trained on {shown(channels)}"
                          f"; give the same channels, by the same names (and the target {', '.join(schema.targets)} "
                          "beside them to score)")
    if given and len(given) != len(schema.targets):
        raise SchemaError(f"{where}: target column(s) {', '.join(map(repr, given))} but not the others of "
                          f"{', '.join(schema.targets)}; give every target column (to score) or none")
    series = series_of_cells(zip(*(cols[c] for c in channels), strict=True), list(channels), where, SchemaError)
    y = None
    if given:
        for t in schema.targets:
            check_target_values(np.asarray(cols[t]), t, where)
        y = np.stack([np.asarray(cols[t]).astype(object) for t in schema.targets], axis=1)
        check_labels(y, schema, where)
    return Inputs(check_arrays(series, schema, where, allow_unseen), y, where, notes=notes)


def check_labels(y: np.ndarray, schema: Schema, where: str) -> None:
    """Classification targets must be among the model's classes; regression targets must be numbers. Each target
    is checked as a whole column (its distinct labels, one cast to numbers); the first offending row, for the error,
    is looked for only once that check has failed."""
    classes = schema.prep.classes
    for j, target in enumerate(schema.targets):
        col = y[:, j]
        if classes is None:
            if not _all_floats(col):
                for i, v in enumerate(col):
                    try:
                        float(v)
                    except (TypeError, ValueError):
                        raise SchemaError(f"{where}: {target_word(target, i)}: {v!r} is not a number, but the "
                                          "model predicts numbers; fix it, or drop the target column to predict "
                                          "without scoring") from None
            continue
        known = set(classes[j])
        if _all_known(col, known):
            continue
        for i, v in enumerate(col):
            if plain_value(v) not in known and schema.modality == "image" and where.endswith("<class>/"):
                # the label is a class folder's name
                raise SchemaError(f"{where}: class folder {v!r} is not one of the model's classes "
                                  f"({shown([repr(c) for c in classes[j]], 10)}); rename it to one of them, or give "
                                  "the images in one folder (DIR/*.png) to predict without scoring")
            if plain_value(v) not in known:
                raise SchemaError(f"{where}: {target_word(target, i)}: label {v!r} is not one of the model's "
                                  f"classes ({shown([repr(c) for c in classes[j]], 10)}); fix it, or drop the target "
                                  "column to predict without scoring")


def _all_floats(col: np.ndarray) -> bool:
    """Whether ``float`` reads every value of ``col``, in one cast (False: some value may not read; ``check_labels``
    then reads them one by one)."""
    return col.dtype.kind in "iubf" or as_floats(col) is not None


def _all_known(col: np.ndarray, known: set[Any]) -> bool:
    """Whether every label of ``col`` (as ``plain_value`` gives it) is in ``known``, tested once per distinct label:
    equal labels hash alike and ``plain_value`` keeps a value's equality (1.0 is 1), so one stands for all (False:
    some label may not be known, or one cannot be hashed; ``check_labels`` then reads them one by one)."""
    try:
        distinct = set(col.tolist() if col.dtype.kind != "O" else col)
    except TypeError:  # an unhashable label (a list)
        return False
    return all(plain_value(v) in known for v in distinct)


__all__ = ["CutInputWarning", "DatesBeyondWarning", "Inputs", "RowIdColumn", "Schema", "as_inputs", "channel_columns",
           "check_arrays", "check_columns", "check_images", "check_labels", "check_series", "checks", "load_npz",
           "read_inputs"]
