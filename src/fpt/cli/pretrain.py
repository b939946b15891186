"""fpt pretrain: train every parameter of a body on a task, then save the body.

The saved body is used frozen on other tasks with ``--init checkpoint:DIR/body`` (the
paper's Table 2 row "pretrained on Bit Memory").
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

HELP = "train all parameters of a (random) body on a task and save it for --init checkpoint:PATH"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_config_arguments

    run_group = add_config_arguments(p, exclude=("freeze",))["run and output"]
    run_group.add_argument("--out", required=True, metavar="DIR", help="run directory; the body is written to OUT/body")
    run_group.add_argument("--resume", action="store_true", help="continue a stopped pretraining run in --out")
    run_group.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from fpt.cli._args import config_wording
    from fpt.errors import wording

    with wording(config_wording(args)):  # a setting read from --config FILE named by its key and the file
        return _pretrain(args)


def _pretrain(args: argparse.Namespace) -> int:
    from fpt import rundir
    from fpt.bodies import BodySpec
    from fpt.bodies.init import save_body
    from fpt.cli._args import config_from_args, given_fields
    from fpt.data.readings import as_run
    from fpt.pipeline import build
    from fpt.train import fit, resume_config

    out = Path(args.out)
    if args.resume:
        config = resume_config(out, given_fields(args))
    else:
        config = dataclasses.replace(config_from_args(args), freeze="none")
        if "init" not in given_fields(args):
            config = dataclasses.replace(config, init="random")
    with rundir.lock(out, what="fpt pretrain"):  # one writer from the first step to the saved body
        with as_run(out if args.resume else None):  # its data read as it started
            exp = build(config)
        summary = fit(exp, out=out, resume=args.resume, progress=not args.quiet)
        spec = BodySpec(config.body, config.init, exp.data.spec.seq_len, config.dropout, config.seed)
        save_body(exp.model.body, spec, out / rundir.BODY_DIR)
    print(json.dumps({k: summary[k] for k in ("test_accuracy", "steps", "wall_seconds")}))
    body = out / rundir.BODY_DIR
    print(f"body written to {body}; use it with --body {config.body} --init checkpoint:{body}")
    return 0
