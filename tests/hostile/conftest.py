"""Shared pieces of the hostile-input cases (issue 39 and issue 38's rounds 2 and 3): one tiny tabular run, one
tiny series run trained from arrays, and one export, each trained once per session and copied by a case that
tampers with it; helpers that assert a command failed in one line, and that nothing of the user's changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hostile_helpers import FAST, series, table


@pytest.fixture(scope="session")
def hostile_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile")


@pytest.fixture(scope="session")
def tab_run(tiny_bert_dir, hostile_root) -> Path:
    import fpt

    data = table(hostile_root / "train.csv")
    out = hostile_root / "tab-run"
    fpt.fit(fpt.build(data=str(data), body=tiny_bert_dir, **FAST), out=out, progress=False)
    return out


@pytest.fixture(scope="session")
def series_run(tiny_bert_dir, hostile_root) -> Path:
    import fpt

    out = hostile_root / "series-run"
    fpt.fit(fpt.build(data=series(), body=tiny_bert_dir, **FAST), out=out, progress=False)
    return out


@pytest.fixture(scope="session")
def tab_export(tab_run, hostile_root) -> Path:
    from fpt.run import Run

    return Run(tab_run).export(hostile_root / "tab-export")


@pytest.fixture
def run_copy(tab_run, tmp_path) -> Path:
    return Path(shutil.copytree(tab_run, tmp_path / "run"))


@pytest.fixture
def export_copy(tab_export, tmp_path) -> Path:
    return Path(shutil.copytree(tab_export, tmp_path / "export"))
