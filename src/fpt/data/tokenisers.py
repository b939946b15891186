"""Tokenisers for your own data, one per modality, fitted on the training split only.

Each has ``fit(train_x, ...)``, ``__call__(x) -> (tokens, lengths or None)``, ``spec`` (the
token shape), ``describe()`` (what ``fpt data`` prints), ``to_json()`` and ``check_json``;
``fpt.data.modalities.from_json`` rebuilds any of them from that JSON alone (a run directory's
``data.json``; its ``kind`` names the modality whose entry holds the class), so new inputs can
be tokenised later without the training data.

- tabular: one token per feature column, ``[value, missing, one-hot category slots...]``:
  numeric columns standardised with the training mean/std (missing -> 0, indicator 1); text
  columns take one slot per category (the ``max_categories`` most frequent in train) plus one
  shared by rarer and unseen categories. A linear input layer on one-hot slots is an
  embedding of the categories. A date column (``fpt.data.dates``) takes one numeric token per
  part (its time, calendar and clock parts), each standardised the same way.
- image: (S, S, C) uint8 -> per-channel standardised (train mean/std) -> p x p patches, one
  token of p*p*C values each, row-major.
- timeseries: (C, L) -> normalised (per series and channel, or with train statistics) ->
  windows of ``patch`` points every ``stride`` points, channels concatenated in each token
  (patch*C values); the last window is zero-padded; unequal lengths give padded batches.
- sequence: symbols (characters or whitespace-separated words) -> ids 2.. from the training
  vocabulary; 1 is the unknown symbol, 0 padding; cut at ``max_len``.
"""

from __future__ import annotations

import functools
import math
import unicodedata
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from fpt.data.base import is_missing, plain_value
from fpt.data.date_formats import FORMATS
from fpt.data.dates import PARTS, TRENDS, date_parts, held_dates, read_dates, used_parts
from fpt.data.durations import KINDS as DURATION_KINDS
from fpt.data.pixel_depth import LEVELS
from fpt.data.resolution import series_steps
from fpt.errors import DataError

if TYPE_CHECKING:  # torch is imported where tokens are made: fpt --help and fpt data read this module without it
    import torch
    from torch import Tensor

MAX_SERIES_TOKENS = 64  # default series_patch keeps the longest training series within this many tokens
MAX_SEQUENCE_LEN = 512  # default sequence_max_len cap (MiniLM's and BERT's position table)
PAD_ID, UNKNOWN_ID = 0, 1


# --- tabular ----------------------------------------------------------------------------


