"""A spreadsheet is refused with the step that makes it a CSV; that step needs openpyxl (pandas' read_excel raised
"Missing optional dependency 'openpyxl'" to a user who followed it) and dtype=str: read_excel types a text cell of
digits as a number, so the advised read_excel(...).to_csv(...) lost zip codes' zeros ('02139' -> 2139) unsaid."""

from __future__ import annotations

import datetime

import pytest

from fpt.cli import main
from fpt.data import load


@pytest.mark.parametrize("name", ["sheet.xlsx", "sheet.xls"])
def test_a_spreadsheet_is_one_line_naming_openpyxl_and_dtype_str(tmp_path, capsys, name):
    (tmp_path / name).write_bytes(b"PK\x03\x04" + b"\0" * 64)
    assert main(["data", "--data", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for words in (name, "save its sheet as CSV", "pip install openpyxl",
                  "pandas.read_excel(path, dtype=str).to_csv('x.csv', index=False)"):
        assert words in err, (words, err)


def test_the_advised_conversion_keeps_dates_serial_numbers_and_codes(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    pd = pytest.importorskip("pandas")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["when", "serial", "zip", "x", "label"])
    for i in range(30):
        sheet.append([datetime.date(2024, 1, 1) + datetime.timedelta(days=i), 45292 + 3 * i % 7,
                      ["02139", "00501", "10001"][i % 3], i * 0.5, "ab"[i % 2]])
    for row in range(32, 36):  # formatted, then emptied: rows of no value after the data
        sheet.cell(row=row, column=1).number_format = "yyyy-mm-dd"
    book.save(tmp_path / "t.xlsx")
    pd.read_excel(tmp_path / "t.xlsx", dtype=str).to_csv(tmp_path / "t.csv", index=False)
    raw = load(str(tmp_path / "t.csv"))
    train = raw.splits["train"]
    assert len(train.y) == 30 and "when" in raw.notes["dates"]
    assert train.x["serial"].dtype.kind in "iuf" and train.x["serial"][:2].tolist() == [45292, 45295]  # a number
    assert train.x["zip"].tolist()[:3] == ["02139", "00501", "10001"]
    pd.read_excel(tmp_path / "t.xlsx").to_csv(tmp_path / "typed.csv", index=False)  # what dtype=str is for
    assert load(str(tmp_path / "typed.csv")).splits["train"].x["zip"].tolist()[:3] == [2139.0, 501.0, 10001.0]
