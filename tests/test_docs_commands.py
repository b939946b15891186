"""Every command in a bash block of docs/*.md (the pages the README links; not docs/results/, generated reports)
is one a user can type: an ``fpt`` command parses with fpt's own parser (under ``torchrun ... -m fpt --`` too), a
bench script exists and takes the flags given, an extra is one pyproject declares. tests/test_readme.py does the
same for the README; the commands that train are run there and in the docs' own tests, not here."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PLACEHOLDER = "..."  # `fpt train --log mlflow ...`: the rest of a command the page leaves to the reader


def commands(doc: Path) -> list[list[str]]:
    """A page's bash-block commands as argument lists: comments and ``VAR=value`` prefixes dropped, ``a && b`` two
    commands, a command cut at a ``...`` placeholder or a shell redirection."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", doc.read_text(), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words:
                cut = words.index("&&") if "&&" in words else len(words)
                command, words = words[:cut], words[cut + 1:]
                while command and re.fullmatch(r"[A-Z_]+=\S*", command[0]):
                    command = command[1:]
                for stop in (PLACEHOLDER, ">", "|"):
                    if stop in command:
                        command = command[: command.index(stop)]
                if command:
                    out.append(command)
    return out


def fpt_args(words: list[str]) -> list[str] | None:
    """The fpt arguments of ``fpt ARGS`` or ``torchrun ... -m fpt [--] ARGS``; None for any other command."""
    if words[0] == "fpt":
        return words[1:]
    if words[0] == "torchrun" and "-m" in words and words[words.index("-m") + 1] == "fpt":
        rest = words[words.index("-m") + 2:]
        return rest[1:] if rest[:1] == ["--"] else rest
    return None


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_docs_command_is_one_a_user_can_type(doc):
    from fpt.cli import parser

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    for words in commands(doc):
        where = f"{doc.name}: {shlex.join(words)}"
        args = fpt_args(words)
        if args is not None:
            try:
                parser().parse_args(args)
            except SystemExit as exc:  # argparse's way to refuse an unknown command or flag, or a bad value
                raise AssertionError(f"{where}: fpt's parser refuses it") from exc
        elif words[:3] == ["pip", "install", "-e"]:
            extra = re.fullmatch(r"\.\[(.+)\]", words[3])
            assert extra is None or set(extra.group(1).split(",")) <= extras, where  # else a package of the user's
        elif words[0] in ("python", "bash") and words[1].startswith("bench/"):
            script = ROOT / words[1]
            assert script.is_file(), where
            source = script.read_text()
            flags = [w.split("=")[0] for w in words[2:] if w.startswith("--")]
            assert all(f'"{flag}"' in source for flag in flags), where  # each flag is one its parser declares
        else:
            assert words[0] == "tensorboard", f"{where}: a kind of command no test checks"


def test_the_commands_are_found():
    """The reader above finds the pages' commands (a changed fence or layout would silently check nothing)."""
    found = {doc.name: commands(doc) for doc in DOCS}
    assert sum(len(c) for c in found.values()) >= 60
    assert ["fpt", "predict", "runs/bc", "new.csv", "--out", "predictions.csv"] in found["predict-export.md"]
    assert ["fpt", "train", "--log", "mlflow"] in found["scale-out.md"]
    assert any(fpt_args(c) == ["train", "--resume", "runs/memory"] for c in found["scale-out.md"])
