"""One training run in any of its modes, for the command line and Python alike: ``train_run``.

    import fpt
    config = fpt.RunConfig ... or fpt.config.from_dict(fpt.RunConfig, {"data": "table.csv"})
    summary = fpt.train_run(config, "runs/table", choose=["readout=last", "readout=flatten"])
    summary = fpt.train_run(None, "runs/table", resume=True)        # continue a stopped run, its mode included

The modes, as ``fpt train`` has them: a plain run; ``resume`` (continue the run in ``out`` from its last
checkpoint, with the changes resuming allows); ``choose`` (candidates cross-validated on the training examples,
the winner trained: ``fpt.select``); ``ensemble`` > 1 in the config (members of consecutive seeds:
``fpt.ensemble``); ``refit`` (the number of steps chosen on validation, then a model trained on train +
validation: ``fpt.refit``); data-parallel (a process started by torchrun joins its group: ``fpt.distributed``;
``fpt train --nproc N`` starts them). A --data run's baselines are fitted beside it (``fpt.baselines``).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fpt.config import RunConfig, parse_overrides
from fpt.errors import ConfigError, option, python_entry

if TYPE_CHECKING:
    from fpt.pipeline import Experiment

Say = Callable[[str], None] | None


@dataclass(frozen=True)
class Choice:
    """A --choose (or fit=auto) run's comparison: the candidates as given (``key=value`` words) and their result;
    fit=auto's whole record (protocol, notes) in ``record``."""

    given: list[str]
    selection: Any  # fpt.select.Selection
    record: dict[str, Any] | None = None
    # the content fingerprint of the data the candidates were compared on: data_fingerprint.json beside selection.json,
    # which the final run, started now or after a resume, is checked against (fpt.train._open_run_dir)
    data_fingerprint: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """selection.json: the candidates' fold figures, as given (fit=auto: how they were compared, and notes)."""
        return self.record or {**self.selection.to_json(), "choose": self.given}


def default_out(config: RunConfig) -> Path:
    """runs/TASK-BODY-INIT-TIME (--data: TASK-STEM-...), one safe path component however odd the names."""
    from fpt.paths import safe_run_name

    name = config.task if config.data is None else f"{config.task}-{Path(config.data).stem}"
    return Path("runs") / safe_run_name(name, Path(config.body).name, config.init, time.strftime("%Y%m%d-%H%M%S"))


@python_entry
def build(config: RunConfig | None = None, **fields: Any) -> Experiment:
    """``fpt.build``: an experiment from a config or from config fields (``fpt.pipeline.build``), its fit chosen as
    ``fpt train --data`` chooses it.

    Own data given as fields (``data=`` a path, a DataFrame, ``(X, y)``, a ``datasets.Dataset``) under preset fast,
    with no ``fit`` and no field that only gradient training reads, takes fit=auto (``fpt.settings.train_config``,
    the command line's rule); so does any config with fit=auto. The fits are then compared on the training examples
    (``choose``) and the winner's experiment is returned, its ``fit_choice`` holding the record, which
    ``fpt.fit(exp, out=...)`` writes as the run's selection.json. Anything else builds as ``fpt.pipeline.build``
    does (a ``RunConfig`` keeps its own fit)."""
    import torch

    from fpt import pipeline
    from fpt.settings import train_config

    # the config's seed decides what is drawn; the caller's torch stream goes on as if build had not run (a first
    # build drew from it: an import on the way, the data's choices)
    with torch.random.fork_rng(devices=[]):
        resolved, memory = pipeline.configured(config, fields)
        if config is None:
            resolved = train_config(resolved, fields)
        if resolved.fit != "auto":
            return pipeline.remembered(pipeline.assemble(resolved, pipeline.task_data(resolved, memory)), memory)
        return choose(resolved, memory)


