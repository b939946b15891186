"""fpt reproduce: run a paper table's grid (or all of them) and write report.md and results.csv."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from fpt.cli._args import add_ray_arguments

HELP = ("run one of the paper's tables, or all, or your own table file (resumable), and compare with the paper; "
        "--dry-run lists the runs")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", help="table1 ... table21, 'all', 'list', or your own table file (FILE.yaml, the tables' "
                                 "format: docs/sweeps.md)")
    p.add_argument("--scale", default="quick", choices=["quick", "paper"],
                   help="quick: CPU-sized stand-ins; paper: the full protocol (GPU, hub, datasets); default: quick")
    p.add_argument("--out", default=None,
                   help="results directory (default: results/TABLE-SCALE; for 'all': results/SCALE, one TABLE/ "
                        "folder per table)")
    p.add_argument("--store", default=None,
                   help="run store shared by tables: STORE/<hash of the resolved config>/ (default: OUT/runs)")
    p.add_argument("--seeds", default=None, help="run every cell for each of these seeds, e.g. 0,1,2 "
                                                 "(report: mean ± std (n)); default: the config's seed")
    p.add_argument("--dry-run", action="store_true",
                   help="list the runs, their parameter counts and config errors (layers beyond the body's depth, "
                        "bad task options or freeze policies); train nothing")
    p.add_argument("--only", default=None, help="run only cells whose 'row/column' contains this text")
    p.add_argument("--report-only", action="store_true",
                   help="train nothing: write the reports from the finished runs the store holds (after workers ran "
                        "parts of a table); a run not finished yet is reported as not run")
    p.add_argument("--prune-checkpoints", action="store_true",
                   help="afterwards, delete checkpoint/ and best/ of finished runs in the store (keeps config.yaml, "
                        "metrics.jsonl, summary.json and pretrained bodies)")
    p.add_argument("--parallel", type=int, default=None,
                   help="run N cells at once, each a local subprocess (as fpt sweep does; logs in OUT/logs); "
                        "default: one after another in this process")
    p.add_argument("--threads-per-trial", type=int, default=None,
                   help="with --parallel: torch/OpenMP threads per run (default: cores // N)")
    p.add_argument("--tuned-lr", action="store_true",
                   help="the critics' protocol (Rothermel et al. 2021): for each cell with a declared lr_grid, run "
                        "the first seed at every lr of the grid, choose the lr with the best VALIDATION figure, then "
                        "run every seed there; reported as TABLE-tuned beside the paper's fixed-lr table")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local (the default): in this process, or --parallel local subprocesses; ray: every run a Ray "
                        "Tune trial, on a local Ray instance or a cluster (--address / RAY_ADDRESS), as fpt sweep "
                        "--executor ray. On a cluster, give --out/--store on storage every node shares")
    add_ray_arguments(p, "run")


def _counts(config, cache: dict) -> str:
    """Trainable / total parameters, counted on the meta device (no memory, no weights)."""
    from fpt.config import from_dict
    from fpt.freeze import parameter_totals
    from fpt.pipeline import architecture_counts, task_spec
    from fpt.tasks import TASKS

    from_dict(TASKS.get(config.task).Options, config.task_options, where=f"task {config.task!r} options")
    # A dry run never writes data: generation is left to the real run.
    options = {**config.task_options, "generate": False} if "generate" in config.task_options else config.task_options
    try:
        spec = task_spec(config, options)
    except (OSError, ValueError) as exc:  # missing data is reported, not fatal, in a dry run
        return f"counts need the task's data ({str(exc).splitlines()[0][:90]})"
    key = (config.body, config.layers, config.freeze, spec)
    if key not in cache:
        try:
            totals = parameter_totals(architecture_counts(config, spec))
            cache[key] = f"{totals.trainable:,} trained of {totals.total:,}"
        except (OSError, RuntimeError, ValueError) as exc:  # e.g. a hub id whose config is not cached
            cache[key] = f"counts need the body's config ({str(exc).splitlines()[0][:90]})"
    return cache[key]


def parse_seeds(text: str | None) -> list[int] | None:
    from fpt.errors import ConfigError

    if text is None:
        return None
    try:
        seeds = [int(s) for s in text.replace(" ", "").split(",") if s]
    except ValueError:
        raise ConfigError(f"--seeds {text!r}: give integers joined by ',', e.g. 0,1,2") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds {text!r}: give distinct integers joined by ',', e.g. 0,1,2")
    return seeds


def dry_run(table, store, seeds, out: Path, only: str | None, cache: dict, tuned_lr: bool = False) -> int:
    """Print the runs of a table; returns the number of config errors found.

    ``tuned_lr``: a cell with an lr grid lists its grid runs (the first seed at each lr), then its seeds at the
    chosen lr once the grid's runs are in the store (else: to be chosen)."""
    from fpt.experiments.runner import choose_lr, selected
    from fpt.experiments.validate import check_config
    from fpt.rundir import read_summary

    cells = [c for c in table.cells if selected(c, only)]
    print(f"{table.title} [{table.scale}] -> {out} (runs in {store.root})")
    errors = 0
    for cell in cells:
        name = f"{cell.row}/{cell.column}"
        if cell.quoted:
            print(f"  quote {name:<47} {cell.paper} from {cell.quoted}")
            continue
        if cell.skip:
            print(f"  skip {name:<48} {cell.skip}")
            continue
        chosen = None
        if tuned_lr and cell.lr_grid:
            grid = {}
            for lr in cell.lr_grid:
                planned = store.plan(table, cell, (seeds or [0])[0], lr)
                grid[lr] = read_summary(planned.run_dir)
                status = "done " if grid[lr] else "run  "
                print(f"  {status}{name:<48} lr grid: lr={lr:g} seed={planned.config.seed} task={planned.config.task} "
                      f"body={planned.config.body} freeze={planned.config.freeze} steps={planned.config.steps} "
                      f"run={planned.key}")
            chosen = choose_lr(cell, grid)["chosen"]
            if chosen is None:
                print(f"  later {name:<48} seeds {','.join(map(str, seeds or [0]))} at the lr the grid chooses "
                      f"(best validation figure of seed {(seeds or [0])[0]})")
                continue
        for seed in seeds or [cell.config.seed]:
            planned = store.plan(table, cell, seed, chosen)
            c = planned.config
            problems = check_config(c)
            errors += len(problems)
            status = "ERROR" if problems else "done " if read_summary(planned.run_dir) else "run  "
            pre = f" after pretraining on {cell.pretrain_task}" if cell.pretrain_task else ""
            print(f"  {status}{name:<48} task={c.task} {c.task_options or ''} body={c.body} "
                  f"init={c.init}{pre} freeze={c.freeze}{f' layers={c.layers}' if c.layers else ''} "
                  f"steps={c.steps} seed={c.seed}{f' lr={c.lr:g} (chosen)' if chosen else ''} run={planned.key}"
                  + ("" if problems else f" | {_counts(c, cache)}"))
            for problem in problems:
                print(f"      error: {problem}")
    return errors


