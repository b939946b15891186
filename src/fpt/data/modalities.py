"""Your own data's modalities as declared entries, as the formats are in ``fpt.data.formats``.

Each names its tokeniser (``fpt.data.tokenisers``: fitted on train, saved in data.json), the RunConfig
fields that shape its tokens, whether its examples are padded to a batch's longest, the features that
classic models and linear probes read (computed from the tokens, so they see what the model sees), the
classic models fitted beside a run (``fpt.baselines.MODELS``), how a trained model checks new inputs
given as arrays or as table columns (``fpt predict``, ``fpt.load(...).predict``; the formats' predict readers
hand what they read to these), and what a run of it takes for the fields that wait for its data
(``fpt.settings.DataFacts``: a time series' readout under preset fast, symbol sequences' input init for a
closed-form fit). The entries' names are the values RunConfig.modality takes besides auto (``requested``).
A new modality is its tokeniser class, its checks, and one entry here; tests/data/test_kinds.py checks every
entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fpt.data.images import array_channels, as_images, check_images, pixel_scale
from fpt.data.images import array_notes as image_notes
from fpt.data.tables import (
    check_table,
    check_texts,
    sequence_columns,
    series_columns,
    table_from_array,
    table_readings,
    tabular_columns,
)
from fpt.data.timeseries import array_notes as series_notes
from fpt.data.timeseries import check_series, series_from_array
from fpt.data.tokenisers import ImageTokens, SequenceTokens, SeriesTokens, TabularTokens, Tokeniser, bad_field
from fpt.errors import ConfigError, DataError, near, option, remedy, show
from fpt.settings import DataFacts

# (inputs, fpt.data.inputs.Schema, where, allow_unseen) -> the examples in the tokeniser's raw form, or SchemaError
Check = Callable[[Any, Any, str, bool], Any]


def _no_notes(splits: Mapping[str, Any], channels: str) -> dict[str, Any]:
    return {}


def _as_given(X: Any, channels: str) -> str:
    return channels


def _nothing_shared(X: Any, where: str) -> dict[str, Any]:
    return {}


def _image_shared(X: Any, where: str) -> dict[str, Any]:
    return pixel_scale(X)


@dataclass(frozen=True)
class Arrays:
    """How arrays (an .npz's X, fpt.sklearn's fit X; ``fpt.data.arrays.from_arrays``) hold a modality's examples."""

    read: Callable[[Any, str, int, str], Any]  # (X, image channels, image size, where) -> the tokeniser's raw form
    notes: Callable[[Any, str], dict[str, Any]] = _no_notes  # (splits read, channels) -> what the run records
    channels: Callable[[Any, str], str] = _as_given  # (the training X, image_channels) -> the channels read
    # (the training X, where) -> how every split is read, as the training array is (keyword arguments of ``read``),
    # recorded in the run's notes for the tokeniser to keep and predict to read new arrays by: images' float pixel
    # scale, a table's text dates and durations
    shared: Callable[[Any, str], dict[str, Any]] = _nothing_shared
    text: bool = False  # object arrays of text (a DataFrame's category columns) are read too
    missing: bool = True  # NaN is a missing value (False: refused)
    ragged: bool = False  # examples of several lengths: lists of them, and splits of other lengths


@dataclass(frozen=True)
class Modality:
    name: str
    tokeniser: type  # fitted on train (fit_from), saved in data.json (to_json; its kind: this name), checked back
    options: Mapping[str, str | None]  # RunConfig field -> the tokeniser JSON key holding its fitted value (or None)
    pads: bool  # examples of several lengths: padded and masked, the model takes their lengths
    features: Callable[[np.ndarray, dict[str, Any], int], np.ndarray]  # (tokens (N, T, ...), tokeniser JSON, vocab)
    baselines: tuple[str, ...]  # the classic models fitted beside a run, in order (fpt.baselines.MODELS)
    # the input schema in words and numbers (the model card, an export's config.json): (fitted tokeniser, feature
    # columns, the summary's task_info) -> its keys beside "modality" and "targets"
    describe: Callable[[Any, list[str], Mapping[str, Any]], dict[str, Any]]
    # the input schema (describe's keys, "modality", "targets", "npz_X_shape" if any) in a model card's words: lines
    card: Callable[[Mapping[str, Any]], list[str]]
    arrays: Arrays | None  # how arrays of numbers hold its training examples; None: they cannot
    check: Check  # new examples given as arrays or a list (an .npz's X, a UCR file's series, Python's X)
    # new examples as table columns (every feature column present; and gaps=, the reader's masks of missing cells),
    # or None: no table holds it
    columns: Callable[..., Any] | None
    # what a --data run of it takes for the fields that wait for its data when not given (fpt.settings.DataFacts;
    # field of fpt.settings.DATA_DECLARED_FIELDS -> value): under preset fast, and for a closed-form fit
    fast: Mapping[str, Any] = field(default_factory=dict)
    closed_form: Mapping[str, Any] = field(default_factory=dict)
    # what one token of it is and how to make fewer: the fix when a body has fewer positions than it makes tokens,
    # worded when it is said, for the surface in force (fpt.errors.remedy: a flag, an argument, or what to do instead)
    # (given the fitted tokeniser's JSON, which says what the tokens are read from)
    fewer_tokens: Callable[[Mapping[str, Any]], str] = lambda tokeniser: "make fewer tokens per example"

    def facts(self, n_train: int, tokeniser: Mapping[str, Any], target_column: str | None = None) -> DataFacts:
        """What the defaults of a --data run of this modality read (fpt.settings.resolve): ``n_train`` training
        examples, the values its fitted ``tokeniser`` (its JSON) chose for the fields of ``options``, the target
        column(s) its reader chose (None where the layout fixes them), and what this entry declares."""
        fitted = {option: tokeniser[key] for option, key in self.options.items() if key in tokeniser}
        return DataFacts(n_train, fitted, target_column, self.fast, self.closed_form)