def choose(config: RunConfig, memory: Any = None, folds: int | None = None, say: Say = None) -> Experiment:
    """fit=auto for ``config`` (``fpt.select.choose_fit``; ``memory``: the in-memory data ``config.data`` names):
    the winner's experiment (the closed-form one the comparison fitted, else built anew), with the choice's record
    in its ``fit_choice``. ``say``: a line per candidate compared."""
    from fpt import pipeline
    from fpt.data.memory import held
    from fpt.select import choose_fit

    data = held(config.data, pipeline.in_memory_raw(memory, config)) if memory is not None else contextlib.nullcontext()
    with data:  # the candidates and folds read in-memory data by the name the config records
        auto = choose_fit(config, folds, progress=say)
        exp = auto.experiment if auto.experiment is not None else pipeline.build(auto.config)
    exp.fit_choice = auto.to_json()
    return pipeline.remembered(exp, memory)


@python_entry
def train_run(config: RunConfig | Mapping[str, Any] | None, out: str | Path | None = None, *, resume: bool = False,
              overrides: Mapping[str, Any] | None = None, choose: Sequence[str] = (), folds: int | None = None,
              refit: bool = False, progress: bool = False, trackers: Sequence[Any] = (),
              progress_lines: float = 0.0, say: Say = print, verbose: bool = True) -> dict[str, Any] | None:
    """Train ``config`` into ``out`` (default ``default_out``) in the mode asked for; returns the summary (None in
    a data-parallel rank other than the first, which writes nothing).

    ``config``: a ``RunConfig`` (run as it is), or config fields as a mapping, resolved as the command line's are:
    own data then chooses its fit (fit=auto) unless the fields ask for gradient training (``fpt.settings.train_fit``).
    ``resume``: continue the run in ``out`` (``config`` None: its own, with ``overrides``; a refit or --choose run
    continues as one). ``choose``: candidates as ``key=value`` words, cross-validated on ``folds`` folds (default
    ``fpt.select.fold_count``). ``refit``: see ``fpt.refit``. ``progress``: a progress bar; ``trackers``: live
    tracking (``fpt.tracking``); ``progress_lines``: a plain progress line every so many seconds (a single run;
    0: none); ``say``: where one-line reports go (a --choose run's result; None: nowhere); ``verbose``: progress
    reports too (each cross-validation fold, ensemble member and refit stage)."""
    from fpt.data.readings import as_run

    if resume:
        if out is None or config is not None:
            raise ConfigError("resume continues the run in out with its own config: give out, not a config "
                              "(changes go in overrides)")
        out = Path(out)
        refit = refit or is_refit_run(out)
        config = resumed_config(out, overrides)
        # its data read as the run read it (a column fpt reads otherwise since: text dates, durations, codes), not anew
        with as_run(out):
            return _train(config, out, resume, choose, folds, refit, progress, trackers, progress_lines, say, verbose)
    if config is None:
        raise ConfigError("train_run needs a config (or resume=True to continue the run in out)")
    elif isinstance(config, Mapping):
        from fpt.config import from_dict, target_alias
        from fpt.settings import train_config

        _check_data_named(config.get("data"))
        given = target_alias(dict(config), "train_run()")
        config = train_config(from_dict(RunConfig, given, where="train_run()"), given, other_mode=bool(choose or refit))
    out = Path(out) if out is not None else default_out(config)
    check_out(out)  # before any work: the cross-validation, the build, a tracker's connection
    check_out_outside_data(out, config.data)
    return _train(config, out, resume, choose, folds, refit, progress, trackers, progress_lines, say, verbose)


def _train(config: RunConfig, out: Path, resume: bool, choose: Sequence[str], folds: int | None, refit: bool,
           progress: bool, trackers: Sequence[Any], progress_lines: float, say: Say,
           verbose: bool) -> dict[str, Any] | None:
    """``train_run`` once its config and run directory are settled."""
    from fpt import distributed

    check_modes(config, resume=resume, choose=bool(choose), refit=refit, parallel=distributed.launched())
    choice, prebuilt = None, None
    if config.fit == "auto":
        config, choice, prebuilt = _choose_fit(config, folds, out, say, verbose)
    elif choose:
        config, choice = _choose(config, choose, folds, out, say, verbose)
    elif resume:
        choice = _saved_choice(out)
    if config.ensemble > 1:
        summary = _ensemble(config, out, trackers, say if verbose else None)
    elif refit:
        summary = _refit(config, out, resume, verbose and say is not None, trackers)
    else:
        if progress_lines > 0:
            from fpt.tracking import ProgressLine

            trackers = [*trackers, ProgressLine(progress_lines)]
        summary = _single(config, out, resume, progress, trackers, prebuilt)
        if summary is None:
            return None
    return summary if choice is None else _record_choice(choice, summary, out)


