"""fpt data: describe a task's data before training on it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fpt.errors import ConfigError

HELP = "print a task's statistics: split sizes, tokens per example, truncation/drops, class balance"


RUN_ONLY = ("train_on_val",)  # a data field about training, not about what the data is: no flag of fpt data


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import Flag, config_help
    from fpt.config import DATA_FIELDS

    # each flag that sets a value is a Flag, as fpt train's are: given twice with two values it is refused (run)
    p.add_argument("task", nargs="?", help="a registered task (fpt list); or give --data PATH instead")
    helps = config_help()
    for name in DATA_FIELDS:
        if name in RUN_ONLY:
            continue
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None, metavar="X", action=Flag,
                       help=helps[name])
    p.add_argument("--target", dest="target", default=None, metavar="NAME", action=Flag,
                   help="--data: the target column(s) (the same as --target-column)")
    p.add_argument("options", nargs="*", metavar="task.key=value", help="task options, e.g. task.tokenisation=lra")
    p.add_argument("--data-dir", default="data", action=Flag, help="where the task's files are (default: data)")
    p.add_argument("--download", action="store_true", help="download missing files where the task knows how")
    p.add_argument("--seed", type=int, default=0, action=Flag)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _options_anywhere(p)


def _options_anywhere(p: argparse.ArgumentParser) -> None:
    """Let task options follow flags too (``fpt data listops --data-dir D task.tokenisation=lra``), as
    ``fpt train`` takes them: argparse fills the positionals from their first run of words only."""
    parse = p.parse_known_args

    def parse_known_args(args=None, namespace=None):  # noqa: ANN001, ANN202 (argparse's signature)
        ns, extras = parse(args, namespace)
        words = [e for e in extras if not e.startswith("-")]
        if words and hasattr(ns, "options"):
            ns.options = [*(ns.options or []), *words]
            extras = [e for e in extras if e.startswith("-")]
        return ns, extras

    p.parse_known_args = parse_known_args  # type: ignore[method-assign]


def run(args: argparse.Namespace) -> int:
    from fpt.cli._args import given_once
    from fpt.config import DATA_FIELDS, DATA_TASK, RunConfig, from_dict, parse_overrides, target_alias
    from fpt.data_stats import task_stats
    from fpt.pipeline import task_options
    from fpt.tasks import build_task
    from fpt.tasks.base import DataSource

    given_once(args)
    options = parse_overrides([o if o.startswith("task.") else f"task.{o}" for o in args.options])
    if args.data is not None:
        if args.task not in (None, DATA_TASK):
            raise ConfigError(f"give a task ({args.task}) or --data PATH, not both")
        given = {name: getattr(args, name) for name in DATA_FIELDS
                 if name not in RUN_ONLY and getattr(args, name) is not None}
        if args.target is not None:
            given["target"] = args.target
        config = from_dict(RunConfig, target_alias({**given, "seed": args.seed}, "command line"), where="command line")
        args.task = DATA_TASK
        data = build_task(DATA_TASK, task_options(config), args.seed)
    elif args.task is None:
        raise ConfigError("give a task (fpt list) or --data PATH")
    else:
        data = build_task(args.task, options.get("task_options", {}), args.seed,
                          DataSource(Path(args.data_dir), args.download))
    stats = task_stats(data)
    if args.json:
        print(json.dumps(stats, indent=1, default=str))
        return 0
    if args.data is not None:
        print("\n".join(describe_user_data(stats, config)))
        return 0
    print(f"task {args.task}: {stats['spec']}")
    for name, s in stats["splits"].items():
        t = s["tokens"]
        top = sorted(s["class_balance"].items(), key=lambda kv: -kv[1])[:10]
        balance = ", ".join(f"{c}: {100 * share:.1f}%" for c, share in top)
        more = " ..." if len(s["class_balance"]) > 10 else ""
        print(f"  {name:<26} {str(s['examples']):>22} examples  tokens min/median/max "
              f"{t['min']}/{t['median']:g}/{t['max']}  classes: {balance}{more}")
    for key, value in stats["info"].items():
        if key != "vocab":
            print(f"  {key}: {value}")
    return 0


def describe_user_data(stats: dict, config: object) -> list[str]:
    """What fpt data --data prints: every choice made about the data, with the flag that changes it."""
    info, fitted = stats["info"], stats["fitted"]
    spec = stats["spec"]
    flag = lambda name: "--" + name.replace("_", "-")  # noqa: E731
    lines = [f"data {info['data']}: {info['source']}",
             f"  modality:   {info['modality']}  ({flag('modality')})",
             f"  target:     {', '.join(info['targets'])}  (--target; several: comma-separated)",
             f"  objective:  {info['objective']}  ({flag('objective')}; {info['objective_from']})"]
    if "classes" in info:
        for name, classes in info["classes"].items():
            shown = ", ".join(map(str, classes[:20])) + (" ..." if len(classes) > 20 else "")
            lines.append(f"  classes:    {name}: {len(classes)} ({shown})  (class map saved in data.json)")
    else:
        lines.append(f"  targets standardised on train: mean {info['target_mean']}, std {info['target_std']} "
                     "(inverted on output)")
    lines.append(f"  splits:     {info['splits']}  (--val-fraction, --test-fraction, --split-seed)")
    for name, s in stats["splits"].items():
        t = s["tokens"]
        if "class_balance" in s:
            top = sorted(s["class_balance"].items(), key=lambda kv: -kv[1])[:6]
            names = (info.get("classes") or {}).get(info["targets"][0], [])
            what = "classes: " + ", ".join(f"{names[c] if c < len(names) else c}: {100 * share:.1f}%"
                                           for c, share in top)
        else:
            what = f"target mean {s['targets']['mean']}, std {s['targets']['std']}"
        lines.append(f"    {name:<6} {s['examples']:>7} examples  tokens min/median/max {t['min']}/{t['median']:g}/{t['max']}"
                     f"  {what}")
    lines.append(f"  model input: {spec.get('seq_len')} tokens of "
                 + (f"{spec['token_dim']} values (linear input layer)" if "token_dim" in spec
                    else f"ids < {spec.get('vocab_size')} (embedding table)")
                 + f", {spec.get('per_token', 1)} output(s) of {spec.get('num_classes')}")
    for key, value in info["tokenisation"].items():
        lines.append(f"  {key}: {value}")
    from fpt.data.modalities import modality

    fitted_values = {name: fitted["tokeniser"].get(key) if key else None
                     for name, key in modality(info["modality"]).options.items()}
    options = [f"{flag(n)} {value if value is not None else getattr(config, n)}" for n, value in fitted_values.items()]
    lines.append(f"  tokeniser options: {'  '.join(options)}")
    for key in ("features", "series_id", "dropped", "class_folders", "labels_table", "id_column", "label_column",
                "channels", "train_lengths", "problem", "cut_to_max_tokens",
                "dates_beyond_training", "pixel_scale", "X_shape"):
        if key in info:
            value = info[key]
            text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            lines.append(f"  {key}: {text[:300]}{' ...' if len(text) > 300 else ''}")
    return lines