@dataclass
class TabularTokens:
    # per token: {"name", "kind": "numeric", "mean", "std"} (and "duration" where its text was read as durations,
    # fpt.data.durations.KINDS, which new text is read by), {"name", "kind": "categorical", "categories", "offset"},
    # or a date column's part {"name", "kind": "datetime", "part", "tz", "mean", "std"} (one entry per part, in order;
    # its time and year also "low" and "high", the training range, which new dates are clipped to; "format" where
    # its text is written other than ISO, fpt.data.date_formats, which new text must be written in)
    features: list[dict[str, Any]]
    slots: int  # one-hot category slots in every token
    kind: str = "tabular"

    @staticmethod
    def check_json(data: dict[str, Any]) -> dict[str, Any]:
        slots = _count_field(data.get("slots"), "slots", 0)
        features = data.get("features")
        if not isinstance(features, list) or not features:
            raise bad_field("features", features, "a list of feature entries")
        out = []
        for i, f in enumerate(features):
            if not isinstance(f, dict) or not isinstance(f.get("name"), str):
                raise bad_field(f"features[{i}]", f, "a mapping with a name")
            where = f"features[{i}] ({f['name']})"
            if f.get("kind") == "numeric":
                if "duration" in f and f["duration"] not in DURATION_KINDS:
                    raise bad_field(f"{where}.duration", f["duration"], f"one of {', '.join(DURATION_KINDS)}")
                out.append({**f, "mean": _number(f.get("mean"), f"{where}.mean"), "std": _scale(f.get("std"), f"{where}.std")})
            elif f.get("kind") == "datetime":
                if f.get("part") not in PARTS:
                    raise bad_field(f"{where}.part", f.get("part"), f"one of {', '.join(PARTS)}")
                if f.get("tz") is not None and not isinstance(f.get("tz"), str):
                    raise bad_field(f"{where}.tz", f.get("tz"), "a timezone's name or null")
                if "format" in f and not (isinstance(f["format"], str) and f["format"] in FORMATS):
                    raise bad_field(f"{where}.format", f["format"], "a date format fpt reads (fpt.data.date_formats)")
                bounds = {k: _number(f[k], f"{where}.{k}") for k in ("low", "high") if k in f}
                out.append({**f, "mean": _number(f.get("mean"), f"{where}.mean"), "std": _scale(f.get("std"), f"{where}.std"),
                            **bounds})
            elif f.get("kind") == "categorical":
                cats = f.get("categories")
                if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
                    raise bad_field(f"{where}.categories", cats, "a list of category names")
                if len(set(cats)) != len(cats):  # two slots of one name: a value could not be told which is its
                    raise bad_field(f"{where}.categories", cats, "a list of distinct category names")
                offset = _count_field(f.get("offset"), f"{where}.offset", 0)
                if offset + len(cats) >= slots:
                    raise bad_field(f"{where}.offset", offset, f"room for {len(cats) + 1} slots within slots={slots}")
                out.append(f)
            else:
                raise bad_field(f"{where}.kind", f.get("kind"), "numeric, categorical or datetime")
        return {**data, "features": out}

    @classmethod
    def fit_from(cls, x: dict[str, np.ndarray], options: Any, notes: Mapping[str, Any]) -> TabularTokens:
        """Fitted to the training inputs with the run's data options (``fpt.tasks.user_data.DataOptions``)."""
        return cls.fit(x, options.max_categories, notes.get("date_formats", {}), notes.get("durations", {}))

    @classmethod
    def fit(cls, x: dict[str, np.ndarray], max_categories: int, formats: Mapping[str, str] | None = None,
            durations: Mapping[str, str] | None = None) -> TabularTokens:
        """Fitted to the training columns; ``formats``: the format each date column's text is written in, where not
        ISO (a table reader's ``date_formats`` note); ``durations``: what each column of durations written as text
        was read as (its ``durations`` note), which new text is read by."""
        features, slots = [], 0
        for name, col in x.items():
            missing = is_missing(col)
            dates = held_dates(col)
            if col.dtype.kind in "iubf":
                timed = {"duration": durations[name]} if durations and name in durations else {}
                features.append({"name": name, "kind": "numeric", **_standardised(col[~missing], f"column {name!r}"),
                                 **timed})
            elif dates is not None:  # read as dates by the table's reader (fpt.data.dates.read_dates)
                parts = date_parts(col, dates.zone)
                written = {"format": formats[name]} if formats and name in formats else {}
                features += [{"name": name, "kind": "datetime", "part": part, "tz": dates.zone, **written,
                              **_standardised(parts[part][~missing], f"column {name!r} ({part})"),
                              **(_range(parts[part][~missing]) if part in TRENDS else {})}
                             for part in used_parts(parts)]
            else:
                counts = Counter(str(v) for v in col[~missing])
                cats = [c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:max_categories]]
                features.append({"name": name, "kind": "categorical", "categories": cats, "offset": slots})
                slots += len(cats) + 1  # + the slot shared by rare and unseen categories
        return cls(features, slots)

    @property
    def token_dim(self) -> int:
        return 2 + self.slots

    @property
    def columns(self) -> list[str]:
        """The feature columns, in order (a date column makes several tokens, one name)."""
        return list(dict.fromkeys(f["name"] for f in self.features))

    def spec(self) -> dict[str, int]:
        return {"seq_len": len(self.features), "token_dim": self.token_dim}

    def __call__(self, x: dict[str, np.ndarray]) -> tuple[Tensor, Tensor | None]:
        n = len(next(iter(x.values())))
        out = np.zeros((n, len(self.features), self.token_dim), dtype=np.float32)  # (N, F, 2 + slots)
        parts: dict[str, dict[str, np.ndarray]] = {}  # a date column's parts, computed once for its tokens
        self.beyond: dict[str, tuple[int, float, float]] = {}  # date column -> (dates beyond training, its range)
        for j, f in enumerate(self.features):
            col = x[f["name"]]
            missing = is_missing(col)
            out[:, j, 1] = missing
            if f["kind"] in ("numeric", "datetime"):
                vals = np.zeros(n)
                if f["kind"] == "datetime":
                    if f["name"] not in parts:
                        dates = read_dates(col, f["tz"], f"column {f['name']!r}", DataError, f.get("format"))
                        parts[f["name"]] = date_parts(dates, f["tz"])
                    vals[~missing] = parts[f["name"]][f["part"]][~missing]
                    if "low" in f:  # a trend beyond the training dates reads as their nearest end (dates.TRENDS)
                        over = ~missing & ((vals < f["low"]) | (vals > f["high"]))
                        if over.any() and f["part"] == "time":
                            self.beyond[f["name"]] = (int(over.sum()), f["low"], f["high"])
                        vals = np.clip(vals, f["low"], f["high"])
                else:
                    vals[~missing] = np.asarray(col[~missing], dtype=np.float64)
                with np.errstate(over="ignore"):  # beyond float32 becomes inf, which check_finite names
                    out[:, j, 0] = np.where(missing, 0.0, (vals - f["mean"]) / f["std"])
            else:
                out[:, j, 2 + f["offset"]: 3 + f["offset"] + len(f["categories"])] = _one_hot(col, missing,
                                                                                               f["categories"])
        import torch

        return torch.from_numpy(out), None

    def describe(self) -> dict[str, Any]:
        numeric = [f["name"] for f in self.features if f["kind"] == "numeric"]
        cats = {f["name"]: len(f["categories"]) for f in self.features if f["kind"] == "categorical"}
        dates: dict[str, list[str]] = {}
        for f in self.features:
            if f["kind"] == "datetime":
                dates.setdefault(f["name"], []).append(f["part"])
        made = f"; {len(dates)} date, {sum(map(len, dates.values()))} tokens of their parts" if dates else ""
        return {"tokens": f"one per feature: {len(self.features)} ({len(numeric)} numeric, standardised on train; "
                          f"{len(cats)} categorical{made})",
                "token": f"[value, missing indicator, {self.slots} category slots] = {self.token_dim} values",
                **({"categories_kept": cats} if cats else {}), **({"date_parts": dates} if dates else {})}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _range(values: np.ndarray) -> dict[str, float]:
    return {"low": float(values.min()), "high": float(values.max())} if len(values) else {}