def _check_data_named(data: Any) -> None:
    """Refuse data held in memory (a DataFrame, arrays, a dataset) as train_run's ``data``: its runs record the path
    they read, to read it again on resume, refit and predict; the error printed the whole DataFrame and no fix."""
    import os

    if data is None or isinstance(data, (str, os.PathLike)):
        return
    from fpt.errors import show

    raise ConfigError(f"train_run(): field 'data' is {show(data)}, but train_run reads data from a path (a file, a "
                      "folder or a dataset id); save it and give the path, or train it with "
                      "fpt.fit(fpt.build(data=...), out=...)")


def check_out(out: Path) -> None:
    """Refuse an out that holds a run's file names (selection.json included) that fpt did not write, or that is a
    file or a link out of its folder, before any work (fpt.outputs): the same rule as fit's, said before the
    cross-validation, the build or a tracker's connection, not after them."""
    from fpt import rundir
    from fpt.errors import CheckpointError
    from fpt.outputs import RUN_ENTRIES, check_dir

    check_dir(out)
    if not out.is_dir():
        return
    names = sorted({p.name for p in out.iterdir()} & (RUN_ENTRIES - {rundir.LOCK_FILE}))
    if not names or rundir.is_ensemble(out) or rundir.written_by_fpt(out) or rundir.written_by_fpt(out / rundir.SELECTION_RUN):
        return
    members = out / rundir.MEMBERS
    if names == [rundir.MEMBERS] and members.is_dir() and not members.is_symlink() and all(
            rundir.written_by_fpt(m) for m in members.iterdir()):  # an ensemble stopped before ensemble.json: its members
        return
    if names == [rundir.SELECTION_FILE]:  # a --choose run stopped after choosing: its own record
        with contextlib.suppress(ConfigError, CheckpointError):
            if _saved_choice(out) is not None:
                return
    raise CheckpointError(f"{out} holds {', '.join(names)} but no config.yaml written by fpt train, so it is not an fpt "
                          f"run and fpt will not replace those files: choose another {option('out')} (a new or empty "
                          "folder)")


def check_out_outside_data(out: Path, data: str | None) -> None:
    """Refuse an out inside the image folder it trains on: the image listing reads every folder below it, so the run
    would be refused (or, before, read: its plots as images) by the next reading of the same data."""
    from fpt.data.formats import claiming

    if not data or not Path(data).is_dir():
        return
    folder = Path(data).resolve()
    inside = Path(out).resolve()
    if inside.is_relative_to(folder) and getattr(claiming(folder), "name", None) == "images":
        raise ConfigError(f"{option('out', str(out))} lies inside {option('data', data)}, a folder of class folders, "
                          "where the next reading of the images would take the run for a class; choose an "
                          f"{option('out')} outside {data}")


def check_modes(config: RunConfig, *, resume: bool, choose: bool, refit: bool, parallel: bool) -> None:
    """The modes that cannot go together, refused before any work (``parallel``: data-parallel processes)."""
    if config.fit == "auto" and (refit or choose or parallel):
        raise ConfigError("fit=auto chooses the fit by cross-validation in one process: drop "
                          f"{_listed('refit', 'choose', 'nproc')}, or give {option('fit', 'gradient')} (or closed-form)")
    if choose and (resume or parallel):
        raise ConfigError(f"{option('choose')} starts a new run in one process; drop {_listed('resume', 'nproc')}")
    if config.ensemble > 1 and (refit or resume or parallel):
        raise ConfigError(f"ensemble={config.ensemble} trains its members one after another in one process: drop "
                          f"{_listed('refit', 'resume', 'nproc')} (an ensemble stopped part way continues when it is "
                          f"trained again with the same {option('out')})")
    if refit and parallel:
        raise ConfigError(f"{option('refit')} runs in one process; drop {option('nproc')}")
    if config.fit == "closed-form" and parallel:  # else each process read the data, then refused (fpt.train)
        raise ConfigError(f"fit=closed-form fits in one process: drop {option('nproc')}")


