"""Task ``data``: your own dataset (``fpt train --data PATH``), read by ``fpt.data``.

Steps: read the files (``fpt.data.load``); decide the objective (``--objective``, else from the
training targets); keep the data's own splits and hold out the missing validation/test ones
(seeded, stratified for classification); encode the targets (a class map per target, or a
standardiser fitted on train for regression); fit the modality's tokeniser on train and
tokenise every split. Selection reads validation only, as for every task.

What was fitted (tokeniser, class map, target scaler) is ``TaskData.fitted``: plain JSON that
``fit`` saves as the run directory's ``data.json`` and ``Preprocessing.from_json`` reloads
without the training data.
"""

from __future__ import annotations

import dataclasses
import typing
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from fpt.config import DATA_FIELDS, DATA_TASK, RunConfig
from fpt.data.base import ColumnNote, plain_value  # labels as plain, hashable JSON values (1.0 -> 1)
from fpt.data.dates import beyond_note, date_notes
from fpt.data.durations import duration_notes
from fpt.data.readings import as_started_notes
from fpt.data.tokenisers import check_finite
from fpt.errors import ConfigError, DataError, option
from fpt.model import InputSpec
from fpt.objectives import CLASSIFICATION, Classification, Objective, Regression
from fpt.objectives import from_json as objective_from_json
from fpt.settings import DataFacts, TaskDefaults, tokenised
from fpt.tasks.base import TASKS, Batch, DataSource, TaskData, TensorSource

FITTED_FORMAT = 1


def _validate(self: Any) -> None:
    """The same checks (and messages) as the RunConfig fields these options mirror."""
    try:  # steps and eval_every are the run's, checked with it; here only train_on_val's need of them is met
        RunConfig(**{name: getattr(self, name) for name in OPTION_FIELDS}, steps=1, eval_every=1)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("config field", "data option")) from None


_HINTS = typing.get_type_hints(RunConfig)
# The RunConfig fields that describe --data, and the run's fit (the tokeniser's fields its modality declares are
# declared for a fit, e.g. a closed-form fit's series tokens hold its first difference: ``_declared``), as this
# task's options (one definition of each default and help).
OPTION_FIELDS = (*DATA_FIELDS, "fit")
DataOptions = dataclasses.make_dataclass(
    "DataOptions",
    [(f.name, _HINTS[f.name], dataclasses.field(default=f.default, metadata=f.metadata))
     for f in dataclasses.fields(RunConfig) if f.name in OPTION_FIELDS],
    frozen=True, namespace={"__post_init__": _validate, "__module__": __name__})


def classification(classes: list[list]) -> Objective:
    """The classification objective of targets with these classes: targets of different class counts mask the
    head's slots a target has no class for (``Classification.sizes``), so that the metrics score what is predicted."""
    sizes = tuple(len(c) for c in classes)
    return Classification(sizes=sizes) if len(set(sizes)) > 1 else CLASSIFICATION


def _sorted_labels(values: set) -> list:
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    return sorted(values) if numbers else sorted(values, key=str)


