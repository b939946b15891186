"""Round 11 of the hostile-input cases: a practitioner's habits that fpt took silently or answered with an error
naming the wrong thing. Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest
from hostile_helpers import FAST, dna_run


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
    assert str(info.value).startswith(f"sweep spec my-sweep.yaml: {section}.baselines: 'all': a trial fits no "
                                      "baselines (trials are compared with each other)"), info.value
    assert "fpt train --data ... --baselines all" in str(info.value) and "\n" not in str(info.value)
    for fine in ("none", "auto"):  # what a trial does: kept
        assert sweep.parse_spec({"base": {**base, "baselines": fine}, "grid": {"lr": [1e-3]}}).base["baselines"] == fine


@pytest.mark.parametrize("where", ["base", "grid", "random"])
def test_a_sweep_asking_for_an_ensemble_is_refused_before_any_trial_starts(where):
    """ensemble: 2 in a sweep spec passed --dry-run and failed every trial after its data was read, with fit()'s
    'ensemble=2 trains 2 models: run it with fpt train --data ... (or fpt.ensemble.fit(config, out))'."""
    from fpt.errors import ConfigError
    from fpt.experiments import sweep

    base = {"task": "bit-xor", "steps": 2}
    raw = {"base": {**base, "ensemble": 3}, "grid": {"lr": [1e-3]}}
    if where == "grid":
        raw = {"base": base, "grid": {"ensemble": [1, 3]}}
    elif where == "random":
        raw = {"base": base, "random": {"trials": 2, "space": {"ensemble": [1, 3]}}}
    with pytest.raises(ConfigError) as info:
        sweep.parse_spec(raw, "my-sweep.yaml")
    section = {"base": "base", "grid": "grid", "random": "random.space"}[where]
    assert str(info.value) == (f"sweep spec my-sweep.yaml: {section}.ensemble: 3: a trial trains one model; remove the "
                               "key, and train the ensemble of the config you choose with fpt train --data ... "
                               "--ensemble 3")
    assert sweep.parse_spec({"base": {**base, "ensemble": 1}, "grid": {"lr": [1e-3]}}).base["ensemble"] == 1


@pytest.mark.parametrize("field", ["baselines: all", "ensemble: 2"])
def test_a_table_of_ones_own_asking_for_baselines_or_an_ensemble_is_refused_naming_the_cell(tmp_path, field):
    """fpt reproduce runs a table file's cells as a sweep's trials (fpt.train.fit alone): baselines: all in a cell was
    trained and fitted none, silently, and ensemble: 2 failed each cell after its data was read."""
    from fpt.errors import ConfigError
    from fpt.experiments import grid

    path = tmp_path / "mine.yaml"
    path.write_text(f"columns: {{xor: {{column: bit-xor}}}}\nrows: {{frozen: null, asked: {{{field}}}}}\n")
    with pytest.raises(ConfigError) as info:
        grid.expand(str(path), "quick")
    key, value = field.split(": ")
    assert str(info.value).startswith(f"table {path} (quick) cell asked/xor: {key}: "
                                      f"{value if key == 'ensemble' else repr(value)}: a trial "), info.value
    assert f"fpt train --data ... --{key} {value}" in str(info.value)
    path.write_text("columns: {xor: {column: bit-xor}}\nrows: {frozen: null, asked: {baselines: none}}\n")
    assert len(grid.expand(str(path), "quick").cells) == 2


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


@pytest.fixture(scope="module")
def dna_model(tiny_bert_dir, tmp_path_factory):
    """A symbol-sequence model of DNA strings (a CSV of seq, label), its training texts and the CSV's folder."""
    import fpt

    root = tmp_path_factory.mktemp("dna")
    run, seqs = dna_run(root, tiny_bert_dir)
    return fpt.load(run), seqs, root


