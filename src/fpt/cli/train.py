"""fpt train: train an FPT on a task and write a run directory.

Data-parallel: ``torchrun --nproc-per-node N -m fpt -- train ...`` or ``fpt train --nproc N ...``
(see fpt.distributed); live tracking: ``--log tensorboard,mlflow`` (see fpt.tracking).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from fpt.errors import CheckpointError, ConfigError

if TYPE_CHECKING:
    from fpt.config import RunConfig

HELP = "train a frozen pretrained transformer on a task (or --resume a stopped run)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_config_arguments

    groups = add_config_arguments(p)
    run_group = groups["run and output"]
    run_group.add_argument("--out", metavar="DIR", help="run directory (default: runs/TASK-BODY-INIT-TIME)")
    run_group.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its last checkpoint")
    run_group.add_argument("--quiet", action="store_true", help="no progress bar (nor progress lines)")
    run_group.add_argument("--nproc", type=int, metavar="N",
                           help="train data-parallel in N processes on this machine (torchrun's launcher; gloo on "
                                "CPU, NCCL with one GPU per process); batch_size is the global batch and must "
                                "divide by N")
    run_group.add_argument("--refit", action="store_true",
                           help="--data: choose the number of steps on validation (a first run in OUT/selection), "
                                "then train a fresh model on train + validation for as many epochs and report that "
                                "one (for small datasets; see fpt.refit); the baselines are refitted on train + "
                                "validation likewise")
    run_group.add_argument("--choose", action="append", default=[], metavar="FIELDS",
                           help="--data: a candidate to choose between, as space-separated key=value fields (e.g. "
                                "--choose 'readout=last' --choose 'readout=flatten'); repeat for each. The candidates "
                                "are cross-validated on --folds folds (default 5, fewer for small data) of the "
                                "training examples that are not test, the best mean fold validation score wins, and "
                                "the run trains the winner on the usual split (OUT/selection.json; see fpt.select)")
    tracking = p.add_argument_group("tracking")
    tracking.add_argument("--log", action="append", default=[], metavar="NAME",
                          help="live tracking: tensorboard (events in RUN/tensorboard) and/or mlflow "
                               "(MLFLOW_TRACKING_URI, else ./mlflow.db, as mlflow ui reads); repeat or join with ','. "
                               "Optional extras: pip install 'fpt[tensorboard]' / 'fpt[mlflow]'")
    tracking.add_argument("--log-every-seconds", type=float, default=30.0, metavar="S",
                          help="when stdout is not a terminal (or is one 0 columns wide), print a progress line "
                               "every S seconds (0: never; default: 30)")


def run(args: argparse.Namespace) -> int:
    from fpt import distributed, rundir, tracking
    from fpt.cli._args import config_from_args, given_fields
    from fpt.config import load_yaml
    from fpt.paths import safe_run_name
    from fpt.pipeline import BUDGET_FIELDS, build
    from fpt.refit import SELECTION
    from fpt.train import fit, resume_config

    scale: tuple[str, ...] = ()
    wanted_folds = None  # --choose's --folds
    refit = bool(args.refit or (args.resume and (Path(args.resume) / SELECTION).is_dir()))
    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise ConfigError("--resume DIR continues DIR; do not also give a different --out")
        # A refit run continues from its selection run's config (the refit run's own follows from it).
        config = resume_config(Path(args.resume) / SELECTION if refit else Path(args.resume), given_fields(args))
        out = Path(args.resume)
    else:
        # --choose and fit=auto: --folds is the number of cross-validation folds, not the run's own (that needs --fold)
        auto = default_fit(args, {*given_fields(args), *(load_yaml(args.config) if args.config else {})}) == "auto"
        if args.choose or auto:
            wanted_folds, args.folds = args.folds, None
        config = config_from_args(args)
        given = {*given_fields(args), *(load_yaml(args.config) if args.config else {})}
        if auto and config.data is not None and config.preset == "fast":  # own data: the fit is chosen, not assumed
            config = dataclasses.replace(config, fit="auto")
        scale = tuple(f for f in BUDGET_FIELDS if f not in given)  # --data: fitted to the data's size (pipeline)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        # The default name is built from user text (--init checkpoint:../..): one safe path component under runs/.
        name = config.task if config.data is None else f"{config.task}-{Path(config.data).stem}"
        out = Path(args.out or Path("runs") / safe_run_name(name, Path(config.body).name, config.init, stamp))
    if not args.resume:
        _check_out(out)  # before any work: the cross-validation, the build, a tracker's connection
    trackers: list = tracking.check(args.log)
    if args.nproc is not None and args.nproc < 1:
        raise ConfigError(f"--nproc {args.nproc}: give a number of processes >= 1")
    chosen, prebuilt = None, None
    if config.fit == "auto":
        if refit or args.choose or args.nproc and args.nproc > 1 or distributed.launched():
            raise ConfigError("fit=auto chooses the fit by cross-validation in one process: drop --refit, --choose and "
                              "--nproc, or give --fit gradient (or closed-form)")
        _fresh(out)
        chosen = _choose_fit(args, config, wanted_folds, scale)
        config, prebuilt = chosen["config"], chosen.pop("experiment")
        if config.ensemble > 1:
            prebuilt = None
        _save_choice(chosen, out)
    elif args.choose:
        if args.resume or args.nproc and args.nproc > 1 or distributed.launched():
            raise ConfigError("--choose starts a new run in one process; drop --resume and --nproc (torchrun)")
        _fresh(out)
        chosen = _choose(args, config, wanted_folds, scale)
        config, scale = chosen["config"], chosen["scale"]
        _save_choice(chosen, out)  # before the final run: a stopped one resumes with its choice on record
    elif args.resume:
        chosen = _saved_choice(out)
    if config.ensemble > 1:
        if refit or args.resume or args.nproc and args.nproc > 1 or distributed.launched():
            raise ConfigError(f"ensemble={config.ensemble} trains its members one after another in one process: drop "
                              "--refit, --resume and --nproc (an ensemble stopped part way continues when the same "
                              "command is run again with the same --out)")
        return _ensemble(args, config, out, scale, chosen, trackers)
    if refit:
        from fpt import refit as refitting

        if args.nproc and args.nproc > 1 or distributed.launched():
            raise ConfigError("--refit runs in one process; drop --nproc (or torchrun)")
        from fpt.baselines import beside_refit

        summary = refitting.fit(config, out, resume=bool(args.resume), progress=not args.quiet, trackers=trackers,
                                scale_budget=scale)
        summary = beside_refit(summary, out, progress=not args.quiet, baselines=config.baselines)
        if chosen is not None:
            summary = _record_choice(chosen, summary, out)
        _print_summary(summary, out)
        return 0
    if args.nproc and args.nproc > 1 and not distributed.launched():
        distributed.Group(size=args.nproc).per_rank(config.batch_size, config.grad_accum)  # before starting them
        argv = distributed.strip_option(args.argv, "--nproc")
        if not args.out and not args.resume:
            argv += ["--out", str(out)]  # one name for every process
        return distributed.launch(args.nproc, argv)
    # A bar on a live terminal, plain lines elsewhere (a log, a pipe, a terminal 0 columns wide, where a bar
    # redrawn with \r shows nothing).
    bar = not args.quiet and tracking.live_terminal(sys.stdout)
    if not args.quiet and args.log_every_seconds > 0 and not bar:
        trackers.append(tracking.ProgressLine(args.log_every_seconds))
    group = distributed.init_from_env(config.device)  # under torchrun: joins the process group
    try:
        # An existing run directory is locked before the (slow) build, so that a second writer is refused at once;
        # in a data-parallel run, by rank 0 only (the only writer).
        with rundir.lock(out, what="fpt train") if out.is_dir() and group.is_main else contextlib.nullcontext():
            exp = prebuilt if prebuilt is not None else build(config, scale_budget=scale)
            summary = fit(exp, out=out, resume=bool(args.resume), progress=bar, trackers=trackers)
        if group.is_main and not distributed.launched():  # a data-parallel run's classic models: not yet
            from fpt.baselines import beside_run

            summary = beside_run(exp, summary, out, progress=bar)
    except distributed.MainFailed as exc:
        print(f"fpt train: rank {group.rank}: {exc}", file=sys.stderr)
        return 2
    finally:
        distributed.shutdown()
    if not group.is_main:
        return 0
    if chosen is not None:
        summary = _record_choice(chosen, summary, out)
    _print_summary(summary, out)
    return 0


# Fields only gradient training reads: a command line that sets one asks for gradient training (fit=gradient),
# unless it also gives --fit.
GRADIENT_FIELDS = ("steps", "lr", "eval_every", "patience", "batch_size", "grad_accum", "clip", "eval_subset",
                   "tie_break", "freeze", "lora_rank", "lora_alpha", "readout", "dropout", "compile")


def default_fit(args: argparse.Namespace, given: set[str]) -> str | None:
    """``auto`` where fpt train --data chooses the fit (fpt.select.choose_fit): --fit auto, or no --fit and nothing
    that asks for something else: --refit (the steps of gradient training), --choose (the candidates say), a
    fold run (--fold), --resume (the saved config says), or a field of ``GRADIENT_FIELDS``. None: the config's."""
    if getattr(args, "fit", None) == "auto":
        return "auto"
    if "fit" in given or args.refit or args.choose or args.resume or args.fold is not None:
        return None
    return None if set(GRADIENT_FIELDS) & given else "auto"


