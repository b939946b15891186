"""Round 21's follow-ups: a Predictor's missing series among series, the dtype of its labels for no rows. Each case
failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest
from hostile_helpers import series


def test_a_missing_series_among_series_is_named_by_a_predictor(series_run):
    """A missing example (None, NaN) among the series given to a Predictor (a DataFrame's column of lists with a NaN
    row after a merge, taken as a pandas Series) said 'inputs[1] has shape (); give (channels, length)', where the
    estimators and fpt.build name it as missing and say what to do; the Predictor says so too, as the caller
    indexes what it gave."""
    import pandas as pd

    import fpt
    from fpt.errors import SchemaError

    predictor = fpt.load(series_run)
    X, _ = series()
    points = [list(s[0]) for s in X[:3]]
    fix = "among series; give its points (NaN where a point is missing), or leave the example out"
    with pytest.raises(SchemaError) as refused:
        predictor.predict([points[0], None, points[2], np.nan])
    assert str(refused.value) == f"inputs: inputs[1] is missing (None; 2 of 4 examples) {fix}"
    with pytest.raises(SchemaError) as refused:
        predictor.predict(pd.Series([points[0], points[1], np.nan], index=[4, 8, 9]))
    assert str(refused.value) == f"inputs: inputs.iloc[2] is missing (nan; 1 of 3 examples) {fix}"
    with pytest.raises(SchemaError) as refused:  # (C, L) arrays alike
        predictor.predict([X[0], None])
    assert str(refused.value) == f"inputs: inputs[1] is missing (None; 1 of 2 examples) {fix}"
    # a NaN among one series' numbers is a missing point, still said as before; a whole batch is predicted
    with pytest.raises(SchemaError, match="12 numbers, not a batch of series"):
        predictor.predict([np.nan, *points[0][1:]])
    assert predictor.predict(points).shape == (3,)


def test_no_rows_are_predicted_as_labels_of_the_kind_rows_are(tab_run, hostile_root):
    """Predictor.predict of no rows (a DataFrame of the right columns and 0 rows, a header-only file) returned an
    object array where rows gave a str one (text classes): code that tests predictions' dtype (np.char, a pandas
    string column, == 'a' broadcasting) took another path for an empty batch. scikit-learn's estimators refuse 0
    samples; a Predictor reads a header-only file as no predictions (fpt predict writes one of the header alone), so
    it keeps reading them, its labels of the kind its classes are."""
    import pandas as pd

    import fpt

    predictor = fpt.load(tab_run)
    frame = pd.read_csv(hostile_root / "train.csv")
    rows, none = predictor.predict(frame.head(3)), predictor.predict(frame.head(0))
    assert rows.dtype.kind == none.dtype.kind == "U" and none.shape == (0,)
    header = hostile_root / "header-only.csv"
    header.write_text("x1,x2\n")
    assert predictor.predict(str(header)).dtype.kind == "U"


def test_a_run_given_by_a_relative_path_is_read_there_after_a_chdir(tab_run, tmp_path, monkeypatch):
    """fpt.Run('run') kept the path relative, so after an os.chdir (Hydra's, a Ray Tune trial's) its export, load and
    config said 'run/config.yaml does not exist: run is not a run directory written by fpt train' of the run just
    made. It reads the folder it was given; its messages still name it as given while the directory is the same."""
    import shutil

    import fpt

    shutil.copytree(tab_run, tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    run, nowhere = fpt.Run("run"), fpt.Run("nowhere")
    assert run == fpt.Run(tmp_path / "run") and str(run.config_path) == "run/config.yaml"
    with pytest.raises(FileNotFoundError) as refused:
        nowhere.checkpoint()
    assert str(refused.value) == "nowhere/config.yaml does not exist: nowhere is not a run directory written by fpt train"
    assert run.load().source == "run"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert run.config().data == fpt.Run(tmp_path / "run").config().data
    assert run.export(tmp_path / "export") == tmp_path / "export" and (tmp_path / "export" / "config.json").is_file()
    with pytest.raises(FileNotFoundError) as refused:  # the given path names another folder here: said whole
        nowhere.checkpoint()
    assert str(refused.value) == (f"{tmp_path}/nowhere/config.yaml does not exist: {tmp_path}/nowhere is not a run "
                                  "directory written by fpt train")