def test_a_sequence_models_one_text_given_as_a_string_is_refused_saying_to_pass_a_list(dna_model, monkeypatch):
    """model.predict("ACGT") of a symbol-sequence model raised FileNotFoundError("ACGT: no such file or folder"),
    which said nothing of the list it takes. A string stays a path (read as the one text when no file has its name, a
    mistyped file name would be predicted as a text): the refusal now says so and how to pass one text."""
    from fpt.errors import SchemaError

    model, seqs, tmp_path = dna_model
    monkeypatch.chdir(tmp_path)
    for method in ("predict", "predict_proba"):
        with pytest.raises(SchemaError) as refused:
            getattr(model, method)("ACGT")
        assert str(refused.value) == ("'ACGT': no such file or folder (a string given alone is read as a file's path); "
                                      "the model reads texts: to predict one, pass it in a list, predict(['ACGT'])")
    assert model.predict(["ACGT"]).shape == (1,)
    np.testing.assert_array_equal(model.predict("dna.csv"), model.predict(seqs))  # a file's name: its texts


def _old_plain_column(values, scale):
    """fpt.predictor._plain_column of a float column as it was: a round per value."""
    import math

    digits = 6 - math.floor(math.log10(scale))
    return [round(v, digits) if math.isfinite(v) else v for v in values.tolist()]


def test_a_regression_columns_rounding_is_computed_whole_and_gives_round_s_values_exactly(monkeypatch):
    """_plain_column rounded a regression prediction column with a round() per value (0.36 s at 200,000 rows; the
    probability columns are computed whole). Now a whole-column rint gives exactly what round gave, value by value
    (the sign of zero and NaN included), the values a rounded product cannot decide going by round."""
    import builtins
    import math
    import struct

    import fpt.predictor
    from fpt.predictor import _plain_column

    rng = np.random.default_rng(0)
    tricky = [2.675, 0.125, 0.375, 1.5, 2.5, -2.5, -0.5, 0.5, 1.0005, 1.00005, 123456.5, 0.0, -0.0, -1e-9, 1e-300,
              5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308, 2.0**52 + 1, 2.0**60, 1e22, 1e23,
              math.inf, -math.inf, math.nan, 0.1 + 0.2, 1 / 3, 2 / 3, 9.9999995, 9999999.5, 4.35, 8.345, 1.234565]
    halves = (rng.integers(-10**6, 10**6, size=2000) + 0.5) / 10.0 ** rng.integers(0, 12, size=2000)
    spread = rng.normal(size=3000) * 10.0 ** rng.integers(-30, 30, size=3000)
    for dtype in (np.float64, np.float32):
        with np.errstate(over="ignore"):  # float64's largest values are float32's infinities
            values = np.concatenate([tricky, halves, spread]).astype(dtype)
        for scale in (1e-30, 1e-12, 3e-7, 0.01, 0.3, 1.0, 7.0, 1234.5, 1e9, 1e17, 1e25, 1e40):
            new, old = _plain_column(values, scale), _old_plain_column(values, scale)
            assert all(type(a) is float for a in new)
            bits = [struct.pack("<d", a) if not math.isnan(a) else b"nan" for a in new]
            assert bits == [struct.pack("<d", a) if not math.isnan(a) else b"nan" for a in old], (dtype, scale)
    column = (rng.normal(size=200_000) * 3 + 10).astype(np.float32)
    rounds = []
    monkeypatch.setattr(fpt.predictor, "round", lambda v, d: rounds.append(v) or builtins.round(v, d),
                        raising=False)
    assert _plain_column(column, 3.0) == _old_plain_column(column, 3.0)
    assert len(rounds) < 200  # of 200,000: nearly every value computed with the column, not by a round of its own