def _command(name: str, scale: str, out: Path, store: Path, seeds: list[int] | None, tuned_lr: bool = False) -> str:
    from fpt.experiments.runner import TUNED_SUFFIX

    name = name.removesuffix(TUNED_SUFFIX) if tuned_lr else name
    parts = ["fpt", "reproduce", name, "--scale", scale, "--out", str(out)] + (["--tuned-lr"] if tuned_lr else [])
    if store != out / "runs":
        parts += ["--store", str(store)]
    if seeds:
        parts += ["--seeds", ",".join(map(str, seeds))]
    return " ".join(shlex.quote(p) for p in parts)


def run(args: argparse.Namespace) -> int:
    from fpt.experiments import table_names
    from fpt.experiments.grid import default_out_name
    from fpt.experiments.runner import TUNED_SUFFIX, Store, prune_checkpoints

    if args.table == "list":
        for name in table_names():
            print(name)
        return 0
    seeds = parse_seeds(args.seeds)
    every = args.table == "all"
    tables, tuned = _tables(args, every)
    suffix = TUNED_SUFFIX if tuned and not every else ""
    root = Path(args.out or (f"results/{args.scale}" if every
                             else f"results/{default_out_name(args.table)}-{args.scale}{suffix}"))
    store = Store(Path(args.store) if args.store else root / "runs")
    outs = {t.name: (root / t.name if every else root) for t in tables}
    if every:  # all ends by writing claims.md: refused (a symlink, a file fpt did not write) before any run
        from fpt.presentation.claims_md import check_out

        check_out(root / "claims.md")
    if args.dry_run:
        cache: dict = {}
        errors = sum(dry_run(t, store, seeds, outs[t.name], args.only, cache, tuned) for t in tables)
        if errors:
            print(f"{errors} config error(s): these cells would fail when run")
            return 1
        return 0
    _check_outputs(root, outs, every)
    executor = _executor(args, root, tables)
    own_file = args.table not in table_names() and not every
    summary = [_run_table(args, table, outs[table.name], store, seeds, executor, tuned, own_file) for table in tables]
    if getattr(executor, "interrupted", False):
        print("fpt reproduce: interrupted; rerun the same command to resume (finished runs are kept)")
        return 130
    if args.prune_checkpoints:
        removed = prune_checkpoints(store.root)
        print(f"pruned {len(removed)} checkpoint director{'y' if len(removed) == 1 else 'ies'} under {store.root}")
    if every:
        if not tuned:  # the index lists the paper's tables; TABLE-tuned folders sit beside them
            _write_index(root, args.scale, summary, seeds)
        from fpt.presentation.claims_md import write_claims

        path = write_claims(root)
        print(f"index: {root / 'README.md'}; claims: {path}")
    return 0


