"""docs/sklearn.md's parameter table is the estimator's: its defaults are the constructor's, and each value "a fit
uses" that the table states as a literal is what a fitted model's config records (issue 38, item 6)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from fpt.sklearn import FPTClassifier, FPTRegressor

DOC = Path(__file__).resolve().parents[1] / "docs" / "sklearn.md"


def table() -> dict[str, tuple[str, str]]:
    """parameter -> (default cell, a-fit-uses cell), from the table under '## Parameters'."""
    text = DOC.read_text().split("## Parameters", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 3:
            rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


def literal(cell: str) -> object:
    return ast.literal_eval(cell.strip("`"))


def is_literal(cell: str) -> bool:
    if not (cell.startswith("`") and cell.endswith("`")):
        return False
    try:
        literal(cell)
    except (ValueError, SyntaxError):
        return False
    return True


def test_every_constructor_argument_is_in_the_table_with_its_default():
    rows = table()
    params = inspect.signature(FPTClassifier.__init__).parameters
    assert set(rows) == set(params) - {"self"}
    assert inspect.signature(FPTRegressor.__init__).parameters.keys() == params.keys()
    for name, (default, _) in rows.items():
        assert literal(default) == params[name].default, name


@pytest.mark.parametrize("shape", [(30, 4), (30, 2, 12)])  # a table, and aeon's (n, channels, length) series
def test_what_a_fit_uses_is_what_the_fitted_config_records(monkeypatch, tiny_bert_dir, shape):
    from dataclasses import replace

    import fpt.select
    import fpt.sklearn

    monkeypatch.setattr(fpt.sklearn, "fpt_fit", lambda exp, progress=False: {})  # the resolved config, not training
    choose_fit = fpt.select.choose_fit  # fitting left None chooses: the closed-form fit alone, so the choice is quick
    monkeypatch.setattr(fpt.select, "choose_fit", lambda config, folds=None, progress=None: choose_fit(
        config, folds, progress, choice=replace(fpt.select.AUTO, gradient_budget_s=0.0)))
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=shape).astype(np.float32), np.arange(shape[0]) % 2
    clf = FPTClassifier(body=tiny_bert_dir, init="random").fit(X, y)
    config = clf.experiment_.config
    checked = 0
    for name, (_, uses) in table().items():
        if name in ("body", "init") or not is_literal(uses):
            continue
        assert getattr(config, name) == literal(uses), name
        checked += 1
    assert checked >= 8
    assert clf.fit_choice_["auto"] and config.fit == clf.fit_choice_["winner_fields"]["fit"]  # fitting: chosen
    assert config.series_norm == "global" and clf.preprocessing_.tokeniser.kind == ("timeseries" if len(shape) == 3
                                                                                    else "tabular")
