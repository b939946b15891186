"""``fpt sweep``: a user's grid or random search over RunConfig fields, as trials in the run store.

A spec (YAML)::

    name: xor-lr
    base: {task: bit-xor, body: minilm, steps: 300}     # any RunConfig fields (task options: task_options or task.NAME)
    grid: {lr: [1.0e-3, 1.0e-4], task.n_bits: [5, 10]}  # every combination
    # or random: {trials: 8, seed: 0, space: {lr: {loguniform: [1.0e-5, 1.0e-2]}, batch_size: [8, 16]}}
    seeds: [0, 1]                                       # every config runs once per seed
    metric: val_accuracy                                # what ranks the configs (validation only)
    mode: max                                           # optional: max (default) or min (losses, errors)

expands to configs (one per grid combination or random draw), each run once per seed: a trial is
one (config, seed), a run directory ``STORE/<key>/`` keyed by the resolved config like ``fpt
reproduce``'s, so the two commands share runs. The results table has one row per config: the swept
values, mean ± sample std over the seeds done of the validation metric and its test counterpart,
how many seeds are done and their run directories, ranked by the validation metric (the test
figure is reported beside it and decides nothing).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import itertools
import json
import math
import os
import random
import shlex
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fpt.config import RunConfig, from_dict, load_yaml, merge, near, show, target_alias
from fpt.data.modalities import requested
from fpt.errors import CheckpointError, ConfigError
from fpt.experiments.executors import DONE, EARLY_STOPPED, FAILED, NOT_RUN, Outcome, Trial
from fpt.experiments.grid import TRIAL_LIMITS
from fpt.experiments.runner import Store
from fpt.rundir import CONFIG, read_summary

SPEC_KEYS = ("name", "description", "base", "grid", "random", "seeds", "metric", "mode")
RANDOM_KEYS = ("trials", "seed", "space")
DISTRIBUTIONS = ("uniform", "loguniform", "randint", "choice")
TASK_PREFIXES = ("task.", "task_options.")
LOWER_IS_BETTER = ("loss", "mae", "mse", "rmse", "error")
SIGNIFICANT = 4  # digits kept of a random draw from a continuous distribution (readable, stable run keys)
SWEEP_KIND = "fpt-sweep"
MAX_TRIALS = 10_000  # trials (configs x seeds) a spec may ask for: far beyond a sweep that can finish, and
# small enough that --dry-run plans and lists them all in seconds


@dataclass(frozen=True)
class SweepSpec:
    name: str
    base: dict[str, Any]
    grid: dict[str, list[Any]] | None
    random: dict[str, Any] | None  # {trials, seed, space: {key: distribution}}
    seeds: list[int]
    metric: str
    mode: str
    source: str  # the file, for messages
    raw: dict[str, Any]

    @property
    def test_metric(self) -> str:
        return "test_" + self.metric[len("val_"):]

    @property
    def swept(self) -> list[str]:
        return list(self.grid or (self.random or {}).get("space") or {})


@dataclass(frozen=True)
class SweepConfig:
    index: int  # 1-based, in expansion order
    params: dict[str, Any]  # swept key (as written in the spec) -> value
    config: RunConfig  # the config before its seed is set


# --- reading and checking a spec ---------------------------------------------------------------

def _fail(where: str, message: str) -> ConfigError:
    return ConfigError(f"sweep spec {where}: {message}")


FIELDS = [f.name for f in dataclasses.fields(RunConfig)]


def check_key(key: Any, where: str, section: str) -> None:
    """A swept key: a RunConfig field, or task.OPTION for one task option."""
    if not isinstance(key, str) or not key:
        raise _fail(where, f"{section}: key {show(key)} is not a field name; give a RunConfig field (fpt train --help) "
                           "or task.OPTION")
    if key.startswith(TASK_PREFIXES):
        if not key.split(".", 1)[1]:
            raise _fail(where, f"{section}.{key}: name the task option after the dot, e.g. task.n_bits")
        return
    if key == "seed":
        raise _fail(where, f"{section}.seed: seeds are not swept as a field; list them in seeds: [0, 1, 2]")
    if key not in FIELDS:
        raise _fail(where, f"{section}.{key} is not a config field{near(key, FIELDS)}; give a RunConfig field "
                           "(fpt train --help) or task.OPTION for a task option")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_distribution(key: str, dist: Any, where: str) -> None:
    at = f"random.space.{key}"
    if isinstance(dist, list):
        if not dist:
            raise _fail(where, f"{at} is empty; give at least one value, e.g. {key}: [8, 16]")
        return
    example = "{loguniform: [1.0e-5, 1.0e-2]}"
    if not isinstance(dist, dict) or len(dist) != 1:
        raise _fail(where, f"{at}: give a list of values or one distribution ({', '.join(DISTRIBUTIONS)}), "
                           f"e.g. {key}: {example}")
    (kind, args), = dist.items()
    if kind not in DISTRIBUTIONS:
        raise _fail(where, f"{at}: unknown distribution {show(kind)}{near(kind, list(DISTRIBUTIONS))}; use "
                           f"{', '.join(DISTRIBUTIONS)}, e.g. {example}")
    if kind == "choice":
        if not isinstance(args, list) or not args:
            raise _fail(where, f"{at}: choice needs a non-empty list, e.g. {{choice: [8, 16]}}")
        return
    if not isinstance(args, list) or len(args) != 2 or not all(_number(a) for a in args):
        raise _fail(where, f"{at}: {kind} needs [low, high] (two numbers), got {show(args)}")
    low, high = args
    if not low < high:
        raise _fail(where, f"{at}: {kind} needs low < high, got [{low}, {high}]")
    if kind == "loguniform" and low <= 0:
        raise _fail(where, f"{at}: loguniform needs 0 < low < high, got [{low}, {high}]; e.g. {example}")
    if kind == "randint" and not all(float(a).is_integer() for a in args):
        raise _fail(where, f"{at}: randint needs integer bounds [low, high] (both included), got {show(args)}")


def parse_spec(data: Any, where: str = "spec") -> SweepSpec:
    """Check a spec mapping; every problem is a one-line ConfigError naming the key and the fix."""
    if not isinstance(data, dict):
        raise _fail(where, f"expected a mapping (name:, base:, grid: or random:, seeds:, metric:), got "
                           f"{type(data).__name__}")
    if not data:  # an empty file (load_yaml reads it as {}) ran one trial of the default task, bit-xor, in silence
        raise _fail(where, "the file holds no settings (it is empty or all comments); write the search in it: base: (the "
                           "fields every trial shares) and grid: or random: (what the trials vary), e.g. base: {data: "
                           "train.csv} and grid: {lr: [1.0e-3, 1.0e-4]} (docs/sweeps.md)")
    unknown = [k for k in data if k not in SPEC_KEYS]
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    misplaced = [k for k in unknown if k in fields or str(k).startswith("task.")]
    if misplaced:  # config fields at the top level: the spec's config lives under base:
        shown = ", ".join(f"{k}: {show(data[k])}" for k in misplaced[:3])
        one = len(misplaced) == 1
        raise _fail(where, f"{', '.join(map(show, misplaced[:5]))} {'is a config field' if one else 'are config fields'}"
                           f" at the top level; put {'it' if one else 'them'} under base:, e.g. "
                           f"base: {{{shown}}} (the spec's own keys are {', '.join(SPEC_KEYS)})")
    if unknown:
        raise _fail(where, f"unknown key {show(unknown[0])}{near(unknown[0], list(SPEC_KEYS))}; known keys: "
                           f"{', '.join(SPEC_KEYS)}")
    name = data.get("name") or Path(where).stem
    if not isinstance(name, str) or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise _fail(where, f"name {show(name)}: use letters, digits, '-', '_' or '.' (it names the output folder)")
    base = _base_fields(data.get("base") or {}, where)
    grid, rand = data.get("grid"), data.get("random")
    if grid is not None and rand is not None:
        raise _fail(where, "give either grid: (every combination) or random: (sampled trials), not both")
    if grid is not None:
        _check_grid(grid, where)
    if rand is not None:
        rand = _random_search(rand, where)
    _check_trial_fields(base, grid, rand, where)
    seeds = _seeds(data.get("seeds"), base, where)
    base = {k: v for k, v in base.items() if k != "seed"}
    _check_size(grid, rand, seeds, where)
    metric = data.get("metric", "val_accuracy")
    if not isinstance(metric, str) or not metric.startswith("val_") or len(metric) <= len("val_"):
        raise _fail(where, f"metric {show(metric)} is not a validation metric: the ranking reads validation only "
                           "(the test figure is reported beside it); use val_accuracy, or val_r2 for regression")
    mode = data.get("mode") or ("min" if metric.endswith(LOWER_IS_BETTER) else "max")
    if mode not in ("max", "min"):
        raise _fail(where, f"mode {show(mode)}: use max (higher is better) or min (lower is better)")
    return SweepSpec(name, base, grid, rand, list(seeds), metric, mode, where, data)


def _base_fields(base: Any, where: str) -> dict[str, Any]:
    """The spec's ``base:`` as config fields (``seed`` kept aside for ``_seeds``)."""
    if not isinstance(base, dict):
        raise _fail(where, f"base: expected a mapping of config fields, e.g. base: {{task: bit-xor, steps: 300}}, "
                           f"got {show(base)}")
    fields: dict[str, Any] = {}
    for key, value in base.items():
        if key == "task_options":
            if not isinstance(value, dict):
                raise _fail(where, f"base.task_options: expected a mapping, e.g. task_options: {{n_bits: 5}}, got "
                                   f"{show(value)}")
            fields = merge(fields, {"task_options": value})
        elif key == "seed":
            fields["seed"] = value
        else:
            check_key(key, where, "base")
            fields = apply(fields, {key: value})
    return fields


