"""fpt export: a run's trained model as a self-contained directory (config.json, fpt_model.safetensors, README.md, body/)."""

from __future__ import annotations

import argparse
import json

HELP = "export a run's trained model as a self-contained directory that fpt.load reads offline (--onnx: model.onnx too)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_which_argument

    p.add_argument("run_dir", metavar="RUN", help="a directory written by fpt train")
    p.add_argument("out", metavar="DIR", help="the export directory to write (new or empty)")
    add_which_argument(p)
    p.add_argument("--onnx", action="store_true",
                   help="also write model.onnx (needs pip install 'fpt[export]'; checked with onnxruntime)")
    p.add_argument("--force", action="store_true", help="replace an existing export in DIR")


def run(args: argparse.Namespace) -> int:
    from fpt.errors import Wording, wording
    from fpt.export import CONFIG_FILE
    from fpt.run import Run

    with wording(Wording(names={"out": "DIR"})):  # the export's folder is this command's DIR, not an --out
        out = Run(args.run_dir).export(args.out, which=args.which, onnx=args.onnx, force=args.force)
    doc = json.loads((out / CONFIG_FILE).read_text())
    line = {"export": str(out), "checkpoint": doc["checkpoint"], "body_fingerprint": doc["body"]["fingerprint"],
            "files": sorted(p.name for p in out.iterdir())}
    if "onnx" in doc:
        line["onnx"] = {k: doc["onnx"][k] for k in ("checked_with", "max_abs_diff") if k in doc["onnx"]}
    print(json.dumps(line))
    return 0
