"""The scripts under bench/ are not a package: tests load them by path, once per session (one module object, so a
test that patches one sees its patch everywhere)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load(script: str) -> ModuleType:
    """bench/SCRIPT.py as the module ``bench_SCRIPT``."""
    name = f"bench_{script}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{script}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before running it: dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]
