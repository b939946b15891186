"""scikit-learn estimators: ``FPTClassifier`` and ``FPTRegressor``.

    from fpt.sklearn import FPTClassifier
    clf = FPTClassifier(steps=300).fit(X_train, y_train)
    clf.predict(X_test), clf.predict_proba(X_test), clf.score(X_test, y_test)

They follow scikit-learn's estimator API (``get_params``/``set_params``, ``clone``, pipelines,
``cross_val_score``, grid search) and train through fpt's own path, as ``fpt train --data
table.npz`` does: the arrays become the same ``data`` task (``fpt.data.arrays.from_arrays``: by
default one token per feature, standardised on train, with a missing-value indicator, so NaN is
accepted), a seeded hold-out of the given training data (``val_fraction``, stratified for
classification) is the validation set, and ``fpt.fit`` trains with validation-based selection
and early stopping; the model keeps the validation-selected parameters. There is no test split:
score on your own held-out data (the training set is what ``summary_`` reports as ``test``).

Fitted attributes: ``classes_`` (classifier), ``n_features_in_`` (and ``feature_names_in_`` for
DataFrames), ``experiment_`` (the trained ``fpt.Experiment``: model, config, tokenised data),
``preprocessing_`` (tokeniser, class map, target scaler, as a run's ``data.json``), ``summary_``
(``fpt.fit``'s summary: ``val_accuracy`` or ``val_r2``, ``selected_step``, ``stopped``, ...), ``fit_choice_``
(how the fit was chosen, as a run's selection.json records it; None where ``fitting`` or a gradient-only argument
fixed it).

How the model is fitted (``fitting``) is decided as ``fpt train --data`` decides it (``fpt.settings.train_fit``):
given, it is used; left None, the fit is chosen (fit=auto, ``fpt.select.choose_fit``: the closed-form fit against
gradient training by k-fold cross-validation on the data given) unless an argument only gradient training reads is
given (``steps``, ``lr``, ``batch_size``, ``freeze``, ...: ``fpt.settings.GRADIENT_FIELDS``).
"""

from __future__ import annotations

import dataclasses
import io
import numbers
import warnings
from contextlib import nullcontext
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

try:
    from sklearn.utils.validation import validate_data
except ImportError as exc:  # scikit-learn < 1.6: no validate_data, no __sklearn_tags__
    raise ImportError("fpt.sklearn needs scikit-learn >= 1.6 (validate_data, estimator tags); "
                      "pip install -U 'scikit-learn>=1.6'") from exc

from fpt.config import DATA_FIELDS, FITS, RunConfig, from_dict
from fpt.data import modalities
from fpt.data.arrays import (
    CHANNEL_NAMES,
    frame_channels,
    from_arrays,
    in_trained_order,
    is_multiindex_frame,
    modality_of,
    refuse_missing_series,
    series_cells,
    series_frame,
    series_list,
)
from fpt.data.base import (
    SEEDED,
    ColumnNote,
    beyond_int64,
    finish_splits,
    is_missing,
    lazy_frame,
    one_kind_of_label,
    plain_value,
    refuse_infinite_targets,
    refuse_missing_targets,
    shown,
    unique_names,
)
from fpt.data.categories import as_category_names
from fpt.data.cells import refuse_infinite_cells
from fpt.data.host import inputs_array, targets_array
from fpt.data.hub import dataset_columns, is_datasets, streamed
from fpt.data.images import in_layout
from fpt.data.inputs import Schema, check_arrays
from fpt.data.layouts import TEXT, one_text_each, series_layout
from fpt.data.tables import columns_to_raw, unseen_categories
from fpt.data.tokenisers import check_finite
from fpt.ensemble import member_seeds
from fpt.errors import (
    FRAME_CELLS,
    ITEM_CELLS,
    SERIES_CELLS,
    ConfigError,
    DataError,
    FptWarning,
    Wording,
    caller_examples,
    cell_word,
    column_word,
    frame_rows,
    is_pandas_series,
    items_cells,
    wording,
)
from fpt.feature_map import scores_only
from fpt.inference import batched_outputs
from fpt.pipeline import Experiment, assemble
from fpt.predictor import combine
from fpt.settings import train_config
from fpt.tasks.user_data import OPTION_FIELDS, DataOptions, Preprocessing, task_from_raw, training_notes
from fpt.train import fit as fpt_fit

MIN_SAMPLES = 3  # two to train on and one held out for validation
# The estimator's own arguments that are RunConfig fields of the same name (the rest are set from the data).
_CONFIG_ARGS = ("body", "init", "freeze", "layers", "steps", "lr", "batch_size", "eval_every", "patience", "seed",
                "device", "series_patch", "series_stride", "series_norm", "ensemble")
# RunConfig fields ``options`` may not set: the estimator decides them (the task, its data and its split).
# cf_difference is a data field because the series tokeniser reads it; it is the closed-form fit's, so options sets it.
_NOT_OPTIONS = {"task", "task_options", "data_dir", "download", "fit", *DATA_FIELDS, *_CONFIG_ARGS} - {"cf_difference"}
AUTO = "auto"  # fitting: the fit chosen by cross-validation (fpt.select.choose_fit)
# What a fitted estimator holds of torch's (the model on its device), pickled by torch (``__getstate__``) under this key
_TORCH_STATE = ("experiment_", "members_")
_TORCH_BLOB = "_fitted_torch_state"


# handle_unknown: scikit-learn's OneHotEncoder's words. Default warn, not OneHotEncoder's error: in cross-validation a
# fold's held-out rows often hold a rare category its training rows lack, and error would make every such fold's
# score NaN (cross_val_score's error_score) for a value the model has a slot for; warn reads it there, as the
# command line's --allow-unseen does, and says which columns and how many, so that it is never silent.
HANDLE_UNKNOWN = ("warn", "ignore", "error")


class UnseenCategoryWarning(FptWarning):
    """predict's X held categories fit never saw, read as the shared unknown slot (``handle_unknown='warn'``)."""


def _unseen_note(where: str, unseen: dict[str, tuple[int, list[str]]], rows: int) -> str:
    said = "; ".join(f"{name}: {n} of {rows} rows ({', '.join(map(repr, first[:3]))}"
                     f"{', ...' if len(first) > 3 else ''})" for name, (n, first) in unseen.items())
    return (f"{where}: categories fit never saw, each read as the shared unknown slot: {said}; "
            "handle_unknown='error' refuses them, 'ignore' reads them without this warning")


