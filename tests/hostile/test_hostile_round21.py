"""Round 21 of the hostile-input cases: a lone LOCAL_RANK, foreign event files in a shared TensorBoard folder, a pandas
Series' element names, reordered columns at the estimators, and the inputs probed after them. Each case failed before
its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest
from hostile_helpers import FAST, table


def test_a_lone_local_rank_is_no_torchrun_rank(tiny_bert_dir, tmp_path, monkeypatch):
    """Some schedulers and containers set LOCAL_RANK=0 for a single process; fpt read it as a torchrun rank: fpt train
    fitted no baselines beside the run and printed the summary as a rank's JSON, and fpt.train_run refused
    fit=closed-form ('fits in one process: drop torchrun'). torchrun sets RANK and WORLD_SIZE too (and
    TORCHELASTIC_RUN_ID): LOCAL_RANK alone now changes nothing."""
    import fpt

    for name in ("RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "0")
    data = str(table(tmp_path / "t.csv"))
    fields = {**FAST, "body": tiny_bert_dir, "data": data}
    summary = fpt.train_run({**fields, "baselines": "fast"}, tmp_path / "run", progress=False)
    assert summary["world_size"] == 1 and "logistic regression" in summary["baselines_models"]["models"]
    closed = fpt.train_run({**fields, "fit": "closed-form"}, tmp_path / "closed", progress=False)
    assert closed["world_size"] == 1 and (tmp_path / "closed" / "summary.json").is_file()


def test_a_resume_reads_another_tools_event_files_no_further_than_their_first_value(tmp_path, monkeypatch):
    """A resumed run (and fpt plot --tensorboard) in a shared log_dir looks for the unnamed event files an older fpt
    wrote for it, and read every unnamed file through, another tool's of thousands of points as well (50 files of
    3,000 steps: 20 s a start). A value fpt never writes there (a tag of no set of the run's) ends the reading: a file
    is read to its first such value and stays; one of the run's own numbers is still deleted."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from torch.utils.tensorboard import SummaryWriter

    from fpt.tracking import drop_own_events

    points = {(tag, step): value for step in (2, 4) for tag, value in (("accuracy/val", 0.5), ("loss/train", 0.25))}
    with SummaryWriter(str(tmp_path), filename_suffix=".other") as other:  # a Hugging Face Trainer's tags
        for step in range(2000):
            other.add_scalar("train/loss", 1.0, step)
    with SummaryWriter(str(tmp_path), filename_suffix=".old") as old:  # an fpt before .fpt- names, for this run
        old.add_text("config", "    seed: 0", 0)
        for (tag, step), value in points.items():
            old.add_scalar(tag, value, step)
    read = []
    load = EventFileLoader.Load
    monkeypatch.setattr(EventFileLoader, "Load", lambda self: (read.append(1) or event for event in load(self)))
    (tmp_path / "run").mkdir()
    drop_own_events(tmp_path, tmp_path / "run", points)
    assert [p.name.rpartition(".")[2] for p in tmp_path.glob("events.*")] == ["other"]
    assert len(read) < 10  # events read, of the foreign file's 2,000 (and the old one's 6)


def _estimator_fields(body: str) -> dict:
    return {k: v for k, v in {**FAST, "body": body}.items() if k != "baselines"}


def test_a_pandas_series_element_is_named_by_position(tiny_bert_dir, tmp_path):
    """A pandas Series given as X (texts, or series as lists of points) named its element X[1] where a DataFrame's is
    X.iloc[1]: after a filter its index is 5, 9, 12, and X[1] reads the label 1 (a KeyError) or another element.
    The estimators and a Predictor name a Series' elements by position, X.iloc[1] (lists keep X[1])."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError, SchemaError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(list("abcd"), size=rng.integers(3, 9))) for _ in range(24)]
    y = np.arange(24) % 2
    filtered = pd.Series(["ab", "xyz", "ab"], index=[5, 9, 12])
    fitted = FPTClassifier(**_estimator_fields(tiny_bert_dir), handle_unknown="error").fit(texts, y)
    with pytest.raises(SchemaError, match=r"^FPTClassifier\.predict: X\.iloc\[1\]: 'xyz' holds no symbol"):
        fitted.predict(filtered)
    with pytest.raises(SchemaError, match=r"^FPTClassifier\.predict: X\[1\]: 'xyz' holds no symbol"):
        fitted.predict(list(filtered))
    fpt.fit(fpt.build(data=pd.DataFrame({"text": texts, "label": y}), **FAST, body=tiny_bert_dir), out=tmp_path / "r",
            progress=False)
    with pytest.raises(SchemaError, match=r"^inputs: inputs\.iloc\[1\]: 'xyz' holds no symbol"):
        fpt.load(tmp_path / "r").predict(filtered)
    points = pd.Series([list(rng.normal(size=12)) for _ in range(24)], index=np.arange(24) * 3 + 5)
    points.iloc[1] = [np.inf] * 12
    with pytest.raises(DataError, match=r"^FPTClassifier\.fit: X\.iloc\[1\]\[0\] is inf \(12 infinite"):
        FPTClassifier(**_estimator_fields(tiny_bert_dir), modality="timeseries").fit(points, y)


def test_an_estimators_dataframe_of_other_columns_is_named_with_the_fix(tiny_bert_dir):
    """An estimator fitted on a DataFrame refused one whose columns were reordered, lacking or extra with
    scikit-learn's ValueError of several lines ('The feature names should match those that were passed during
    fit.'), naming neither X nor a fix. A reordering is still refused, as scikit-learn's own estimators refuse it
    (they read columns by position; fpt.load's Predictor reads them by name), but fpt's line comes first, naming
    what to give; scikit-learn's words follow, which its estimator checks look for."""
    import pandas as pd

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.normal(size=24), "x2": rng.normal(size=24)})
    fitted = FPTClassifier(**_estimator_fields(tiny_bert_dir)).fit(df, np.arange(24) % 2)
    for X, line in ((df[["x2", "x1"]], "X has fit's columns in another order ('x2', 'x1'); give the columns fit was "
                                       "given, in its order: X[['x1', 'x2']]"),
                    (df.assign(extra=1.0), "X has column(s) fit was not given ('extra'); give the columns fit was "
                                           "given, in its order: X[['x1', 'x2']]"),
                    (df[["x1"]], "X lacks fit's column(s) 'x2'; give X every column fit was given: 'x1', 'x2'")):
        with pytest.raises(DataError) as refused:
            fitted.predict_proba(X)
        first, *rest = str(refused.value).splitlines()
        assert first == f"FPTClassifier.predict: {line}"
        assert rest[0] == "The feature names should match those that were passed during fit."
    assert np.array_equal(fitted.predict(df[["x1", "x2"]]), fitted.predict(df))


