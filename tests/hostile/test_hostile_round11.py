"""Round 11 of the hostile-input cases: a practitioner's habits that fpt took silently or answered with an error
naming the wrong thing. Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest
from hostile_helpers import FAST


@pytest.mark.parametrize("where", ["base", "grid", "random"])
def test_a_sweep_asking_for_baselines_is_refused_naming_the_file_and_key(where):
    """baselines: all in a sweep spec trained every trial (fpt.train.fit alone) and fitted no baseline, silently."""
    from fpt.errors import ConfigError
    from fpt.experiments import sweep

    base = {"task": "bit-xor", "steps": 2}
    raw = {"base": {**base, "baselines": "all"}, "grid": {"lr": [1e-3]}}
    if where == "grid":
        raw = {"base": base, "grid": {"lr": [1e-3], "baselines": ["none", "all"]}}
    elif where == "random":
        raw = {"base": base, "random": {"trials": 2, "space": {"baselines": {"choice": ["auto", "all"]}}}}
    with pytest.raises(ConfigError) as info:
        sweep.parse_spec(raw, "my-sweep.yaml")
    section = {"base": "base", "grid": "grid", "random": "random.space"}[where]
    assert str(info.value).startswith(f"sweep spec my-sweep.yaml: {section}.baselines: 'all': a sweep's trials fit "
                                      "no baselines"), info.value
    assert "fpt train --data ... --baselines all" in str(info.value) and "\n" not in str(info.value)
    for fine in ("none", "auto"):  # what a trial does: kept
        assert sweep.parse_spec({"base": {**base, "baselines": fine}, "grid": {"lr": [1e-3]}}).base["baselines"] == fine


def test_an_estimators_predict_names_the_column_as_its_caller_gave_it(tiny_bert_dir):
    """fit names a table's columns x0, x1, ...: predict's refusals said "column 'x1', row 1" to a caller who gave an
    array (no such name) or a DataFrame whose column is 'colour'. Now an array's cell is X[0, 1] (from 0, as the
    caller indexes), a DataFrame's X.iloc[0]['colour'], and the unseen-category warning names X[:, 1] or 'colour'."""
    import warnings

    import pandas as pd

    from fpt.errors import SchemaError
    from fpt.sklearn import FPTClassifier, UnseenCategoryWarning

    n = 24
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"size": rng.normal(size=n), "colour": ["red", "blue", "green"] * 8})
    y = np.arange(n) % 2
    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu",
                handle_unknown="error")
    for X, new, cell, col in [
        (frame.to_numpy(dtype=object), lambda rows: np.array(rows, dtype=object), "X[1, {j}]", "X[:, 1]"),
        (frame, lambda rows: pd.DataFrame(rows, columns=["size", "colour"]), "X.iloc[1][{name!r}]", "column 'colour'"),
    ]:
        clf = FPTClassifier(**fast).fit(X, y)
        with pytest.raises(SchemaError) as unseen:
            clf.predict(new([[0.5, "red"], [0.1, "purple"]]))
        assert str(unseen.value).startswith(f"FPTClassifier.predict: {cell.format(j=1, name='colour')}: category "
                                            "'purple' was not seen in training"), unseen.value
        with pytest.raises(SchemaError) as text:
            clf.predict(new([[0.5, "red"], ["abc", "red"]]))
        assert str(text.value).startswith(f"FPTClassifier.predict: {cell.format(j=0, name='size')}: 'abc' is not a "
                                          "number"), text.value
        clf.set_params(handle_unknown="warn")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf.predict(new([[0.5, "purple"], [0.1, "red"]]))
        (said,) = [str(w.message) for w in caught if issubclass(w.category, UnseenCategoryWarning)]
        assert f"unknown slot: {col}: 1 of 2 rows ('purple')" in said, said


def test_a_header_with_spaces_around_its_names_is_refused_saying_so(tiny_bert_dir, tmp_path):
    """A header 'a ,b ,target ' keeps its spaces (pandas strips only those after a comma): --target target and
    --drop-columns a said "no column 'target' (did you mean 'target '?); its columns are a , b , target ", the spaces
    invisible, and a name given is stripped, so no option could name the column. Now the refusal says the header's
    name with its spaces and to remove them; an unknown name lists the columns quoted."""
    import fpt
    from fpt.errors import DataError

    path = tmp_path / "spaced.csv"
    path.write_text("a ,b ,target \n" + "".join(f"{i * 0.1:.1f},{i % 3},{'xy'[i % 2]}\n" for i in range(24)))
    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu", baselines="none")
    header = "(its columns are 'a ', 'b ', 'target '); remove the spaces around the names in the header row"
    for given, name, spaced in [({"target": "target"}, "target", "target "),
                                ({"target": "target ", "drop_columns": "a"}, "a", "a ")]:
        with pytest.raises(DataError) as refused:
            fpt.build(data=str(path), **given, **fast)
        assert str(refused.value) == f"{path}: no column {name!r}: the header names it {spaced!r}, spaces included {header}"
    with pytest.raises(DataError) as unknown:
        fpt.build(data=str(path), target="targt", **fast)
    assert "no column 'targt' (did you mean 'target '?); its columns are 'a ', 'b ', 'target '; give" in str(unknown.value)


def test_a_sequence_models_one_text_given_as_a_string_is_refused_saying_to_pass_a_list(tiny_bert_dir, tmp_path,
                                                                                      monkeypatch):
    """model.predict("ACGT") of a symbol-sequence model raised FileNotFoundError("ACGT: no such file or folder"),
    which said nothing of the list it takes. A string stays a path (read as the one text when no file has its name, a
    mistyped file name would be predicted as a text): the refusal now says so and how to pass one text."""
    import warnings

    import fpt
    from fpt.errors import SchemaError

    rng = np.random.default_rng(0)
    seqs = ["".join(rng.choice(list("ACGT"), size=rng.integers(10, 30))) for _ in range(24)]
    data = tmp_path / "dna.csv"
    data.write_text("seq,label\n" + "".join(f"{s},{'ab'[i % 2]}\n" for i, s in enumerate(seqs)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=str(data), body=tiny_bert_dir, **FAST), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    for method in ("predict", "predict_proba"):
        with pytest.raises(SchemaError) as refused:
            getattr(model, method)("ACGT")
        assert str(refused.value) == ("'ACGT': no such file or folder (a string given alone is read as a file's path); "
                                      "the model reads texts: to predict one, pass it in a list, predict(['ACGT'])")
    assert model.predict(["ACGT"]).shape == (1,)
    np.testing.assert_array_equal(model.predict("dna.csv"), model.predict(seqs))  # a file's name: its texts