class NoProbabilities(ConfigError, AttributeError):
    """``predict_proba`` of a model whose head gives class scores, not probabilities (an AttributeError too, so that
    ``hasattr(clf, "predict_proba")`` is False, as scikit-learn's RidgeClassifier has none)."""


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _labels_of_classes_kind(y: Any, classes: np.ndarray, where: str) -> None:
    """Refuse labels to score that are text where the classes are numbers, or the other way: accuracy_score raised
    'ValueError: Mix of label input types (string and number)', naming neither y nor a fix, where a Predictor's
    score names the label."""
    values = np.asarray(y, dtype=object).reshape(-1)
    numbers = classes.dtype.kind in "iufb"
    odd = next((i for i, v in enumerate(values) if isinstance(v, str | np.str_) == numbers and not is_missing(
        np.array([v], dtype=object))[0]), None)
    if odd is None:
        return
    at = f"y.iloc[{odd}]" if hasattr(y, "iloc") else f"y[{odd}]"
    kind, fix = ("text", f"y.astype({'bool' if classes.dtype.kind == 'b' else 'int'})") if numbers else \
        ("a number", "y.astype(str)")
    raise DataError(f"{where}: {at} is {_plain(values[odd])!r}, {kind}, but the model's classes are "
                    f"{'numbers' if numbers else 'text'} ({', '.join(repr(_plain(c)) for c in classes[:5])}); give the "
                    f"labels as fit's: {fix}")


def _labels_as_numbers(y: Any, where: str) -> Any:
    """An object y of numbers alone (a mixed CSV column's labels, a pandas object Series) as those numbers: scikit-learn
    refuses it with 'Unknown label type: unknown', naming neither y nor a fix, where the same values in a typed array
    are classes (fpt.build reads both alike). Object labels scikit-learn still cannot type are refused in one line."""
    import pandas as pd
    from sklearn.utils.multiclass import type_of_target

    if getattr(getattr(y, "dtype", None), "kind", None) != "O" or np.ndim(y) != 1:
        return y
    typed = pd.Series(np.asarray(y), dtype=object).infer_objects()
    if typed.dtype.kind in "iufb":
        return pd.Series(typed.to_numpy(), index=y.index, name=y.name) if isinstance(y, pd.Series) else typed.to_numpy()
    if is_missing(np.asarray(y, dtype=object)).any() or type_of_target(y) != "unknown":
        return y  # missing labels are named by _targets_present
    one_kind_of_label(y, where)  # text beside numbers: named by its first example
    kinds = sorted({type(_plain(v)).__name__ for v in np.asarray(y, dtype=object)})
    raise DataError(f"{where} holds labels of types {', '.join(kinds)}, which are no classes scikit-learn can order; "
                    "give the labels one type: y.astype(str) for text labels, or y.astype(int) for numbers")


def _targets_present(y: Any, where: str, classify: bool) -> None:
    """Targets with none missing, as fpt.build(data=(X, y)) reads them (None, NaN, pandas' NA or NaT, empty text), and
    class labels of one kind, text or numbers. scikit-learn's checks let None and pd.NA labels through, to a TypeError
    in sorting them ('<' not supported between 'NoneType' and 'str'; 'boolean value of NA is ambiguous'); they name
    no example for labels that mix 1 and "1" ('Unknown label type: unknown'), a nullable Int64 target with pd.NA
    ('Input y contains NaN') or an infinite target ('Input y contains infinity')."""
    values = np.asarray(y, dtype=object)
    if values.ndim != 1:
        return  # scikit-learn's validate_data names a y of another shape
    what = "a class label" if classify else "a regression target"
    refuse_missing_targets(values, where, what)
    numbers = np.asarray(y)
    if not classify and numbers.dtype.kind in "OUS":  # text or objects scikit-learn reads as numbers ('inf' too)
        try:
            numbers = numbers.astype(np.float64)
        except (ValueError, TypeError):
            pass  # left to scikit-learn's conversion, which names it
    # check_array's 'Input y contains infinity' named none
    refuse_infinite_targets(numbers, where, what)
    if classify:
        one_kind_of_label(values, where)


def _own_names(X: Any, where: str) -> None:
    """A DataFrame's columns each of its own name, as fpt.build refuses two of one: scikit-learn's validate_data
    raised narwhals' 'DuplicateError: Expected unique column names', a traceback naming no fix."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        unique_names(list(X.columns), where, DataError, "X.columns = [...]")


def _no_wide_ids(X: Any, where: str) -> None:
    """Refuse whole numbers of 2**63 or more (uint64 hashes, long ids) in X: scikit-learn's validate_data made them
    float64, whose steps there are 2,048 and more, so distinct ids merged into one value without a word (fpt.build
    reads a DataFrame's as categories, and refuses an array's)."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        for name in X.columns:
            values = np.asarray(X[name])
            if values.dtype.kind in "uO" and beyond_int64(values):
                wide = next(int(v) for v in values if isinstance(v, int | np.integer) and abs(int(v)) >= 2**63)
                raise DataError(f"{where}: column {name!r} holds {wide}, a whole number of 2**63 or more, which float64 "
                                "cannot tell from its neighbours (an id or a hash, not a quantity); leave the column "
                                f"out, or give it as text to read it as categories (X[{name!r}] = X[{name!r}].astype(str))")
    elif isinstance(X, np.ndarray) and X.dtype.kind == "u" and beyond_int64(X):
        at = tuple(int(i) for i in np.argwhere(X >= np.uint64(2**63))[0])
        raise DataError(f"{where}: X[{', '.join(map(str, at))}] is {int(X[at])}, a whole number of 2**63 or more, which "
                        "float64 cannot tell from its neighbours (an id or a hash, not a quantity); leave that column "
                        "out, or give a DataFrame with it as text to read it as categories")


def _dataset_frame(X: Any, where: str) -> Any:
    """A ``datasets.Dataset`` X as the DataFrame of its columns, read by its features as fpt.build(data=Dataset) and a
    Predictor read one (a ClassLabel's names): scikit-learn's conversion made it an array of row dicts, 'TypeError:
    float() argument must be a string or a real number, not 'dict''. A DatasetDict or a stream is refused naming
    the fix; anything else is returned as it is."""
    streamed(X, where)
    if not is_datasets(X):
        return X
    import pandas as pd

    columns, image = dataset_columns(X, where)
    if image is not None:
        raise DataError(f"{where}: a Dataset of images (its Image column {image!r}); give them as one array: "
                        f"np.stack([np.asarray(im) for im in X[{image!r}]])")
    return pd.DataFrame(columns)


