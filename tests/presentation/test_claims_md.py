"""fpt claims as a reader and a writer: a damaged results.csv is one fpt error naming the file and the field; claims.md
is never written through a symlink nor over a file fpt did not write (without --force); the committed claims.md files
are what fpt claims writes from their stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.presentation.test_claims import row

from fpt.cli import main
from fpt.errors import ConfigError, DataError
from fpt.presentation.claims_md import claims_text, write_claims
from fpt.presentation.tables import write_csv

REPO = Path(__file__).resolve().parents[2]


def _store(root):
    (root / "table2").mkdir(parents=True)
    write_csv([row("table2", "language_gpt2", "mnist", 98.0, 95.0), row("table2", "random", "mnist", 91.7, 80.0)],
              root / "table2" / "results.csv")
    return root / "table2" / "results.csv"


@pytest.mark.parametrize(("field", "value", "says"), [
    ("n", "nan", "field n: 'nan' is not a finite number"),
    ("n", "inf", "field n: 'inf' is not a finite number"),
    ("n", "2.5", "field n: '2.5' is not a count of seeds"),
    ("ours", "ninety", "field ours: 'ninety' is not a number"),
    ("ours_std", "-inf", "field ours_std: '-inf' is not a finite number"),
    ("values", "95.0;x;94.0", "field values: 'x' is not a number"),
    ("dirty", "some", "field dirty: 'some' is not 'k of n' runs"),
    ("dirty", "4 of 3", "field dirty: '4 of 3' is not 'k of n' runs"),
])
def test_a_damaged_results_csv_is_one_error_naming_the_file_and_the_field(tmp_path, capsys, field, value, says):
    path = _store(tmp_path / "quick")
    text = path.read_text().splitlines()
    header = text[0].split(",")
    cells = text[1].split(",")
    cells[header.index(field)] = value
    path.write_text("\n".join([text[0], ",".join(cells), text[2]]) + "\n")
    with pytest.raises(DataError, match=f"line 2, {says}"):
        claims_text(tmp_path / "quick")
    assert main(["claims", "--results", str(tmp_path / "quick")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and field in err


def test_non_utf8_results_csv(tmp_path):
    path = _store(tmp_path / "quick")
    path.write_bytes(path.read_bytes().replace(b"mnist", b"mn\xffst", 1))
    with pytest.raises(DataError, match="not UTF-8 text"):
        claims_text(tmp_path / "quick")


def test_out_never_replaces_a_file_fpt_did_not_write_nor_writes_through_a_symlink(tmp_path, capsys):
    root = tmp_path / "quick"
    _store(root)
    mine = tmp_path / "notes.md"
    mine.write_text("my notes\n")
    assert main(["claims", "--results", str(root), "--out", str(mine)]) == 2
    assert "not written by fpt claims; give --force" in capsys.readouterr().err
    assert mine.read_text() == "my notes\n"
    assert main(["claims", "--results", str(root), "--out", str(mine), "--force"]) == 0
    assert mine.read_text().startswith("# The paper's claims")
    assert main(["claims", "--results", str(root), "--out", str(mine)]) == 0  # fpt's own: rewritten
    target = tmp_path / "elsewhere.md"
    target.write_text("# The paper's claims against our results\n\nComputed by `fpt claims` somewhere else\n")
    (root / "claims.md").symlink_to(target)
    for extra in ([], ["--force"]):
        assert main(["claims", "--results", str(root), *extra]) == 2
        assert "is a symbolic link: fpt claims does not write through it" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="symbolic link"):
        write_claims(root)
    assert target.read_text().endswith("somewhere else\n") and (root / "claims.md").is_symlink()


@pytest.mark.parametrize("store", ["quick", "quick-gpu", "lane"])
def test_the_committed_claims_are_what_fpt_claims_writes(store, monkeypatch):
    """docs/results/STORE/claims.md (and docs/results/claims.md, quick's copy) regenerate byte for byte."""
    monkeypatch.chdir(REPO)
    text = claims_text(Path("docs/results") / store)
    assert (REPO / "docs" / "results" / store / "claims.md").read_text() == text
    if store == "quick":
        assert (REPO / "docs" / "results" / "claims.md").read_text() == text


def test_reproduce_all_refuses_a_foreign_claims_md_before_any_run(tmp_path, capsys):
    (tmp_path / "claims.md").write_text("my own notes\n")
    assert main(["reproduce", "all", "--scale", "quick", "--out", str(tmp_path), "--dry-run"]) == 2
    assert "was not written by fpt claims" in capsys.readouterr().err
    assert (tmp_path / "claims.md").read_text() == "my own notes\n" and not (tmp_path / "runs").exists()
