"""What produced a result: interpreter, platform and library versions (and the fpt checkout's commit)."""

from __future__ import annotations

import functools
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("fpt", "torch", "transformers", "safetensors", "numpy", "matplotlib")


@functools.cache  # this process's imports do not change under it; every run's summary asks (~10 ms each time)
def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


@functools.cache
def git_commit() -> str | None:
    """The commit of the fpt source tree when it is a git checkout (editable installs), else None.

    Asked once per process (two git commands, ~30-150 ms, were run at the end of every run): the code a process
    runs is what it imported, which a commit or an edit made while it runs does not change."""
    here = Path(__file__).resolve().parent
    try:
        # 12 characters: git's default (7, lengthened once another object shares them) recorded one pinned commit
        # two ways across the lane's sessions (fd06ce5, then fd06ce52)
        done = subprocess.run(["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=5, check=False)
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() + (DIRTY_SUFFIX if dirty.stdout.strip() else "")


DIRTY_SUFFIX = " (with uncommitted changes)"


def environment() -> dict[str, str | bool | None]:
    """Versions worth recording next to any figure; cheap (no torch import beyond what is loaded).

    ``fpt_git_commit``: short commit, with DIRTY_SUFFIX when the tree had uncommitted changes (as always);
    ``commit`` and ``dirty``: the same, machine-readable (None when the source is not a git checkout).
    """
    env: dict[str, str | bool | None] = {"python": sys.version.split()[0], "platform": platform.platform()}
    env.update({name: package_version(name) for name in PACKAGES})
    env["fpt_git_commit"] = git_commit()
    env["commit"], env["dirty"] = run_commit({"environment": env})
    return env


def run_commit(summary: dict) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the code that wrote a run's summary.json: its environment's ``commit``/``dirty``, or
    parsed from ``fpt_git_commit`` (runs written before those fields); (None, None) when not recorded."""
    env = summary.get("environment") or {}
    if env.get("commit"):
        return env["commit"], env.get("dirty")
    text = env.get("fpt_git_commit")
    if not text:
        return None, None
    return text.split()[0], text.endswith(DIRTY_SUFFIX)
