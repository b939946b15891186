"""The ``fpt`` command: a thin shell over ``fpt.*``; one module per subcommand.

Each module defines ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

# Errors a user can fix: printed as one line, no traceback (fpt.errors lists them).
from fpt.errors import USER_ERRORS


def _commands() -> dict[str, object]:
    pkg = importlib.import_module(__name__)
    return {
        info.name.replace("_", "-"): importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(pkg.__path__)
        if not info.name.startswith("_")
    }


def parser() -> argparse.ArgumentParser:
    # allow_abbrev=False everywhere: options match exactly (argparse would read --data as --data-dir).
    top = argparse.ArgumentParser(prog="fpt", description="Frozen pretrained transformers as universal computation engines.",
                                  allow_abbrev=False)
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in sorted(_commands().items()):
        p = sub.add_parser(name, help=module.HELP, description=module.HELP, allow_abbrev=False)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return top


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    args = parser().parse_args(argv)
    args.argv = [*(sys.argv[1:] if argv is None else argv)]  # as given (fpt train --nproc hands it on)
    try:
        return int(args._run(args) or 0)
    except USER_ERRORS as exc:
        if os.environ.get("FPT_DEBUG"):
            raise
        print(f"fpt {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"fpt {args.command}: interrupted", file=sys.stderr)
        return 130