def _fit_columns(X: Any, names: Any, where: str) -> str | None:
    """Why a DataFrame's columns are not fit's, in fit's order, in one line naming the fix (None when they are).
    scikit-learn's validate_data refuses others in a ValueError of several lines naming neither X nor a fix ('The
    feature names should match those that were passed during fit.'), a reordering too (its estimators read columns
    by position), where fpt.load's Predictor reads columns by name and takes any order."""
    if names is None or not hasattr(X, "columns"):
        return None
    given, fitted = [str(c) for c in X.columns], [str(c) for c in names]
    if given == fitted:
        return None
    lacking, extra = [c for c in fitted if c not in given], [c for c in given if c not in fitted]
    quoted = [repr(c) for c in fitted]
    if lacking:
        said = f"X lacks fit's column(s) {shown([repr(c) for c in lacking], 6)}" + (
            f" and has column(s) fit was not given ({shown([repr(c) for c in extra], 6)})" if extra else "")
        return f"{where}: {said}; give X every column fit was given: {shown(quoted, 12)}"
    said = f"X has column(s) fit was not given ({shown([repr(c) for c in extra], 6)})" if extra else \
        f"X has fit's columns in another order ({shown([repr(c) for c in given], 6)})"
    fix = f"X[[{', '.join(quoted)}]]" if len(fitted) <= 12 else "X[est.feature_names_in_]"
    return f"{where}: {said}; give the columns fit was given, in its order: {fix}"


def _has_text_columns(X: Any) -> bool:
    """Whether ``X`` is a DataFrame (pandas', polars', a pyarrow Table) with a column that is not numbers (text,
    category, ...): then X stays an object array and each such column is categorical, as ``fpt train --data
    table.csv`` reads it."""
    types = getattr(getattr(X, "schema", None), "types", None)
    if types is not None and hasattr(X, "column_names"):  # a pyarrow Table or RecordBatch: its Arrow types
        import pyarrow as pa

        return not all(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) for t in types)
    dtypes = getattr(X, "dtypes", None)
    return hasattr(X, "columns") and dtypes is not None and any(getattr(d, "kind", "O") not in "iufb" for d in dtypes)


def _as_objects(X: Any) -> Any:
    """A DataFrame's datetime and timedelta columns as objects (dates read as dates, durations as seconds, as
    ``fpt.build`` reads them):
    beside numeric columns only, scikit-learn's check_array promotes the columns' numpy dtypes together first, which
    fails for a datetime beside a float (DTypePromotionError). Anything else as it is."""
    dtypes = getattr(X, "dtypes", None)
    if not hasattr(X, "columns") or not hasattr(X, "isetitem") or dtypes is None:
        return X
    at = [i for i, d in enumerate(dtypes) if isinstance(d, np.dtype) and d.kind in "mM"]
    if not at:
        return X
    X = X.copy(deep=False)
    for i in at:
        X.isetitem(i, X.iloc[:, i].astype(object))
    return X


def _holds_text(X: Any) -> bool:
    """Whether ``X``, a NumPy object or text array or a list of rows (not a DataFrame), holds text that is not a
    number (categories, dates written as text): as float64 (scikit-learn's conversion) it was refused ('could not
    convert string to float'), where the same values as a DataFrame's columns are read as their values say. One that
    converts is read as the numbers it converts to, as before; other objects (a dict: scikit-learn's TypeError) are
    refused as before."""
    if hasattr(X, "columns") or not isinstance(X, np.ndarray | list | tuple):
        return False
    if isinstance(X, np.ndarray) and X.dtype.kind not in "OU":
        return False
    try:
        np.asarray(X, dtype=np.float64)
    except ValueError:  # text float() does not read (a TypeError is an object that is no text: left to the checks)
        return True
    except TypeError:
        return False
    return False


def _dtype(X: Any, categorical: bool = False) -> Any:
    """validate_data's dtype: float64, or object (keep the values) for text, category or date columns: a
    DataFrame's, or an array's or a list's text (``_holds_text``)."""
    return object if categorical or _has_text_columns(X) or _holds_text(X) else np.float64