def _fresh(out: Path) -> None:
    """A choice is made before its run: refuse a directory holding a run before the choice's work, not after it."""
    from fpt.run import Run

    if Run(out).summary() is not None:
        raise FileExistsError(f"{out} already holds a run; choose another --out")
    if Run(out).is_run():
        raise FileExistsError(f"{out} holds a stopped run; continue it (its choice included) with fpt train "
                              f"--resume {out}, or choose another --out")


def _folds(config: RunConfig, wanted_folds: str | None) -> int:
    from fpt.select import fold_count

    if wanted_folds is None:
        return fold_count(config)
    try:
        return int(wanted_folds)
    except ValueError:
        raise ConfigError(f"--folds {wanted_folds}: give a whole number of folds >= 2 (e.g. --folds 5)") from None


def _choose_fit(args: argparse.Namespace, config: RunConfig, wanted_folds: str | None, scale: tuple[str, ...]) -> dict:
    """fit=auto: the closed-form fit against gradient training (fpt.select.choose_fit); the winner and the record."""
    from fpt.select import choose_fit, describe

    say = None if args.quiet else print
    auto = choose_fit(config, None if wanted_folds is None else _folds(config, wanted_folds), progress=say,
                      scale_budget=scale)
    selection = auto.selection
    unit = f"over {selection.folds} folds" if auto.protocol == "k-fold" else "on the validation split"
    for i, (candidate, mean, std) in enumerate(zip(selection.candidates, selection.means, selection.stds, strict=True)):
        shown = "-" if mean is None else f"{mean:.4f} ± {std:.4f}"
        print(f"fit=auto {i + 1}/{len(selection.candidates)} {describe(candidate)}: val {selection.metric} {shown} {unit}"
              f"{'  <- chosen' if i == selection.winner else ''}")
    for note in auto.notes:
        print(f"fit=auto: {note}")
    return {"config": auto.config, "scale": scale, "selection": selection, "experiment": auto.experiment,
            "given": [describe(c) for c in selection.candidates], "record": auto.to_json(),
            "notes": auto.notes, "protocol": auto.protocol}


