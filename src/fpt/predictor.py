"""A trained model ready to predict, without its dataset: ``fpt.load(RUN_DIR or EXPORT_DIR)``.

    model = fpt.load("runs/bc")                 # or a directory written by fpt export
    model.predict("new.csv")                    # labels (values for regression), in the data's own units
    model.predict_proba(df)                     # (n, classes); a DataFrame, dict of columns, arrays or a path
    model.score("test.csv")                     # {'accuracy': ...} when the inputs hold the target column(s)

A ``--data`` model takes raw inputs in the formats training read (``fpt.data.inputs``: checked
against the training schema, tokenised with the run's saved tokeniser, never refitted). A paper
task's model takes its raw tokens: (n, T, d) floats or (n, T) ids, as ``exp.data.eval_sets`` hold
them (optionally with ``lengths``). Either also takes a ``torch.Tensor`` of tokens as they are.

Held-out sets are run as ``fpt.train.evaluate`` runs them (sorted by length, padding trimmed,
``eval_batch_size`` at a time, the run's precision), so that scores match ``fpt eval`` exactly.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from fpt.config import RunConfig
from fpt.data.arrays import decoded
from fpt.data.host import targets_array
from fpt.data.inputs import Inputs, Schema, as_inputs, load_npz
from fpt.data.tokenisers import check_finite
from fpt.errors import ConfigError, SchemaError, Wording, entry, option, python_entry
from fpt.feature_map import scores_only
from fpt.model import FPT, InputSpec
from fpt.objectives import Objective

if TYPE_CHECKING:
    from fpt.tasks.user_data import Preprocessing

Tensor = torch.Tensor


def input_spec(prep: Preprocessing) -> InputSpec:
    """The model input of a --data run, from data.json alone (as fpt.tasks.user_data builds the task's)."""
    num_classes = max(len(c) for c in prep.classes) if prep.classes else 1
    return InputSpec(num_classes=num_classes, per_token=len(prep.targets), **prep.tokeniser.spec())


@dataclass
class Prediction:
    """Predictions for a set of inputs, as a table (``columns``), and their scores when targets were given."""

    columns: dict[str, list[Any]]
    metrics: dict[str, float] | None
    rows: int
    where: str
    notes: list[str] = field(default_factory=list)  # what was done to the inputs (e.g. series cut to the trained length)
    # a classifier of one output scored on labelled inputs: each class's precision, recall, F1 and support (the rows
    # of scikit-learn's classification_report), in the model's class order
    per_class: list[dict[str, Any]] | None = None

    def to_csv(self, path: str | Path) -> None:
        """The table as CSV at ``path`` (whatever its suffix; ``write`` picks the format from it)."""
        from fpt import rundir

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        rundir.write_text(Path(path), self._delimited(","))  # atomic: a kill never leaves half a table

    def write(self, path: str | Path) -> None:
        """The table at ``path`` in the format its suffix names (``output_format``): CSV (.csv, .txt, none), TSV
        (.tsv, .tab), JSON lines (.jsonl, .ndjson, .json) or Parquet (.parquet, .pq); ``-``: CSV on stdout."""
        with entry(WRITE):  # a Python caller's file is write's path; fpt predict's is its --out
            kind = output_format(path)
            self._write(path, kind)

    def _write(self, path: str | Path, kind: str) -> None:
        import sys

        from fpt import rundir

        if str(path) == STDOUT:  # row by row: a reader that stops early (| head) is told at the next row
            self._delimited(",", sys.stdout)
            sys.stdout.flush()
            return
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if kind in ("parquet", "feather"):
            rundir.write_bytes(Path(path), self._arrow(path, kind))
        else:
            rundir.write_text(Path(path), self._jsonl() if kind == "jsonl" else self._delimited("\t" if kind == "tsv"
                                                                                                 else ","))

    def _delimited(self, delimiter: str, stream: Any = None) -> str:
        """The table as delimited text, returned, or written to ``stream`` (then "")."""
        import csv
        import io

        buf = io.StringIO() if stream is None else stream
        writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
        writer.writerow(list(self.columns))
        # column by column, then csv's own loop over the rows: a row of Python calls per line took seconds at 200,000
        # rows; csv.writer still writes every cell (floats as repr, None empty, quoting), so the bytes are the same
        writer.writerows(zip(*map(_cells, self.columns.values()), strict=True))
        return buf.getvalue() if stream is None else ""

    def _jsonl(self) -> str:
        from fpt.data.json_lines import json_lines

        # strict JSON: a value JSON cannot hold (NaN) is null, as fpt's own JSON files write it
        return json_lines(self.columns)

    def _arrow(self, path: str | Path, kind: str) -> bytes:
        """The table as a Parquet or Arrow/Feather file's bytes."""
        import pyarrow as pa
        import pyarrow.feather as feather
        import pyarrow.parquet as pq

        arrays = {}
        for name, values in self.columns.items():
            try:
                arrays[name] = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # labels of mixed types: no one Parquet type holds them
                raise ConfigError(f"{option('out')} {path}: column {name!r} mixes value types ({exc}), which no {kind.title()} "
                                  "column holds; write .csv or .jsonl instead") from None
        sink = pa.BufferOutputStream()
        (pq.write_table if kind == "parquet" else feather.write_feather)(pa.table(arrays), sink)
        return sink.getvalue().to_pybytes()


STDOUT = "-"  # --out -: the CSV on standard output
WRITE = Wording(flags=False, names={"out": "path"})  # Prediction.write(path): the file fpt predict names --out
# --out's suffix -> the format written; the table formats --data reads (fpt.data.tables), so a prediction reads back
OUTPUT_FORMATS = {".csv": "csv", ".txt": "csv", "": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
                  ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet", ".feather": "feather",
                  ".arrow": "feather"}


def output_format(path: str | Path) -> str:
    """The format a predictions file at ``path`` is written in, from its suffix: csv, tsv, jsonl, parquet or feather. Any
    other suffix (.xlsx, .npz, ...) is a ConfigError: CSV text under such a name would be read as garbage."""
    if str(path) == STDOUT:
        return "csv"
    suffix = Path(path).suffix.lower()
    if suffix not in OUTPUT_FORMATS:
        raise ConfigError(f"{option('out')} {path}: fpt writes predictions as .csv, .tsv, .jsonl, .parquet or .feather "
                          f"(or - for CSV on standard output), not {suffix!r}; choose one of those names")
    return OUTPUT_FORMATS[suffix]


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cells(values: list[Any]) -> list[Any]:
    """``_cell`` of each value, tested once per distinct text that needs it (most columns have none)."""
    risky = {v for v in values if isinstance(v, str) and v.startswith(_FORMULA_START)}
    if not risky:
        return values
    fixed = {v: _cell(v) for v in risky}
    return [fixed[v] if isinstance(v, str) and v in fixed else v for v in values]


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet cannot run: text starting like a formula (=, +, -, @, tab, CR) gets a leading quote,
    as OWASP advises against CSV injection (a label such as ``=cmd|...``); numbers are kept as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


def _hf_habit(name: str, source: str | None) -> str | None:
    """For a Hugging Face habit (``from_pretrained``, ``save_pretrained``, ``push_to_hub``), the fpt call that does it.
    Real methods would import fpt.run and fpt.export, which import this module (a circle fpt.layers forbids), and
    fpt.load stays the one loader, of a run and of an export alike. An AttributeError, so hasattr stays False."""
    came = f"; this model came from {source}, which fpt.load reads as it is" if source else ""
    if name == "from_pretrained":
        return ("Predictor has no from_pretrained: fpt.load(path) loads a run directory (fpt train's) or an export "
                "(fpt export's) as a Predictor; fpt.load(path, which='checkpoint') takes a run's latest checkpoint")
    if name == "save_pretrained":
        return ("Predictor has no save_pretrained: fpt.Run(run_dir).export(out) (fpt export RUN_DIR OUT) writes a "
                f"self-contained directory that fpt.load(out) reads back{came}")
    if name == "push_to_hub":
        return ("Predictor has no push_to_hub: fpt.Run(run_dir).export(out) writes a self-contained directory (its "
                "README.md a model card); upload that folder (huggingface_hub.upload_folder(folder_path=out, "
                f"repo_id=...)) and fpt.load reads it once downloaded{came}")
    return None


class _PredictorType(type):
    """Predictor's class: ``Predictor.from_pretrained`` (a class attribute) fails naming fpt's call for it."""

    def __getattr__(cls, name: str) -> Any:
        said = _hf_habit(name, None)
        if said is None:
            raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")
        raise AttributeError(said)


@dataclass
class Predictor(metaclass=_PredictorType):
    """A trained FPT and everything needed to turn inputs into predictions (see the module docstring)."""

    model: FPT
    config: RunConfig
    spec: InputSpec
    objective: Objective
    preprocessing: Preprocessing | None
    body_fingerprint: str
    device: torch.device
    lengths: bool  # whether inputs carry lengths (padded, variable-length tokens)
    info: dict[str, Any] = field(default_factory=dict)  # facts about the training data (task_info)
    source: str = ""  # the run or export directory, for messages
    checkpoint: dict[str, Any] = field(default_factory=dict)  # which parameters: slot, step, version
    progress: bool = False  # a bar of the examples done while they run, on a terminal's stderr (fpt predict's)

    # ------------------------------------------------------------------------------------------ what it is

    @property
    def schema(self) -> Schema | None:
        if self.preprocessing is None:
            return None
        return Schema(self.preprocessing, self.info, self.config.max_categories)

    @property
    def classes(self) -> list[list[Any]] | None:
        """Per output, the label of each class index (--data classification); None for regression and paper tasks."""
        return None if self.preprocessing is None else self.preprocessing.classes

    @property
    def output_names(self) -> list[str]:
        """One name per prediction an example gets: the target columns, or output indices for paper tasks."""
        if self.preprocessing is not None:
            return list(self.preprocessing.targets)
        return [str(i) for i in range(self.spec.num_outputs * self.spec.per_token)]

    @property
    def is_classifier(self) -> bool:
        return self.objective.name == "classification"

    @property
    def gives_probabilities(self) -> bool:
        """Whether the class outputs are probabilities once softmaxed (not a ridge head's scores: ``scores_only``)."""
        return self.is_classifier and not scores_only(self.config.fit, self.config.cf_head)

    def __getattr__(self, name: str) -> Any:  # only for names the instance lacks: a Hugging Face habit is named
        said = _hf_habit(name, self.__dict__.get("source")) if not name.startswith("_") else None
        if said is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        raise AttributeError(said)

    def __repr__(self) -> str:
        what = self.preprocessing.modality if self.preprocessing is not None else self.config.task
        return (f"Predictor({self.source!r}: {what} {self.objective.name}, body {self.config.body!r}, "
                f"{self.spec.seq_len} tokens, outputs {self.output_names[:5]})")

    # ------------------------------------------------------------------------------------------ inputs

    @python_entry
    def tokens(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False,
               no_targets: bool = False) -> tuple[Tensor, Tensor | None, Inputs | None]:
        """(tokens, lengths, the raw Inputs read) for any accepted input; tensors pass through as tokens.
        ``no_targets``: the inputs hold no targets (a UCR .tsv of the series alone: every field a value)."""
        if isinstance(inputs, Tensor):
            return self._check_tokens(inputs, "inputs"), self._lengths(lengths, len(inputs)), None
        if self.preprocessing is None:
            return self._raw_tokens(inputs, lengths)
        read = as_inputs(inputs, self.schema, allow_unseen, no_targets)
        if not len(read):  # nothing new (a header-only file): no tokens, and no tokeniser asked (encoders refuse 0 rows)
            s = self.spec
            empty = torch.zeros((0, s.seq_len, s.token_dim)) if s.token_dim is not None else \
                torch.zeros((0, s.seq_len), dtype=torch.long)
            return empty, None, read
        tokeniser = self.preprocessing.tokeniser
        x, lens = tokeniser(read.x)
        check_finite(x, read.where)  # inf or 1e40 would be NaN probabilities
        cut = getattr(tokeniser, "cut", 0)  # examples longer than the model reads, cut as training cut its own
        if cut:
            from fpt.data.inputs import CutInputWarning

            what, most = tokeniser.longest()  # the padded modalities' tokenisers cut (fpt.data.tokenisers)
            note = (f"{read.where}: {cut} of {len(read)} {what} longer than the model reads ({most}, the longest "
                    f"training one) {'was' if cut == 1 else 'were'} cut to their first {most}, as training cut its "
                    "own longer ones")
            read.notes.append(note)
            warnings.warn(note, CutInputWarning, stacklevel=3)
        for name, (count, low, high) in getattr(tokeniser, "beyond", {}).items():  # a table's date columns
            from fpt.data.dates import day_text
            from fpt.data.inputs import DatesBeyondWarning

            note = (f"{read.where}: column {name!r} holds {count} of {len(read)} dates beyond the training dates "
                    f"({day_text(low)} .. {day_text(high)}); the model reads their time and year as that range's "
                    "nearest end (their calendar parts as they are): it learnt no trend beyond it")
            read.notes.append(note)
            warnings.warn(note, DatesBeyondWarning, stacklevel=3)
        return x, lens, read

    def _lengths(self, lengths: Any, n: int) -> Tensor | None:
        if lengths is None:
            return None
        lens = torch.as_tensor(np.asarray(lengths), dtype=torch.int64).reshape(-1)
        if len(lens) != n:
            raise SchemaError(f"lengths: {len(lens)} values for {n} inputs; give one length per example")
        return lens

    def _check_tokens(self, x: Tensor, where: str) -> Tensor:
        spec = self.spec
        if spec.token_dim is not None:
            if x.ndim != 3 or x.shape[2] != spec.token_dim or not 1 <= x.shape[1] <= spec.seq_len:
                # a batch of images as torchvision gives it, (n, C, H, W), or a table's rows as tensors: a tensor is
                # read as tokens, an array as the raw inputs training read
                raw = "" if self.schema is None else (
                    "; to give images, pass a NumPy array (tensor.numpy(): uint8 0-255 or floats 0-1, not normalised) "
                    "or PIL images" if self.schema.modality == "image" and x.ndim in (3, 4) else
                    f"; a tensor is read as tokens: to give {self.schema.modality} inputs as training read them, pass "
                    "a NumPy array (tensor.detach().cpu().numpy())")
                raise SchemaError(f"{where}: tokens of shape {tuple(x.shape)}; the model takes (n, T, {spec.token_dim}) "
                                  f"values with T <= {spec.seq_len}{raw}")
            return x.float()
        if x.ndim != 2 or not 1 <= x.shape[1] <= spec.seq_len:
            raise SchemaError(f"{where}: ids of shape {tuple(x.shape)}; the model takes (n, T) token ids with "
                              f"T <= {spec.seq_len}")
        if x.is_floating_point() and not torch.equal(x, x.round()):
            raise SchemaError(f"{where}: token ids must be integers")
        x = x.long()
        if len(x) and (int(x.min()) < 0 or int(x.max()) >= spec.vocab_size):
            raise SchemaError(f"{where}: token ids in [{int(x.min())}, {int(x.max())}]; the model's vocabulary is "
                              f"0..{spec.vocab_size - 1}")
        return x

    def _raw_tokens(self, inputs: Any, lengths: Any) -> tuple[Tensor, Tensor | None, Inputs | None]:
        """A paper task's raw tokens: an array, or an .npz of X (and optionally y and lengths)."""
        where, y = "inputs", None
        if isinstance(inputs, (str, Path)):
            path = Path(inputs)
            if not path.is_file() or path.suffix.lower() != ".npz":
                raise SchemaError(f"{path}: the {self.config.task} model takes its tokens as an .npz of X "
                                  f"{self._token_shape()} (optionally y and lengths); "
                                  + ("no such file" if not path.exists() else "give one"))
            arrays = load_npz(path)
            from fpt.data.arrays import check_names

            check_names(arrays, ["X", "y", "lengths"], path)
            if "X" not in arrays:
                raise SchemaError(f"{path}: arrays {sorted(arrays)}; give X {self._token_shape()} (and optionally y, "
                                  "lengths)")
            where, inputs, y = f"{path} (X)", arrays["X"], arrays.get("y")
            lengths = arrays.get("lengths", lengths)
        x = self._check_tokens(torch.as_tensor(np.asarray(inputs)), where)
        if y is not None:
            y = np.asarray(y).reshape(len(y), -1)
            if len(y) != len(x):
                raise SchemaError(f"{where}: {len(x)} inputs but {len(y)} rows of y; they must match one to one")
        return x, self._lengths(lengths, len(x)), Inputs(None, y, where) if y is not None else None

    def _token_shape(self) -> str:
        s = self.spec
        return f"(n, {s.seq_len}, {s.token_dim}) floats" if s.token_dim is not None else f"(n, {s.seq_len}) ids"

    # ------------------------------------------------------------------------------------------ outputs

    def forward(self, x: Tensor, lengths: Tensor | None = None, precision: str | None = None) -> Tensor:
        """Logits (n, k * m, C) on the CPU, computed in batches as ``fpt.train.evaluate`` does; ``precision``
        (fp32, bf16) overrides the run's, as an fp32 ONNX graph's check needs."""
        from fpt.inference import batched_outputs

        if not len(x):
            return torch.zeros(0, self.spec.num_outputs * self.spec.per_token, self.spec.num_classes)
        from fpt.pipeline import resolve_precision

        if precision is None:  # as training ran
            precision = resolve_precision(self.config.precision, self.device, self.config.preset)
        return batched_outputs(self.model, x, lengths, self.config.eval_batch_size, self.device, precision,
                               trim=self.config.trim_padding, progress=self.progress)

    @python_entry
    def logits(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False,
               no_targets: bool = False) -> np.ndarray:
        """Raw outputs (n, k * m, C): class logits, or standardised values (C = 1) for regression."""
        x, lens, _ = self.tokens(inputs, lengths, allow_unseen, no_targets)
        return self.forward(x, lens).numpy()

    def _masked(self, logits: Tensor) -> Tensor:
        """Logits with the class slots a target does not have set to -inf (targets with fewer classes than the head)."""
        classes = self.classes
        if classes is None or all(len(c) == self.spec.num_classes for c in classes):
            return logits
        mask = torch.full((len(classes), self.spec.num_classes), float("-inf"))
        for j, c in enumerate(classes):
            mask[j, : len(c)] = 0
        return logits + mask

    def _proba(self, logits: Tensor) -> np.ndarray:
        if not self.is_classifier:
            raise ConfigError(f"{self.source}: a regression model has no class probabilities; use predict()")
        if not self.gives_probabilities:
            raise ConfigError(f"{self.source}: fitted in closed form with cf_head={self.config.cf_head}, whose class "
                              f"scores are not probabilities; fit with {option('cf_head', 'logistic')} for probabilities; "
                              "predict() "
                              "gives the labels, logits() the class scores")
        return self._masked(logits).softmax(-1).numpy()  # (n, P, C)

    def _values(self, logits: Tensor) -> np.ndarray:
        """Predictions (n, P): labels (class indices for paper tasks), or values in the targets' units."""
        if not self.is_classifier:
            return self.objective.predict(logits).numpy().astype(np.float64)  # (n, m), un-standardised
        index = self._masked(logits).argmax(-1).numpy()  # (n, P)
        if self.classes is None:
            return index
        out = np.empty(index.shape, dtype=object)
        for j, labels in enumerate(self.classes):
            out[:, j] = [labels[i] for i in index[:, j]]
        # no rows (a header-only file, an empty DataFrame): the labels' own kind, as rows would have it, not object
        kinds = {type(v) for v in out.ravel()} if out.size else {type(v) for labels in self.classes for v in labels}
        return out.astype(kinds.pop()) if len(kinds) == 1 and kinds <= {int, float, str, bool} else out

    @python_entry
    def predict_proba(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False,
                      no_targets: bool = False) -> np.ndarray:
        """Class probabilities: (n, C), or (n, outputs, C) for several outputs per example."""
        proba = self._proba(torch.from_numpy(self.logits(inputs, lengths, allow_unseen, no_targets)))
        return proba[:, 0] if proba.shape[1] == 1 else proba

    @python_entry
    def predict(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False,
                no_targets: bool = False) -> np.ndarray:
        """Labels (values for regression): (n,), or (n, outputs) for several outputs per example. ``no_targets``:
        the inputs hold no targets (``fpt predict --no-targets``: a UCR .tsv of the series alone). A string is a
        file's path: a symbol-sequence model's one text goes in a list, ``predict(["ACGT"])``."""
        values = self._values(torch.from_numpy(self.logits(inputs, lengths, allow_unseen, no_targets)))
        return values[:, 0] if values.shape[1] == 1 else values

    def _targets(self, logits: Tensor, read: Inputs) -> Tensor:
        """The inputs' targets as the model's outputs are scored against them: class indices, or standardised values."""
        if self.preprocessing is not None:
            return self.preprocessing.encode_targets(read.y, read.where)
        y = torch.as_tensor(read.y.astype(np.int64))
        if y.shape[1] != logits.shape[1] or int(y.min()) < 0 or int(y.max()) >= self.spec.num_classes:
            raise SchemaError(f"{read.where}: y must be (n, {logits.shape[1]}) class indices in "
                              f"0..{self.spec.num_classes - 1}, not shape {tuple(y.shape)} in "
                              f"[{int(y.min())}, {int(y.max())}]")
        return y

    def _metrics(self, logits: Tensor, read: Inputs | None, y: Tensor | None = None) -> dict[str, float] | None:
        """The objective's metrics (accuracy, or R², MAE, MSE) when the inputs hold targets; as evaluate computes them.
        ``y``: the targets already encoded (``_targets``)."""
        if read is None or read.y is None:
            return None
        return self.objective.summarise(self.objective.tally(logits, self._targets(logits, read) if y is None else y))

    @python_entry
    def score(self, inputs: Any, y: Any = None, lengths: Any = None, allow_unseen: bool = False) -> Any:
        """With ``y``: as scikit-learn's ``score(X, y)``, one number: the accuracy of ``predict(inputs)`` against
        the labels ``y``, or R² for regression (several outputs: over all of them, R² averaged uniformly).
        Without: the metrics (a dict: accuracy, or R², MAE, MSE) of inputs that hold their targets (a file
        with the target column, a DataFrame with it, an .npz with y)."""
        if y is not None:
            return self._score_against(self.predict(inputs, lengths, allow_unseen), y)
        x, lens, read = self.tokens(inputs, lengths, allow_unseen)
        metrics = self._metrics(self.forward(x, lens), read)
        if metrics is None:
            raise SchemaError(f"{getattr(read, 'where', 'inputs')}: no targets to score against; give the target "
                              f"column(s) {', '.join(self.output_names)} (or y in an .npz)")
        return metrics

    def _score_against(self, predicted: np.ndarray, y: Any) -> float:
        truth = np.asarray(targets_array(y, "score: y", SchemaError))  # a tensor's values; a masked label refused
        truth = decoded(truth, "score", "y")  # labels as bytes (h5py's) are text, as training read them
        if truth.ndim == predicted.ndim + 1 and truth.shape[-1] == 1:
            truth = truth[..., 0]
        if truth.shape != predicted.shape:
            raise SchemaError(f"score: y has shape {truth.shape}, but the model predicts {predicted.shape} for these inputs; "
                              "give one target per example (one column per output)")
        if self.is_classifier:
            from fpt.data.base import plain_value

            truth = self._as_classes(truth.reshape(len(truth), -1))
            same = [a == plain_value(b) for a, b in zip(truth.reshape(-1), predicted.reshape(-1), strict=True)]
            return float(np.mean(same))
        from sklearn.metrics import r2_score

        return float(r2_score(truth.astype(np.float64), predicted.astype(np.float64)))

    def _as_classes(self, truth: np.ndarray) -> np.ndarray:
        """Labels ``truth`` (n, outputs) as the trained classes: each label as it is when it is one, else by its text
        (``str``: 1, 1.0, np.int64(1) and '1' are the label '1'; the classes' own texts must be distinct). aeon reads
        labels as text, so a model trained on '1', '2' is scored against y.astype(int) this way; labels that match no
        class either way are a SchemaError naming both, never a silent 0.0."""
        from fpt.data.base import plain_value

        out = np.empty(truth.shape, dtype=object)
        for j in range(truth.shape[1]):
            classes = self.classes[j] if self.classes is not None else list(range(self.spec.num_classes))
            known = set(classes)
            by_text = {str(c): c for c in classes}
            unambiguous = len(by_text) == len(classes)
            for i, v in enumerate(truth[:, j]):
                v = plain_value(v)
                if v in known and type(v) in {type(c) for c in classes}:  # True == 1: not the class 1 unless bool
                    out[i, j] = v
                elif unambiguous and str(v) in by_text:
                    out[i, j] = by_text[str(v)]
                else:
                    given = sorted({str(plain_value(u)) for u in truth[:, j]})
                    name = f" of {self.output_names[j]!r}" if truth.shape[1] > 1 else ""
                    raise SchemaError(f"score: label {v!r}{name} is not one of the model's classes; the model was "
                                      f"trained on {_few(classes)} ({type(classes[0]).__name__}), y holds "
                                      f"{_few(given)} ({np.asarray(truth[:, j]).dtype}); give y in the trained classes")
        return out

    @python_entry
    def predict_file(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False,
                     no_targets: bool = False) -> Prediction:
        """Predictions as a table: ``prediction`` (and ``proba_<class>`` columns; a closed-form ridge head's class
        scores, ``score_<class>``), one row per example, and the metrics when the inputs hold targets. Several
        outputs: ``prediction_<name>``, ``proba_<name>_<class>``. ``no_targets``: the inputs hold no targets
        (``fpt predict --no-targets``)."""
        x, lens, read = self.tokens(inputs, lengths, allow_unseen, no_targets)
        logits = self.forward(x, lens)
        names = self.output_names
        columns: dict[str, list[Any]] = {}
        if read is not None:
            # the input's own id columns first (dropped in training), unless a name of fpt's columns
            columns.update({k: v for k, v in read.carried.items() if not _output_name(k)})
        if read is not None and read.names is not None:
            columns[read.names_as] = list(read.names)
        values = self._values(logits)
        single = values.shape[1] == 1
        for j in range(values.shape[1]):
            # labels exactly as trained (a float label 100000001.5 is that class, not 1e8); values to the digits the
            # model's float32 outputs carry at the target's own spread
            scale = None if self.is_classifier else self.objective.scale[j]
            columns["prediction" if single else f"prediction_{names[j]}"] = _plain_column(values[:, j], scale)
        if self.is_classifier:
            # a ridge head's class scores are written as what they are (score_), not softmaxed into "probabilities"
            kind = "proba" if self.gives_probabilities else "score"
            proba = self._proba(logits) if self.gives_probabilities else logits.numpy()
            for j in range(proba.shape[1]):
                labels = self.classes[j] if self.classes is not None else list(range(self.spec.num_classes))
                for c, label in enumerate(labels):
                    name = f"{kind}_{label}" if single else f"{kind}_{names[j]}_{label}"
                    columns[name] = _six_digits(proba[:, j, c])
        where = read.where if read is not None else (str(inputs) if isinstance(inputs, (str, Path)) else "inputs")
        y = self._targets(logits, read) if len(x) and read is not None and read.y is not None else None
        metrics = self._metrics(logits, read, y) if y is not None else None  # no rows: nothing to score
        per_class = None
        if metrics is not None and self.is_classifier and values.shape[1] == 1:
            per_class = self._per_class(logits, y, metrics)
        return Prediction(columns, metrics, len(x), where, list(read.notes) if read is not None else [], per_class)

    def _per_class(self, logits: Tensor, y: Tensor, metrics: dict[str, float]) -> list[dict[str, Any]]:
        """A labelled file's scores per class, and (into ``metrics``) balanced accuracy and macro F1 as scikit-learn
        computes them: on imbalanced data accuracy alone hides a class the model never predicts."""
        import warnings

        from sklearn.metrics import balanced_accuracy_score, f1_score, precision_recall_fscore_support

        truth, predicted = y[:, 0].numpy(), logits.argmax(-1)[:, 0].numpy()
        labels = self.classes[0] if self.classes is not None else list(range(self.spec.num_classes))
        with warnings.catch_warnings():  # a class absent from the file: scikit-learn's warning, its figures 0
            warnings.simplefilter("ignore")
            precision, recall, f1, support = precision_recall_fscore_support(
                truth, predicted, labels=list(range(len(labels))), zero_division=0)
            metrics["balanced_accuracy"] = float(balanced_accuracy_score(truth, predicted))
            metrics["macro_f1"] = float(f1_score(truth, predicted, average="macro", zero_division=0))
        return [{"class": label, "precision": float(p), "recall": float(r), "f1": float(f), "support": int(n)}
                for label, p, r, f, n in zip(labels, precision, recall, f1, support, strict=True)]


def _output_name(name: str) -> bool:
    """Whether a column name is one of the prediction table's own (a carried input column of that name is left out)."""
    return name in {"file", "prediction"} or name.startswith(("prediction_", "proba_", "score_"))


def combine(outputs: list[Tensor], objective: Objective) -> Tensor:
    """A seed ensemble's outputs from its members' (each (n, P, C)): classification, the log of the members' mean
    class probability (so softmax gives the mean probability and cross-entropy the ensemble's own loss); regression,
    the mean output."""
    stacked = torch.stack([o.float() for o in outputs])
    if objective.name == "classification":
        # each member's probability over the classes its output has (targets of different class counts): unmasked,
        # a slot no class owns took a share of each member's probability, and fpt.ensemble's figures were of
        # another mean than the one the ensemble's predictions take
        stacked = objective.masked(stacked.reshape(-1, *stacked.shape[2:])).reshape(stacked.shape)
        # log-mean-exp of the log-probabilities, computed stably; a class slot every member masks stays -inf
        return torch.logsumexp(torch.log_softmax(stacked, -1), 0) - math.log(len(outputs))
    return stacked.mean(0)


@dataclass(repr=False)
class EnsemblePredictor(Predictor):
    """A seed ensemble (``fpt train --data F ensemble=N``): the first member's tokeniser and schema (the members
    share their training split, so their fitted preprocessing is the same), and outputs ``combine``d from every
    member's. Every method of ``Predictor`` (predict, predict_proba, score, predict_file) reads ``forward``."""

    members: list[Predictor] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Ensemble of {len(self.members)} seeds: {super().__repr__()}"

    def forward(self, x: Tensor, lengths: Tensor | None = None, precision: str | None = None) -> Tensor:
        return combine([m._masked(m.forward(x, lengths, precision)) for m in self.members], self.objective)


def rebuild(config: RunConfig, spec: InputSpec, load: Callable[[FPT], tuple[str, dict[str, Any]]], *,
            objective: Objective, preprocessing: Preprocessing | None, lengths: bool, info: dict[str, Any],
            source: str, init: str | None = None) -> Predictor:
    """A trained model ready to predict, the one path from saved parameters (a run's ``fpt.run.from_run``, an
    export's ``fpt.export.load_export``): ``config``'s model for ``spec`` (built with ``init`` when given);
    ``load(model)`` loads the trained parameters, checks the frozen body and returns (its fingerprint, which
    checkpoint); the model then runs on the config's device, dropout off."""
    from fpt.pipeline import build_model, resolve_device

    model = build_model(config if init is None else replace(config, init=init), spec)
    body_fp, which = load(model)
    device = resolve_device(config.device)
    return Predictor(model.to(device).eval(), config, spec, objective, preprocessing, body_fp, device, lengths, info,
                     source, which)


def _few(values: list, limit: int = 10) -> str:
    return "[" + ", ".join(repr(v) for v in values[:limit]) + (", ..." if len(values) > limit else "") + "]"


def _plain(v: Any, scale: float | None = None) -> Any:
    """A prediction as a plain Python value; a regression value (``scale``: its target's standard deviation) rounded
    to 7 significant digits of that spread, which is what the model's float32 output resolves: never to 7 digits
    of the value itself, which would write every timestamp near 1.7e9 as 1700000000.0."""
    if isinstance(v, np.generic):
        v = v.item()
    if scale is None or not isinstance(v, float) or not math.isfinite(v) or not scale > 0:
        return v
    return round(v, 6 - math.floor(math.log10(scale)))


def _plain_column(values: np.ndarray, scale: float | None = None) -> list[Any]:
    """``_plain`` of each value of a column: ``tolist`` gives the Python scalars ``item`` gives, without a numpy
    scalar per row (seconds at 200,000 rows); a column of objects (labels of mixed types) goes value by value."""
    if values.dtype == object:
        return [_plain(v, scale) for v in values]
    if scale is None or values.dtype.kind != "f" or not scale > 0:
        return values.tolist()
    return _rounded(np.asarray(values, dtype=np.float64), 6 - math.floor(math.log10(scale)))


def _rounded(v: np.ndarray, digits: int) -> list[float]:
    """``round(x, digits)`` of each value (infinities and NaN as they are), computed on the whole column: a ``round``
    per value took 0.36 s at 200,000 rows. ``round`` rounds the exact binary value to ``digits`` decimals, half to even,
    and returns the double nearest that decimal: ``rint(x * 10**digits)`` is that integer where the product, rounded
    once (|error| <= |product| * 2**-53), is not within that error of a half, and with the integer and 10**|digits|
    exact (below 2**52; |digits| <= 22) one IEEE division (or product) is the nearest double. The rest go by round."""
    out = v.copy()
    finite = np.isfinite(v)
    if abs(digits) <= 22:
        power = 10.0 ** abs(digits)
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = v * power if digits >= 0 else v / power
            r = np.rint(scaled)
            size = np.abs(scaled)
            trusted = finite & (size < 2.0**52) & (np.abs(np.abs(scaled - r) - 0.5) > size * 2.3e-16 + 1e-300)
            out[trusted] = (r / power if digits >= 0 else r * power)[trusted]
    else:
        trusted = np.zeros(len(v), dtype=bool)
    for i in np.flatnonzero(finite & ~trusted):
        out[i] = round(float(v[i]), digits)
    return out.tolist()


def _six_digits(values: np.ndarray) -> list[float]:
    """Probabilities (or scores) to 6 significant digits, each as the float its '.6g' text reads back as
    (``float(f"{p:.6g}")``), computed on the whole column: a text per value took 0.46 s per class column at 200,000
    rows. Each value's 6 digits are ``rint(p * 10**k)`` (k = 5 - its exponent), read back as ``r / 10**k``: with r and
    10**k both exact (|k| <= 22), IEEE division rounds the exact quotient once, as ``float`` rounds the decimal text.
    The product ``p * 10**k`` is rounded once too (|error| < 2.3e-10 at below 1e6), which can pick the other digit only
    near a half: those values, an exponent log10 misjudged, and |k| > 22 (below 1e-17, above 1e27) go by the text."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a signalling NaN's cast says "invalid"
        v = np.asarray(values, dtype=np.float64).reshape(-1)  # a float32's float64 is the Python float tolist gives
        out = v.copy()  # infinities, 0.0 and -0.0 are their own '.6g' reading; any NaN reads back as the positive one
        out[np.isnan(v)] = math.nan
        at = np.flatnonzero(np.isfinite(v) & (v != 0))
        a = v[at]
        k = 5 - np.floor(np.log10(np.abs(a))).astype(np.int64)
        power = 10.0 ** np.clip(np.abs(k), 0, 22)  # exact for these exponents
        up = k >= 0
        scaled = np.where(up, a * power, a / power)
        r = np.rint(scaled)  # half to even, as the text rounds a tie (a tie is never trusted below)
        size = np.abs(scaled)
        trusted = (np.abs(k) <= 22) & (size >= 1e5) & (size < 1e6) & (np.abs(np.abs(scaled - r) - 0.5) > 1e-9)
        out[at] = np.where(up, r / power, r * power)
    for i in at[~trusted]:
        out[i] = _six_digits_text(float(v[i]))
    return out.tolist()


def _six_digits_text(p: float) -> float:
    """The reference ``_six_digits`` keeps for the values it cannot trust its arithmetic on: the '.6g' text's float."""
    return float(f"{p:.6g}")


__all__ = ["OUTPUT_FORMATS", "STDOUT", "Prediction", "Predictor", "input_spec", "output_format", "rebuild"]