def token_features(x: np.ndarray, tok: dict[str, Any], vocab: int) -> np.ndarray:
    """The tokens themselves (tables: one standardised token per feature; images: normalised patches)."""
    return x


def series_features(x: np.ndarray, tok: dict[str, Any], vocab: int) -> np.ndarray:
    """(N, C, L) normalised series rebuilt from their (N, T, patch * C) windows (zeros past each one's end)."""
    n, t, _ = x.shape
    c, patch, stride = tok["channels"], tok["patch"], tok["stride"]
    x = x[..., : c * patch]  # cf_difference's tokens: the series' window first; the baselines read the series alone
    windows = x.reshape(n, t, c, patch)  # each token: channel-major (C, patch), as fpt.data.tokenisers cut them
    if stride >= patch:  # no overlap: the windows in order (points between windows are not in any token)
        return windows.transpose(0, 2, 1, 3).reshape(n, c, t * patch)
    head = windows[:, :-1, :, :stride].transpose(0, 2, 1, 3).reshape(n, c, (t - 1) * stride)
    return np.concatenate([head, windows[:, -1]], axis=2)


def symbol_counts(x: np.ndarray, tok: dict[str, Any], vocab: int) -> np.ndarray:
    """(N, vocab) counts of each symbol id (a bag of symbols; padding, id 0, not counted)."""
    return np.stack([np.bincount(row[row > 0], minlength=vocab) for row in x]).astype(np.float32)


def max_points(tok: Any) -> int:
    """The most points of a series the tokeniser keeps (its sequence length of windows)."""
    return tok.max_points


def _table_schema(tok: Any, features: list[str], info: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}  # a date column once, with the parts its tokens hold
    for f in tok.features:
        entry = out.setdefault(f["name"], {"name": f["name"], "kind": f["kind"]})
        if f["kind"] == "categorical":
            entry["categories"] = f["categories"]
        elif f["kind"] == "datetime":
            entry["timezone"] = f["tz"]
            entry.setdefault("parts", []).append(f["part"])
    return {"features": list(out.values())}


def _image_schema(tok: Any, features: list[str], info: Mapping[str, Any]) -> dict[str, Any]:
    return {"image": {"size": tok.image_size, "channels": tok.channels, "patch_size": tok.patch_size}}


def _series_schema(tok: Any, features: list[str], info: Mapping[str, Any]) -> dict[str, Any]:
    # features: the point columns of a table read one series per row (--modality timeseries), else none
    return {**({"features": features} if features else {}),
            "series": {"channels": tok.channels, "patch": tok.patch, "stride": tok.stride,
                       "max_points": max_points(tok), "train_lengths": info.get("train_lengths")}}


def _sequence_schema(tok: Any, features: list[str], info: Mapping[str, Any]) -> dict[str, Any]:
    return {"features": features, "sequence": {"mode": tok.mode, "max_len": tok.max_len, "vocabulary": len(tok.vocab)}}


def _targets(schema: Mapping[str, Any]) -> str:
    return ", ".join(f"`{t}`" for t in schema["targets"])


def _table_card(schema: Mapping[str, Any]) -> list[str]:
    out = ["A table (CSV, TSV, JSON lines, Parquet, Feather, a DataFrame) with these columns; the target column(s) "
           f"{_targets(schema)} are optional (given, the predictions are scored).", "",
           "| column | kind | categories |", "|---|---|---|"]
    for f in schema["features"]:
        cats = f.get("categories")
        shown = "" if cats is None else ", ".join(map(str, cats[:15])) + (" ..." if len(cats) > 15 else "")
        kind = f["kind"] if f["kind"] != "datetime" else \
            f"datetime ({f.get('timezone') or 'no timezone'}: {', '.join(f.get('parts', []))})"
        out.append(f"| `{f['name']}` | {kind} | {shown} |")
    return out


