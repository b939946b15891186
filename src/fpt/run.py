"""A run directory as an object: where its files are, what they say, and the trained model.

``fpt train --out DIR`` writes the files ``fpt.rundir`` lays out (and reads and writes). ``Run(DIR)``
gives their paths, reads the config and summary, rebuilds the trained model ready to predict
(``Run.load``: best/ if present, else the latest checkpoint) and exports it (``Run.export``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fpt import rundir
from fpt.checkpoint import find, fingerprint, has_checkpoint, load_trainable, version_step
from fpt.errors import CheckpointError, ConfigError, RunError, option, python_entry

if TYPE_CHECKING:  # annotations only: the functions below import what they call when they run
    from fpt.config import RunConfig
    from fpt.pipeline import Experiment
    from fpt.predictor import Predictor
    from fpt.tasks.user_data import Preprocessing

WHICH = (rundir.BEST, rundir.LATEST)  # the checkpoint slots a model can be loaded from


@dataclass(frozen=True, init=False)
class Run:
    """The run directory ``path`` (written by ``fpt train``)."""

    path: Path  # absolute: an os.chdir after (Hydra's, a Ray Tune trial's) read another folder as the run
    given: Path = field(compare=False, repr=False)  # as given, for messages (``where``)

    def __init__(self, path: str | Path) -> None:  # a str or a Path
        # '~' expanded as fpt.load expands it: no shell expands it in Python, and Run('~/runs/x') read cwd/~/runs/x
        given = Path(path).expanduser()
        object.__setattr__(self, "path", given.absolute())
        object.__setattr__(self, "given", given)

    @property
    def where(self) -> Path:
        """The directory, as read and as messages name it: as given while the current directory still finds it there
        (so messages say 'run/config.yaml' of Run('run')), else its absolute path (after an os.chdir, the given one
        names another folder)."""
        return self.given if self.given.absolute() == self.path else self.path

    # ------------------------------------------------------------------------------------------ paths

    @property
    def config_path(self) -> Path:
        return self.where / rundir.CONFIG

    @property
    def metrics_path(self) -> Path:
        return self.where / rundir.METRICS

    @property
    def summary_path(self) -> Path:
        return self.where / rundir.SUMMARY

    @property
    def data_path(self) -> Path:
        return self.where / rundir.DATA

    @property
    def checkpoint_dir(self) -> Path:
        return self.where / rundir.LATEST

    @property
    def best_dir(self) -> Path:
        return self.where / rundir.BEST

    @property
    def lock_path(self) -> Path:
        return self.where / rundir.LOCK_FILE

    def is_run(self) -> bool:
        """Whether ``path`` holds a run's config (the one file every run directory has)."""
        return self.config_path.is_file()

    # ------------------------------------------------------------------------------------------ reading

    def config(self, device: str | None = None) -> RunConfig:
        """The saved RunConfig, read to load the run's model (``fpt.config.loaded``; ``device``: where, instead of
        the saved one). Resuming reads it through ``fpt.train.resume_config`` instead."""
        from fpt.config import loaded

        self._not_ensemble()
        return loaded(rundir.read_config(self.where), str(self.config_path), device)

    def _not_ensemble(self) -> None:
        if not self.is_run() and rundir.is_ensemble(self.where):
            raise RunError(f"{self.where} is a seed ensemble (ensemble.json): fpt.load / fpt predict read it whole; to "
                           f"export or evaluate one model, give a member ({self.where / rundir.MEMBERS}/seedS)")

    def summary(self) -> dict[str, Any] | None:
        """summary.json (None while the run has not finished)."""
        return rundir.read_summary(self.where)

    def metrics(self) -> list[dict[str, Any]]:
        return rundir.read_metrics(self.where)

    def fitted_sets(self) -> list[str]:
        """The held-out sets whose examples the trained model learnt from, so no figure on them is held out: the
        validation split of a closed-form fit on train + validation (summary.json's ``closed_form.fitted_sets``)
        and of ``fpt train --refit``'s model (``train_on_val``)."""
        summary = self.summary() or {}
        fitted = set((summary.get("closed_form") or {}).get("fitted_sets") or ())
        if self.config().train_on_val:
            fitted.add(summary.get("val_set") or "val")
        return sorted(fitted - {"train"})

    def preprocessing(self) -> Preprocessing | None:
        """What turns raw inputs into tokens and outputs into labels (``--data`` runs), from data.json."""
        doc = rundir.read_data(self.where)
        if doc is None:
            return None
        from fpt.tasks.user_data import Preprocessing

        try:
            return Preprocessing.from_json(doc)
        except (ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"{self.data_path} cannot be read ({type(exc).__name__}: {exc}): truncated or "
                                  "corrupt; train the run again (it holds the fitted tokeniser)") from None

    def resumable(self, config: RunConfig, what: str) -> bool:
        """Whether a stopped run of ``config`` is here to continue (a checkpoint of the same config):
        the resume check every executor makes. A checkpoint of another config is a RunError (``what``
        names what gave ``config``, e.g. a run-store key): rerunning it would mix two experiments."""
        from fpt.pipeline import agrees
        from fpt.train import resume_config

        if not has_checkpoint(self.where):
            return False
        if not agrees(resume_config(self.where), config):
            raise RunError(f"{self.where} was started with a different config than {what} gives; delete that "
                           "directory to rerun it")
        return True

    def checkpoint(self, which: str | None = None) -> Path:
        """The newest complete, verified checkpoint version: ``which`` best or checkpoint; None: best/ if
        the run has one, else the latest."""
        if which is None:
            which = rundir.BEST if has_checkpoint(self.where, rundir.BEST) else rundir.LATEST
        if which not in WHICH:
            raise ConfigError(f"which={which!r}: expected 'best' or 'checkpoint'")
        if not self.is_run():
            self._not_ensemble()
            raise FileNotFoundError(f"{self.config_path} does not exist: {self.where} is not a run directory written "
                                    "by fpt train")
        return find(self.where, which)

    # ------------------------------------------------------------------------------------------ the model

    def experiment(self, which: str | None = None, device: str | None = None) -> Experiment:
        """The run's experiment (task data, model, body) rebuilt with ``which`` checkpoint's trained
        parameters loaded: what ``fpt eval`` and ``fpt attention`` read. Its data is read as the run read it
        (``fpt.data.readings.as_run``): read anew, a column fpt reads otherwise since it trained gave other tokens
        than its parameters were trained on."""
        from fpt.data.readings import as_run
        from fpt.pipeline import build

        with as_run(self.where):
            exp = build(self.config(device))
        load_trainable(self.checkpoint(which), exp.model, exp.body_fingerprint)
        return exp

    def load(self, which: str | None = None, device: str | None = None) -> Predictor:
        """The trained model ready to predict (``fpt.predictor.Predictor``), from ``which`` checkpoint.

        --data runs need only this directory and the body (data.json holds the preprocessing); a paper
        task is built once to learn its input shape (its files are read as ``fpt eval`` reads them).
        """
        return from_run(self, which, device)

    @python_entry
    def export(self, out: str | Path, which: str | None = None, onnx: bool = False, force: bool = False) -> Path:
        """Write a self-contained model directory (``fpt.export``); returns it."""
        from fpt.export import export_run

        return export_run(self, Path(out), which=which, onnx=onnx, force=force)