@dataclass
class Preprocessing:
    """Everything fitted on train that maps raw examples to tokens and outputs back to labels/values."""

    modality: str
    tokeniser: Any  # fpt.data.tokenisers.Tokeniser
    objective: Objective
    targets: list[str]
    classes: list[list] | None  # classification: per target, the label of each class index
    features: list[str]
    dropped: list[str] = dataclasses.field(default_factory=list)  # the table's columns left out (drop_columns)
    # a long-format table's id (and order) columns (series_id): new inputs are grouped into series by them
    series_id: list[str] = dataclasses.field(default_factory=list)

    def encode_targets(self, y: np.ndarray, where: str) -> torch.Tensor:
        if self.classes is None:
            mean, scale = np.array(self.objective.mean), np.array(self.objective.scale)
            return torch.from_numpy(((y.astype(np.float64) - mean) / scale).astype(np.float32))  # (N, m)
        out = np.zeros(y.shape, dtype=np.int64)
        for j, classes in enumerate(self.classes):
            out[:, j] = _class_codes(y[:, j], classes)
            if (unknown := np.flatnonzero(out[:, j] < 0)).size:
                v = y[unknown[0], j]
                raise DataError(f"{where}: label {v!r} of {self.targets[j]!r} is not one of the classes {classes[:10]}")
        return torch.from_numpy(out)  # (N, m) class indices

    def to_json(self) -> dict[str, Any]:
        return {"format": FITTED_FORMAT, "modality": self.modality, "targets": self.targets,
                "features": self.features, "classes": self.classes, "objective": self.objective.to_json(),
                "tokeniser": self.tokeniser.to_json(), **({"dropped": self.dropped} if self.dropped else {}),
                **({"series_id": self.series_id} if self.series_id else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Preprocessing:
        from fpt.data.modalities import from_json

        if not isinstance(data, dict):
            raise DataError(f"data.json holds a {type(data).__name__}, not fpt's mapping of fitted preprocessing")
        if data.get("format") != FITTED_FORMAT:
            raise DataError(f"data.json format {data.get('format')!r}; this fpt reads format {FITTED_FORMAT}")
        classes = data.get("classes")
        if classes is not None and (not isinstance(classes, list) or not all(isinstance(c, list) and c for c in classes)):
            raise DataError(f"data.json field 'classes' is {str(classes)[:40]!r}; expected a list of class lists per target")
        for name in ("targets", "features", "dropped", "series_id"):
            value = data.get(name, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise DataError(f"data.json field {name!r} is {str(value)[:40]!r}; expected a list of names")
        if len(data.get("series_id", [])) > 2 or (data.get("series_id") and data.get("modality") != "timeseries"):
            raise DataError(f"data.json field 'series_id' is {str(data['series_id'])[:40]!r}; expected the id column "
                            "and at most an order column of a time series model")
        objective = objective_from_json(data["objective"])
        if classes is not None and objective.name == "classification":
            objective = classification(classes)  # each target's class count, from its classes
        return cls(data["modality"], from_json(data["tokeniser"]), objective,
                   list(data["targets"]), classes, list(data["features"]), list(data.get("dropped", [])),
                   list(data.get("series_id", [])))


def _class_codes(col: np.ndarray, classes: list) -> np.ndarray:
    """Each label's class index (-1: none): ``plain_value(v)`` looked up among ``classes`` once per distinct label,
    not per value in Python (the largest cost of scoring at predict after the forward pass): labels that are one key
    (1, 1.0, np.int64(1)) have plain values that are one key too, so the first seen stands for all of them."""
    index = {c: i for i, c in enumerate(classes)}
    values = col if col.dtype.kind == "O" else col.tolist()  # a numpy scalar per value only where there are objects
    codes = {v: index.get(plain_value(v), -1) for v in dict.fromkeys(values)}
    return np.fromiter(map(codes.__getitem__, values), dtype=np.int64, count=len(col))


# The largest |target| a regression trains on: predictions are float32 (max 3.4e38) and the squared errors of
# the metrics float64, so 1e300 overflowed both (R² 0, Infinity in summary.json) without a word.
MAX_TARGET = 1e30


def _check_target_range(raw: Any) -> None:
    """Refuse a regression target beyond MAX_TARGET, by its largest value and the count over every split. It named
    'row N' of the split it was found in, after the seeded split had shuffled the rows: fpt.build's y[5] was 'row 4'
    (of the training split), never the row the caller wrote."""
    for j, name in enumerate(raw.targets):
        try:
            cols = [np.abs(split.y[:, j].astype(np.float64)) for split in raw.splits.values()]
        except (TypeError, ValueError):
            continue  # a non-numeric held-out target is named where targets are encoded
        col = np.concatenate(cols)
        beyond = col > MAX_TARGET
        if beyond.any():
            signed = np.concatenate([split.y[:, j].astype(np.float64) for split in raw.splits.values()])
            where = raw.splits["train"].where
            raise DataError(f"{where}: regression target {name!r} reaches {float(signed[np.nanargmax(col)]):g} "
                            f"({int(beyond.sum())} of {len(col)} values beyond {MAX_TARGET:g}); fpt standardises "
                            f"targets in float32, which overflows beyond {MAX_TARGET:g}: rescale the column (e.g. "
                            "divide it by a power of ten, or take its log)")


def _declared(options: Any, facts: DataFacts) -> Any:
    """``options`` with the fields the tokeniser reads that they leave unset (cf_difference: a series' first
    difference, cut beside it) as the modality declares them for their fit (fpt.settings.tokenised, the resolution's
    own rule); fit=auto tokenises each candidate for its own fit (fpt.select.fit_candidate)."""
    unset = {name: value for name, value in tokenised(vars(options), facts).items() if value is not None}
    return dataclasses.replace(options, **unset) if unset else options


def fit_preprocessing(raw: Any, options: Any, objective: str) -> Preprocessing:
    """Class maps / target scaler and the tokeniser, from the training split only (class maps: all labels)."""
    from fpt.data.modalities import modality

    train = raw.splits["train"]
    if objective == "classification":
        classes = []
        for j, name in enumerate(raw.targets):
            train_labels = {plain_value(v) for v in train.y[:, j]}
            labels = set().union(*({plain_value(v) for v in s.y[:, j]} for s in raw.splits.values()))
            if len(labels) < 2:
                raise DataError(f"{train.where}: target {name!r} has one class only ({next(iter(labels))!r}); "
                                f"classification needs at least two (or use {option('objective', 'regression')})")
            unseen = labels - train_labels
            if unseen:
                raise DataError(f"{train.where}: class(es) {sorted(map(str, unseen))[:5]} of {name!r} appear only in "
                                "validation/test, so nothing can learn them; add training examples of them")
            classes.append(_sorted_labels(labels))
        obj: Objective = classification(classes)
    else:
        try:
            y = train.y.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(f"{train.where}: a regression target must be numeric; {raw.targets} are not "
                            f"(use {option('objective', 'classification')})") from None
        if not np.isfinite(y).all():
            raise DataError(f"{train.where}: a regression target holds infinite values; fix or drop those rows")
        _check_target_range(raw)
        std = y.std(axis=0)
        flat = [name for name, s in zip(raw.targets, std, strict=True) if not s > 0]
        if flat:
            raise DataError(f"{train.where}: regression target {flat[0]!r} has one value ({y[0, raw.targets.index(flat[0])]:g}) "
                            f"in all {len(y)} training examples, so there is nothing to learn; choose another {option('target')}")
        obj = Regression(tuple(float(m) for m in y.mean(axis=0)), tuple(float(s) if s > 0 else 1.0 for s in std))
        classes = None
    if getattr(options, "cf_difference", None) and raw.modality != "timeseries":
        raise ConfigError(f"config field 'cf_difference'=true reads a time series' first difference, but "
                          f"{train.where} is {raw.modality} data: drop it (or give a series set)")
    entry = modality(raw.modality)
    try:
        tok = entry.tokeniser.fit_from(train.x, _declared(options, entry.facts(len(train.y), {})), raw.notes)
    except DataError as exc:  # a tokeniser's fit names the column or series, not the file it came from
        raise DataError(f"{train.where}: {exc}" if not str(exc).startswith(train.where) else str(exc)) from None
    return Preprocessing(raw.modality, tok, obj, list(raw.targets), classes, list(raw.notes.get("features", [])),
                         list(raw.notes.get("dropped", [])), list(raw.notes.get("series_id", [])))


@TASKS.register(DATA_TASK)
class UserData:
    Options = DataOptions
    # early stopping after 10 evaluations without a validation gain: a run's budget is fitted to its data
    # (fpt.settings.data_budget), and a small set stops improving long before it is spent
    defaults = TaskDefaults(patience=10)

    def build(self, options: Any, seed: int, source: DataSource) -> TaskData:
        from fpt.data import load

        if options.data is None:
            raise ConfigError(f"task {DATA_TASK!r} trains on your own dataset: give it with "
                              f"{option('data', 'PATH', placeholder=True)}")
        raw = load(options.data, options.target_column, options.modality, options.image_channels, options.image_size,
                   options.drop_columns, options.series_id)
        return task_from_loaded(raw, options, seed)


def task_from_loaded(raw: Any, options: Any, seed: int) -> TaskData:
    """The task of ``RawData`` as read (from files, or in memory: fpt.build(data=DataFrame)): the objective
    decided, the missing validation/test splits held out, then ``task_from_raw``."""
    from fpt.data.base import (
        ObjectiveInferred,
        finish_splits,
        from_numbers,
        infer_objective,
        inferred_note,
    )

    train = raw.splits["train"]
    if raw.date_targets and options.objective != "classification":
        # a date is neither a quantity as given nor, unless the user says so, a class: refused, not guessed
        name = raw.date_targets[0]
        first = train.y[0, raw.targets.index(name)]
        raise DataError(f"{train.where}: target column {name!r} holds dates ({first}), which fpt predicts neither as "
                        "numbers nor, unasked, as classes: to predict a quantity give it as a number (e.g. the days "
                        f"since a start date, or until an event), or pass {option('objective', 'classification')} to "
                        "predict each date as a class label")
    objective, why = infer_objective(train.y, raw.targets, options.objective, train.where, raw.declared,
                                     raw.categorical_targets)
    if objective == "classification" and raw.check_labels is not None:
        raw.check_labels()
    split = finish_splits(raw, options.val_fraction, options.test_fraction, options.split_seed,
                          stratify=objective == "classification", folds=options.folds, fold=options.fold)
    task = task_from_raw(split, options, seed, objective, why)
    if from_numbers(train.y, options.objective, raw.declared):  # said once the data trains (an error says enough)
        warnings.warn(inferred_note(objective, why, train.where), ObjectiveInferred, stacklevel=2)
    for note in training_notes(raw, split, options):
        warnings.warn(note, ColumnNote, stacklevel=2)
    return task


def training_notes(raw: Any, split: Any, options: Any) -> list[str]:
    """The notes on how the training data was read (``ColumnNote``: an id-like column, numbers written for people,
    dates written several ways, times of day, a column empty on every row, texts read one character at a time, ...),
    of ``raw`` as read and ``split``, its splits held out: what fpt train and fpt.build say, and the estimators too
    (they said only the empty column's)."""
    from fpt.data.base import column_notes

    return [*column_notes(raw), *date_notes(raw), *duration_notes(raw), *as_started_notes(raw),
            *_sequence_notes(raw, split, options)]


def _sequence_notes(raw: Any, split: Any, options: Any) -> list[str]:
    """Why ``--sequence-tokens auto`` read the training texts (``split``'s, which the tokeniser reads) one character
    at a time though they hold spaces, if it did; counted over the data as read (``raw``), so that each fold's
    task says it in the same words."""
    if raw.modality != "sequence" or options.sequence_tokens != "auto":
        return []
    from fpt.data.tokenisers import sequence_mode

    train = split.splits["train"]
    ((name, texts),) = train.x.items()
    why = sequence_mode(texts)[1]
    if why is None:
        return []
    why = sequence_mode(raw.splits["train"].x[name])[1] or why
    return [f"{train.where}: column {name!r}: {why}; give {option('sequence_tokens', 'words')} if its "
            "words are the symbols"]


def join(a: Batch, b: Batch) -> Batch:
    """The examples of ``a`` then ``b`` (one tokeniser made both, so their token shapes agree)."""
    lengths = None if a.lengths is None or b.lengths is None else torch.cat([a.lengths, b.lengths])
    return Batch(torch.cat([a.x, b.x]), torch.cat([a.y, b.y]), lengths)


def task_from_raw(raw: Any, options: Any, seed: int, objective: str, why: str) -> TaskData:
    """The task of split ``RawData`` (train, val, and usually test): targets encoded, the tokeniser fitted on
    train, every split tokenised. Without a test split (fpt.sklearn, whose caller keeps its own test data)
    the training set is the set reported after training (``test_set`` "train" in the summary)."""
    prep = fit_preprocessing(raw, options, objective)
    batches, cut, beyond = {}, {}, {}
    for name, split in raw.splits.items():
        x, lengths = prep.tokeniser(split.x)
        check_finite(x, split.where)  # 1e40 in a series would train as "diverged at step 1"
        cut[name] = getattr(prep.tokeniser, "cut", 0)
        beyond[name] = dict(getattr(prep.tokeniser, "beyond", {}))  # a table's dates past the training range
        batches[name] = Batch(x, prep.encode_targets(split.y, split.where), lengths)
    shape = prep.tokeniser.spec()
    m = len(raw.targets)
    num_classes = max(len(c) for c in prep.classes) if prep.classes else 1
    spec = InputSpec(num_classes=num_classes, per_token=m, **shape)
    info = {
        "data": str(options.data), "source": raw.source, "modality": raw.modality,
        "objective": objective, "objective_from": why, "targets": raw.targets,
        "splits": raw.split_from, "split_sizes": {k: len(v) for k, v in raw.splits.items()},
        **({"classes": {t: c for t, c in zip(raw.targets, prep.classes, strict=True)}} if prep.classes else {}),
        **({"target_mean": list(prep.objective.mean), "target_std": list(prep.objective.scale)}
           if objective == "regression" else {}),
        "tokenisation": prep.tokeniser.describe(),
        **{k: v for k, v in raw.notes.items() if k != "features"},
        **({"features": prep.features} if prep.features and raw.modality == "tabular" else {}),
        **({"cut_to_max_tokens": cut} if any(cut.values()) else {}),
        **({"dates_beyond_training": {k: {c: v[0] for c, v in b.items()} for k, b in beyond.items() if b}}
           if any(beyond.values()) else {}),
    }
    # held-out dates past the training range are read as its nearest end (clipped), as predict reads them: said once
    note = beyond_note(raw.splits["train"].where, beyond, {k: len(v) for k, v in raw.splits.items()})
    if note is not None:
        warnings.warn(note, ColumnNote, stacklevel=3)
    train_batch = batches.pop("train")
    if options.train_on_val:  # fpt train --refit's second run: validation joins the training examples
        train_batch = join(train_batch, batches["val"])
        info["train_on_val"] = True
    test = "test"
    if test not in batches:
        batches["train"], test = train_batch, "train"
    return TaskData(spec, TensorSource(train_batch, seed), batches, info=info, test=test, objective=prep.objective,
                    fitted=prep.to_json(), fingerprint=raw.fingerprint)


__all__ = ["OPTION_FIELDS", "DataOptions", "Preprocessing", "UserData", "fit_preprocessing", "task_from_loaded",
           "task_from_raw", "training_notes"]
