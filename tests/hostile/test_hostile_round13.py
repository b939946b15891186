"""Round 13 of the hostile-input cases: what a user's own tables, images, series and texts bring, and a careless
call. Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hostile_helpers import FAST, dna_run, one_line


@pytest.fixture(scope="module")
def dna(tiny_bert_dir, tmp_path_factory):
    """A symbol-sequence run of DNA strings (a CSV of seq, label) and its folder."""
    root = tmp_path_factory.mktemp("dna")
    return dna_run(root, tiny_bert_dir)[0], root


def test_a_path_to_no_file_is_refused_saying_what_the_model_takes(dna, tab_run, tmp_path, capsys, monkeypatch):
    """predict(Path("ACGT")) raised FileNotFoundError('ACGT: no such file or folder'), no fpt error and no word of
    the list of texts a sequence model takes; a table model's predict('nope.csv') the same. fpt predict RUN nope.csv
    of a sequence model told its command-line user to call predict(['nope.csv'])."""
    import fpt
    from fpt.cli import main
    from fpt.errors import SchemaError

    run, _ = dna
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SchemaError) as refused:
        fpt.load(run).predict(Path("ACGT"))
    assert str(refused.value) == ("ACGT: no such file or folder (a Path is read as a file's path); pass the path of an "
                                  "existing file of the texts, or the texts themselves in a list of strings, "
                                  "predict(['ACGT'])")
    table = fpt.load(tab_run)
    for given in ("nope.csv", Path("nope.csv")):
        with pytest.raises(SchemaError) as refused:
            table.predict(given)
        assert str(refused.value) == ("nope.csv: no such file or folder; pass the path of an existing file (or "
                                      "folder) of the inputs, or the inputs themselves in memory (a DataFrame, a dict "
                                      "of columns, or arrays)")
    for model in (run, tab_run):
        assert main(["predict", str(model), "nope.csv", "--out", "p.csv"]) == 2
        said = one_line(capsys, "predict")
        assert said == (f"fpt predict: error: INPUT nope.csv: no such file or folder (relative to the current "
                        f"directory {tmp_path}); give the path of an existing file (or folder) of the inputs, or - to "
                        "read a table from standard input")
    assert not (tmp_path / "p.csv").exists()


def test_a_bad_cell_below_blank_lines_is_named_by_its_row_in_the_file(tab_run, tmp_path, capsys):
    """pandas skips a CSV's blank lines (and fpt leaves out its rows of ',,'), so the rows below one were named by
    their place among the rows read: 'column 'x2', row 3' of a cell on the 5th row under the header (file line 6)."""
    import fpt
    from fpt.cli import main
    from fpt.errors import DataError, SchemaError

    model = fpt.load(tab_run)
    (tmp_path / "new.csv").write_text("x1,x2,label\n1,2,a\n\n\n3,4,b\n5,abc,a\n")
    with pytest.raises(SchemaError, match=r"new.csv: column 'x2', row 5: 'abc' is not a number"):
        model.predict(str(tmp_path / "new.csv"))
    assert main(["predict", str(tab_run), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", "new.csv: column 'x2', row 5: 'abc' is not a number")
    (tmp_path / "commas.csv").write_text("x1,x2,label\n1,2,a\n\n3,4,b\n,,\n5,6,a\n")
    with pytest.raises(DataError, match=r"commas.csv: row\(s\) 4 under the header hold no value in any column"):
        model.predict(str(tmp_path / "commas.csv"))
    # the predictions stay one per row of values, blank lines skipped as before
    (tmp_path / "fine.csv").write_text("x1,x2,label\n1,2,a\n\n\n3,4,b\n5,6,a\n\n")
    np.testing.assert_array_equal(model.predict(str(tmp_path / "fine.csv")),
                                  model.predict({"x1": [1.0, 3.0, 5.0], "x2": [2.0, 4.0, 6.0]}))
    # in training: a missing target and an infinite value, each on the 13th row under the header (file line 14)
    rows = [f"{i % 7 * 0.5:.1f},{i % 5:.1f},{'ab'[i % 2]}" for i in range(24)]
    for name, bad, said in (("gap.csv", "1.0,2.0,", r"is missing on row\(s\) 13 \(1 in all\)"),
                            ("inf.csv", "inf,2.0,a", r"column 'x1' holds infinite values on row\(s\) 13 \(1 in all\)")):
        lines = [*rows[:5], "", "", *rows[5:10], bad, *rows[11:]]
        (tmp_path / name).write_text("x1,x2,label\n" + "\n".join(lines) + "\n")
        assert (tmp_path / name).read_text().splitlines()[13] == bad
        with pytest.raises(DataError, match=said):
            fpt.build(data=str(tmp_path / name), **FAST)