class _FPTEstimator(BaseEstimator):
    """What both estimators share: parameters -> RunConfig, arrays -> the ``data`` task -> ``fpt.fit``, inference."""

    _objective = ""  # classification | regression, set by the subclasses

    def __init__(self, body: str | None = None, init: str | None = None, freeze: str | None = None,
                 layers: int | None = None, steps: int | None = None, lr: float | None = None,
                 batch_size: int | None = None, eval_every: int | None = None, patience: int | None = None,
                 val_fraction: float | None = None, modality: str | None = None, series_patch: int | None = None,
                 series_stride: int | None = None, series_norm: str | None = None, seed: int | None = None,
                 device: str | None = None, progress: bool = False, options: dict | None = None,
                 ensemble: int | None = None, fitting: str | None = None, handle_unknown: str = "warn") -> None:
        # scikit-learn's contract: store every argument unchanged, validate in fit (clone and set_params rely on it).
        # An fpt field left None takes fpt's default (fpt.settings.resolve), never one restated here.
        self.body = body
        self.init = init
        self.freeze = freeze
        self.layers = layers
        self.steps = steps
        self.lr = lr
        self.batch_size = batch_size
        self.eval_every = eval_every
        self.patience = patience
        self.val_fraction = val_fraction
        self.modality = modality
        self.series_patch = series_patch
        self.series_stride = series_stride
        self.series_norm = series_norm
        self.seed = seed
        self.device = device
        self.progress = progress
        self.options = options
        self.ensemble = ensemble
        self.fitting = fitting
        self.handle_unknown = handle_unknown

    def set_params(self, **params: Any) -> _FPTEstimator:
        """scikit-learn's set_params, with ``options__FIELD=value`` setting one fpt config field in a copy of
        ``options`` (a grid over it: GridSearchCV(est, {'options__dropout': [0, 0.1]}), a pipeline's
        clf__options__dropout): scikit-learn's own took ``options`` for an estimator, AttributeError: 'dict' object
        (None's when unset) has no attribute 'set_params'. The caller's dict is never changed."""
        fields = {key.split("__", 1)[1]: params.pop(key) for key in list(params) if key.startswith("options__")}
        if fields:
            options = params.get("options", self.options)
            if options is not None and not isinstance(options, dict):
                raise ConfigError(f"{type(self).__name__}: options={options!r} must be a dict of fpt config fields "
                                  f"to set {', '.join(f'options__{k}' for k in fields)} in it")
            params["options"] = {**(options or {}), **fields}
        return super().set_params(**params)

    def __getstate__(self) -> dict[str, Any]:
        """The fitted experiments saved as torch saves them, each tensor with its device: a plain pickle of an estimator
        fitted on a GPU held CUDA tensors that no CPU-only machine could unpickle (``__setstate__`` maps them)."""
        state = dict(super().__getstate__())  # object's may be the estimator's own __dict__: never popped from
        fitted = {key: state.pop(key) for key in _TORCH_STATE if key in state}
        if fitted:
            buffer = io.BytesIO()
            torch.save(fitted, buffer)
            state[_TORCH_BLOB] = buffer.getvalue()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """The fitted experiments loaded onto the CPU where CUDA is not available (and their device made the CPU);
        an estimator pickled before ``__getstate__`` existed holds its experiments as they are."""
        state = dict(state)
        blob = state.pop(_TORCH_BLOB, None)
        super().__setstate__(state)
        if blob is not None:
            cuda = torch.cuda.is_available()
            self.__dict__.update(torch.load(io.BytesIO(blob), map_location=None if cuda else "cpu", weights_only=False))
            if not cuda:
                for exp in getattr(self, "members_", [self.experiment_]):
                    if exp.device.type != "cpu":
                        exp.device = torch.device("cpu")

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # A NaN feature becomes the token's missing-value indicator (tabular) or the series mean (timeseries).
        tags.input_tags.allow_nan = True
        return tags

    # --- fitting ------------------------------------------------------------------------

    def _modality(self, X: Any = None) -> str:
        """The modality of a fit: the ``modality`` argument, checked as --modality is (auto or an entry of
        fpt.data.modalities), and auto (or None) read from ``X``'s shape as an .npz's X is (fpt.data.arrays)."""
        given = modalities.requested(modalities.AUTO if self.modality is None else self.modality,
                                     type(self).__name__, "modality")
        return modality_of(X, f"{type(self).__name__}.fit: X") if given == modalities.AUTO and X is not None else given

    def _config(self, modality: str | None = None) -> RunConfig:
        """The RunConfig of a fit: the estimator's arguments, ``options``, and the data task (``modality``: the
        fit's, once its X decided it; ``_modality``)."""
        name = type(self).__name__
        modality = modality or self._modality()
        if self.val_fraction is not None and (isinstance(self.val_fraction, bool) or not isinstance(
                self.val_fraction, numbers.Real) or not 0 < self.val_fraction < 1):
            raise ConfigError(f"{name}: val_fraction={self.val_fraction!r} must be in (0, 1), e.g. 0.2")
        if self.fitting is not None and self.fitting not in FITS:
            raise ConfigError(f"{name}: fitting={self.fitting!r} is not one of {', '.join(FITS)} (closed-form: the "
                              "frozen body as a feature map and a head fitted in closed form, fpt.closed_form; auto: "
                              "the better of the two by cross-validation, fpt.select.choose_fit)")
        self._unknown()
        options = {} if self.options is None else self.options
        if not isinstance(options, dict):
            raise ConfigError(f"{name}: options={options!r} must be a dict of fpt config fields, e.g. {{'dropout': 0}}")
        taken = sorted(set(options) & _NOT_OPTIONS, key=str)
        if taken:
            raise ConfigError(f"{name}: options {taken} are set by the estimator; give the constructor argument of the "
                              "same name where there is one (steps=..., seed=...), or drop them")
        # NumPy scalars (np.int64 from a parameter grid) as plain Python values, which RunConfig's types expect. An
        # argument left None is fpt's default: the preset's (series_norm), the task's (lr, patience) or fitted to the
        # data (steps, eval_every, readout).
        fields = {
            **{arg: _plain(getattr(self, arg)) for arg in _CONFIG_ARGS if getattr(self, arg) is not None},
            **{key: _plain(value) for key, value in options.items()},
            "data": f"arrays passed to {name}.fit", "objective": self._objective, "modality": modality,
        }
        if self.fitting is not None:
            fields["fit"] = self.fitting
        if self.seed is not None:
            fields["split_seed"] = _plain(self.seed)
        if self.val_fraction is not None:
            # No test split is held out (the caller keeps its own test data); this only keeps
            # RunConfig's val_fraction + test_fraction < 1 check satisfied.
            fields.update(val_fraction=float(self.val_fraction),
                          test_fraction=min(RunConfig.test_fraction, (1 - self.val_fraction) / 2))
        try:
            config = from_dict(RunConfig, fields, where=f"{name} parameters")
        except ConfigError as exc:
            raise ConfigError(str(exc).replace("config field", "parameter")) from None
        return train_config(config, fields)  # fitting left None: chosen as fpt train --data chooses it

    def _unknown(self) -> str:
        """``handle_unknown``, checked (fit and predict read it: set_params may change it between them)."""
        # an estimator pickled before the argument existed read unseen categories as 'warn' reads them, but silently
        how = getattr(self, "handle_unknown", "ignore")
        if how not in HANDLE_UNKNOWN:
            raise ConfigError(f"{type(self).__name__}: handle_unknown={how!r} is not one of {', '.join(HANDLE_UNKNOWN)} "
                              "(as scikit-learn's OneHotEncoder takes it: error refuses a category fit never saw, warn "
                              "and ignore read it as the shared unknown slot, warn saying so)")
        return how

    def _validate_fit(self, X: Any, y: Any, y_numeric: bool = False) -> tuple[Any, np.ndarray]:
        """(X, y) checked by scikit-learn's validate_data; series of different lengths (a list, or an object array
        of (L,) or (C, L) arrays: fpt.data.arrays.series_list) stay a list, y checked alone, n_features_in_ the
        channels (as for a 3-D X); sktime's DataFrames of series (fpt.data.arrays.series_frame) are read as series."""
        lazy_frame(X, f"{type(self).__name__}.fit: X", DataError)
        X = _dataset_frame(X, f"{type(self).__name__}.fit: X")
        _own_names(X, f"{type(self).__name__}.fit: X")
        _no_wide_ids(X, f"{type(self).__name__}.fit")
        series_given = is_pandas_series(X)  # its cells named by position, X.iloc[2][1]
        # a tensor's values (detached, on the CPU), a masked array's masked values missing, a masked target refused
        X = series_cells(inputs_array(X, f"{type(self).__name__}.fit: X", DataError))
        refuse_missing_series(X, f"{type(self).__name__}.fit", "X.iloc" if series_given else "X")
        y = targets_array(y, f"{type(self).__name__}.fit: y", DataError)
        if self._objective == "classification":
            y = _labels_as_numbers(y, f"{type(self).__name__}.fit: y")
        _targets_present(y, f"{type(self).__name__}.fit: y", self._objective == "classification")
        texts = one_text_each(X, self.modality == "sequence") if self.modality in (None, modalities.AUTO, "sequence") else None
        if texts is not None:  # symbol sequences, one text per example, read as a table's one text column is
            # its texts named as the caller indexes them (fit said 'column 'text', row 2', a file's words, of X[1])
            self._text_cells = FRAME_CELLS if texts[1] is not None else items_cells(X)
            return self._one_column(texts, y, y_numeric)
        # a multi-index X is series when y has one target per series, a table when one per row
        frame = series_frame(X, f"{type(self).__name__}.fit: X", len(np.asarray(y)) if is_multiindex_frame(X) else None,
                             "X.iloc")
        # a DataFrame of series: its columns are the channels, which predict then reads by name (in_trained_order)
        self._channels = frame_channels(X) if frame is not None else None
        X = frame if frame is not None else X
        series = series_list(X)
        if series is None:
            given = _as_objects(as_category_names(X))
            # infinities are refused by fpt, naming the cell (check_array's refusal named none)
            X, y = validate_data(self, given, y, dtype=_dtype(X), ensure_all_finite=False, y_numeric=y_numeric,
                                 allow_nd=True)
            refuse_infinite_cells(X, given, f"{type(self).__name__}.fit", series_given)
            return X, y
        from sklearn.utils import check_consistent_length

        y = self._one_target_each(y, y_numeric, "series")
        check_consistent_length(series, y)
        self.n_features_in_ = int(series[0].shape[0])
        if hasattr(self, "feature_names_in_"):  # from an earlier fit on a DataFrame
            del self.feature_names_in_
        return series, y

    def _one_column(self, texts: tuple[np.ndarray, str | None], y: Any, y_numeric: bool) -> tuple[Any, np.ndarray]:
        """(texts, y) of symbol sequences checked as ``_validate_fit`` checks series: y alone, one feature (the
        column's name in ``feature_names_in_`` for a DataFrame's)."""
        from sklearn.utils import check_consistent_length

        values, name = texts
        y = self._one_target_each(y, y_numeric, "text")
        check_consistent_length(values, y)
        self.n_features_in_ = 1
        if name is not None:
            self.feature_names_in_ = np.array([name], dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return values, y

    def _one_target_each(self, y: Any, y_numeric: bool, per: str) -> np.ndarray:
        """y checked alone (series or texts, which validate_data cannot check beside X): a column vector (n, 1), as
        df[['label']] gives, is read as its one column with scikit-learn's DataConversionWarning, as validate_data
        reads it beside a table (it was refused for series and texts alone); another shape is refused."""
        from sklearn.utils import check_array, column_or_1d

        y = check_array(y, ensure_2d=False, dtype="numeric" if y_numeric else None, input_name="y")
        if y.ndim == 2 and y.shape[1] == 1:
            return column_or_1d(y, warn=True)
        if y.ndim != 1:
            raise DataError(f"{type(self).__name__}.fit: y has shape {y.shape}; give one target per {per}")
        return y

    def _check_samples(self, n: int) -> None:
        if n < MIN_SAMPLES:
            raise DataError(f"{type(self).__name__}.fit got {n} sample{'' if n == 1 else 's'}; it needs at least "
                            f"{MIN_SAMPLES} (some to train on and some held out for validation)")

    def _fit_arrays(self, X: np.ndarray, y: np.ndarray) -> None:
        """Build the ``data`` task of (X, y) with a seeded validation hold-out, train it with ``fpt.fit``."""
        name = type(self).__name__
        texts = not isinstance(X, list) and X.ndim == 1 and X.dtype == object
        if not texts and not isinstance(X, list) and X.ndim not in (2, 3, 4):
            raise DataError(f"{name}.fit: X has shape {X.shape}; give (n, features) rows, (n, channels, length) series "
                            "or (n, H, W[, C]) images")
        # auto: aeon's 3-D arrays and lists of series of different lengths are series, 4-D arrays images
        modality = "sequence" if texts else self._modality(X)
        config = self._config(modality)
        classify = self._objective == "classification"
        # what fpt's errors name, down to the model's build (a table wider than the body's positions): y and this
        # estimator's arguments, not fpt train's options (--target, --drop-columns, ...)
        with wording(self._wording(modality)):
            if texts:  # a table of one text column, which the sequence modality reads as symbol sequences
                column = self.feature_names_in_[0] if hasattr(self, "feature_names_in_") else 0
                with frame_rows("X", {TEXT: column}, getattr(self, "_text_cells", ITEM_CELLS)):
                    raw = columns_to_raw({"train": ({TEXT: X, "y": y}, f"{name}.fit")}, "y", modality,
                                         f"texts passed to {name}.fit", SEEDED)
            else:
                # a DataFrame of series' rows are X.iloc[3] to its caller, not the array's X[3]
                with caller_examples("X.iloc") if getattr(self, "_channels", None) else nullcontext():
                    raw = from_arrays({"X": X, "y": y}, modality, config.image_channels, config.image_size,
                                      f"{name}.fit", f"arrays passed to {name}.fit")
            if getattr(self, "_channels", None) and raw.modality == "timeseries":
                raw.notes[CHANNEL_NAMES] = self._channels
            config = self._choose(config, raw)
            read, raw = raw, finish_splits(raw, config.val_fraction, None, config.split_seed, stratify=classify)
            options = DataOptions(**{field: getattr(config, field) for field in OPTION_FIELDS})
            # said as fpt train says them (an id-like column, numbers written '$1,234', dates written several ways, a
            # column of no value, ...: only the last was said); fitting=auto's candidates have said them already,
            # reading the data through fpt.build
            if read.modality == "tabular" and "features" not in read.notes:  # X's columns, x0, x1, ...: every one
                read = dataclasses.replace(read, notes={**read.notes, "features": list(read.splits["train"].x)})
            for note in training_notes(read, raw, options) if self.fit_choice_ is None else []:
                warnings.warn(note, ColumnNote, stacklevel=3)
            # ensemble=N: N members, seeds seed.., on the one split (split_seed is the estimator's seed)
            members = [dataclasses.replace(config, seed=s, ensemble=1) for s in member_seeds(config.seed,
                                                                                               config.ensemble)]
            datas = [task_from_raw(raw, options, m.seed, self._objective, f"set by {name}") for m in members]
            exps, summaries = [], []
            for member, data in zip(members, datas, strict=True):
                # what the arguments leave None resolved for this data, as fpt train --data resolves it
                exp = assemble(member, data)
                # fpt.fit seeds torch's global generator (dropout); fork it so fitting leaves the caller's RNG as is.
                devices = [exp.device.index or 0] if exp.device.type == "cuda" else []
                with torch.random.fork_rng(devices=devices):
                    summaries.append(fpt_fit(exp, progress=bool(self.progress)))
                exps.append(exp)
        self.experiment_: Experiment = exps[0]
        self.members_: list[Experiment] = exps  # one experiment unless ensemble > 1
        self.preprocessing_ = Preprocessing.from_json(exps[0].data.fitted)
        self.summary_: dict[str, Any] = summaries[0] if len(exps) == 1 else {"members": summaries}

    def _wording(self, modality: str | None = None) -> Wording:
        """How errors name what this estimator's caller controls (fpt.errors.option): the target is ``y``, the other
        objective the other estimator, any other setting the argument of its name (modality='image'); and what to do
        instead of a data setting the estimator does not take (``_NOT_OPTIONS``: no drop_columns, no patch_size)."""
        tokens = (RunConfig.image_size // RunConfig.patch_size) ** 2
        images = (f"{type(self).__name__} reads every image at {RunConfig.image_size}x{RunConfig.image_size} pixels in "
                  f"{RunConfig.patch_size}x{RunConfig.patch_size} patches ({tokens} tokens), which it does not let you "
                  "change")
        columns = self._column_words(modality)
        return Wording(flags=False, columns=columns,
                       names={"target": "y", "objective=classification": "FPTClassifier",
                              "objective=regression": "FPTRegressor", **self._drop_words(columns),
                              # RunConfig.fit is the estimator's ``fitting`` (``fit`` is scikit-learn's method)
                              "fit": "fitting", **{f"fit={how}": f"fitting={how!r}" for how in FITS},
                              # data settings an estimator does not take, in a training note's fix
                              "series_id=*": "X of one example per series, (n, channels, length)",
                              "sequence_tokens=words": "fpt.build(data=(X, y), sequence_tokens='words') (an "
                                                       "estimator reads characters here)"},
                       instead={"drop_columns": "leave columns out of X", "patch_size": images, "image_size": images,
                                "allow_unseen": "or set handle_unknown='warn' (or 'ignore') to read categories fit never "
                                                "saw as the shared unknown slot",
                                "unseen_symbols": "or set handle_unknown='warn' (or 'ignore') to read them as the unknown "
                                                  "symbol"})

    def _drop_words(self, columns: dict[str, str | int]) -> dict[str, str]:
        """How this estimator's caller leaves a column out of X (fpt's drop_columns, which it does not take): a
        DataFrame's X.drop(columns=...), an array's selection of the columns to keep (an array has no drop: the fix
        said X.drop(columns=...) of arrays too); of one column (``drop_columns=x1``, fit's name for it), that column
        as the caller names it, not x1."""
        frame = getattr(self, "feature_names_in_", None) is not None
        one = {f"drop_columns={name}": f"X.drop(columns=[{own!r}])" if isinstance(own, str) else
               f"np.delete(X, {own}, axis=1)" for name, own in columns.items()}
        every = "X.drop(columns=...)" if frame else "X[:, keep] (keep: the indices of the columns to keep)"
        return {"drop_columns": every, **one}

    def _column_words(self, modality: str | None = None) -> dict[str, str | int]:
        """fit names a table's columns x0, x1, ... (fpt.data.arrays), which the caller never wrote: an error names the
        column as the caller gave it, a DataFrame's by its name, an array's by its index (fpt.errors.column_word).
        ``modality``: fit's, before the model is fitted (fit's errors said 'column 1' of the DataFrame's 'dur')."""
        prep = getattr(self, "preprocessing_", None)
        if (modality if prep is None else prep.modality) != "tabular":
            return {}
        names = getattr(self, "feature_names_in_", None)
        return {f"x{j}": j if names is None else str(names[j]) for j in range(self.n_features_in_)}

    def _texts_of(self, X: Any) -> np.ndarray:
        """predict's texts: a list, array or Series of them, a column (n, 1), or a DataFrame of the column fit read."""
        where = f"{type(self).__name__}.predict: X"
        names = getattr(self, "feature_names_in_", None)
        if hasattr(X, "columns") and names is not None and [str(c) for c in X.columns] != list(names):
            raise DataError(f"{where}: columns {[str(c) for c in X.columns][:5]}; the model was fitted on the one text "
                            f"column {names[0]!r}: give X[[{names[0]!r}]]")
        texts = one_text_each(X, True)
        if texts is None:
            raise DataError(f"{where}: the model was fitted on texts, one per example; give a list (or array, or "
                            f"pandas Series) of str, not {type(X).__name__} {np.shape(X) if hasattr(X, 'shape') else ''}"
                            .rstrip())
        return texts[0]

    def _choose(self, config: RunConfig, raw: Any) -> RunConfig:
        """fit=auto: the fits compared on ``raw`` (fpt.select.choose_fit; the record in ``fit_choice_``) and the
        winner's config; any other fit: ``config`` as it is (``fit_choice_`` None)."""
        self.fit_choice_: dict[str, Any] | None = None
        if config.fit != AUTO:
            return config
        from fpt.data.memory import held
        from fpt.select import choose_fit

        with held(config.data, raw):  # its candidates and folds read the arrays by the name the config records
            auto = choose_fit(config, progress=print if self.progress else None)
        self.fit_choice_ = auto.to_json()
        return auto.config

    # --- inference ----------------------------------------------------------------------

    def _outputs(self, X: Any) -> torch.Tensor:
        """The model's outputs for raw X on the CPU: logits (N, C) for classification, (N, 1) standardised values."""
        check_is_fitted(self)
        lazy_frame(X, f"{type(self).__name__}.predict: X", DataError)
        X = _dataset_frame(X, f"{type(self).__name__}.predict: X")
        _own_names(X, f"{type(self).__name__}.predict: X")
        _no_wide_ids(X, f"{type(self).__name__}.predict")
        items = items_cells(X)  # a Series' examples by position, X.iloc[2]: its index may be a filter's (5, 9, 12)
        X = series_cells(inputs_array(X, f"{type(self).__name__}.predict: X", DataError))
        refuse_missing_series(X, f"{type(self).__name__}.predict", "X.iloc" if items == SERIES_CELLS else "X")
        prep, exp = self.preprocessing_, self.experiment_
        # text, category or date columns (a tabular tokeniser's features; other tokenisers have none) keep their values
        # (and durations written as text: fpt.data.durations)
        categorical = any(f["kind"] != "numeric" or "duration" in f for f in getattr(prep.tokeniser, "features", []))
        # a list of examples of several lengths, for a modality whose arrays may hold them (fpt.data.modalities)
        held = modalities.modality(prep.modality).arrays
        if prep.modality == "timeseries":  # a DataFrame of series: its channels by the names fit read
            X = in_trained_order(X, exp.data.info.get(CHANNEL_NAMES), f"{type(self).__name__}.predict: X")
        frame = series_frame(X, f"{type(self).__name__}.predict: X", indexed="X.iloc") if prep.modality == "timeseries" else None
        X = frame if frame is not None else X
        if prep.modality == "timeseries" and frame is None:
            X = series_layout(X, self.n_features_in_)
        caller_shape = None  # images given in another layout than fit's: scikit-learn's n_features_in_ is X.shape[1]
        if prep.modality == "image" and isinstance(X, np.ndarray) and "X_shape" in exp.data.info:
            laid = in_layout(X, exp.data.info["X_shape"][1:])
            caller_shape, X = (X.shape[1:], laid) if laid is not X else (None, X)
        series = series_list(X) if held is not None and held.ragged else None
        if prep.modality == "timeseries" and isinstance(X, np.ndarray) and X.ndim == 3 and \
                X.shape[1] != self.n_features_in_:  # other channels: the modality's refusal, not n_features_in_'s
            series = list(X)
        if prep.modality == "sequence":  # one text per example, as fit read them
            series = self._texts_of(X)
        if series is None:
            unlike = _fit_columns(X, getattr(self, "feature_names_in_", None), f"{type(self).__name__}.predict") \
                if prep.modality == "tabular" else None
            given = _as_objects(as_category_names(X))
            try:
                X = validate_data(self, given, reset=False, dtype=_dtype(X, categorical), ensure_all_finite=False,
                                  allow_nd=True)
            except ValueError as exc:
                if unlike is None:
                    raise
                # fpt's line first; scikit-learn's words after it, which its estimator checks look for
                raise DataError(f"{unlike}\n{exc}") from None
            refuse_infinite_cells(X, given, f"{type(self).__name__}.predict", items == SERIES_CELLS)
            if caller_shape is not None:  # back to the caller's layout: a NaN pixel is named as the caller indexes it
                X = in_layout(X, caller_shape)
        where = f"{type(self).__name__}.predict"
        # the modality's own check of new inputs (fpt.data.modalities), against the input contract fit recorded
        # (series: channels and training lengths); a category fit never saw is handle_unknown's
        schema = Schema(prep, exp.data.info, exp.config.max_categories)
        how = self._unknown()
        # the refusal names handle_unknown, not fpt predict's --allow-unseen; an image or a series X[2], not 'image 3'
        # texts: X[2] of a list, X.iloc[2]['text'] of a DataFrame (fit's one text column), not 'column 'text', row 3'
        def texts() -> Any:
            if prep.modality != "sequence":
                return nullcontext()
            if hasattr(X, "columns"):
                return frame_rows("X", {schema.features[0]: str(self.feature_names_in_[0])})
            return frame_rows("X", {schema.features[0]: 0}, items)

        with wording(self._wording()), caller_examples("X.iloc" if frame is not None or items == SERIES_CELLS
                                                       else "X"), texts():
            x = check_arrays(X if series is None else series, schema, where, allow_unseen=how != "error")
        if how == "warn" and prep.modality == "tabular" and (unseen := unseen_categories(x, schema)):
            with wording(self._wording()):  # fit named X's columns x0, x1, ...: the caller's names, or X[:, j]
                unseen = {column_word(k): v for k, v in unseen.items()}
            warnings.warn(_unseen_note(where, unseen, len(x[next(iter(x))])), UnseenCategoryWarning, stacklevel=3)
        read = next(iter(x.values())) if prep.modality == "sequence" else None
        if how == "warn" and read is not None and (unknown := prep.tokeniser.unknown_only(read)).any():
            # a text of no symbol fit saw is read as the unknown symbol alone: said, as a table's unseen category is
            first = int(np.flatnonzero(unknown)[0])
            with wording(self._wording()), texts():
                cell = cell_word(schema.features[0], first)
            warnings.warn(f"{where}: {int(unknown.sum())} of {len(unknown)} texts hold no symbol fit saw ({cell}: "
                          f"{str(read[first])[:30]!r}), read as the unknown symbol alone", UnseenCategoryWarning,
                          stacklevel=3)
        tokens, lengths = prep.tokeniser(x)
        check_finite(tokens, where)  # a value beyond float32 once standardised would be NaN probabilities
        members = getattr(self, "members_", [exp])  # an estimator pickled before ensembles had no members_
        outs = [batched_outputs(m, tokens, lengths) for m in members]  # each (N, k * m, C)
        out = outs[0] if len(outs) == 1 else combine(outs, exp.data.objective)
        return out.reshape(out.shape[0], -1)  # k = m = 1


class FPTClassifier(ClassifierMixin, _FPTEstimator):
    """A frozen pretrained transformer classifier (Lu et al., 2021) with scikit-learn's API.

    Labels may be any hashable values (strings, ints, bools); ``classes_`` holds them sorted.
    Arguments are fpt's config fields (``fpt train --help``): ``body`` (a registered name, a
    hub id or a local model directory), ``init``, ``freeze``, ``layers``, ``steps`` (the most
    optimizer steps), ``lr``, ``batch_size``, ``eval_every`` (steps between validation evaluations),
    ``patience`` (evaluations without a validation gain before stopping), ``val_fraction`` (share of the
    training data held out, stratified, for selection), ``modality`` (as ``--modality``: auto, or a modality of
    fpt.data.modalities that arrays hold; auto reads X's shape: (n, features) a table, one token per feature, (n,
    channels, length) or a list of series, (n, H, W[, C]) images; timeseries reads a 2-D X's rows as series, cut into
    ``series_patch`` windows; ``series_norm``), ``seed`` (initialisation, batches and the
    validation split), ``device``, ``progress`` (a progress bar), ``ensemble`` (N models of seeds
    seed, seed+1, ... on the one split, their probabilities averaged: ``fpt.ensemble``), ``fitting`` (the config
    field ``fit``: auto, closed-form or gradient), ``handle_unknown`` (a category of predict's X that fit never saw,
    in scikit-learn's OneHotEncoder's words: ``'warn'``, the default, reads it as the shared unknown slot and warns
    once per call naming the columns and counts, ``UnseenCategoryWarning``; ``'ignore'`` reads it without the warning;
    ``'error'`` refuses it; docs/sklearn.md says why warn), and ``options``: any other fpt config field as a dict
    (``{"dropout": 0, "eval_batch_size": 512}``). An argument left None takes the default ``fpt train --data``
    resolves for the same data (``fpt.settings.resolve``: the fast preset's, the data task's, or fitted to the
    data's size; ``fitting``: ``fpt.settings.train_fit``, see the module's docstring).
    """

    _objective = "classification"

    def fit(self, X: Any, y: Any) -> FPTClassifier:
        X, y = self._validate_fit(X, y)
        self._check_samples(len(X))
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise DataError(f"{type(self).__name__}.fit: y has one class only ({plain_value(classes[0])!r}); a "
                            "classifier needs at least two")
        # fpt learns class indices 0..C-1, which are the positions of the sorted labels in classes_.
        self._fit_arrays(X, codes.astype(np.int64))
        self.classes_ = classes
        return self

    @property
    def predict_proba(self) -> Any:
        """Class probabilities (n, len(classes_)), columns in the order of ``classes_``: the softmax of a gradient-
        trained head's logits, or the closed-form fit's logistic head (``cf_head=logistic``). The closed-form fit's
        ridge head gives class scores, not probabilities: there ``predict_proba`` is not offered (``hasattr`` is
        False; using it raises ``NoProbabilities`` naming the fix)."""
        self._check_probabilities()
        return self._predict_proba

    def _check_probabilities(self) -> None:
        if hasattr(self, "experiment_"):
            fit, head = self.experiment_.config.fit, self.experiment_.config.cf_head
            chosen = " (chosen by fitting=auto)" if getattr(self, "fit_choice_", None) else ""
            how = f"this model was fitted in closed form{chosen}"
        else:
            # unfitted, the arguments may already fix a head of scores (as SVC(probability=False) has no predict_proba
            # before fit either: scikit-learn asks hasattr before it fits); else offered, and using it is NotFittedError
            options = self.options if isinstance(self.options, dict) else {}
            fit, head = self.fitting, options.get("cf_head")
            how = "fitting='closed-form' fits in closed form"
        if scores_only(fit, head):
            raise NoProbabilities(
                f"{type(self).__name__}.predict_proba: {how} with cf_head={head or 'ridge'}, whose class scores are not "
                "probabilities; for calibrated probabilities fit it with options={'cf_head': 'logistic'} (or "
                "fitting='gradient'); predict() gives the labels as it is, decision_function() the class scores")

    def _predict_proba(self, X: Any) -> np.ndarray:
        logits = self._outputs(X).double()  # float64, so that every row sums to 1 within 1e-15
        return torch.softmax(logits, dim=-1).numpy()

    # The method the property hands out goes by the public name: scikit-learn tells a response method by __name__
    # (a binary roc_auc or average_precision scorer and CalibratedClassifierCV read the positive class's column only
    # from one named predict_proba; StackingClassifier passes the name on to cross_val_predict, which checks it).
    _predict_proba.__name__ = "predict_proba"

    def decision_function(self, X: Any) -> np.ndarray:
        """Class scores, laid out as scikit-learn's linear classifiers lay them out: for two classes (n,), the score
        of ``classes_[1]`` less that of ``classes_[0]`` (positive: ``classes_[1]`` is predicted); else (n,
        len(classes_)), the head's outputs (logits; the closed-form ridge head's scores, which have no
        ``predict_proba``, as scikit-learn's RidgeClassifier; an ensemble's log mean probabilities)."""
        check_is_fitted(self)
        scores = self._outputs(X).double().numpy()
        return scores[:, 1] - scores[:, 0] if len(self.classes_) == 2 else scores

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """ClassifierMixin's accuracy, an object y of numbers read as fit reads it (accuracy_score refused it, 'a mix
        of unknown and binary targets', so cross_val_score of a y fit took failed at scoring)."""
        y = _labels_as_numbers(y, f"{type(self).__name__}.score: y")
        _labels_of_classes_kind(y, self.classes_, f"{type(self).__name__}.score")
        return super().score(X, y, sample_weight)

    def predict(self, X: Any) -> np.ndarray:
        """The most probable label of each row (the argmax of the head's outputs)."""
        check_is_fitted(self)  # before classes_ is read: an unfitted estimator raises NotFittedError
        return self.classes_[self._predict_proba(X).argmax(axis=1)]


class FPTRegressor(RegressorMixin, _FPTEstimator):
    """A frozen pretrained transformer regressor (Lu et al., 2021) with scikit-learn's API.

    The target is standardised with the training split's mean and standard deviation for
    training (MSE loss) and predictions are inverted to its own units; validation R² selects
    the step. Arguments are those of ``FPTClassifier``.
    """

    _objective = "regression"

    def fit(self, X: Any, y: Any) -> FPTRegressor:
        X, y = self._validate_fit(X, y, y_numeric=True)
        self._check_samples(len(X))
        self._fit_arrays(X, y.astype(np.float64))
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predicted values (n,) in the target's own units."""
        out = self._outputs(X)
        return self.preprocessing_.objective.predict(out).double().numpy().ravel()


__all__ = ["HANDLE_UNKNOWN", "FPTClassifier", "FPTRegressor", "NoProbabilities", "UnseenCategoryWarning"]
