"""Round 13 of the hostile-input cases: what a user's own tables, images, series and texts bring, and a careless
call. Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_helpers import dna_run, one_line


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