def _check_trial_fields(base: dict[str, Any], grid: dict[str, Any] | None, rand: dict[str, Any] | None,
                        where: str) -> None:
    """Refuse a field's value a trial cannot honour (``TRIAL_LIMITS``) anywhere in the spec: base, grid, random."""
    for key, refusal in TRIAL_LIMITS.items():
        given = [("base", base.get(key))]
        values = (grid or {}).get(key)
        given += [("grid", v) for v in (values if isinstance(values, list) else [])]
        space = ((rand or {}).get("space") or {}).get(key)
        drawn = space.get("choice") if isinstance(space, dict) else space
        given += [("random.space", v) for v in (drawn if isinstance(drawn, list) else [])]
        for section, value in given:
            if (why := refusal(value)) is not None:
                raise _fail(where, f"{section}.{key}: {show(value)}: {why}")
        if isinstance(space, dict) and "randint" in space:  # bounds checked by _random_search
            low, high = (int(b) for b in space["randint"])
            # a range's first hundred values and its top: every value TRIAL_LIMITS refuses (an ensemble above 1, a
            # whole number as baselines) shows there, without walking a range of millions
            for value in itertools.chain(itertools.islice(range(low, high + 1), 100), [high]):
                if (why := refusal(value)) is not None:
                    raise _fail(where, f"random.space.{key}: randint [{low}, {high}] draws {value}: {why}")