def _standardised(values: np.ndarray, what: str) -> dict[str, float]:
    """The training mean and std of a column's present values (or a date part's)."""
    vals = values.astype(np.float64)
    if not len(vals):
        return {"mean": 0.0, "std": 1.0}
    with np.errstate(over="ignore", invalid="ignore"):
        mean, std, spread = float(vals.mean()), float(vals.std()), float(np.ptp(vals))
    if not (math.isfinite(mean) and math.isfinite(std)):
        # values near float64's largest (1e308): their sum overflows, and the NaN mean refused every row as 'beyond
        # float32 once standardised' beside numpy's overflow warnings. Scaled by the largest first, they standardise.
        top = float(np.abs(vals).max())
        mean, std, spread = top * float((vals / top).mean()), top * float((vals / top).std()), top * float(np.ptp(vals / top))
    return {"mean": mean, "std": fitted_std(std, spread, what)}


def category_texts(col: np.ndarray) -> np.ndarray:
    """A categorical feature's values as the category names they are: text as it is, a number as it is written
    (``plain_value``: 1.0 is '1'). A split file whose column of codes read as numbers (a gap makes pandas read '1'
    as 1.0) is then tokenised as fpt predict tokenises the same file (fpt.data.tables._check_feature), not as the
    unseen category '1.0'. Numbers are named once per distinct value; anything else is ``str`` of each value (never
    by distinct value: 1, 1.0 and True are one key to a hash table and three names)."""
    if col.dtype.kind in "iubf":
        distinct, inverse = np.unique(col, return_inverse=True)
        names = np.array([str(plain_value(v)) for v in distinct], dtype=object)
        return names[inverse.reshape(-1)]
    return np.array(list(map(str, col)), dtype=object)


def _one_hot(col: np.ndarray, missing: np.ndarray, categories: list[str]) -> np.ndarray:
    """(n, len(categories) + 1): a category's slot, or the last slot (shared by rarer and unseen categories) for a
    value not among ``categories``; a missing value has no slot set. Each value's name is looked up among the saved
    categories by pandas' hash table (scikit-learn's OneHotEncoder checked each value in Python: seconds at 200,000
    rows); its ``infrequent_if_exist`` would not do either: it picks the kept categories itself (ties broken the other
    way, slots in alphabetical order) and adds no shared slot when every category is kept, so it would change the
    tokens of stored runs."""
    import pandas as pd

    # as OneHotEncoder refused them; check_json refuses a data.json so, and fit makes them distinct: fpt's own bug
    if len(set(categories)) != len(categories):
        raise ValueError("In column 0, the predefined categories contain duplicate elements.")
    codes = pd.Index(categories, dtype=object).get_indexer(category_texts(col))  # -1: not among them
    out = np.zeros((len(col), len(categories) + 1), dtype=np.float32)
    out[np.arange(len(col)), np.where(codes < 0, len(categories), codes)] = 1.0
    out[missing] = 0.0
    return out


# --- images -----------------------------------------------------------------------------