def _tables(args: argparse.Namespace, every: bool) -> tuple[list, bool]:
    """The tables to run (every name and YAML checked before anything runs) and whether they are --tuned-lr's."""
    from fpt.experiments import expand, table_names
    from fpt.experiments.runner import tuned_table

    tables = [expand(name, args.scale) for name in (table_names() if every else [args.table])]
    tuned = bool(getattr(args, "tuned_lr", False))
    if tuned:  # the tables' lr-grid cells as TABLE-tuned; the paper's fixed-lr tables are left as they are
        without = [t.name for t in tables if not any(c.lr_grid for c in t.cells)]
        if without and not every:
            from fpt.errors import ConfigError

            raise ConfigError(f"--tuned-lr: {', '.join(without)} declares no lr_grid (tables with one: "
                              f"{', '.join(n for n in table_names() if any(c.lr_grid for c in expand(n, args.scale).cells))})")
        tables = [tuned_table(t) for t in tables if t.name not in without]
    return tables, tuned


def _check_outputs(root: Path, outs: dict[str, Path], every: bool) -> None:
    """Before any run: README.md and each table's results.csv/report.md/report.html only where fpt wrote them."""
    from fpt.outputs import check_results, starts_with

    check_results(root, ("README.md",) if every else (),
                  lambda folder: not (folder / "README.md").exists()
                  or starts_with(b"# Reproduced tables")(folder / "README.md"))
    for out in outs.values():
        check_results(out, ("results.csv", "report.md", "report.html"),
                      lambda folder: not (folder / "results.csv").exists()
                      or starts_with(b"table,scale,", 20)(folder / "results.csv"))


def _run_table(args: argparse.Namespace, table, out: Path, store, seeds: list[int] | None, executor: object | None,
               tuned: bool, own_file: bool) -> tuple:
    """Run one table's cells, write its report and print its line: (table, out, done, partial, failed, cells)."""
    from fpt.experiments.runner import run_table
    from fpt.presentation.tables import write_report

    results = run_table(table, store, seeds, progress=not args.quiet, only=args.only, executor=executor,
                        report_only=args.report_only, tuned_lr=tuned)
    rows = write_report(table, results, out, _command(table.name, args.scale, out, store.root, seeds, tuned))
    if own_file:  # your own table file: the HTML page too, as fpt sweep writes one
        from fpt.presentation.html import Options
        from fpt.presentation.html import write as write_html

        write_html(out, Options(attention="existing"))
    cells = [r for r in rows if r["status"] not in ("derived", "not derived", "counted", "not counted")]
    done = sum(r["status"] == "done" for r in cells)
    partial = sum(r["status"] == "partial" for r in cells)
    failed = sum(r["status"] == "failed" for r in cells)
    print(f"{table.name}: {done} of {len(cells)} cells done"
          f"{f', {partial} with only some seeds' if partial else ''}{f', {failed} failed' if failed else ''}; "
          f"report: {out / 'report.md'}, {out / 'results.csv'}"
          + (f", {out / 'report.html'}" if (out / "report.html").is_file() else ""))
    return table, out, done, partial, failed, len(cells)


def _executor(args: argparse.Namespace, root: Path, tables: list) -> object | None:
    """Who runs the tables' runs: None (one after another in this process), local workers (--parallel), or Ray."""
    from fpt.errors import ConfigError

    for flag, value in (("--parallel", args.parallel), ("--threads-per-trial", args.threads_per_trial),
                        ("--num-cpus", args.num_cpus)):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} {value}: give an integer >= 1")
    if args.executor == "ray":
        from fpt.experiments.ray_executor import RayExecutor, require_ray

        require_ray()
        # identity "": each set of runs handed over (a table, its lr grid) is its own Ray experiment, restored
        # by the same command after an interruption; finished runs are skipped through the store either way.
        return RayExecutor(root / "ray", "reproduce-" + "-".join(t.name for t in tables)[:60], "",
                           parallel=args.parallel, threads=args.threads_per_trial, gpus=args.gpus_per_trial,
                           num_cpus=args.num_cpus, address=args.address, max_failures=args.max_failures,
                           events_dir=root / "logs", verbose=0 if args.quiet else 1, prefix="fpt reproduce")
    if args.address or args.num_cpus is not None or args.gpus_per_trial:
        raise ConfigError("--address, --num-cpus and --gpus-per-trial apply to --executor ray; add --executor ray "
                          "(or drop them)")
    if args.parallel is not None or args.threads_per_trial is not None:
        from fpt.experiments.executors import LocalExecutor

        return LocalExecutor(args.parallel or 1, args.threads_per_trial, root / "logs", prefix="fpt reproduce")
    return None


def _write_index(root: Path, scale: str, summary: list, seeds: list[int] | None) -> None:
    command = f"fpt reproduce all --scale {scale} --out {root}" + (f" --seeds {','.join(map(str, seeds))}" if seeds else "")
    lines = [f"# Reproduced tables ({scale})", "", f"    {command}", "",
             "Runs are shared between tables through `runs/<hash of the resolved config>/`."
             + (" A cell is done when every seed's run is; partial when only some are (the report gives their mean "
                "and n)." if seeds else ""), "",
             "| table | cells done | partial (some seeds) | failed | cells |", "|---|---|---|---|---|"]
    for table, out, done, partial, failed, total in summary:
        lines.append(f"| [{table.title}]({out.relative_to(root).as_posix()}/report.md) | {done} | {partial} | {failed} "
                     f"| {total} |")
    (root / "README.md").write_text("\n".join(lines) + "\n")