def _check_aliases(keys: list[Any], where: str, section: str) -> None:
    """task.NAME and task_options.NAME are one option: both in one grid or space would let the later silently win
    over the values the results table shows for the other."""
    seen: dict[str, str] = {}
    for key in keys:
        if not isinstance(key, str) or not key.startswith(TASK_PREFIXES):
            continue
        name = key.split(".", 1)[1]
        if name in seen:
            raise _fail(where, f"{section}.{seen[name]} and {section}.{key} set the same task option {name!r}; "
                               "keep one of them")
        seen[name] = key


def _check_grid(grid: Any, where: str) -> None:
    if not isinstance(grid, dict) or not grid:
        raise _fail(where, "grid is empty; give fields and their values, e.g. grid: {lr: [1.0e-3, 1.0e-4]}")
    _check_aliases(list(grid), where, "grid")
    for key, values in grid.items():
        check_key(key, where, "grid")
        if not isinstance(values, list):
            raise _fail(where, f"grid.{key}: give a list of values, e.g. {key}: [{show(values)}]")
        if not values:
            raise _fail(where, f"grid.{key} is empty; give at least one value")


def _random_search(rand: Any, where: str) -> dict[str, Any]:
    """The spec's ``random:``, checked: {trials, seed, space}."""
    if not isinstance(rand, dict):
        raise _fail(where, "random: expected {trials: N, seed: S, space: {FIELD: distribution}}")
    bad = [k for k in rand if k not in RANDOM_KEYS]
    if bad:
        raise _fail(where, f"random.{bad[0]} is not a random-search key{near(bad[0], list(RANDOM_KEYS))}; "
                           f"known: {', '.join(RANDOM_KEYS)}")
    trials = rand.get("trials")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise _fail(where, f"random.trials: give how many configs to draw (an integer >= 1), got {show(trials)}")
    seed = rand.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _fail(where, f"random.seed: give an integer (the draws' seed), got {show(seed)}")
    space = rand.get("space")
    if not isinstance(space, dict) or not space:
        raise _fail(where, "random.space is empty; give fields and distributions, e.g. space: "
                           "{lr: {loguniform: [1.0e-5, 1.0e-2]}, batch_size: [8, 16]}")
    _check_aliases(list(space), where, "random.space")
    for key, dist in space.items():
        check_key(key, where, "random.space")
        check_distribution(key, dist, where)
    return {"trials": trials, "seed": seed, "space": space}


