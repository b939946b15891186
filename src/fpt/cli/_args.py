"""Command-line flags generated from RunConfig, so the CLI and the config never drift."""

from __future__ import annotations

import argparse
import dataclasses
import typing
from pathlib import Path
from typing import Any

from fpt.config import (
    RunConfig,
    field_help,
    from_dict,
    load_yaml,
    merge,
    parse_overrides,
    same_setting,
    target_alias,
)
from fpt.errors import CLI, ConfigError, Wording
from fpt.settings import default_text

# fpt train --help shows RunConfig's flat fields in these groups; a field not named here lands in "other fields",
# so a new field is never left out of the CLI.
GROUPS: dict[str, tuple[str, ...]] = {
    "task and data": ("preset", "task", "data_dir", "download", "data", "target_column", "drop_columns", "series_id",
                      "objective", "modality", "val_fraction", "test_fraction", "folds", "fold", "split_seed", "train_on_val"),
    "your own data (--data): encoding": ("max_categories", "image_size", "patch_size", "image_channels",
                                         "series_patch", "series_stride", "series_norm", "sequence_tokens",
                                         "sequence_max_len"),
    "body and freezing": ("body", "init", "freeze", "lora_rank", "lora_alpha", "layers", "dropout", "input_init",
                          "input_dropout", "padding", "vit_positions", "lstm_variant", "readout"),
    "closed-form fit": ("fit", "cf_members", "cf_blocks", "cf_poolings", "cf_standardise", "cf_head", "cf_inputs",
                        "cf_scales", "cf_hop", "cf_difference", "cf_gains", "cf_series_norm"),
    "optimisation": ("steps", "batch_size", "grad_accum", "lr", "clip", "seed", "ensemble"),
    "evaluation and stopping": ("eval_every", "eval_subset", "eval_batch_size", "target", "stop_at_target",
                                "patience", "tie_break", "diverge_loss", "baselines"),
    "speed and device": ("device", "precision", "compile", "cache_features", "last_block_rows", "trim_padding",
                         "bucket_batches"),
}
# Metavars that say what a value is (argparse's default would be the field name; the old one was X).
_METAVARS = {"task": "NAME", "data": "PATH", "data_dir": "DIR", "target_column": "COLUMN",
             "drop_columns": "COLUMN[,COLUMN]", "series_id": "ID[,ORDER]", "body": "NAME|DIR", "init": "INIT", "freeze": "POLICY",
             "device": "DEVICE", "layers": "N", "lr": "LR", "target": "SCORE", "seed": "SEED", "split_seed": "SEED",
             "image_size": "SIZE", "patch_size": "P"}
_BOOL_WORDS = {"true", "1", "yes", "false", "0", "no"}


def _note_twice(namespace: argparse.Namespace, dest: str, option: str | None, value: Any) -> None:
    """Keep a config flag's earlier value where it is given again: argparse keeps the last in silence (``--steps 5
    --steps 9`` trained 9 steps); ``given_once`` compares them as the field reads them."""
    shown = option if option and option.startswith("--no-") else f"{option} {value}"
    texts = namespace.__dict__.setdefault("_flag_texts", {})
    if getattr(namespace, dest, None) is not None and dest in texts:
        namespace._flags_twice = [*getattr(namespace, "_flags_twice", []),
                                  (dest, texts[dest], shown, getattr(namespace, dest), value)]
    texts[dest] = shown


class Flag(argparse.Action):
    """A flag's value, noting a value given before (``given_once`` refuses two): a config field's flag, and any
    command's own flag that sets a value (fpt data's --data, --target, --seed, ...)."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001 (argparse's signature)
        _note_twice(namespace, self.dest, option_string, values)
        setattr(namespace, self.dest, values)


class _BoolFlag(argparse.Action):
    """A bool field: ``--flag`` alone is true, ``--flag true|false`` sets it, ``--no-flag`` is false.

    argparse's optional value would swallow a following ``key=value`` override; such a word is kept for the
    overrides instead (``--stop-at-target steps=5``)."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001 (argparse's signature)
        negative = bool(option_string and option_string.startswith("--no-"))
        values = None if values == [] else values  # --no-flag: nargs=0
        if values is None or negative or str(values).lower() not in _BOOL_WORDS:
            if values is not None:
                namespace._stray_overrides = [*getattr(namespace, "_stray_overrides", []), values]
            values = "false" if negative else "true"
        _note_twice(namespace, self.dest, option_string, values)
        setattr(namespace, self.dest, values)