def check_tracked(config: RunConfig, trackers: Sequence[Any] | None) -> None:
    """An ensemble refuses trackers (``--log``): called before a tracker's extra is looked for, since installing
    tensorboard would not make the command run."""
    if trackers and config.ensemble > 1:
        raise ConfigError(f"{option('log')} tracks one run; an ensemble trains several: drop {option('log')} (each "
                          "member's metrics.jsonl is in OUT/members/seedS)")


def _listed(*settings: str) -> str:
    """'--refit, --choose and --nproc' as the surface in force names each (fpt.errors.option)."""
    named = [option(s) for s in settings]
    return f"{', '.join(named[:-1])} and {named[-1]}"


def resumed_config(out: str | Path, overrides: Mapping[str, Any] | None = None) -> RunConfig:
    """The config ``train_run(resume=True)`` continues the run in ``out`` with (a refit run: its selection run's)."""
    from fpt.rundir import SELECTION_RUN as SELECTION
    from fpt.train import resume_config

    out = Path(out)
    return resume_config(out / SELECTION if is_refit_run(out) else out, dict(overrides or {}))


def is_refit_run(out: str | Path) -> bool:
    """Whether the run directory ``out`` is a refit's (its selection run inside it): resumed, it is a refit whether
    or not refit is given again."""
    from fpt.rundir import SELECTION_RUN

    return (Path(out) / SELECTION_RUN).is_dir()


def check_parallel_resume(out: str | Path) -> None:
    """fpt train --nproc N --resume DIR of a refit's directory, refused before its N processes start: a refit runs
    in one process, and without --refit on the command line check_modes cannot tell (each process told it)."""
    if is_refit_run(out):
        raise ConfigError(f"{out} is a refit run ({option('refit')}), which runs in one process: resume it without "
                          f"{option('nproc')}")


def check_new_before_launch(out: str | Path) -> None:
    """fpt train --nproc N --out DIR (no --resume) of a DIR that holds a run (a checkpoint or a summary), refused before
    its N processes start: rank 0's fit refuses it (fpt.train._open_run_dir), but only after every process has imported
    torch and transformers and loaded the body. The modes that may continue an out (an ensemble, --choose, a refit) run
    in one process, refused with --nproc by check_modes first."""
    from fpt import rundir
    from fpt.checkpoint import has_checkpoint

    out = Path(out)
    if (out / rundir.SUMMARY).exists() or has_checkpoint(out):
        raise FileExistsError(rundir.already_a_run(out))


def _said_finished(out: Path, done: dict) -> dict:
    print(f"fpt: {out} already finished (step {done.get('steps')}, stopped: {done.get('stopped')}); nothing to "
          f"resume, and nothing in it was changed (a larger {option('steps')} trains it further)", file=sys.stderr)
    return done


def finished_before_launch(out: str | Path, config: RunConfig) -> dict | None:
    """For fpt train --nproc N --resume DIR, before its N processes start: the summary of the plain run in DIR when
    resuming it with ``config`` has nothing to do (said, as a single process says it), else None. Its ranks cannot
    ask (they decide together, and re-evaluated the run), so N processes started, each loading the body, only for
    the run to be evaluated again. A refit's or an ensemble's folder, or one whose baselines are pending: None."""
    from fpt import rundir
    from fpt.train import finished

    out = Path(out)
    if is_refit_run(out) or not (out / rundir.SUMMARY).is_file():
        return None
    done = finished(out, config)
    return _said_finished(out, done) if done is not None and rundir.BASELINES_PENDING not in done else None