def _seeds(seeds: Any, base: dict[str, Any], where: str) -> list[int]:
    """The spec's ``seeds:`` (default: base.seed, else 0) as a list of distinct integers."""
    if seeds is None:
        seeds = [base.get("seed", RunConfig.seed)]
    elif "seed" in base:
        raise _fail(where, "base.seed and seeds: both given; list the seeds in seeds: [...] only")
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = [seeds]
    if (not isinstance(seeds, list) or not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds)
            or len(set(seeds)) != len(seeds)):
        raise _fail(where, f"seeds: give a list of distinct integers, e.g. seeds: [0, 1, 2], got {show(seeds)}")
    return seeds


def _check_size(grid: dict[str, Any] | None, rand: dict[str, Any] | None, seeds: list[int], where: str) -> None:
    """Counted before anything is expanded: a 10^7-point grid or a billion random trials would otherwise be
    built (and listed by --dry-run) one config at a time, for minutes, before any answer."""
    if grid is not None:
        configs, field = math.prod(len(values) for values in grid.values()), "grid"
    elif rand is not None:
        configs, field = rand["trials"], "random.trials"
    else:  # the base config alone, once per seed
        configs, field = 1, "seeds"
    if configs * len(seeds) > MAX_TRIALS:
        raise _fail(where, f"{field}: {configs:,} configs x {len(seeds)} seed(s) = {configs * len(seeds):,} trials, "
                           f"more than fpt sweep runs ({MAX_TRIALS:,}); narrow it or split it into several specs")


def load(path: str | Path) -> SweepSpec:
    path = Path(path)
    try:
        data = load_yaml(path)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("config file", "sweep spec", 1)) from None
    spec = parse_spec(data, str(path))
    expand(spec)  # every config checked before anything runs
    return spec


# --- expanding ----------------------------------------------------------------------------------