def _sequence_card(schema: Mapping[str, Any]) -> list[str]:
    s = schema["sequence"]
    return [f"A table with the text column `{schema['features'][0]}` (one {s['mode'][:-1]} per token, "
            f"{s['vocabulary']} known symbols, cut at {s['max_len']}); optionally the target column(s) "
            f"{_targets(schema)}."]


def _image_card(schema: Mapping[str, Any]) -> list[str]:
    s = schema["image"]
    extra = f"; arrays of shape {schema['npz_X_shape'][1:]} as in training" if "npz_X_shape" in schema else ""
    return [f"Images: a folder `DIR/*.png` or `DIR/<class>/*.png`, or arrays (n, {s['size']}, {s['size']}"
            f"{', 3' if s['channels'] == 'rgb' else ''}){extra}; {s['channels']}, resized to {s['size']}x{s['size']}, "
            f"{s['patch_size']}x{s['patch_size']} patches."]


def _series_card(schema: Mapping[str, Any]) -> list[str]:
    s = schema["series"]
    columns = schema.get("features")
    rows = f" or a table of one series per row, its points in the columns {columns[0]} .. {columns[-1]}" \
        if columns else ""
    return [f"Time series: a UCR/UEA .ts/.tsv file or arrays (n, {s['channels']}, length){rows}: "
            f"{s['channels']} channel(s), at most {s['max_points']} points (training lengths "
            f"{s['train_lengths'] or 'unknown'}), windows of {s['patch']} points every {s['stride']}."]


def _fewer_columns(tokeniser: Mapping[str, Any]) -> str:
    """A table too wide for its body: fewer columns; and where every column is a number (an (n, 200) array of
    floats, a spectra table), perhaps each row is one series, which modality timeseries reads in windows of points."""
    features = tokeniser.get("features") or []
    series = f"; if each row is one series, its columns the points, {option('modality', 'timeseries')} reads it " \
        "in windows" if features and all(f.get("kind") == "numeric" for f in features) else ""
    return f"a table makes one token per feature column: {remedy('leave columns out with {}', 'drop_columns')} (or " \
        f"reduce them beforehand, e.g. with PCA{series})"