def test_an_estimator_fitted_on_a_gpu_unpickles_on_a_machine_without_one(tiny_bert_dir, monkeypatch):
    """A plain pickle of an estimator fitted on a GPU held its model's CUDA tensors: pickle.loads on a CPU-only machine
    raised torch's 'Attempting to deserialize object on a CUDA device', and its experiment's device stayed cuda. Now
    torch saves the fitted state and loads it onto the CPU where CUDA is not available, the device made the CPU. A
    GPU fit is simulated on any machine: torch's location tag of every storage says cuda:0, the device says cuda."""
    import pickle

    import torch

    from fpt.sklearn import FPTRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 3))
    y = X @ np.array([1.0, -2.0, 0.5])
    reg = FPTRegressor(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu").fit(X, y)
    expected = reg.predict(X)
    reg.experiment_.device = torch.device("cuda", 0)
    with monkeypatch.context() as m:
        m.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
        saved = pickle.dumps(reg)
    assert reg.members_ == [reg.experiment_]  # pickling took nothing from the estimator pickled
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    again = pickle.loads(saved)
    assert again.experiment_.device == torch.device("cpu") and again.members_ == [again.experiment_]
    assert {p.device.type for p in again.experiment_.model.parameters()} == {"cpu"}
    np.testing.assert_allclose(again.predict(X), expected, rtol=0, atol=0)
    assert again.get_params() == reg.get_params() and again.n_features_in_ == 3


def test_one_series_points_given_alone_are_refused_saying_how_to_pass_one_series(series_run):
    """A series model given one series' points alone (a 1-D array, a list of floats, a pandas Series) read each point
    as a series and said "series 1 has shape (); give (channels, length)". Now it says they are numbers, not a batch
    of series, and how to pass the one series; the batch of one predicts as that series in a batch does."""
    import pandas as pd
    from hostile_helpers import series

    import fpt
    from fpt.errors import SchemaError

    model = fpt.load(series_run)
    X, _ = series()
    one = X[3, 0]
    for given in (one, list(map(float, one)), pd.Series(one), one.astype(np.int64)):
        with pytest.raises(SchemaError) as refused:
            model.predict(given)
        assert str(refused.value) == ("inputs: 12 numbers, not a batch of series; one series of 12 points goes in a "
                                      "batch of one: [x], or np.asarray(x)[None] (shape (1, 12))")
    np.testing.assert_array_equal(model.predict_proba([one]), model.predict_proba(X[3:4]))
    np.testing.assert_array_equal(model.predict_proba(one[None]), model.predict_proba(X[3:4]))


def test_complex_inputs_are_refused_not_read_as_their_real_part(tab_run, series_run):
    """Training refuses complex arrays ('X has dtype complex128'), but predict read a complex table column or series
    as its real part (float() of a NumPy complex drops the imaginary part with only numpy's ComplexWarning): 1+2j
    predicted as 1. Now each is refused in one line naming the cell or the series."""
    import warnings

    import pandas as pd
    from hostile_helpers import series

    import fpt
    from fpt.errors import SchemaError

    table = fpt.load(tab_run)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way either
        # rows by position from 0, as the caller indexes them: a DataFrame's inputs.iloc[1], an array's inputs[1, 0]
        for given, cell in ((np.array([[1 + 0j, 0.2], [1 + 2j, 0.3]]), "inputs[1, 0]"),
                            (pd.DataFrame({"x1": [1, 1 + 2j], "x2": [0.2, 0.3]}), "inputs.iloc[1]['x1']")):
            with pytest.raises(SchemaError) as refused:
                table.predict(given)
            assert str(refused.value) == (f"inputs: {cell}: (1+2j) is a complex number, but the model was "
                                          "trained on real numbers in this column; give real values (x.real, or "
                                          "abs(x))")
        model = fpt.load(series_run)
        X, _ = series()
        for given in (X[:2] + 1j, [X[0], X[1] + 0.5j]):
            with pytest.raises(SchemaError) as refused:
                model.predict(given)
            assert str(refused.value) == (f"inputs: inputs[{0 if isinstance(given, np.ndarray) else 1}] holds complex "
                                          "numbers, but the model was trained on real ones; give real values (x.real, "
                                          "or abs(x))")


def test_a_dataframe_without_column_names_is_told_to_name_them(tab_run):
    """pd.DataFrame(array) has columns 0, 1: predict said "no column 'x1' (nor x2) (the input has '1': rename it to
    'x1')", difflib's pairing of '1' with 'x1' as if one column were misspelt. Now it says the columns are pandas'
    numbers and how to name them or give the values alone; the values alone predict as the named frame does."""
    import pandas as pd

    import fpt
    from fpt.errors import SchemaError

    model = fpt.load(tab_run)
    values = np.array([[0.1, 0.2], [2.5, -1.0]])
    with pytest.raises(SchemaError) as refused:
        model.predict(pd.DataFrame(values))
    assert str(refused.value) == ("inputs: its columns are named 0..1 (pandas' numbers for a DataFrame made without "
                                  "column names), but the model reads its features by name: x1, x2; name the columns "
                                  "(df.columns = [...], the features in that order), or give the values alone, "
                                  "df.to_numpy(), in that order")
    np.testing.assert_array_equal(model.predict_proba(pd.DataFrame(values).to_numpy()),
                                  model.predict_proba(pd.DataFrame(values, columns=["x1", "x2"])))


@pytest.fixture(scope="module")
def image_model(tiny_bert_dir, tmp_path_factory):
    """A model of 8x8 RGB images trained from an array."""
    import fpt

    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    X = (rng.random(size=(24, 8, 8, 3)) * 255).astype(np.uint8)
    out = tmp_path_factory.mktemp("image-run") / "run"
    fpt.fit(fpt.build(data=(X, y), body=tiny_bert_dir, image_size=8, patch_size=4, **FAST), out=out, progress=False)
    return fpt.load(out), X


def test_an_image_model_refuses_nan_pixels_one_image_alone_and_a_list_of_paths(image_model, tmp_path):
    """At predict an image of NaN pixels was predicted (NaN cast to uint8: 0, unsaid), where training refuses NaN
    pixels; one (8, 8, 3) image given alone was read as 8 images, 'image 1 has shape (8, 3)'; a list of paths was
    'image 1 has shape ()'. Now each is refused in one line saying what to give; a batch of one predicts as before."""
    from PIL import Image

    from fpt.data.images import as_images
    from fpt.errors import DataError, SchemaError

    model, X = image_model
    holed = (X[:2] / 255.0).astype(np.float32)
    holed[1, 2, 3, 0] = np.nan
    with pytest.raises(SchemaError) as refused:
        model.predict(holed)
    assert str(refused.value) == ("inputs: inputs[1, 2, 3, 0] is NaN (1 of 384 pixel values NaN or infinite); an image "
                                  "has no missing pixels: fill them, or leave those images out")
    with pytest.raises(DataError) as whole:  # an array read whole (fpt.build's, an .npz's), as_images' own check
        as_images(holed, "rgb", 8, "X")
    assert str(whole.value) == ("X: image 2 at [2, 3, 0] is NaN (1 of 384 pixel values NaN or infinite); an image "
                                "has no missing pixels: fill them, or leave those images out")
    with pytest.raises(SchemaError) as alone:
        model.predict(X[0])
    assert str(alone.value) == ("inputs: one image of shape (8, 8, 3) given alone, not a batch of images; give a batch "
                                "of one: [x], or x[None] (shape (1, 8, 8, 3))")
    np.testing.assert_array_equal(model.predict_proba([X[0]]), model.predict_proba(X[:1]))
    Image.fromarray(X[0]).save(tmp_path / "one.png")
    with pytest.raises(SchemaError) as paths:
        model.predict([str(tmp_path / "one.png")])
    assert str(paths.value) == (f"inputs: inputs[0] is a path ({str(tmp_path / 'one.png')!r}), not an image; give their "
                                "folder, predict('DIR'), or the images, [PIL.Image.open(p) for p in paths]")
    np.testing.assert_array_equal(model.predict_proba(str(tmp_path / "one.png")), model.predict_proba(X[:1]))


def test_texts_given_as_symbols_are_refused_and_nan_is_no_text(dna_model):
    """A sequence model read [["A", "C"]] (an example as its list of symbols) as two texts, a prediction each, and
    ragged lists as the texts of their repr ("['A', 'C']"); NaN (or pandas' NA) among texts was the text 'nan',
    refused as unknown symbols, where None is no text. Now lists of symbols are refused in one line saying to join
    them, and NaN reads as None does."""
    import pandas as pd

    from fpt.errors import SchemaError

    model, seqs, _ = dna_model
    for given, shape in (([["A", "C", "G"]], "shape (1, 3)"), ([["A", "C"], ["G"]], "examples given as lists of symbols"),
                         (np.array([list("ACG"), list("TTA")]), "shape (2, 3)")):
        with pytest.raises(SchemaError) as refused:
            model.predict(given)
        assert str(refused.value) == (f"inputs: {shape}; a sequence model reads one text per example: join each "
                                      "example's symbols into its text, [''.join(s) for s in X]")
    none = model.predict_proba(["ACGT", None])
    for missing in (np.nan, pd.NA, float("nan")):
        np.testing.assert_array_equal(model.predict_proba(["ACGT", missing]), none)
        np.testing.assert_array_equal(model.predict_proba(pd.DataFrame({"seq": ["ACGT", missing]})), none)
    np.testing.assert_array_equal(model.predict_proba(np.array([["ACGT"], ["GGA"]])), model.predict_proba(["ACGT", "GGA"]))
