"""The provenance gate of claims.md: which cells a verdict may read.

A results folder declares the commit its verdicts come from in a file COMMIT (one hash; the rerun lane writes
docs/results/lane/COMMIT) or by ``fpt claims --commit``. A cell is then evidence only when every run it aggregates
records that commit and a clean tree, or when an exact rerun at that commit reproduced its per-seed figures, as
recorded in REPRODUCED.csv beside COMMIT (columns table, row, column, commit, values: the rerun's figures joined by
';', equal to the cell's own). A store that declares no commit (one that grew over many commits) gets no such
benefit of the doubt: a verdict there reads cells only when all of them come from one and the same commit, each
with a clean tree. Any other cell makes the verdict "inconclusive (provenance)", naming the cells.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fpt.errors import ConfigError, DataError

COMMIT_FILE = "COMMIT"
REPRODUCED_FILE = "REPRODUCED.csv"
REPRODUCED_FIELDS = ("table", "row", "column", "commit", "values")


def same_commit(a: str, b: str) -> bool:
    """Whether two hashes (short or full) name the same commit: one is a prefix of the other, 7+ characters."""
    a, b = a.strip().lower(), b.strip().lower()
    return min(len(a), len(b)) >= 7 and (a.startswith(b) or b.startswith(a))


def distinct_commits(commits: Iterable[str]) -> list[str]:
    """The commits among ``commits``, each once, named by its longest hash there: git abbreviates a hash to 7
    characters and lengthens it once the repository holds another object that shares them, so the runs of one pinned
    commit recorded fd06ce5 and, later, fd06ce52 (the lane's store: 255 and 33 runs), which were counted as two."""
    out: list[str] = []
    for commit in sorted({c.strip() for c in commits if c and c.strip()}, key=len, reverse=True):
        if not any(same_commit(commit, other) for other in out):
            out.append(commit)
    return sorted(out)


def declared_commit(root: Path, given: str | None = None) -> str | None:
    """The commit ROOT/COMMIT declares, or ``given`` (--commit); both given and different is an error."""
    path = Path(root) / COMMIT_FILE
    recorded = None
    if path.is_file():
        try:
            recorded = path.read_text(encoding="utf-8").strip() or None
        except UnicodeDecodeError:
            raise DataError(f"{path}: not UTF-8 text; write the commit's hash in it") from None
        if recorded is not None and (len(recorded.split()) != 1 or len(recorded) < 7):
            raise DataError(f"{path}: {recorded[:40]!r} is not one commit hash (7+ characters); fix the file")
    if given and recorded and not same_commit(given, recorded):
        raise ConfigError(f"--commit {given} differs from {path} ({recorded}); give the same commit or neither")
    return given or recorded


def read_reproduced(root: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    """ROOT/REPRODUCED.csv as {(table, row, column): {commit, values}} ({} when there is none)."""
    path = Path(root) / REPRODUCED_FILE
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text; fix the file") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [f for f in REPRODUCED_FIELDS if f not in (reader.fieldnames or [])]
    if missing:
        raise DataError(f"{path}: no column {', '.join(missing)}; its columns are {', '.join(REPRODUCED_FIELDS)}")
    return {(r["table"], r["row"], r["column"]): {"commit": r["commit"], "values": r["values"]} for r in reader}


@dataclass
class Gate:
    """What a verdict may read: the declared commit (None: one commit shared by all its cells) and the record of
    exact reruns."""

    commit: str | None = None
    reproduced: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)

    def reproduced_here(self, key: tuple[str, str, str], values: str) -> bool:
        record = self.reproduced.get(key)
        return bool(record and self.commit and same_commit(record["commit"], self.commit)
                    and _figures(record["values"]) == _figures(values) and _figures(values))

    def problems(self, cells: list[tuple[tuple[str, str, str], dict[str, Any], str]]) -> list[str]:
        """Why some of ``cells`` [((table, row, column), evidence, the cell's values)] may not be read: one entry
        per such cell ([] when the verdict may read them all)."""
        out, commits = [], {}
        for key, ev, values in cells:
            if not ev["runs"] and not ev["commits"] and not ev["unrecorded"]:
                continue  # nothing ran: no figure is read from it
            name = "/".join((key[0], key[2], key[1]))
            if self.commit and self.reproduced_here(key, values):
                continue
            why = []
            if ev["unrecorded"]:
                why.append(f"{ev['unrecorded']} run(s) without a recorded commit")
            if ev["dirty"]:
                why.append(f"{ev['dirty']} of {ev['runs']} runs from a tree with uncommitted changes")
            if self.commit:
                other = sorted(c for c in ev["commits"] if not same_commit(c, self.commit))
                if other:
                    why.append(f"commit {', '.join(other)}, not {self.commit[:7]}")
            elif len(own := distinct_commits(ev["commits"])) > 1:
                why.append(f"{len(own)} commits ({', '.join(own)})")
            if why:
                out.append(f"{name} ({'; '.join(why)})")
            elif not self.commit:
                commit = next(iter(distinct_commits(ev["commits"])), "?")
                known = next((c for c in commits if c != "?" and same_commit(c, commit)), commit)
                commits.setdefault(known, []).append(name)
        if len(commits) > 1:  # no declared commit: clean cells that still disagree on the commit
            out += [f"{', '.join(names)} (commit {commit})" for commit, names in sorted(commits.items())]
        return out


def _figures(values: str) -> list[str]:
    return [v for v in (values or "").split(";") if v != ""]


def describe(gate: Gate) -> str:
    if gate.commit:
        return (f"declared commit {gate.commit[:12]} (its runs with a clean tree"
                + (f", or cells an exact rerun there reproduced ({len(gate.reproduced)} recorded in "
                   f"{REPRODUCED_FILE}))" if gate.reproduced else ")"))
    return ("no declared commit (no COMMIT file, no --commit): a verdict reads its cells only when all come from one "
            "commit with a clean tree")


__all__ = ["COMMIT_FILE", "REPRODUCED_FILE", "Gate", "declared_commit", "describe", "distinct_commits", "read_reproduced",
           "same_commit"]