@dataclass
class ImageTokens:
    """uint8 images -> float tokens (N, (S/p)^2, p * p * C), for ``--data`` images and the paper's image tasks.

    Steps: scale to [0, 1], zero-pad to ``image_size`` (smaller images, centred), augment (a paper task's
    training batches only), per-channel normalisation, patchify. Augmentation runs before normalisation
    as in the official code, so the zero fill of crops and rotations is black, not the mean colour.
    Called with (N, S, S, C) arrays (``--data``): (tokens, None); with a (N, C, H, W) uint8 tensor and a
    generator (``TensorSource.transform``): the tokens.
    """

    image_size: int
    patch_size: int
    channels: str  # rgb | gray
    mean: list[float]  # per channel, of train pixels in [0, 1]
    std: list[float]
    kind: str = "image"
    augment: bool = False  # the paper tasks' random training augmentation (never saved: --data does not augment)
    # The scale training's float image arrays were on (1 or 255; fpt.data.images.pixel_scale), by which new float
    # images are read at predict; None: uint8 arrays or image files, and runs from before it was recorded
    pixel_scale: int | None = None
    # The white level 16-bit image files were read on (fpt.data.pixel_depth: 4095 for 12-bit data), and new ones are
    # at predict; None: no 16-bit images in training, or a run from before it was recorded (65535)
    white_level: int | None = None

    @staticmethod
    def check_json(data: dict[str, Any]) -> dict[str, Any]:
        for name in ("image_size", "patch_size"):
            _count_field(data.get(name), name)
        if data.get("channels") not in ("rgb", "gray"):
            raise bad_field("channels", data.get("channels"), "rgb or gray")
        c = 3 if data["channels"] == "rgb" else 1
        data["mean"], data["std"] = _numbers(data.get("mean"), "mean", c), _numbers(data.get("std"), "std", c, True)
        if not (data.get("pixel_scale") is None or type(data["pixel_scale"]) is int and data["pixel_scale"] in (1, 255)):
            raise bad_field("pixel_scale", data.get("pixel_scale"), "1 or 255")
        if not (data.get("white_level") is None or type(data["white_level"]) is int and data["white_level"] in LEVELS):
            raise bad_field("white_level", data.get("white_level"), "2**bits - 1 for 8 to 16 bits (255 ... 65535)")
        return data

    @classmethod
    def fit_from(cls, images: list[np.ndarray], options: Any, notes: Mapping[str, Any]) -> ImageTokens:
        tok = cls.fit(images, options.image_size, options.patch_size, notes.get("image_channels", "rgb"))
        return replace(tok, pixel_scale=notes.get("pixel_scale"), white_level=notes.get("white_level"))

    @classmethod
    def fit(cls, images: list[np.ndarray], image_size: int, patch_size: int, channels: str) -> ImageTokens:
        total = np.zeros(images[0].shape[-1])
        squares = np.zeros(images[0].shape[-1])
        for start in range(0, len(images), 1024):  # in chunks: no float copy of the whole set
            x = np.stack(images[start:start + 1024]).astype(np.float64) / 255  # (n, S, S, C)
            total += x.sum(axis=(0, 1, 2))
            squares += (x ** 2).sum(axis=(0, 1, 2))
        count = len(images) * images[0].shape[0] * images[0].shape[1]
        mean = total / count
        std = np.sqrt(np.maximum(squares / count - mean ** 2, 0))
        return cls(image_size, patch_size, channels, [float(m) for m in mean], [float(s) if s > 0 else 1.0 for s in std])

    def spec(self) -> dict[str, int]:
        c = 3 if self.channels == "rgb" else 1
        return {"seq_len": (self.image_size // self.patch_size) ** 2, "token_dim": self.patch_size ** 2 * c}

    @property
    def random(self) -> bool:
        """Whether two calls can give different tokens (feature caching needs False)."""
        return self.augment

    def tokens(self, images: Tensor, gen: torch.Generator | None = None) -> Tensor:
        """uint8 (N, C, H, W) -> (N, (S/p)^2, p * p * C); ``gen`` draws the augmentation."""
        from fpt.transforms import augment_images, normalize, pad_to, patchify

        x = images.float() / 255  # (N, C, H, W)
        if x.shape[-2:] != (self.image_size, self.image_size):
            x = pad_to(x, self.image_size)  # (N, C, S, S)
        if self.augment:
            if gen is None:
                raise ValueError("augmentation needs a torch.Generator (TensorSource passes one per batch)")
            x = augment_images(x, gen)
        return patchify(normalize(x, self.mean, self.std), self.patch_size)

    def __call__(self, images: list[np.ndarray] | Tensor, gen: torch.Generator | None = None) -> Any:
        import torch

        if isinstance(images, torch.Tensor):
            return self.tokens(images, gen)
        return self.tokens(torch.from_numpy(np.stack(images)).permute(0, 3, 1, 2)), None

    def describe(self) -> dict[str, Any]:
        s = self.spec()
        return {"tokens": f"{self.patch_size}x{self.patch_size} patches of {self.image_size}x{self.image_size} "
                          f"{self.channels} images: {s['seq_len']} tokens of {s['token_dim']} values",
                "normalised": "per channel, train mean/std"}

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items()
                if k != "augment" and not (k in ("pixel_scale", "white_level") and v is None)}


# --- time series ------------------------------------------------------------------------


def first_difference(s: np.ndarray) -> np.ndarray:
    """A (C, L) series' first difference along time, (C, L): the first point's is 0 (as bench/closed_form_study.py)."""
    return np.diff(s, axis=-1, prepend=s[:, :1])


@dataclass
class SeriesTokens:
    channels: int
    patch: int
    stride: int
    norm: str  # series | global | none
    mean: list[float]  # per channel (global norm)
    std: list[float]
    max_tokens: int  # the longest training series' token count: the task's sequence length
    kind: str = "timeseries"
    # cf_difference: each token holds the series' window, then its first difference's (the same points), the
    # difference normalised as the series (global: with the training differences' mean and std, below)
    difference: bool = False
    diff_mean: list[float] = field(default_factory=list)
    diff_std: list[float] = field(default_factory=list)
    # per token channel (the series', then the differences'): the coarsest step float32 rounds a training series
    # to, in the spread it is normalised by (fpt.data.resolution.series_steps): fpt.onnx_raw's check of a graph of
    # float32 inputs; empty in a run before it (the check then reads the channels' global mean and std)
    float32_steps: list[float] = field(default_factory=list)

    @staticmethod
    def check_json(data: dict[str, Any]) -> dict[str, Any]:
        c = _count_field(data.get("channels"), "channels")
        for name in ("patch", "stride", "max_tokens"):
            _count_field(data.get(name), name)
        if data.get("norm") not in ("series", "global", "none"):
            raise bad_field("norm", data.get("norm"), "series, global or none")
        data["mean"], data["std"] = _numbers(data.get("mean"), "mean", c), _numbers(data.get("std"), "std", c, True)
        if data.get("difference", False) not in (True, False):
            raise bad_field("difference", data.get("difference"), "true or false")
        if data.get("difference"):
            data["diff_mean"] = _numbers(data.get("diff_mean"), "diff_mean", c)
            data["diff_std"] = _numbers(data.get("diff_std"), "diff_std", c, True)
        if data.get("float32_steps"):
            data["float32_steps"] = _numbers(data["float32_steps"], "float32_steps", c * (2 if data.get("difference") else 1))
        return data

    @classmethod
    def fit_from(cls, series: list[np.ndarray], options: Any, notes: Mapping[str, Any]) -> SeriesTokens:
        tok = cls.fit(series, options.series_patch, options.series_stride, options.series_norm)
        if not getattr(options, "cf_difference", None):
            return replace(tok, float32_steps=series_steps(series, None, tok.norm, tok.std, []))
        diffs = [first_difference(s) for s in series]
        stats = cls.fit(diffs, tok.patch, tok.stride, tok.norm)
        return replace(tok, difference=True, diff_mean=stats.mean, diff_std=stats.std,
                       float32_steps=series_steps(series, diffs, tok.norm, tok.std, stats.std))

    @classmethod
    def fit(cls, series: list[np.ndarray], patch: int | None, stride: int | None, norm: str) -> SeriesTokens:
        empty = [i for i, s in enumerate(series) if s.shape[-1] == 0]
        if empty or not series:
            raise DataError(f"training series {empty[0] + 1 if empty else ''} has 0 points; every series needs at "
                            "least one point (drop the empty ones)" if empty else "no training series")
        longest = max(s.shape[1] for s in series)
        patch = patch or max(1, math.ceil(longest / MAX_SERIES_TOKENS))
        stride = stride or patch
        flat = np.concatenate([s for s in series], axis=1).astype(np.float64)  # (C, total)
        mean, std = np.nanmean(flat, axis=1), np.nanstd(flat, axis=1)
        tokens = cls._count(longest, patch, stride)
        with warnings.catch_warnings():  # a channel missing throughout: no spread, its std is written as 1
            warnings.simplefilter("ignore", RuntimeWarning)
            spread = np.nanmax(flat, axis=1) - np.nanmin(flat, axis=1)
        return cls(series[0].shape[0], patch, stride, norm, [float(m) for m in np.nan_to_num(mean)],
                   [fitted_std(float(s), float(r), f"channel {c}") for c, (s, r) in
                    enumerate(zip(np.nan_to_num(std), spread, strict=True))], tokens)

    @staticmethod
    def _count(length: int, patch: int, stride: int) -> int:
        return 1 + max(0, math.ceil((length - patch) / stride))

    def spec(self) -> dict[str, int]:
        return {"seq_len": self.max_tokens, "token_dim": self.patch * self.channels * (2 if self.difference else 1)}

    @property
    def max_points(self) -> int:
        """The most points of a series it keeps (its sequence length of windows)."""
        return (self.max_tokens - 1) * self.stride + self.patch

    def longest(self) -> tuple[str, str]:
        """(what its examples are, the most of one it reads), for the note on new inputs it cut."""
        return "series", f"{self.max_points} points"

    def _normalise(self, s: np.ndarray, difference: bool = False) -> np.ndarray:
        s = s.astype(np.float64)
        if self.norm == "series":
            mean, std = np.nanmean(s, axis=1, keepdims=True), np.nanstd(s, axis=1, keepdims=True)
            s = (s - np.nan_to_num(mean)) / np.where(np.nan_to_num(std) > 0, std, 1.0)
        elif self.norm == "global":
            mean, std = (self.diff_mean, self.diff_std) if difference else (self.mean, self.std)
            s = (s - np.array(mean)[:, None]) / np.array(std)[:, None]
        # missing points ('?') become the mean; an infinity stays one, for check_finite to name
        return np.nan_to_num(s, nan=0.0, posinf=np.inf, neginf=-np.inf)

    def __call__(self, series: list[np.ndarray]) -> tuple[Tensor, Tensor | None]:
        n, T, d = len(series), self.max_tokens, self.spec()["token_dim"]
        out = np.zeros((n, T, d), dtype=np.float32)
        lengths = np.zeros(n, dtype=np.int64)
        self.cut = 0
        for i, s in enumerate(series):
            if self.difference:  # (2C, L): the series' channels, then its difference's, each window channel-major
                s = np.concatenate([self._normalise(s), self._normalise(first_difference(s), True)])
            else:
                s = self._normalise(s)  # (C, L)
            count = self._count(s.shape[1], self.patch, self.stride)
            if count > T:
                self.cut += 1
                count = T
            need = (count - 1) * self.stride + self.patch
            padded = np.zeros((s.shape[0], max(need, s.shape[1])))
            padded[:, : s.shape[1]] = s
            windows = sliding_window_view(padded, self.patch, axis=1)[:, ::self.stride][:, :count]  # (C, count, patch)
            out[i, :count] = windows.transpose(1, 0, 2).reshape(count, d)
            lengths[i] = count
        import torch

        return torch.from_numpy(out), torch.from_numpy(lengths)

    def describe(self) -> dict[str, Any]:
        diff = " and the same window of its first difference" if self.difference else ""
        return {"tokens": f"windows of {self.patch} points every {self.stride}{diff} (x {self.channels} channel(s) = "
                          f"{self.spec()['token_dim']} values per token), up to {self.max_tokens} tokens",
                "normalised": {"series": "each series and channel to mean 0, std 1",
                               "global": "train mean/std per channel", "none": "no"}[self.norm]}

    def to_json(self) -> dict[str, Any]:
        # without the difference, data.json as before it existed (older fpt reads it; files compare equal)
        skip = () if self.difference else ("difference", "diff_mean", "diff_std")
        return {k: v for k, v in asdict(self).items() if k not in skip}


# --- symbol sequences -------------------------------------------------------------------


@dataclass
class SequenceTokens:
    mode: str  # chars | words
    vocab: list[str]  # id 2 + i is vocab[i]
    max_len: int
    kind: str = "sequence"
    # the Unicode form every text is read in: "NFC" since round 8 of the hostile inputs; None, a run saved before,
    # reads them as written (its vocabulary was made so). A text typed on one machine and copied from a macOS file
    # name or some web page writes 'é' as one character or as 'e' and a combining accent (NFD): two symbols, and two
    # words, unknown to a model trained on the other
    form: str | None = None
    # what a character is: "graphemes", what a reader sees as one (Unicode's extended grapheme clusters: a flag, a
    # thumbs-up with its skin tone, a letter with a combining mark NFC has no one code point for), since round 15 of
    # the hostile inputs; None, a run saved before, reads code points (its vocabulary was made so): a flag was two
    # symbols, each a half no reader sees, and a family emoji seven
    unit: str | None = None

    @staticmethod
    def check_json(data: dict[str, Any]) -> dict[str, Any]:
        if data.get("mode") not in ("chars", "words"):
            raise bad_field("mode", data.get("mode"), "chars or words")
        if data.get("form") not in (None, "NFC"):
            raise bad_field("form", data.get("form"), "NFC or null")
        if data.get("unit") not in (None, GRAPHEMES):
            raise bad_field("unit", data.get("unit"), f"{GRAPHEMES} or null")
        if not isinstance(data.get("vocab"), list) or not all(isinstance(v, str) for v in data["vocab"]):
            raise bad_field("vocab", data.get("vocab"), "a list of symbols")
        _count_field(data.get("max_len"), "max_len")
        return data

    @classmethod
    def fit_from(cls, x: dict[str, np.ndarray], options: Any, notes: Mapping[str, Any]) -> SequenceTokens:
        """The one text column's symbols."""
        return cls.fit(next(iter(x.values())), options.sequence_tokens, options.sequence_max_len)

    @classmethod
    def fit(cls, texts: np.ndarray, mode: str, max_len: int | None) -> SequenceTokens:
        if mode == "auto":
            mode = sequence_mode(texts)[0]
        symbols = [cls._split(mode, t, "NFC", GRAPHEMES) for t in texts]
        counts = Counter(s for seq in symbols for s in seq)
        vocab = [s for s, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        longest = max((len(s) for s in symbols), default=1)
        return cls(mode, vocab, max_len or max(1, min(longest, MAX_SEQUENCE_LEN)), form="NFC", unit=GRAPHEMES)

    @staticmethod
    def _split(mode: str, text: Any, form: str | None, unit: str | None) -> list[str]:
        text = text_of(text)
        if form is not None:
            text = unicodedata.normalize(form, text)
        if mode == "words":
            return text.split()
        return graphemes(text.strip()) if unit == GRAPHEMES else list(text.strip())

    def unknown_only(self, texts: np.ndarray) -> np.ndarray:
        """Whether each text holds symbols and none of them is in the training vocabulary (read as the unknown
        symbol alone, the model reads nothing of it); a missing or empty text holds none."""
        known = set(self.vocab)
        split = (self._split(self.mode, t, self.form, self.unit) for t in texts)
        return np.array([bool(sym) and known.isdisjoint(sym) for sym in split], dtype=bool)

    def recased(self, text: str) -> str | None:
        """``text`` in upper or lower case where every symbol of it is then in the training vocabulary."""
        known = set(self.vocab)
        return next((c for c in (text.upper(), text.lower())
                     if known.issuperset(self._split(self.mode, c, self.form, self.unit))), None)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab) + 2

    def spec(self) -> dict[str, int]:
        return {"seq_len": self.max_len, "vocab_size": self.vocab_size}

    def longest(self) -> tuple[str, str]:
        """(what its examples are, the most of one it reads), for the note on new inputs it cut."""
        return "sequences", f"{self.max_len} symbols"

    def __call__(self, x: dict[str, np.ndarray]) -> tuple[Tensor, Tensor | None]:
        (texts,) = x.values()
        index = {s: i + 2 for i, s in enumerate(self.vocab)}
        out = np.full((len(texts), self.max_len), PAD_ID, dtype=np.int64)
        lengths = np.zeros(len(texts), dtype=np.int64)
        self.cut = 0
        for i, t in enumerate(texts):
            # empty: one unknown
            ids = [index.get(s, UNKNOWN_ID) for s in self._split(self.mode, t, self.form, self.unit)] or [UNKNOWN_ID]
            if len(ids) > self.max_len:
                self.cut += 1
                ids = ids[: self.max_len]
            out[i, : len(ids)] = ids
            lengths[i] = len(ids)
        import torch

        return torch.from_numpy(out), torch.from_numpy(lengths)

    def describe(self) -> dict[str, Any]:
        shown = "".join(self.vocab[:40]) if self.mode == "chars" else " ".join(self.vocab[:20])
        return {"tokens": f"one per {'character' if self.mode == 'chars' else 'word'}, ids from the training "
                          f"vocabulary ({len(self.vocab)} symbols + unknown + padding), cut at {self.max_len}",
                "vocabulary": shown + (" ..." if len(self.vocab) > (40 if self.mode == "chars" else 20) else "")}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


GRAPHEMES = "graphemes"  # SequenceTokens.unit: a character is an extended grapheme cluster


def graphemes(text: str) -> list[str]:
    """``text``'s characters as a reader sees them: Unicode's extended grapheme clusters (the ``regex`` module's
    ``\\X``, which transformers installs), so that a flag, an emoji with its skin tone or joined emoji, and a letter
    with its combining marks are one symbol each. A text with no code point that joins a cluster (``_joining``) is its
    code points, at the cost of ``list``: ``\\X`` took 50 times as long on text that is not ASCII."""
    if text.isascii() and "\r\n" not in text or _joining().isdisjoint(text):
        return list(text)
    import regex

    return regex.findall(r"\X", text)


@functools.cache
def _joining() -> frozenset[str]:
    """The code points that join the one before or after into one grapheme cluster (CR of CR LF, combining marks and
    other extenders, the zero-width joiner, spacing marks, prepended marks, regional indicators, Hangul jamo): a text
    holding none is one cluster per code point. Planes 0, 1 and 14 hold every one (tests/data test it)."""
    import regex

    joins = regex.compile(r"[\r\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}\p{GCB=Prepend}"
                          r"\p{GCB=Regional_Indicator}\p{GCB=L}\p{GCB=V}\p{GCB=T}]")
    planes = [*range(0xD800), *range(0xE000, 0x20000), *range(0xE0000, 0xE1000)]  # no surrogates
    return frozenset(joins.findall("".join(map(chr, planes))))


def text_of(value: Any) -> str:
    """A symbol sequence's value as its text: bytes (h5py's strings, numpy's dtype S, a database's) as the UTF-8 text
    they hold, not their repr ("b'ACGT'", three symbols the model never saw beside its own, read without a word);
    None, NaN and pandas' NA or NaT (a missing cell as a table's reader holds it) as no text, as predict reads them:
    training read NaN as the text 'nan', three symbols in the vocabulary; anything else as ``str``."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ in ("NAType", "NaTType"):
        return ""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"a text given as bytes is not UTF-8 ({value[:30]!r}: {exc.reason} at byte {exc.start}); "
                            "decode the texts yourself (e.g. b.decode('latin-1')) and give them as str") from None
    return str(value)


def sequence_mode(texts: np.ndarray) -> tuple[str, str | None]:
    """``--sequence-tokens auto``'s choice for the training texts, and why it reads characters of texts that hold
    spaces. Words when the texts are split by spaces into words that recur: at least half the words written are words
    written more than once, as a sentence's are. A space in texts whose words hardly recur (one stray space among DNA
    strings, or DNA written in GenBank's blocks of ten) read every text as one or two words of its own, every
    held-out text as unknown symbols, and trained a model that could learn nothing, unsaid."""
    spaced = sum(" " in text_of(t).strip() for t in texts if t is not None)
    if not spaced:
        return "chars", None
    counts = Counter(w for t in texts if t is not None for w in text_of(t).split())
    written = sum(counts.values())
    once = sum(c == 1 for c in counts.values())
    if (written - once) * 2 >= written:
        return "words", None
    return "chars", (f"{spaced} of {len(texts)} texts hold a space, but {once} of their {written} words "
                     "occur only once, so each text is read one symbol per character (the space one of them), not "
                     "as words that held-out texts would not share")


Tokeniser = TabularTokens | ImageTokens | SeriesTokens | SequenceTokens


def check_finite(x: Tensor, where: str) -> Tensor:
    """Tokens ``x`` (n, T, d) unless an example's tokens are not finite: an infinite input, or a value that left
    float32's range once standardised (1e40, or a tiny training std), which the model would turn into NaN."""
    # the least and greatest values, in one pass without a mask the size of x (isfinite's took seconds on 200,000
    # rows of a table's tokens): NaN anywhere makes both NaN, and an infinity is one of them
    import torch

    if x.is_floating_point() and x.numel() and not bool(torch.isfinite(torch.stack(torch.aminmax(x))).all()):
        bad = ~torch.isfinite(x.reshape(len(x), -1)).all(dim=1)
        first = int(torch.nonzero(bad)[0, 0])
        raise DataError(f"{where}: example {first + 1} ({int(bad.sum())} in all) gives values beyond float32's range "
                        "(±3.4e38) once standardised with the training mean and std: an infinite input, or one far "
                        "outside the training data's scale; fix or drop those examples")
    return x


_SMALLEST_STD = 1e-30  # smaller: a difference of 1e9 from the mean leaves float32's range


def fitted_std(std: float, spread: float, what: str) -> float:
    """The standard deviation fitting writes for a column or channel: 1 where it is constant (``spread``, max - min,
    0 or NaN); a spread so small that the std falls below ``_SMALLEST_STD`` is an error, naming ``what``: values of
    1e-40 trained and then ``fpt.load`` refused the run as corrupt (``_scale``), and subnormal ones (1e-315), whose
    variance underflows to 0, trained as a constant, their differences lost without a word."""
    if std >= _SMALLEST_STD:
        return std
    if not spread > 0:
        return 1.0
    raise DataError(f"{what} varies by only {spread:.3g} (standard deviation {std:.3g}), below the {_SMALLEST_STD:g} "
                    "a model can standardise by in float32; rescale it (multiply it by a power of ten)")


def bad_field(field: str, value: Any, expected: str) -> DataError:
    """A saved tokeniser's field that fitting would not have written, as a one-line DataError."""
    return DataError(f"tokeniser field {field!r} is {str(value)[:40]!r}, expected {expected}")


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise bad_field(field, value, "a finite number")
    return float(value)


def _scale(value: Any, field: str) -> float:
    """A standard deviation read back: 0 (or less) would divide every input by 0 (NaN predictions); 1 is what
    fitting writes for a constant column."""
    value = _number(value, field)
    if 0 < value < _SMALLEST_STD:  # 1e-300: every standardised input would leave float32's range (NaN rows)
        raise bad_field(field, value, f"a standard deviation >= {_SMALLEST_STD:g} (fitting writes 1 for a constant column)")
    return value if value > 0 else 1.0


def _count_field(value: Any, field: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise bad_field(field, value, f"an integer >= {least}")
    return value


def _numbers(values: Any, field: str, n: int, scale: bool = False) -> list[float]:
    if not isinstance(values, list) or len(values) != n:
        raise bad_field(field, values, f"a list of {n} number(s)")
    return [(_scale if scale else _number)(v, f"{field}[{i}]") for i, v in enumerate(values)]


__all__ = ["ImageTokens", "SequenceTokens", "SeriesTokens", "TabularTokens", "Tokeniser", "bad_field", "check_finite",
           "text_of"]