def test_a_list_of_words_among_texts_is_refused_naming_it_not_trained_as_its_repr(tiny_bert_dir):
    """A text column holding one list of words (df['text'] built by hand, a tokenised row among texts) was read in
    training as its repr, "['a', 'b']": fpt.build(data=df) and an estimator's fit on the DataFrame trained the symbols
    [, ', ',', ] without a word. Texts given as X with such a cell raised scikit-learn's 'could not convert string to
    float: 'ab'' in fit, and predict said 'give a list (or array, or pandas Series) of str, not Series'. Each now names
    the cell, as a Predictor does (round 20)."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError, SchemaError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(list("abcd"), size=rng.integers(3, 9))) for _ in range(24)]
    y = np.arange(24) % 2
    listed = [texts[0], ["a", "b"], *texts[2:]]
    fix = "is a list, not a text; a sequence model reads one text per example: give its words as one text " \
          "(' '.join(words))"
    with pytest.raises(DataError) as refused:
        fpt.build(data=pd.DataFrame({"text": listed, "label": y}), **FAST, body=tiny_bert_dir)
    assert str(refused.value) == f"the DataFrame: data.iloc[1]['text'] {fix}"
    fields = _estimator_fields(tiny_bert_dir)
    for X, cell in ((pd.DataFrame({"seq": listed}), "X.iloc[1]['seq']"), (listed, "X[1]"),
                    (pd.Series(listed, index=np.arange(24) * 3 + 5), "X.iloc[1]")):
        with pytest.raises(DataError) as refused:
            FPTClassifier(**fields, modality="sequence").fit(X, y)
        assert str(refused.value) == f"FPTClassifier.fit: {cell} {fix}"
    fitted = FPTClassifier(**fields).fit(texts, y)
    with pytest.raises(SchemaError) as refused:
        fitted.predict(["ab", ["a", "b"], "ab"])
    assert str(refused.value) == f"FPTClassifier.predict: X[1] {fix}"


def test_training_texts_of_no_symbol_are_refused_not_trained_on_nothing(tiny_bert_dir):
    """Texts every one of which is empty or blank (a column of "" built by hand, the wrong column) trained a model on
    an empty vocabulary without a word: every example the same empty sequence, nothing to learn (the estimators'
    vocab [], fpt.build alike), where a file's column of empty cells is refused as holding no text."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    y = np.arange(24) % 2
    said = "is empty or blank (24 of 24), so a sequence model has no symbol to learn from; give the texts themselves"
    with pytest.raises(DataError) as refused:
        FPTClassifier(**_estimator_fields(tiny_bert_dir)).fit(["", "  "] * 12, y)
    assert str(refused.value) == f"FPTClassifier.fit: every training text {said}"
    with pytest.raises(DataError) as refused:
        fpt.build(data=pd.DataFrame({"t": [""] * 24, "label": y}), **FAST, body=tiny_bert_dir)
    assert str(refused.value) == f"the DataFrame: every training text (column 't') {said}"
    one = FPTClassifier(**_estimator_fields(tiny_bert_dir)).fit([*[""] * 23, "ab"], y)  # one text is enough
    assert one.preprocessing_.tokeniser.vocab == ["a", "b"]