MODALITIES: dict[str, Modality] = {m.name: m for m in (
    Modality("tabular", TabularTokens, {"max_categories": None}, False, token_features, ("linear", "boosting"), _table_schema,
             _table_card, Arrays(table_from_array, shared=table_readings, text=True), check_table, tabular_columns,
             fewer_tokens=_fewer_columns),
    Modality("image", ImageTokens, {"image_size": "image_size", "patch_size": "patch_size", "image_channels": "channels"},
             False, token_features, ("linear",), _image_schema, _image_card,
             Arrays(as_images, image_notes, array_channels, _image_shared, missing=False), check_images, None,
             fewer_tokens=lambda tokeniser: "an image makes one token per patch: "
                                  f"{remedy('raise {} or lower {}', 'patch_size', 'image_size')}"),
    # Preset fast reads a time series with GPT4TS's flatten head: chosen on validation, where it beat the last
    # token on 5 of the 8 UCR/UEA sets aeon bundles, tied on 2 and lost on 1 (mean validation accuracy 0.774
    # against 0.707, seed 0; docs/results/own-data/screen/). A closed-form fit reads the series' first difference
    # with members of their own (cf_difference), whatever the preset: round 3's cross-validation on the TRAIN files
    # picked it (docs/results/own-data/closed-form/round3, its final step's rule declared before the figures: mean
    # CV 0.849 against 0.831; OSULeaf 0.858 against 0.730, GunPoint +2.0, ArrowHead -1.9). The tokeniser cuts it,
    # so fpt.tasks.user_data.fit_preprocessing applies this before the run's config is resolved, and the config
    # takes what the tokeniser did (its JSON's "difference", present only when true: fpt.pipeline.data_facts).
    # Its members' input layers take gains 0.25 and 4 along the scale ladder (cf_gains), whatever the preset: round
    # 13's TRAIN-only CV (docs/results/own-data/closed-form/round13, its rule declared before the figures: mean rank
    # 1.77 against the layers as drawn's 2.23 over 11 series sets; Pickup +2.0, PigCVP +1.6, OSULeaf -1.5), and
    # their merged windows move one token at a time (cf_hop): round 14's (round14/, mean rank 1.36 against the
    # windows side by side's 2.82, mean CV 0.851 against 0.814, no set lower), its members within a reading budget.
    # The odd members read each series normalised by its own mean and std too, and the head keeps the reading with
    # the lower leave-one-out error (cf_series_norm=choose): round 18's (round18/, mean rank 1.91 against 2.18, mean
    # CV 0.863 against 0.851; PigCVP +10.6, PickupGestureWiimoteZ +2.7, no set lower; PLAID, beside, +29.8).
    Modality("timeseries", SeriesTokens, {"series_patch": "patch", "series_stride": "stride", "series_norm": "norm"},
             True, series_features, ("nearest", "minirocket"), _series_schema, _series_card,
             Arrays(series_from_array, series_notes, ragged=True), check_series, series_columns,
             fast={"readout": "flatten"},
             closed_form={"cf_difference": True, "cf_gains": "0.25,4", "cf_hop": "one",
                          "cf_series_norm": "choose"},
             fewer_tokens=lambda tokeniser: f"a series makes one token per window: {remedy('raise {}', 'series_patch')} (left "
                                  "unset, the longest training series makes at most 64)"),
    # The closed-form fit of symbol sequences draws its members' embedding tables N(0, 0.02) (gpt2), whatever the
    # preset. Chosen by cross-validation on the TRAIN files of bench/kinds_data.py's symbol sets
    # (docs/results/own-data/closed-form/seqinit, bench/closed_form_study.py --plan seqinit; its rule declared before
    # the figures: the best mean CV over the symbol sets, a tie keeping official): preset fast's N(0, 1) tables swamp
    # the positions MiniLM reads order from (its own tables' std: 0.056 words, 0.025 positions).
    Modality("sequence", SequenceTokens, {"sequence_tokens": "mode", "sequence_max_len": "max_len"},
             True, symbol_counts, ("linear", "boosting"), _sequence_schema, _sequence_card, None,
             check_texts, sequence_columns, closed_form={"input_init": "gpt2"},
             fewer_tokens=lambda tokeniser: "a sequence makes one token per symbol or word: "
                                  f"{remedy('lower {}', 'sequence_max_len')}"),
)}
PADDED = tuple(name for name, m in MODALITIES.items() if m.pads)  # the tokenisers that pad and return lengths


AUTO = "auto"  # RunConfig.modality's own value besides the entries: read from the data (its format, X's shape)


def requested(name: Any, where: str | None = None, field_name: str = "config field 'modality'") -> str:
    """``name`` as RunConfig.modality takes it (auto, or an entry's name), or a one-line ConfigError that names the
    field and the values it takes: as ``where`` and ``field_name`` say (a sweep's config, an estimator), else as the
    surface in force names the setting (``--modality X``, ``modality: X in run.yaml``, ``modality='X'``): the data
    was named instead (``data: t.csv in run.yaml: config field 'modality'``), though the user wrote no data there."""
    if not isinstance(name, str) or (name != AUTO and name not in MODALITIES):
        hint = near(name, [AUTO, *MODALITIES]) if isinstance(name, str) else ""
        plain = isinstance(name, str) and name.isprintable() and show(name) == repr(name)  # short, one line
        named = option("modality", name) if plain else option("modality", show(name), placeholder=True)
        said = named if where is None else f"{where}: {field_name}={show(name)}"
        raise ConfigError(f"{said}{hint} must be {AUTO} or one of {', '.join(MODALITIES)} (fpt.data.modalities)")
    return name


def modality(name: str) -> Modality:
    if name not in MODALITIES:
        raise DataError(f"modality {name!r}: fpt knows {', '.join(MODALITIES)}")
    return MODALITIES[name]


def from_json(data: dict[str, Any]) -> Tokeniser:
    """Any tokeniser from its ``to_json()`` (its ``kind``: the modality whose entry holds the class), every field
    checked by the class's ``check_json`` (a tampered data.json fails here on one line naming the field, not as a
    numpy error while predicting)."""
    if not isinstance(data, dict):
        raise bad_field("tokeniser", data, "a mapping")
    kind = data.get("kind")
    if kind not in MODALITIES:
        raise bad_field("kind", kind, " or ".join(MODALITIES))
    cls = MODALITIES[kind].tokeniser
    data = cls.check_json(dict(data))
    try:
        return cls(**{k: v for k, v in data.items()})
    except TypeError as exc:  # a missing or unknown field
        raise DataError(f"tokeniser of kind {data['kind']!r}: {exc}") from None


__all__ = ["AUTO", "MODALITIES", "PADDED", "Arrays", "Check", "Modality", "from_json", "max_points", "modality",
           "requested", "series_features", "symbol_counts", "token_features"]
