"""Round 12 of the hostile-input cases: inputs fpt took silently, or a default run where it should refuse. Each case
failed before its fix (the commit that added it says how)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hostile_helpers import dna_run, one_line


@pytest.fixture(scope="module")
def dna(tiny_bert_dir, tmp_path_factory):
    """A symbol-sequence run of DNA strings (a CSV of seq, label) and its folder."""
    root = tmp_path_factory.mktemp("dna")
    return dna_run(root, tiny_bert_dir)[0], root


@pytest.mark.parametrize(("name", "text", "rows"), [
    ("new.csv", "seq\nACGT\n\nGGAT\n", "2"),
    ("spaces.csv", "seq\nACGT\nGGAT\n   \n\nTTAC\n", "3, 4"),
    ("crlf.tsv", "seq\r\nACGT\r\n\r\nGGAT\r\n", "2"),
])
def test_a_blank_line_between_values_of_a_one_column_file_is_refused_at_predict(dna, capsys, name, text, rows):
    """pandas skips blank lines: fpt predict of 'seq\\nACGT\\n\\nGGAT\\n' wrote 2 predictions for its 3 rows, each one
    below the blank line on the row above it. In a one-column file a blank line is its row of no value (what ',,' is
    in a file of several columns, and "" here), refused as that is between rows of values."""
    import fpt
    from fpt.cli import main
    from fpt.errors import DataError

    run, root = dna
    (root / name).write_text(text)
    assert main(["predict", str(run), str(root / name), "--out", str(root / "p.csv")]) == 2
    one_line(capsys, "predict", f"{root / name}: row(s) {rows} under the header are blank lines between rows of "
             "values (in a one-column file, a row of no value); predictions are written one per row in order, so fpt "
             "neither skips nor predicts them: delete those lines")
    assert not (root / "p.csv").exists()
    with pytest.raises(DataError, match=rf"row\(s\) {rows} under the header are blank lines"):
        fpt.load(run).predict(str(root / name))
    (root / "quoted.csv").write_text('seq\nACGT\n""\nGGAT\n')  # the same row written as "": refused as ever
    with pytest.raises(DataError, match=r"quoted.csv: row\(s\) 2 under the header hold no value in any column"):
        fpt.load(run).predict(str(root / "quoted.csv"))


def test_blank_lines_around_a_one_column_files_values_are_layout_and_a_blank_text_is_a_value(dna):
    """Blank lines before the header and after the last row, as every CSV's, are skipped: one prediction per value.
    A blank line inside a quoted text is the text's own; a file of several columns reads as before."""
    import fpt

    run, root = dna
    model = fpt.load(run)
    expected = model.predict(["ACGT", "GGAT"])
    (root / "around.csv").write_text("\n\nseq\nACGT\nGGAT\n\n  \n\n")
    np.testing.assert_array_equal(model.predict(str(root / "around.csv")), expected)
    (root / "quoted.csv").write_text('seq\n"AC\n\nGT"\nGGAT\n')
    assert model.predict(str(root / "quoted.csv")).shape == (2,)
    (root / "two.csv").write_text("seq,label\nACGT,a\nGGAT,b\n\n")
    np.testing.assert_array_equal(model.predict(str(root / "two.csv")), expected)


def test_a_random_search_drawing_an_ensemble_from_a_range_is_refused_before_any_trial(tmp_path, capsys):
    """random: {space: {ensemble: {randint: [1, 3]}}} passed --dry-run: only listed values (a list, choice) were
    checked against what a trial can do, and each trial drawing 2 or 3 failed after its data was read."""
    from fpt.cli import main
    from fpt.errors import ConfigError
    from fpt.experiments import sweep

    (tmp_path / "d.csv").write_text("x,label\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(12)))
    path = tmp_path / "s.yaml"
    path.write_text(f"base: {{data: {tmp_path / 'd.csv'}, steps: 2}}\n"
                    "random: {trials: 4, space: {ensemble: {randint: [1, 3]}}}\n")
    assert main(["sweep", str(path), "--dry-run", "--out", str(tmp_path / "out")]) == 2
    one_line(capsys, "sweep", f"sweep spec {path}: random.space.ensemble: randint [1, 3] draws 2: a trial trains one "
             "model; remove the key, and train the ensemble of the config you choose with fpt train --data ... "
             "--ensemble 2")
    assert not (tmp_path / "out").exists()
    raw = {"base": {"data": str(tmp_path / "d.csv")}, "random": {"trials": 2, "space": {}}}
    for dist, drawn in (({"randint": [2, 10**9]}, 2), ({"randint": [-5, 7]}, 2)):
        raw["random"]["space"] = {"ensemble": dist}
        with pytest.raises(ConfigError, match=rf"random.space.ensemble: randint \[{dist['randint'][0]}, "
                                              rf"{dist['randint'][1]}\] draws {drawn}: a trial trains one model"):
            sweep.parse_spec(raw, "s.yaml")
    raw["random"]["space"] = {"batch_size": {"randint": [4, 8]}, "ensemble": [1]}  # ranges of other fields: kept
    assert sweep.parse_spec(raw, "s.yaml").random["space"]["batch_size"] == {"randint": [4, 8]}


@pytest.mark.parametrize("text", ["", "# the search, to write\n"])
def test_an_empty_sweep_spec_is_refused_naming_the_file(tmp_path, capsys, text):
    """load_yaml reads an empty file as no settings: fpt sweep empty.yaml planned (and ran) one trial of the default
    task, bit-xor, where fpt train --config of the same file is refused."""
    from fpt.cli import main
    from fpt.errors import ConfigError
    from fpt.experiments import sweep

    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert main(["sweep", str(path), "--dry-run", "--out", str(tmp_path / "out")]) == 2
    one_line(capsys, "sweep", f"sweep spec {path}: the file holds no settings (it is empty or all comments); write "
             "the search in it: base: (the fields every trial shares) and grid: or random: (what the trials vary)")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="sweep spec mine: the file holds no settings"):
        sweep.parse_spec({}, "mine")
    assert sweep.parse_spec({"base": {"task": "bit-xor"}}, "mine").base == {"task": "bit-xor"}


@pytest.mark.parametrize("text", ["", "# emptied\n"])
def test_an_empty_saved_config_is_refused_naming_it_not_read_as_the_default_run(dna, tmp_path, capsys, text):
    """An empty config.yaml in a run folder was read as no settings, so today's default run (bit-xor, the default
    body): fpt predict DIR and fpt.load failed naming the checkpoint's body fingerprint, and fpt train --resume DIR
    said the folder held 'no config.yaml written by fpt train'."""
    import shutil

    import fpt
    from fpt.cli import main
    from fpt.errors import ConfigError

    run, root = dna
    copy = Path(shutil.copytree(run, tmp_path / "run"))
    (copy / "config.yaml").write_text(text)
    (tmp_path / "new.csv").write_text("seq\nACGT\n")
    said = (f"{copy / 'config.yaml'} holds no settings (it is empty or all comments), where fpt saved every field of "
            "the run; restore it from a copy of the run, or train the run again")
    for command in (["predict", str(copy), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")],
                    ["predict", str(copy), str(tmp_path / "new.csv"), "--device", "cpu"],
                    ["train", "--resume", str(copy)]):
        assert main(command) == 2, command
        assert one_line(capsys, command[0]) == f"fpt {command[0]}: error: {said}"
    with pytest.raises(ConfigError) as refused:
        fpt.load(copy)
    assert str(refused.value) == said
    assert not (tmp_path / "p.csv").exists() and (copy / "config.yaml").read_text() == text