def test_a_connect_timeout_that_is_no_number_of_seconds_is_named(monkeypatch):
    """FPT_CONNECT_TIMEOUT was read at import as float(...): '5s' raised ValueError in any command that asked for a
    remote service (fpt train --log mlflow with an http:// store: 'this is a bug in fpt'), -1 the socket's
    'Timeout value out of range', and 0 reported a server as not answering ('Operation now in progress'). Each is one
    line naming the variable and the fix; a number of seconds is taken."""
    import importlib

    from fpt import connect
    from fpt.errors import ConfigError

    for given in ("5s", "0", "-1", "nan"):
        monkeypatch.setenv("FPT_CONNECT_TIMEOUT", given)
        importlib.reload(connect)  # the module read it on import
        with pytest.raises(ConfigError) as refused:
            connect.check_reachable("127.0.0.1:9", "MLFLOW_TRACKING_URI=http://127.0.0.1:9", "start the server")
        assert str(refused.value) == (f"FPT_CONNECT_TIMEOUT={given!r}: give the seconds to wait for a remote service "
                                      "as a number above 0 (FPT_CONNECT_TIMEOUT=10), or unset it to wait 5")
    monkeypatch.setenv("FPT_CONNECT_TIMEOUT", " 2.5 ")
    assert connect.wait_seconds() == 2.5
    monkeypatch.delenv("FPT_CONNECT_TIMEOUT")
    assert connect.wait_seconds() == connect.TIMEOUT == 5.0


def test_a_missing_series_among_series_is_named(tiny_bert_dir):
    """A missing example (None, NaN) among series given as lists of points (a DataFrame's column of lists with a NaN
    row after a merge, taken as a pandas Series) raised scikit-learn's 'ValueError: Expected 2D array, got 1D array
    instead' in the estimators' fit and predict, and fpt.build said 'X[1] has shape (12,), but X[0] has shape (); give
    examples of one shape (images resized to one size, ...)'. Each names it as the caller indexes X, and the fix."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    series, y = [list(rng.normal(size=12)) for _ in range(24)], np.arange(24) % 2
    fix = "among series; give its points (NaN where a point is missing), or leave the example out"
    fields = _estimator_fields(tiny_bert_dir)
    with pytest.raises(DataError) as refused:
        FPTClassifier(**fields, modality="timeseries").fit([None, *series[1:]], y)
    assert str(refused.value) == f"FPTClassifier.fit: X[0] is missing (None; 1 of 24 examples) {fix}"
    with pytest.raises(DataError) as refused:
        fpt.build(data=(pd.Series([*series[:3], np.nan, *series[4:]], index=np.arange(24) + 7), y), **FAST,
                  body=tiny_bert_dir)
    assert str(refused.value) == f"data arrays: X: X.iloc[3] is missing (nan; 1 of 24 examples) {fix}"
    fitted = FPTClassifier(**fields, modality="timeseries").fit(series, y)
    with pytest.raises(DataError) as refused:
        fitted.predict(pd.Series([series[0], None, series[2]], index=[4, 8, 9]))
    assert str(refused.value) == f"FPTClassifier.predict: X.iloc[1] is missing (None; 1 of 3 examples) {fix}"