def _check_out(out: Path) -> None:
    """Refuse an --out that holds a run's file names (selection.json included) that fpt did not write, or that is a
    file or a link out of its folder, before any work (fpt.outputs): the same rule as fit's, said before the
    cross-validation, the build or a tracker's connection, not after them."""
    from fpt.outputs import RUN_ENTRIES, check_dir
    from fpt.refit import SELECTION
    from fpt.run import ENSEMBLE
    from fpt.train import _Run

    check_dir(out)
    if not out.is_dir():
        return
    names = sorted({p.name for p in out.iterdir()} & (RUN_ENTRIES - {"run.lock"}))
    if not names or (out / ENSEMBLE).is_file() or _Run(out).written_by_fpt() or _Run(out / SELECTION).written_by_fpt():
        return
    if names == ["selection.json"]:  # a --choose run stopped after choosing: its own record
        with contextlib.suppress(ConfigError, CheckpointError):
            if _saved_choice(out) is not None:
                return
    raise CheckpointError(f"{out} holds {', '.join(names)} but no config.yaml written by fpt train, so it is not an fpt "
                          "run and fpt will not replace those files: choose another --out (a new or empty folder)")


def _choose(args: argparse.Namespace, config: RunConfig, wanted_folds: str | None, scale: tuple[str, ...]) -> dict:
    """--choose: the candidates cross-validated; returns the winner's config and budget fields with the record."""
    from fpt.config import parse_overrides
    from fpt.select import candidate_config, cross_validate, describe

    if config.data is None:
        raise ConfigError(f"--choose cross-validates on your own data's training examples: give --data PATH (task "
                          f"{config.task!r} has fixed splits), or drop --choose")
    candidates = [parse_overrides(text.split()) for text in args.choose]
    folds = _folds(config, wanted_folds)
    selection = cross_validate(config, candidates, folds, progress=None if args.quiet else print, scale_budget=scale)
    metric, best = selection.metric, selection.winner
    for i, (candidate, mean, std) in enumerate(zip(candidates, selection.means, selection.stds, strict=True)):
        shown = "-" if mean is None else f"{mean:.4f} ± {std:.4f}"
        print(f"choose {i + 1}/{len(candidates)} {describe(candidate)}: val {metric} {shown} over {folds} folds"
              f"{'  <- chosen' if i == best else ''}")
    winner = candidates[best]
    return {"config": candidate_config(config, winner, f"--choose {args.choose[best]!r}"),
            "scale": tuple(f for f in scale if f not in winner), "selection": selection, "given": list(args.choose)}