def _metavar(name: str, hint: Any) -> str:
    if name in _METAVARS:
        return _METAVARS[name]
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    kind = args[0]
    if kind is int:
        return "N"
    if kind is float:
        return "FRACTION" if name.endswith("fraction") else "NUMBER"
    return name.upper()


def config_help() -> dict[str, str]:
    """RunConfig's help per field as argparse reads it (a field's own "%" is text, not a %-format), with --data's
    formats and --modality's choices listed from the declared data kinds (fpt.data.formats, fpt.data.modalities):
    a new entry shows in every command's help."""
    from fpt.data.formats import file_kinds, folder_kinds
    from fpt.data.modalities import MODALITIES

    helps = field_help(RunConfig)
    helps["data"] += f". Formats: {file_kinds()} files; {folder_kinds()}"
    helps["modality"] += f"; one of auto, {', '.join(MODALITIES)}"
    return {name: text.replace("%", "%%") for name, text in helps.items()}


def add_config_arguments(parser: argparse.ArgumentParser, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """One flag per RunConfig field, in GROUPS; returns the argument groups by title (callers add their own flags
    to them, e.g. "run and output", "tracking")."""
    # argparse reads a help text as a %-format (e.g. "%(default)s"): a field's own "%" is text
    helps = config_help()
    hints = typing.get_type_hints(RunConfig)
    group_of = {name: title for title, names in GROUPS.items() for name in names}
    groups = {title: parser.add_argument_group(title) for title in (*GROUPS, "other fields", "run and output")}
    for f in dataclasses.fields(RunConfig):
        if f.name in exclude or f.name == "task_options":
            continue
        default = default_text(f.name).replace("%", "%%")
        flag = f"--{f.name.replace('_', '-')}"
        group = groups[group_of.get(f.name, "other fields")]
        if hints[f.name] is bool:
            no = f"--no-{f.name.replace('_', '-')}"
            group.add_argument(flag, dest=f.name, default=None, nargs="?", metavar="true|false", action=_BoolFlag,
                               help=f"{helps[f.name]} (alone: true; {no}: false; default: {str(default).lower()})")
            group.add_argument(no, dest=f.name, default=None, nargs=0, action=_BoolFlag, help=argparse.SUPPRESS)
        else:
            group.add_argument(flag, dest=f.name, default=None, metavar=_metavar(f.name, hints[f.name]), action=Flag,
                               help=f"{helps[f.name]} (default: {default})")
    groups["run and output"].add_argument("--config", metavar="FILE",
                                          help="YAML file of config fields; flags and key=value override it")
    parser.add_argument("overrides", nargs="*", metavar="key=value",
                        help="more overrides, e.g. steps=500 task.n_bits=5")
    for title, group in list(groups.items()):
        if not group._group_actions and title != "run and output":
            parser._action_groups.remove(group)  # an empty group would print an empty heading
    return groups


def given_once(args: argparse.Namespace) -> None:
    """Refuse a flag given twice with two values (``Flag``, ``_BoolFlag`` noted it), naming both; one value given
    twice, as the field reads it (--lr 0.001 --lr 1e-3), is taken."""
    for name, first, second, earlier, value in getattr(args, "_flags_twice", []):
        if not same_setting(name, earlier, value):
            raise ConfigError(f"command line: {name} is given twice, as {first} and {second}; give it once")


def given_fields(args: argparse.Namespace) -> dict[str, Any]:
    """Fields set on the command line (flags, then key=value), without defaults."""
    given_once(args)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(RunConfig):
        value = getattr(args, f.name, None)
        if value is not None:
            out[f.name] = value
    overrides = parse_overrides([*(args.overrides or []), *getattr(args, "_stray_overrides", [])])
    for name, value in overrides.items():
        # key=value won over its flag wherever it stood (steps=9 --steps 5 trained 9 steps): two values, one kept
        # one setting given twice with one value is taken: the values compared as the field reads them, not as text
        # (--lr 0.001 lr=1e-3 is one rate; --target-column Label target_column=label are two columns)
        if name in out and not same_setting(name, out[name], value):
            flag = f"--{name.replace('_', '-')}"
            raise ConfigError(f"command line: {name} is given twice, as {flag} {out[name]} and {name}={value}; "
                              "give it once")
    return merge(out, overrides)


def config_file(path: str | Path) -> dict[str, Any]:
    """The settings of ``--config FILE``. A file of no settings (empty, or comments alone) is refused: it trained the
    default task (bit-xor) in silence, and such a file is almost always one saved before its settings were written."""
    fields = load_yaml(path)
    if not fields:
        raise ConfigError(f"config file {path} holds no settings (it is empty or all comments); write the run's "
                          "settings in it as key: value lines (e.g. data: train.csv, or task: bit-xor)")
    return fields


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The config file's fields (--config), then the command line's over them. Each names the target column its own
    way first (target: NAME or target_column: NAME; --target NAME or --target-column NAME), so the command line's
    overrides the file's as any field's does (a file's target: y under --target-column z was refused as a clash, and
    its stopping accuracy target: 0.9 under --target y was lost in silence); two that disagree in one place are
    refused, naming the place."""
    base = config_file(args.config) if args.config else {}
    given = given_fields(args)
    data = merge(base, given).get("data") is not None
    if args.config:
        base = target_alias(base, str(args.config), data, name=lambda key, value: f"{key}: {value}")
    given = target_alias(given, "command line", data)
    # a field's error names the one that set it (was 'b.yaml + command line' for the file's steps: abc); an error of
    # several fields, both where both gave some
    sources = {key: "command line" if key in given else str(args.config) for key in base | given}
    if "task_options" in base and "task_options" in given:  # merged: options from both
        sources["task_options"] = f"{args.config} + command line"
    where = f"{args.config} + command line" if base and given else str(args.config) if base else "command line"
    return from_dict(RunConfig, merge(base, given), where=where, sources=sources)


def config_wording(args: argparse.Namespace) -> Wording:
    """How errors name the settings of a command given ``--config FILE``: by their flags, but a setting the file
    holds that the command line does not give by its key and the file (``drop_columns in run.yaml``, ``target: NAME
    in run.yaml``): the user wrote that key, not the flag, and the one-line error is all they see of which file."""
    if not args.config:
        return CLI
    given = given_fields(args)
    base = config_file(args.config)
    data = merge(base, given).get("data") is not None
    keys = set(target_alias(base, str(args.config), data, name=lambda key, value: f"{key}: {value}"))
    # errors name the target column as the setting target (target=NAME); a file's stopping accuracy is not it
    keys.discard("target")
    if "target_column" in keys and not {"target", "target_column"} & set(given):
        keys.add("target")
    return Wording(files={key: str(args.config) for key in keys if key not in given})


def add_ray_arguments(parser: argparse.ArgumentParser, unit: str) -> argparse._ArgumentGroup:
    """The ``--executor ray`` options fpt sweep and fpt reproduce share; ``unit`` names what one Ray trial runs."""
    ray = parser.add_argument_group("Ray (--executor ray)")
    ray.add_argument("--address", default=None, help="an existing Ray cluster (e.g. auto, ray://HOST:10001); default: "
                                                     "RAY_ADDRESS, else a local Ray instance")
    ray.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance (default: all)")
    ray.add_argument("--gpus-per-trial", type=float, default=0.0, help=f"GPUs per {unit} (default 0)")
    ray.add_argument("--max-failures", type=int, default=2,
                     help=f"restarts of a failed or preempted {unit}, each from its last checkpoint (default 2)")
    return ray


def add_which_argument(parser: argparse.ArgumentParser, default: str | None = None, where: str = "") -> None:
    """``--which``: the checkpoint slot a command reads a run's model from (``fpt.run.WHICH``), declared once.
    ``default`` None: best when the run has it, else the latest (``fpt.run.Run.checkpoint``)."""
    from fpt.rundir import BEST, LATEST

    shown = "best when the run has them, else checkpoint" if default is None else default
    parser.add_argument("--which", choices=[BEST, LATEST], default=default,
                        help=f"{where}{BEST} (the validation-selected parameters) or {LATEST} (the latest); "
                             f"default: {shown}")
