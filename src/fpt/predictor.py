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

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from fpt.config import RunConfig
from fpt.data.inputs import Inputs, Schema, as_inputs, load_npz
from fpt.errors import CheckpointError, SchemaError
from fpt.model import FPT, InputSpec
from fpt.objectives import Objective

if TYPE_CHECKING:
    from fpt.runs import Run
    from fpt.tasks.user_data import Preprocessing

Tensor = torch.Tensor
LENGTH_MODALITIES = ("timeseries", "sequence")  # --data tokenisers that pad and return lengths


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

    def to_csv(self, path: str | Path) -> None:
        import csv
        import io

        from fpt import rundir

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(list(self.columns))
        writer.writerows(zip(*self.columns.values(), strict=True))
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        rundir.write_text(Path(path), buf.getvalue())  # atomic: a kill never leaves half a table


@dataclass
class Predictor:
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

    def __repr__(self) -> str:
        what = self.preprocessing.modality if self.preprocessing is not None else self.config.task
        return (f"Predictor({self.source!r}: {what} {self.objective.name}, body {self.config.body!r}, "
                f"{self.spec.seq_len} tokens, outputs {self.output_names[:5]})")

    # ------------------------------------------------------------------------------------------ inputs

    def tokens(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False) -> tuple[Tensor, Tensor | None,
                                                                                             Inputs | None]:
        """(tokens, lengths, the raw Inputs read) for any accepted input; tensors pass through as tokens."""
        if isinstance(inputs, Tensor):
            return self._check_tokens(inputs, "inputs"), self._lengths(lengths, len(inputs)), None
        if self.preprocessing is None:
            return self._raw_tokens(inputs, lengths)
        read = as_inputs(inputs, self.schema, allow_unseen)
        x, lens = self.preprocessing.tokeniser(read.x)
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
                raise SchemaError(f"{where}: tokens of shape {tuple(x.shape)}; the model takes (n, T, {spec.token_dim}) "
                                  f"values with T <= {spec.seq_len}")
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

    def _autocast(self) -> torch.autocast:
        """The run's precision (bf16 autocast on CUDA by default), as ``Experiment.autocast``."""
        from fpt.experiment import autocast

        return autocast(self.config.precision, self.device)

    @torch.inference_mode()
    def forward(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        """Logits (n, k * m, C) on the CPU, computed in batches as ``fpt.train.evaluate`` does."""
        self.model.eval()
        order = None
        trim = lengths is not None and self.config.trim_padding
        if trim:  # similar lengths per batch waste less padding (evaluate's order, so its numbers match ours)
            order = torch.argsort(lengths)
            x, lengths = x[order], lengths[order]
        size = self.config.eval_batch_size
        outs = []
        for start in range(0, len(x), size):
            xb = x[start:start + size]
            lb = None if lengths is None else lengths[start:start + size]
            if trim and xb.shape[1]:
                xb = xb[:, : int(lb.max())]
            with self._autocast():
                out = self.model(xb.to(self.device), None if lb is None else lb.to(self.device))
            outs.append(out.float().cpu())
        if not outs:
            return torch.zeros(0, self.spec.num_outputs * self.spec.per_token, self.spec.num_classes)
        logits = torch.cat(outs)
        return logits[torch.argsort(order)] if order is not None else logits

    def logits(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False) -> np.ndarray:
        """Raw outputs (n, k * m, C): class logits, or standardised values (C = 1) for regression."""
        x, lens, _ = self.tokens(inputs, lengths, allow_unseen)
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
            raise ValueError(f"{self.source}: a regression model has no class probabilities; use predict()")
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
        kinds = {type(v) for v in out.ravel()}
        return out.astype(kinds.pop()) if len(kinds) == 1 and kinds <= {int, float, str, bool} else out

    def predict_proba(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False) -> np.ndarray:
        """Class probabilities: (n, C), or (n, outputs, C) for several outputs per example."""
        proba = self._proba(torch.from_numpy(self.logits(inputs, lengths, allow_unseen)))
        return proba[:, 0] if proba.shape[1] == 1 else proba

    def predict(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False) -> np.ndarray:
        """Labels (values for regression): (n,), or (n, outputs) for several outputs per example."""
        values = self._values(torch.from_numpy(self.logits(inputs, lengths, allow_unseen)))
        return values[:, 0] if values.shape[1] == 1 else values

    def _metrics(self, logits: Tensor, read: Inputs | None) -> dict[str, float] | None:
        """The objective's metrics (accuracy, or R², MAE, MSE) when the inputs hold targets; as evaluate computes them."""
        if read is None or read.y is None:
            return None
        if self.preprocessing is not None:
            y = self.preprocessing.encode_targets(read.y, read.where)  # class indices, or standardised values
        else:
            y = torch.as_tensor(read.y.astype(np.int64))
            if y.shape[1] != logits.shape[1] or int(y.min()) < 0 or int(y.max()) >= self.spec.num_classes:
                raise SchemaError(f"{read.where}: y must be (n, {logits.shape[1]}) class indices in "
                                  f"0..{self.spec.num_classes - 1}, not shape {tuple(y.shape)} in "
                                  f"[{int(y.min())}, {int(y.max())}]")
        return self.objective.summarise(self.objective.tally(logits, y))

    def score(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False) -> dict[str, float]:
        """Metrics of the predictions for inputs that hold their targets (a file with the target column, ...)."""
        x, lens, read = self.tokens(inputs, lengths, allow_unseen)
        metrics = self._metrics(self.forward(x, lens), read)
        if metrics is None:
            raise SchemaError(f"{getattr(read, 'where', 'inputs')}: no targets to score against; give the target "
                              f"column(s) {', '.join(self.output_names)} (or y in an .npz)")
        return metrics

    def predict_file(self, inputs: Any, lengths: Any = None, allow_unseen: bool = False) -> Prediction:
        """Predictions as a table: ``prediction`` (and ``proba_<class>`` columns), one row per example,
        and the metrics when the inputs hold targets. Several outputs: ``prediction_<name>``, ``proba_<name>_<class>``."""
        x, lens, read = self.tokens(inputs, lengths, allow_unseen)
        logits = self.forward(x, lens)
        names = self.output_names
        columns: dict[str, list[Any]] = {}
        if read is not None and read.names is not None:
            columns["file"] = list(read.names)
        values = self._values(logits)
        single = values.shape[1] == 1
        for j in range(values.shape[1]):
            columns["prediction" if single else f"prediction_{names[j]}"] = [_plain(v) for v in values[:, j]]
        if self.is_classifier:
            proba = self._proba(logits)
            for j in range(proba.shape[1]):
                labels = self.classes[j] if self.classes is not None else list(range(self.spec.num_classes))
                for c, label in enumerate(labels):
                    name = f"proba_{label}" if single else f"proba_{names[j]}_{label}"
                    columns[name] = [float(f"{p:.6g}") for p in proba[:, j, c]]
        where = read.where if read is not None else (str(inputs) if isinstance(inputs, (str, Path)) else "inputs")
        return Prediction(columns, self._metrics(logits, read), len(x), where)


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    return float(f"{v:.7g}") if isinstance(v, float) else v


# ---------------------------------------------------------------------------------------------- loading


def from_run(run: Run, which: str | None = None, device: str | None = None) -> Predictor:
    """A run directory's trained model (``Run.load``): its body rebuilt as training built it."""
    from fpt.checkpoint import fingerprint, load_trainable
    from fpt.experiment import build_model, resolve_device, task_options
    from fpt.tasks import build_task
    from fpt.tasks.base import DataSource

    config = run.config({"device": device} if device else None)
    version = run.checkpoint(which)
    prep = run.preprocessing()
    summary = run.summary() or {}
    if prep is not None:
        spec, objective = input_spec(prep), prep.objective
        lengths = prep.tokeniser.kind in LENGTH_MODALITIES
        info = dict(summary.get("task_info") or {})
    else:  # a paper task: its shape (and whether examples are padded) come from the task itself
        data = build_task(config.task, task_options(config), config.seed, DataSource(Path(config.data_dir),
                                                                                      config.download))
        spec, objective, info = data.spec, data.objective, dict(data.info)
        lengths = any(b.lengths is not None for b in data.eval_sets.values())
    model = build_model(config, spec)
    body_fp = fingerprint(model)
    used = load_trainable(version, model, body_fp)  # checks the rebuilt body's fingerprint against the checkpoint's
    slot = used.name if used.parent == run.path else used.parent.name  # best/step-N (or an old layout's best/)
    dev = resolve_device(config.device)
    return Predictor(model.to(dev).eval(), config, spec, objective, prep, body_fp, dev, lengths, info, str(run.path),
                     {"slot": slot, "step": _step(used), "version": used.name})


def _step(version: Path) -> int | None:
    """The step of a checkpoint version (None for an old layout without state.json)."""
    import json

    try:
        return int(json.loads((version / "state.json").read_text())["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def load(path: str | Path, which: str | None = None, device: str | None = None) -> Predictor:
    """A trained model ready to predict, from a run directory or a directory written by ``fpt export``.

    ``which`` (run directories): best (default when the run has one) or checkpoint (the latest).
    ``device``: auto, cpu, cuda, ...; default: the run's (exports: cpu).
    """
    from fpt.export import is_export, load_export
    from fpt.runs import Run

    path = Path(path)
    if is_export(path):
        if which is not None:
            raise ValueError(f"{path} is an export: it holds one set of parameters; drop which={which!r}")
        return load_export(path, device)
    run = Run(path)
    if run.is_run():
        return run.load(which, device)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such run or export directory")
    raise CheckpointError(f"{path} is neither a run directory (config.yaml, written by fpt train) nor an export "
                          "(config.json + model.safetensors, written by fpt export)")


__all__ = ["Prediction", "Predictor", "from_run", "input_spec", "load"]