def apply(fields: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with the swept values set: task.NAME / task_options.NAME set one task option."""
    out = dict(fields)
    for key, value in params.items():
        if key.startswith(TASK_PREFIXES):
            out["task_options"] = {**(out.get("task_options") or {}), key.split(".", 1)[1]: value}
        elif key == "task_options" and isinstance(value, dict):
            out = merge(out, {"task_options": value})
        else:
            out[key] = value
    return out


def _significant(value: float) -> float:
    return float(f"{value:.{SIGNIFICANT}g}")


def draw(dist: Any, rng: random.Random) -> Any:
    if isinstance(dist, list):
        return rng.choice(dist)
    (kind, args), = dist.items()
    if kind == "choice":
        return rng.choice(args)
    low, high = args
    if kind == "uniform":
        return _significant(rng.uniform(low, high))
    if kind == "loguniform":
        return _significant(math.exp(rng.uniform(math.log(low), math.log(high))))
    return rng.randint(int(low), int(high))  # randint: both bounds included


def param_sets(spec: SweepSpec) -> list[dict[str, Any]]:
    if spec.grid is not None:
        keys = list(spec.grid)
        return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(spec.grid[k] for k in keys))]
    if spec.random is not None:
        rng = random.Random(spec.random["seed"])
        out, seen = [], set()
        for _ in range(spec.random["trials"]):
            params = {k: draw(d, rng) for k, d in spec.random["space"].items()}
            text = json.dumps(params, sort_keys=True, default=str)
            if text not in seen:  # a repeated draw (a small discrete space) is the same config
                seen.add(text)
                out.append(params)
        return out
    return [{}]


def describe(params: dict[str, Any]) -> str:
    return " ".join(f"{k}={_fmt_value(v)}" for k, v in params.items()) or "base"


def _fmt_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def expand(spec: SweepSpec) -> list[SweepConfig]:
    """The spec's configs, each checked (one-line errors naming the config and the field). Two grid cells that make
    the same config (a value repeated as ``1.0e-3`` and ``0.001``) are an error: they would be one run listed as two
    ranked configs. Two random draws that do are one config, as repeated draws are."""
    configs: list[SweepConfig] = []
    made: dict[str, SweepConfig] = {}
    for params in param_sets(spec):
        index = len(configs) + 1
        where = f"sweep spec {spec.source}: config {index} ({describe(params)})"
        try:
            fields = target_alias(apply(spec.base, params), where, name=lambda key, value: f"{key}: {value}")
            config = from_dict(RunConfig, fields, where=where)
            if config.data is not None:  # its names are the data layer's entries, which RunConfig cannot check
                requested(config.modality, where)
        except ConfigError as exc:
            raise ConfigError(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None
        text = json.dumps(config.to_dict(), sort_keys=True, default=str)
        if text in made:
            if spec.grid is None:
                continue
            first = made[text]
            raise ConfigError(f"{where} is the same config as config {first.index} ({describe(first.params)}): a "
                              "value repeated in grid; list each value once")
        made[text] = SweepConfig(index, params, config)
        configs.append(made[text])
    return configs


def trials(spec: SweepSpec, configs: list[SweepConfig], store: Store) -> list[tuple[SweepConfig, int, Trial]]:
    out = []
    for c in configs:
        for seed in spec.seeds:
            planned = store.plan_config(dataclasses.replace(c.config, seed=seed))
            out.append((c, seed, Trial(planned, f"{spec.name} config {c.index} ({describe(c.params)}) seed {seed}")))
    return out


def spec_hash(spec: SweepSpec, store: Store) -> str:
    """What identifies a sweep's set of trials (Ray's experiment to restore)."""
    configs = [{"params": c.params, "config": c.config.to_dict()} for c in expand(spec)]
    text = json.dumps({"configs": configs, "seeds": spec.seeds, "store": str(Path(store.root).absolute())},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# --- results ------------------------------------------------------------------------------------

def _rel(path: Path, out: Path) -> str:
    return Path(os.path.relpath(Path(path).absolute(), Path(out).absolute())).as_posix()


def _stats(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else None)


def _last_eval(run_dir: Path) -> dict[str, Any]:
    from fpt.rundir import read_metrics

    try:
        rows = read_metrics(run_dir)
    except CheckpointError:  # a corrupt metrics.jsonl: no last evaluation to show
        return {}
    return rows[-1] if rows else {}


def trial_status(run_dir: Path, outcome: Outcome | None) -> tuple[str, str]:
    """(status, note) of a trial from its run directory, and this invocation's outcome when it ran one."""
    from fpt.checkpoint import has_checkpoint

    if read_summary(run_dir) is not None:
        return DONE, ""
    if outcome is not None and outcome.status != DONE:
        return outcome.status, outcome.note
    if (run_dir / CONFIG).is_file() and has_checkpoint(run_dir):
        last = _last_eval(run_dir)
        return "stopped", f"stopped at step {last.get('step', '?')}: rerun the sweep to resume it"
    return NOT_RUN, ""