def _ensemble(args: argparse.Namespace, config: RunConfig, out: Path, scale: tuple[str, ...], chosen: dict | None,
              trackers: list) -> int:
    """ensemble=N: the members in OUT/members/seedS, scored together (fpt.ensemble), with the baselines beside."""
    from fpt import ensemble
    from fpt.baselines import beside_run
    from fpt.run import Run

    if trackers:
        raise ConfigError("--log tracks one run; an ensemble trains several: drop --log (each member's metrics.jsonl "
                          "is in OUT/members/seedS)")
    summary = ensemble.fit(config, out, scale_budget=scale, progress=False, say=None if args.quiet else print)
    first = Run(ensemble.member_dir(out, config.seed)).experiment()
    summary = beside_run(first, summary, out, progress=False)  # the controls: single runs of the first member's config
    if chosen is not None:
        summary = _record_choice(chosen, summary, out)
    _print_summary(summary, out)
    return 0


def _save_choice(chosen: dict, out: Path) -> None:
    from fpt import rundir
    from fpt.select import SELECTION_FILE
    from fpt.train import summary_json

    out.mkdir(parents=True, exist_ok=True)
    with rundir.lock(out, what="fpt train --choose"):
        rundir.write_text(out / SELECTION_FILE, summary_json(_selection_record(chosen)))


def _selection_record(chosen: dict) -> dict:
    """selection.json: the candidates' fold figures, as given (fit=auto: how they were compared, and notes)."""
    return chosen.get("record") or {**chosen["selection"].to_json(), "choose": chosen["given"]}


def _saved_choice(out: Path) -> dict | None:
    """The choice a --choose run saved before its final run (None for a run without one), for --resume."""
    from fpt import stored
    from fpt.select import SELECTION_FILE, Selection

    path = out / SELECTION_FILE
    if not path.is_file():
        return None
    try:
        saved = json.loads(stored.read_bytes(path))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a selection file written by fpt train --choose ({type(exc).__name__}); move "
                          f"it out of {out} to resume the run without it") from None
    saved = stored.selection(saved, path)  # a winner out of range or a string, rows of the wrong length
    metric = saved["metric"]
    selection = Selection(metric, saved["folds"], saved["candidates"], saved[f"val_{metric}"], saved["val_loss"],
                          saved["selected_steps"], saved["winner"])
    given = saved["choose"]
    if saved.get("auto"):  # fit=auto's record: kept whole
        return {"selection": selection, "given": given, "record": saved, "notes": saved.get("notes", []),
                "protocol": saved.get("protocol")}
    return {"selection": selection, "given": given}


def _record_choice(chosen: dict, summary: dict, out: Path) -> dict:
    """selection.json beside the final run, and a ``selection`` block in its summary.json."""
    from fpt import rundir
    from fpt.run import Run
    from fpt.select import SELECTION_FILE
    from fpt.train import summary_json

    selection = chosen["selection"]
    summary = {**summary, "selection": {
        "file": SELECTION_FILE, "metric": selection.metric, "folds": selection.folds, "winner": selection.winner,
        "winner_fields": selection.candidates[selection.winner], "choose": chosen["given"],
        f"mean_val_{selection.metric}": selection.means, f"std_val_{selection.metric}": selection.stds,
        **({"auto": True, "protocol": chosen["protocol"], "notes": chosen["notes"]} if "protocol" in chosen else {})}}
    with rundir.lock(out, what="fpt train --choose"):
        rundir.write_text(out / SELECTION_FILE, summary_json(_selection_record(chosen)))
        rundir.write_text(Run(out).summary_path, summary_json(summary))
    return summary


def _print_summary(summary: dict, out: Path) -> None:
    scores = ("val_accuracy", "test_accuracy", "test_accuracy_last") if "val_accuracy" in summary else \
        ("val_r2", "test_r2", "test_mae", "test_r2_last")  # regression
    shown = {k: summary.get(k) for k in (*scores, "selected_step", "steps", "steps_to_target", "stopped",
                                         "wall_seconds", "train_samples_per_second") if k in summary}
    if "ensemble" in summary:  # figures of the members' averaged predictions; the members' own are in the summary
        shown = {"ensemble_of": summary["ensemble"]["size"], **shown}
    if "refit" in summary:  # the refit model has no validation figures: the selection run's say how it was chosen
        shown = {**shown, **{k: v for k, v in summary["refit"].items() if k.startswith("selection_val_")},
                 "selection_step": summary["refit"]["selected_step"]}
    print(json.dumps(shown))
    compared = summary.get("baselines_models")
    if compared:
        from fpt.baselines import table_rows

        for row in table_rows(summary):
            print(f"  {row['name']:<22} {row['kind']:<14} val {_num(row['val'])}  test {_num(row['test'])}  "
                  f"{_num(row['seconds'], 1)} s  ({row['chosen']})")
        for note in compared.get("notes", []):
            print(f"  note: {note}")
    print(f"run directory: {out}")
    if compared:
        print(compared["line"])
        if compared.get("language_model"):
            print(compared["language_model"]["line"])


def _num(value: object, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