def _single(config: RunConfig, out: Path, resume: bool, progress: bool, trackers: Sequence[Any],
            prebuilt: Any = None) -> dict | None:
    """A plain run (of ``prebuilt``, the experiment a choice already built, when given), data-parallel under
    torchrun; its baselines beside it (not yet for a data-parallel run)."""
    from fpt import distributed, rundir
    from fpt.baselines import beside_run
    from fpt.pipeline import build
    from fpt.train import finished, fit

    group = distributed.init_from_env(config.device)  # under torchrun: joins the process group
    try:
        # An existing run directory is locked before the (slow) build, so that a second writer is refused at once;
        # in a data-parallel run, by rank 0 only (the only writer).
        with rundir.lock(out, what="fpt train") if out.is_dir() and group.is_main else contextlib.nullcontext():
            # data-parallel ranks decide together (fpt.distributed.share_start): fit re-evaluates such a run there
            done = finished(out, config) if resume and not distributed.launched() else None
            if done is not None and rundir.BASELINES_PENDING not in done:
                return _said_finished(out, done)
            if done is not None:  # fit returns its summary (its data checked), and its baselines are fitted below
                print(f"fpt: {out} finished training (step {done.get('steps')}) but was stopped while fitting its "
                      f"baselines ({done[rundir.BASELINES_PENDING]}); fitting them now (a control stopped part way "
                      "continues from its checkpoint)", file=sys.stderr)
            exp = prebuilt if prebuilt is not None else build(config)
            summary = fit(exp, out=out, resume=resume, progress=progress, trackers=list(trackers))
        if group.is_main and not distributed.launched():
            summary = beside_run(exp, summary, out, progress=progress)
    finally:
        distributed.shutdown()
    return summary if group.is_main else None


def _refit(config: RunConfig, out: Path, resume: bool, progress: bool, trackers: Sequence[Any]) -> dict:
    from fpt import refit as refitting
    from fpt.baselines import beside_refit
    from fpt.data import read_once

    with read_once():  # the choice's check reads what the refit's two runs train on
        _check_choice_data(config, out)
        summary = refitting.fit(config, out, resume=resume, progress=progress, trackers=trackers)
    return beside_refit(summary, out, progress=progress, baselines=config.baselines)


def _ensemble(config: RunConfig, out: Path, trackers: Sequence[Any], say: Say) -> dict:
    """ensemble=N: the members in OUT/members/seedS, scored together (fpt.ensemble), with the baselines beside."""
    from fpt import ensemble
    from fpt.baselines import beside_run
    from fpt.data import read_once
    from fpt.data.readings import as_run
    from fpt.run import Run

    check_tracked(config, trackers)
    # the members and the first one rebuilt for its controls read the data, and hash it, once; an ensemble run again
    # to continue it reads it as its members started (fpt.data.readings), a new one anew
    with read_once(), as_run(out):
        _check_choice_data(config, out)
        summary = ensemble.fit(config, out, progress=False, say=say)
        first = Run(ensemble.member_dir(out, config.seed)).experiment()
    return beside_run(first, summary, out, progress=False)  # the controls: single runs of the first member's config


def _check_choice_data(config: RunConfig, out: Path) -> None:
    """Refuse runs that follow a choice (--choose, fit=auto: selection.json in ``out``) on other data than the choice
    was made on (its data_fingerprint.json), before any of them trains. An ensemble's members, in OUT/members, are
    runs of their own that no check of OUT read: the data edited while the candidates were compared (or between a
    stop and the command run again), they trained on the new data and were averaged in silence under the old choice.
    Call it inside the ``read_once`` those runs build in, so that the read checked is the read they train on."""
    from fpt import rundir
    from fpt.train import check_joined_run

    if (out / rundir.SELECTION_FILE).is_file():
        check_joined_run(config, out, f"the choice in {out / rundir.SELECTION_FILE} was made on it")


def _choose(config: RunConfig, given: Sequence[str], folds: int | None, out: Path, say: Say,
            verbose: bool) -> tuple[RunConfig, Choice]:
    """--choose: the candidates cross-validated and the choice saved in ``out`` before the final run (a stopped one
    resumes with it on record); returns the winner's config and the choice."""
    from fpt.data import read_once
    from fpt.select import candidate_config, cross_validate, describe, fold_count
    from fpt.train import read_fingerprint

    if config.data is None:
        raise ConfigError(f"{option('choose')} cross-validates on your own data's training examples: give "
                          f"{option('data', 'PATH', placeholder=True)} (task {config.task!r} has fixed splits), or drop "
                          f"{option('choose')}")
    _fresh(out)
    candidates = [parse_overrides(text.split(), where=f"--choose {text!r}") for text in given]
    with read_once():  # the fold count and every fold run read the data's files once
        seen = read_fingerprint(config)
        folds = fold_count(config) if folds is None else folds
        selection = cross_validate(config, candidates, folds, progress=say if verbose else None)
    metric, best = selection.metric, selection.winner
    for i, (candidate, mean, std) in enumerate(zip(candidates, selection.means, selection.stds, strict=True)):
        shown = "-" if mean is None else f"{mean:.4f} ± {std:.4f}"
        if say is not None:
            say(f"choose {i + 1}/{len(candidates)} {describe(candidate)}: val {metric} {shown} over {folds} folds"
                f"{'  <- chosen' if i == best else ''}")
    choice = Choice(list(given), selection, data_fingerprint=seen)
    _save_choice(choice, out)
    return candidate_config(config, candidates[best], f"--choose {given[best]!r}"), choice


