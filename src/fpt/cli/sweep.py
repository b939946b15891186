"""fpt sweep: a grid or random search over config fields, with seeds, as runs in the store; a ranked table."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from fpt.cli._args import add_ray_arguments

HELP = "run a grid or random search over config fields (SPEC.yaml) with seeds; results.csv/json and report, " \
       "ranked by a validation metric (resumable; local subprocesses or Ray Tune)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="sweep spec (YAML): name, base, grid or random, seeds, metric (docs/sweeps.md)")
    p.add_argument("--out", default=None, help="results directory (default: sweeps/NAME)")
    p.add_argument("--store", default=None,
                   help="run store: STORE/<hash of the resolved config>/, shareable with fpt reproduce (default: OUT/runs)")
    p.add_argument("--executor", default="local", choices=["local", "ray"],
                   help="local: trials as local subprocesses; ray: trials as Ray Tune trials (pip install 'fpt[ray]'); "
                        "default: local")
    p.add_argument("--parallel", type=int, default=None,
                   help="trials at once (local default: 1; ray default: as many as the CPUs allow)")
    p.add_argument("--threads-per-trial", type=int, default=None,
                   help="torch/OpenMP threads (Ray: CPUs) per trial (default: cores // parallel)")
    p.add_argument("--dry-run", action="store_true", help="list the trials, their run keys and state, and config "
                                                          "errors; train nothing")
    p.add_argument("--log", default=None, metavar="TRACKERS",
                   help="live tracking of every trial, as fpt train --log: tensorboard (STORE/KEY/tensorboard), "
                        "mlflow (MLFLOW_TRACKING_URI, else ./mlflow.db), or both: tensorboard,mlflow")
    p.add_argument("--quiet", action="store_true", help="less output")
    ray = add_ray_arguments(p, "trial")
    ray.add_argument("--asha", action="store_true", help="stop poor trials early (ASHA) on the validation metric")
    ray.add_argument("--asha-grace", type=int, default=None,
                     help="steps before ASHA may stop a trial (default: two evaluations)")
    ray.add_argument("--asha-reduction", type=float, default=2.0, help="ASHA's reduction factor (default 2)")


def dry_run(spec, planned, out: Path, store) -> int:
    from fpt.experiments.sweep import describe, trial_status
    from fpt.experiments.validate import check_config

    print(f"sweep {spec.name}: {len({c.index for c, _, _ in planned})} config(s) x {len(spec.seeds)} seed(s) = "
          f"{len(planned)} trial(s), ranked by {spec.metric} ({spec.mode}) -> {out} (runs in {store.root})")
    errors = 0
    checked: dict[int, list[str]] = {}
    for c, seed, t in planned:
        if c.index not in checked:
            checked[c.index] = check_config(c.config)
            errors += len(checked[c.index])
        status, note = trial_status(t.run_dir, None)
        state = "ERROR" if checked[c.index] else {"done": "done ", "stopped": "resume"}.get(status, "run  ")
        print(f"  {state:<6} config {c.index:<3} {describe(c.params):<40} seed={seed} run={t.key}"
              + (f"  ({note})" if note else ""))
        if seed == spec.seeds[0]:
            for problem in checked[c.index]:
                print(f"      error: {problem}")
    if errors:
        print(f"{errors} config error(s): these trials would fail when run")
        return 1
    return 0


def _refuse_failing_configs(spec, planned) -> None:
    """What --dry-run reports (task options, freeze groups, layers beyond the body), refused before any trial starts:
    otherwise every trial of such a config starts, loads its body and fails the same way, one after another."""
    from fpt.errors import ConfigError
    from fpt.experiments.sweep import describe
    from fpt.experiments.validate import check_config

    configs = {c.index: c for c, _, _ in planned}.values()  # each config once, not once per seed
    bad = [(c, problems) for c in configs if (problems := check_config(c.config))]
    if bad:
        c, problems = bad[0]
        more = f" ({len(bad)} configs have errors)" if len(bad) > 1 else ""
        raise ConfigError(f"sweep spec {spec.source}: config {c.index} ({describe(c.params)}): {problems[0]}{more}; "
                          "fix the spec (fpt sweep SPEC --dry-run lists every problem)")


def run(args: argparse.Namespace) -> int:
    from fpt.errors import ConfigError
    from fpt.experiments import sweep
    from fpt.experiments.executors import LocalExecutor
    from fpt.experiments.runner import Store
    from fpt.presentation.html import write_sweep_pages

    spec = sweep.load(args.spec)
    out = Path(args.out or Path("sweeps") / spec.name)
    store = Store(Path(args.store) if args.store else out / "runs")
    planned = sweep.trials(spec, sweep.expand(spec), store)
    for flag, value in (("--parallel", args.parallel), ("--threads-per-trial", args.threads_per_trial),
                        ("--num-cpus", args.num_cpus)):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} {value}: give an integer >= 1")
    if args.dry_run:
        return dry_run(spec, planned, out, store)
    _refuse_failing_configs(spec, planned)
    if args.log:  # a missing extra or a store that does not answer: one line now, not once per trial
        import dataclasses

        from fpt import tracking

        names = tuple(tracking.check([args.log]))
        if "mlflow" in names:  # one store for every trial, built here before trials open it together; a Ray trial
            # runs in its own folder, where MLflow's default ./mlflow.db would be another store
            os.environ["MLFLOW_TRACKING_URI"] = tracking.prepare_mlflow_store()
        planned = [(c, seed, dataclasses.replace(t, planned=dataclasses.replace(t.planned, trackers=names)))
                   for c, seed, t in planned]
    from fpt.outputs import check_results, starts_with

    # before any trial: the files of a sweep folder fpt wrote (results.json says so), never a user's of the same names
    check_results(out, ("results.csv", "results.json", "report.md", "report.html"),
                  lambda folder: not (folder / "results.json").exists()
                  and not (folder / "results.csv").exists() or starts_with(sweep.SWEEP_KIND.encode(), 200)(
                      folder / "results.json"))
    extra = [] if args.executor == "local" else ["--executor", "ray"]
    if args.executor == "ray":
        from fpt.experiments.ray_executor import RayExecutor, require_ray

        require_ray()
        executor = RayExecutor(out / "ray", spec.name, sweep.spec_hash(spec, store), spec.metric, spec.mode,
                               parallel=args.parallel, threads=args.threads_per_trial, gpus=args.gpus_per_trial,
                               num_cpus=args.num_cpus, address=args.address, max_failures=args.max_failures,
                               asha=args.asha, grace_period=args.asha_grace, reduction_factor=args.asha_reduction,
                               events_dir=out / "logs", verbose=0 if args.quiet else 1)
        if args.asha:
            extra.append("--asha")
    else:
        if args.address or args.asha:
            raise ConfigError("--address and --asha apply to --executor ray; add --executor ray (or drop them)")
        executor = LocalExecutor(args.parallel or 1, args.threads_per_trial, out / "logs", prefix="fpt sweep")
    if args.log:
        extra += ["--log", args.log]
    outcomes = executor.run([t for _, _, t in planned], progress=not args.quiet)
    by_key = {t.key: o for (_, _, t), o in zip(planned, outcomes, strict=True)}
    cmd = sweep.command(args.spec, out, store.root, extra)
    rows = sweep.write_results(spec, planned, out, store, cmd, by_key)
    write_sweep_pages(out, spec, rows, cmd)
    done = sum(o.status == "done" for o in outcomes)
    failed = sum(o.status == "failed" for o in outcomes)
    print(f"sweep {spec.name}: {done} of {len(outcomes)} trials done{f', {failed} failed' if failed else ''}; "
          f"results: {out / 'results.csv'}, {out / 'results.json'}, {out / 'report.html'}")
    val, test = spec.metric, spec.test_metric
    for r in rows[:5]:
        if r["rank"] is None:
            break
        std = f" ± {r[f'{val}_std']:.4g}" if r[f"{val}_std"] is not None else ""
        test_mean = r[f"{test}_mean"]
        print(f"  #{r['rank']} config {r['config']} ({sweep.describe({k: r[k] for k in spec.swept})}): "
              f"{val} {r[f'{val}_mean']:.4g}{std} (n={r['n']}), {test} "
              f"{'–' if test_mean is None else f'{test_mean:.4g}'}")
    if getattr(executor, "interrupted", False):
        print(f"fpt sweep: interrupted; rerun the same command to resume ({len(outcomes) - done} trial(s) left)")
        return 130
    return 0 if not failed else 1
