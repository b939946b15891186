"""What produced a result: interpreter, platform and library versions (and the fpt checkout's commit)."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("fpt", "torch", "transformers", "safetensors", "numpy", "matplotlib")


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def git_commit() -> str | None:
    """The commit of the fpt source tree when it is a git checkout (editable installs), else None."""
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=5, check=False)
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def environment() -> dict[str, str | None]:
    """Versions worth recording next to any figure; cheap (no torch import beyond what is loaded)."""
    env: dict[str, str | None] = {"python": sys.version.split()[0], "platform": platform.platform()}
    env.update({name: package_version(name) for name in PACKAGES})
    env["fpt_git_commit"] = git_commit()
    return env
