"""Command-line flags generated from RunConfig, so the CLI and the config never drift."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from fpt.config import RunConfig, field_help, from_dict, load_yaml, merge, parse_overrides, target_alias


def add_config_arguments(parser: argparse.ArgumentParser, exclude: tuple[str, ...] = ()) -> None:
    helps = field_help(RunConfig)
    for f in dataclasses.fields(RunConfig):
        if f.name in exclude or f.name == "task_options":
            continue
        default = f.default if f.default is not dataclasses.MISSING else None
        parser.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, default=None, metavar="X",
                            help=f"{helps[f.name]} (default: {default})")
    parser.add_argument("--config", help="YAML file of config fields; flags and key=value override it")
    parser.add_argument("overrides", nargs="*", metavar="key=value",
                        help="more overrides, e.g. steps=500 task.n_bits=5")


def given_fields(args: argparse.Namespace) -> dict[str, Any]:
    """Fields set on the command line (flags, then key=value), without defaults."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(RunConfig):
        value = getattr(args, f.name, None)
        if value is not None:
            out[f.name] = value
    return merge(out, parse_overrides(args.overrides or []))


def config_from_args(args: argparse.Namespace) -> RunConfig:
    base = load_yaml(args.config) if args.config else {}
    where = f"{args.config} + command line" if args.config else "command line"
    return from_dict(RunConfig, target_alias(merge(base, given_fields(args))), where=where)