def _choose_fit(config: RunConfig, folds: int | None, out: Path, say: Say,
                verbose: bool) -> tuple[RunConfig, Choice, Any]:
    """fit=auto: the closed-form fit against gradient training (fpt.select.choose_fit), saved before the final run;
    the winner's config, the choice and the winner's experiment when the comparison built it (else None)."""
    from fpt.data import read_once
    from fpt.select import choose_fit, describe
    from fpt.train import read_fingerprint

    _fresh(out)
    with read_once():  # the comparison's read, and its fingerprint
        seen = read_fingerprint(config)
        auto = choose_fit(config, folds, progress=say if verbose else None)
    selection = auto.selection
    unit = f"over {selection.folds} folds" if auto.protocol == "k-fold" else "on the validation split"
    for i, (candidate, mean, std) in enumerate(zip(selection.candidates, selection.means, selection.stds, strict=True)):
        shown = "-" if mean is None else f"{mean:.4f} ± {std:.4f}"
        if say is not None:
            say(f"fit=auto {i + 1}/{len(selection.candidates)} {describe(candidate)}: val {selection.metric} {shown} "
                f"{unit}{'  <- chosen' if i == selection.winner else ''}")
    for note in auto.notes:
        if say is not None:
            say(f"fit=auto: {note}")
    choice = Choice([describe(c) for c in selection.candidates], selection, auto.to_json(), seen)
    _save_choice(choice, out)
    return auto.config, choice, auto.experiment if auto.config.ensemble == 1 else None


def _fresh(out: Path) -> None:
    """A choice is made before its run: refuse a directory holding a run before the choice's work, not after it."""
    from fpt.run import Run

    if Run(out).summary() is not None:
        raise FileExistsError(f"{out} already holds a run; choose another {option('out')}")
    if Run(out).is_run():
        raise FileExistsError(f"{out} holds a stopped run; continue it (its choice included) with "
                              f"{option('resume', str(out))}, or choose another {option('out')}")


def _save_choice(choice: Choice, out: Path) -> None:
    from fpt import rundir

    out.mkdir(parents=True, exist_ok=True)
    with rundir.lock(out, what="fpt train --choose"):
        rundir.write_selection(out, choice.to_json())
        if choice.data_fingerprint is not None:
            rundir.write_data_fingerprint(out, choice.data_fingerprint)


def _saved_choice(out: Path) -> Choice | None:
    """The choice a --choose run saved before its final run (None for a run without one), for resume."""
    from fpt.rundir import SELECTION_FILE, read_selection, stored
    from fpt.select import Selection

    path = out / SELECTION_FILE
    try:
        saved = read_selection(out)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a selection file written by fpt train --choose ({type(exc).__name__}); move "
                          f"it out of {out} to resume the run without it") from None
    if saved is None:
        return None
    saved = stored.selection(saved, path)  # a winner out of range or a string, rows of the wrong length
    metric = saved["metric"]
    selection = Selection(metric, saved["folds"], saved["candidates"], saved[f"val_{metric}"], saved["val_loss"],
                          saved["selected_steps"], saved["winner"])
    return Choice(saved["choose"], selection, saved if saved.get("auto") else None)  # fit=auto's record: kept whole


def _record_choice(choice: Choice, summary: dict, out: Path) -> dict:
    """selection.json beside the final run, and a ``selection`` block in its summary.json."""
    from fpt import rundir

    with rundir.lock(out, what="fpt train --choose"):
        return rundir.record_selection(out, choice.to_json(), summary)


__all__ = ["Choice", "build", "check_modes", "check_tracked", "choose", "check_out", "check_out_outside_data", "default_out",
           "resumed_config", "train_run"]