# ---------------------------------------------------------------------------------------------- loading


def from_run(run: Run, which: str | None = None, device: str | None = None) -> Predictor:
    """A run directory's trained model (``Run.load``): its body rebuilt as training built it."""
    from fpt.data.modalities import PADDED
    from fpt.pipeline import task_options
    from fpt.predictor import input_spec, rebuild
    from fpt.tasks import build_task
    from fpt.tasks.base import DataSource

    config = run.config(device)
    version = run.checkpoint(which)
    prep = run.preprocessing()
    summary = run.summary() or {}
    if prep is not None:
        spec, objective = input_spec(prep), prep.objective
        lengths = prep.tokeniser.kind in PADDED
        info = dict(summary.get("task_info") or {})
    else:  # a paper task: its shape (and whether examples are padded) come from the task itself
        data = build_task(config.task, task_options(config), config.seed, DataSource(Path(config.data_dir),
                                                                                      config.download))
        spec, objective, info = data.spec, data.objective, dict(data.info)
        lengths = any(b.lengths is not None for b in data.eval_sets.values())

    def load(model: Any) -> tuple[str, dict[str, Any]]:
        body_fp = fingerprint(model)
        used = load_trainable(version, model, body_fp)  # checks the rebuilt body's fingerprint against the checkpoint's
        slot = used.name if used.parent == run.where else used.parent.name  # best/step-N (or an old layout's best/)
        return body_fp, {"slot": slot, "step": version_step(used), "version": used.name}

    return rebuild(config, spec, load, objective=objective, preprocessing=prep, lengths=lengths, info=info,
                   source=str(run.where))


@python_entry
def load(path: str | Path, which: str | None = None, device: str | None = None) -> Predictor:
    """A trained model ready to predict, from a run directory or a directory written by ``fpt export``.

    ``which`` (run directories): best (default when the run has one) or checkpoint (the latest).
    ``device``: auto, cpu, cuda, ...; default: the run's (exports: cpu).
    """
    from fpt.export import is_export, load_export

    path = Path(path).expanduser()  # an input, read as a body's or the data's '~/...' is (no shell expands it here)
    if is_export(path):
        if which is not None:
            raise RunError(f"{path} is an export: it holds one set of parameters; drop which={which!r}")
        return load_export(path, device)
    run = Run(path)
    if run.is_run():
        return run.load(which, device)
    if rundir.is_ensemble(path):
        return load_ensemble(path, which, device)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such run or export directory")
    raise CheckpointError(f"{path} is neither a run directory (config.yaml, written by fpt train) nor an export "
                          f"(config.json + fpt_model.safetensors, written by fpt export){rundir.not_a_run(path)}")


def load_ensemble(path: Path, which: str | None = None, device: str | None = None) -> Predictor:
    """A seed ensemble's predictor (``fpt.predictor.EnsemblePredictor``) from its directory's members."""
    import dataclasses

    from fpt.predictor import EnsemblePredictor, Predictor

    predictors = []
    for member in rundir.read_ensemble(path):
        where = path / member
        if Path(member).is_absolute() or ".." in Path(member).parts or not Run(where).is_run():
            raise CheckpointError(f"{path / rundir.ENSEMBLE}: member {member!r} is not a run directory inside {path}; "
                                  f"train the ensemble again into a new {option('out')}")
        predictors.append(Run(where).load(which, device))
    first = predictors[0]
    fields = {f.name: getattr(first, f.name) for f in dataclasses.fields(Predictor)}
    return EnsemblePredictor(**{**fields, "source": str(path)}, members=predictors)


__all__ = ["WHICH", "Run", "from_run", "load", "load_ensemble"]