def results(spec: SweepSpec, planned: list[tuple[SweepConfig, int, Trial]], out: Path,
            outcomes: dict[str, Outcome] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows, trials): one row per config, ranked by the validation metric; one entry per trial.

    Read from the run directories (not from what this invocation ran), so a rerun reports the same.
    """
    outcomes = outcomes or {}
    val, test = spec.metric, spec.test_metric
    trial_rows: list[dict[str, Any]] = []
    by_config: dict[int, list[dict[str, Any]]] = {}
    for c, seed, t in planned:
        summary = read_summary(t.run_dir)
        status, note = trial_status(t.run_dir, outcomes.get(t.key))
        entry = {"config": c.index, "seed": seed, "key": t.key, "run_dir": _rel(t.run_dir, out), "status": status,
                 "note": note, val: (summary or {}).get(val), test: (summary or {}).get(test),
                 "steps": (summary or {}).get("steps"), "selected_step": (summary or {}).get("selected_step"),
                 "stopped": (summary or {}).get("stopped"), "wall_seconds": (summary or {}).get("wall_seconds")}
        trial_rows.append(entry)
        by_config.setdefault(c.index, []).append(entry)
    rows = []
    configs = list({c.index: c for c, _, _ in planned}.values())
    for c in configs:
        entries = by_config[c.index]
        done = [e for e in entries if e["status"] == DONE]
        v_mean, v_std = _stats([float(e[val]) for e in done if e[val] is not None])
        t_mean, t_std = _stats([float(e[test]) for e in done if e[test] is not None])
        statuses = {e["status"] for e in entries}
        status = DONE if statuses == {DONE} else ("partial" if done else
                                                  next(s for s in (FAILED, EARLY_STOPPED, "stopped", NOT_RUN)
                                                       if s in statuses) if statuses else NOT_RUN)
        row: dict[str, Any] = {"rank": None, "config": c.index, **{k: c.params.get(k) for k in spec.swept},
                               "metric": val, "mode": spec.mode, f"{val}_mean": v_mean, f"{val}_std": v_std,
                               f"{test}_mean": t_mean, f"{test}_std": t_std,
                               "n": len([e for e in done if e[val] is not None]), "n_seeds": len(entries),
                               "seeds": ";".join(str(e["seed"]) for e in done), "status": status,
                               "steps_mean": _stats([float(e["steps"]) for e in done if e["steps"] is not None])[0],
                               "wall_seconds_mean": _stats([float(e["wall_seconds"]) for e in done
                                                            if e["wall_seconds"] is not None])[0],
                               "keys": ";".join(e["key"] for e in entries),
                               "run_dirs": ";".join(e["run_dir"] for e in entries),
                               "note": "; ".join(dict.fromkeys(f"seed {e['seed']}: {e['note']}" for e in entries
                                                               if e["note"]))}
        rows.append(row)
    sign = -1.0 if spec.mode == "max" else 1.0
    ranked = sorted((r for r in rows if r[f"{val}_mean"] is not None), key=lambda r: (sign * r[f"{val}_mean"], r["config"]))
    for rank, r in enumerate(ranked, 1):
        r["rank"] = rank
    rest = [r for r in rows if r["rank"] is None]
    return ranked + rest, trial_rows


def csv_fields(spec: SweepSpec) -> list[str]:
    val, test = spec.metric, spec.test_metric
    return ["rank", "config", *spec.swept, "metric", "mode", f"{val}_mean", f"{val}_std", f"{test}_mean",
            f"{test}_std", "n", "n_seeds", "seeds", "status", "steps_mean", "wall_seconds_mean", "keys", "run_dirs",
            "note"]


def command(spec_path: str | Path, out: Path, store: Path, extra: list[str] | None = None) -> str:
    parts = ["fpt", "sweep", str(spec_path), "--out", str(out)]
    if Path(store) != Path(out) / "runs":
        parts += ["--store", str(store)]
    return " ".join(shlex.quote(p) for p in [*parts, *(extra or [])])


def write_results(spec: SweepSpec, planned: list[tuple[SweepConfig, int, Trial]], out: Path, store: Store,
                  cmd: str, outcomes: dict[str, Outcome] | None = None) -> list[dict[str, Any]]:
    """OUT/results.csv and OUT/results.json; returns the rows (the pages: fpt.presentation.html.write_sweep_pages)."""
    from fpt import rundir

    out.mkdir(parents=True, exist_ok=True)
    rows, trial_rows = results(spec, planned, out, outcomes)
    with open(out / "results.csv.tmp", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=csv_fields(spec), extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: _csv_value(r.get(k)) for k in csv_fields(spec)})
    os.replace(out / "results.csv.tmp", out / "results.csv")
    doc = {"kind": SWEEP_KIND, "name": spec.name, "metric": spec.metric, "test_metric": spec.test_metric,
           "mode": spec.mode, "swept": spec.swept, "seeds": spec.seeds, "command": cmd,
           "store": _rel(store.root, out), "spec": spec.raw, "rows": rows, "trials": trial_rows}
    rundir.write_text(out / "results.json", json.dumps(doc, indent=1, default=str))
    return rows


def _csv_value(value: Any) -> Any:
    return "" if value is None else value


# --- the table the reports show -----------------------------------------------------------------

def _fmt(value: Any, metric: str) -> str:
    if value is None or value == "":
        return "–"
    number = float(value)
    return f"{100 * number:.2f}" if metric.endswith("accuracy") else f"{number:.4g}"


def report_table(doc_: dict[str, Any]) -> tuple[list[str], list[list[str]], str]:
    """(header, rows, explanation) of a sweep's ranked table, from its results.json."""
    val, test, swept = doc_["metric"], doc_["test_metric"], doc_.get("swept") or []
    unit = " (%)" if val.endswith("accuracy") else ""
    header = ["rank", "config", *swept, f"{val}{unit} mean ± std", f"{test}{unit} mean ± std", "seeds done", "status",
              "runs"]
    body = []
    for r in doc_["rows"]:
        def pm(metric: str, r: dict[str, Any] = r) -> str:
            mean, std = r.get(f"{metric}_mean"), r.get(f"{metric}_std")
            return _fmt(mean, metric) + (f" ± {_fmt(std, metric)}" if std is not None else "")
        body.append([str(r["rank"] or "–"), str(r["config"]), *(_fmt_value(r.get(k)) for k in swept), pm(val),
                     pm(test), f"{r['n']} of {r['n_seeds']}", r["status"] + (f" ({r['note']})" if r.get("note") else ""),
                     " ".join(f"`{d}`" for d in str(r["run_dirs"]).split(";") if d)])
    why = (f"Ranked by {val} ({'higher' if doc_['mode'] == 'max' else 'lower'} is better), the mean over the seeds done; "
           f"{test} is reported beside it and decides nothing. ± is the sample standard deviation over seeds.")
    return header, body, why


def read_doc(root: Path) -> dict[str, Any] | None:
    path = Path(root) / "results.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return None
    return data if isinstance(data, dict) and data.get("kind") == SWEEP_KIND else None
