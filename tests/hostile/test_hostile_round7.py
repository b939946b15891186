"""Round 7 of the hostile-input cases: a practitioner's habits that gave a silent wrong result, or a fix named wrong.

Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest
from hostile_helpers import table

from fpt.cli import main


def _red_and_blue(n: int = 8, alpha: int = 255) -> tuple[np.ndarray, np.ndarray]:
    """(n, 8, 8, 4) RGBA uint8 images (np.asarray of RGBA PNGs), red for class 0 and blue for class 1, equally bright
    once gray (0.299 * 200 ~ 0.587 * 102): colour alone tells them apart."""
    y = np.arange(n) % 2
    X = np.zeros((n, 8, 8, 4), np.uint8)
    X[y == 0, ..., 0] = 200
    X[y == 1, ..., 1] = 102
    X[..., 3] = alpha
    return X, y


@pytest.mark.parametrize("layout", ["last", "first"])
def test_rgba_image_arrays_are_read_in_colour(layout):
    """Image arrays of four channels (RGBA, as np.asarray(Image.open(png)) gives them) were read as grayscale under
    image_channels auto (only 3 channels counted as colour): red and blue images of one brightness trained as one
    gray, their colour dropped without a word, where a folder of the same PNGs is read in colour."""
    from fpt.data.arrays import from_arrays

    X, y = _red_and_blue()
    if layout == "first":
        X = X.transpose(0, 3, 1, 2)  # (n, 4, H, W)
    raw = from_arrays({"X": X, "y": y}, "image", "auto", 8, "arrays", "arrays")
    assert raw.notes["image_channels"] == "rgb"
    first = raw.splits["train"].x[0]
    assert first.shape == (8, 8, 3) and sorted({tuple(p) for p in first.reshape(-1, 3)}) in ([(200, 0, 0)],
                                                                                             [(0, 102, 0)])


def test_a_transparent_image_array_reads_as_its_png_file_does(tmp_path):
    """An RGBA array's alpha was dropped (its transparent pixels read as the colour they hold, often black), where
    its PNG file, or the PIL image, lays them onto white: a model trained on the arrays was given other pixels by
    fpt predict on the files."""
    from PIL import Image

    from fpt.data.images import load_image

    X, _ = _red_and_blue(2, alpha=0)
    Image.fromarray(X[0]).save(tmp_path / "clear.png")
    from_file = load_image(tmp_path / "clear.png", "rgb", 8)
    assert (from_file == 255).all()  # fully transparent: white
    assert np.array_equal(load_image(X[0], "rgb", 8), from_file)
    assert np.array_equal(load_image(X[0][..., [0, 3]], "gray", 8), load_image(tmp_path / "clear.png", "gray", 8))


def test_numbers_with_a_decimal_comma_are_named_with_their_fix(tmp_path):
    """A ','-separated CSV of decimal commas (pandas' to_csv(decimal=","), a European spreadsheet's export, quoted
    "1,26") read each number as a text category without a word: the notes named thousands separators ("1,234") only.
    A target of them was refused as a class per row, naming --objective regression, which then could not read it."""
    import pandas as pd

    from fpt.data import load
    from fpt.data.base import check_class_counts, column_notes
    from fpt.errors import DataError

    rng = np.random.default_rng(0)
    n = 30
    weight = (rng.normal(size=n) * 10 + 70).round(2)
    weight[3] = 72.0  # a whole number among them, written "72"
    pd.DataFrame({"weight": weight, "x": rng.normal(size=n).round(3), "label": ["ab"[i % 2] for i in range(n)]}).to_csv(
        tmp_path / "eu.csv", index=False, decimal=",")
    assert '"' in (tmp_path / "eu.csv").read_text().splitlines()[1]  # the commas are quoted, as pandas writes them
    (note,) = [m for m in column_notes(load(str(tmp_path / "eu.csv"))) if "'weight'" in m]
    first = f"{weight[0]:.2f}".rstrip("0").rstrip(".")
    assert f"holds numbers written with signs or separators ({first.replace('.', ',')!r})" in note
    assert f"(e.g. {first})" in note
    y = np.array([[f"{v:.2f}".replace(".", ",")] for v in weight], dtype=object)
    with pytest.raises(DataError, match=r"target .price' holds numbers written with signs or separators .*e\.g\. \d+\.\d"):
        check_class_counts(y, ["price"], "eu.csv")


@pytest.mark.parametrize("blank", ["", '""'])
def test_new_rows_with_their_target_column_left_blank_are_predicted(blank, tab_run, tmp_path, capsys):
    """The training file's layout with the answers left blank (a template to fill in): fpt predict refused it, saying
    to "name the column to predict with --target NAME", an option it does not take. Nothing to score: the rows are
    predicted as they are without the column, with a note saying so."""
    import pandas as pd

    rows = table(tmp_path / "t.csv", n=6, seed=3).read_text().splitlines()
    (tmp_path / "blank.csv").write_text("\n".join([rows[0]] + [r.rsplit(",", 1)[0] + "," + blank for r in rows[1:]]))
    (tmp_path / "none.csv").write_text("\n".join(r.rsplit(",", 1)[0] for r in rows))
    for name in ("blank", "none"):
        assert main(["predict", str(tab_run), str(tmp_path / f"{name}.csv"), "--out", str(tmp_path / f"{name}-p.csv")]) == 0
    assert "target column 'label' is empty on every row: predicted without scoring" in capsys.readouterr().err
    blank_p, none_p = (pd.read_csv(tmp_path / f"{name}-p.csv") for name in ("blank", "none"))
    assert len(blank_p) == 6 and blank_p.equals(none_p)
    # a target on some rows only is still refused, naming them (scored on the rest it would be a partial figure)
    (tmp_path / "some.csv").write_text("\n".join(rows[:-1] + [rows[-1].rsplit(",", 1)[0] + ","]))
    assert main(["predict", str(tab_run), str(tmp_path / "some.csv"), "--out", str(tmp_path / "some-p.csv")]) == 2
    assert "target column 'label' is missing on row(s) 6" in capsys.readouterr().err


@pytest.mark.parametrize("gap", [None, "pd.NA"])
def test_a_class_label_left_missing_is_one_line_naming_the_example(gap, tiny_bert_dir):
    """A label of None or pandas' NA (an object column read from a file with gaps, a nullable 'string' Series) got
    past scikit-learn's checks to a TypeError in sorting the labels: "'<' not supported between instances of
    'NoneType' and 'str'", "boolean value of NA is ambiguous"."""
    import pandas as pd

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    X = np.random.default_rng(0).normal(size=(12, 2))
    y = np.array(["a", "b"] * 6, dtype=object)
    y[5] = None if gap is None else pd.NA
    with pytest.raises(DataError, match=r"FPTClassifier.fit: y is missing at index 5 \(1 of 12 examples"):
        FPTClassifier(body=tiny_bert_dir, init="random", device="cpu", fitting="closed-form").fit(X, y)
