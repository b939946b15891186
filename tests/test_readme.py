"""Every command of the README stays runnable, as x-transformers tests its README: each ``fpt`` command in a bash
block parses with fpt's own parser, the own-data quick start runs on a tiny table, and every python block runs."""

import re
import shlex
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 150  # the README is the first screen and a quick start; the rest lives in docs/


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def _commands(block: str) -> list[list[str]]:
    """A block's commands as argument lists: comments dropped, ``a && b`` two commands."""
    out = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(words[:cut])
            words = words[cut + 1:]
    return out


def test_readme_names_install_and_test_commands():
    blocks = _blocks("bash")
    assert blocks[0].strip() == 'pip install -e ".[test]" && fpt train'
    assert blocks[1].strip() == "python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install --quiet -e ".[test]"' in ci and "python -m pytest" in ci  # CI runs what the README says


def test_readme_is_short_and_its_links_exist():
    text = README.read_text()
    assert text.count("\n") < MAX_LINES
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert links and [link for link in links if not (ROOT / link).exists()] == []


def test_every_readme_command_parses():
    """Each command is checked against what runs it: fpt's parser for ``fpt ...``, pyproject's extras for
    ``pip install -e ".[EXTRA]"``; any other kind of command would go unchecked, so it fails here."""
    from fpt.cli import parser

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    commands = [c for block in _blocks("bash") for c in _commands(block)]
    assert len(commands) >= 10
    for words in commands:
        if words[0] == "fpt":
            parser().parse_args(words[1:])  # SystemExit on an unknown command or flag, or a bad value
        elif words[:3] == ["pip", "install", "-e"]:
            assert set(re.fullmatch(r"\.\[(.+)\]", words[3]).group(1).split(",")) <= extras, words
        else:
            assert words == ["python", "-m", "pytest"], f"a README command no test checks: {shlex.join(words)}"


def _tiny_table(path: Path, n: int, seed: int, target: bool = True) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    rows = [f"{a:.4f},{b:.4f},{c:.4f}" + (f",{'yes' if a + b > 0 else 'no'}" if target else "") for a, b, c in x]
    path.write_text("x1,x2,x3" + (",label" if target else "") + "\n" + "\n".join(rows) + "\n")


@pytest.mark.slow
def test_the_own_data_quick_start_runs(tmp_path, monkeypatch, capsys):
    """The quick start's three commands, as written, on a tiny table (training cut to a few steps)."""
    from fpt.cli import main

    monkeypatch.chdir(tmp_path)
    _tiny_table(tmp_path / "my.csv", 80, seed=0)
    _tiny_table(tmp_path / "new.csv", 7, seed=1, target=False)
    (quick,) = [b for b in _blocks("bash") if "--data my.csv" in b]
    commands = _commands(quick)
    assert [c[:2] for c in commands] == [["fpt", "data"], ["fpt", "train"], ["fpt", "predict"]]
    fast = {"train": ["--steps", "4", "--eval-every", "2", "--baselines", "none"]}
    for words in commands:
        assert main(words[1:] + fast.get(words[1], [])) == 0, shlex.join(words)
    assert (tmp_path / "runs" / "mine" / "summary.json").is_file()
    predictions = (tmp_path / "predictions.csv").read_text().splitlines()
    assert len(predictions) == 1 + 7 and set(p.split(",")[0] for p in predictions[1:]) <= {"yes", "no"}


@pytest.mark.slow
def test_readme_python_blocks_run(tmp_path, monkeypatch, readme_paper_block):
    """Both python blocks run as written; the paper-task block is run once per session by the readme_paper_block
    fixture (conftest.py), which tests/test_e2e.py reads too."""
    monkeypatch.chdir(tmp_path)  # the examples write runs/
    own_data, paper_task = _blocks("python")
    namespace: dict = {}
    exec(compile(own_data, str(README), "exec"), namespace)
    assert 0 <= namespace["summary"]["test_accuracy"] <= 1 and (tmp_path / "runs" / "iris" / "data.json").is_file()
    assert namespace["model"].predict(namespace["frame"].drop(columns="target").head(3)).shape == (3,)
    namespace = readme_paper_block
    summary = namespace["summary"]
    assert summary["test_accuracy"] == 1.0 and summary["steps_to_target"] <= 400
    assert namespace["fpt"].predict(namespace["exp"], namespace["x"]).shape == (4, 5)
