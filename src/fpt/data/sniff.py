"""What a data file's first bytes say it is, where that is not what its name says.

A practitioner's file is often something else under its name: a Git LFS pointer checked out without ``git lfs pull``,
the HTML of a login or error page saved by a download, gzip data the browser did not decompress (``d.csv``) or did
decompress and kept the name of (``d.csv.gz``), an Excel workbook renamed ``.csv``. Each reader then failed on the
symptom (NUL bytes, one column, a gzip traceback, "2 examples cannot spare 1 for a test split"); ``check`` names the
cause and the fix before a reader opens the file. Only signatures no file of the expected kind can begin with are
taken: a CSV may begin with "PAR1" or "FEA1" (a column's name), never with gzip's 0x1f 0x8b.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from fpt.errors import DataError

HEAD = 512
LFS = b"version https://git-lfs.github.com/spec/"
HTML = re.compile(rb"\s*<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>])", re.IGNORECASE)
# (signature at the start, what it is, the suffix it goes by); the text ones are also checked at the file's end
BINARY = (
    (b"\x1f\x8b", "gzip-compressed data", ".gz"),
    (b"BZh", "bz2-compressed data", ".bz2"),  # with a digit and the block magic (below): "BZh" alone may be text
    (b"\xfd7zXZ\x00", "xz-compressed data", ".xz"),
    (b"PK\x03\x04", "a zip archive", ".zip"),
    (b"PAR1", "a Parquet file", ".parquet"),
    (b"ARROW1\x00\x00", "an Arrow/Feather file", ".feather"),
    (b"FEA1", "an Arrow/Feather file", ".feather"),  # Feather's first version
    (b"\x93NUMPY", "a single .npy array (np.save)", ".npy"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel 97-2003 workbook (or another OLE file)", ".xls"),
    (b"%PDF-", "a PDF document", ".pdf"),
    (b"\xff\xfe", "UTF-16 text (little-endian, with its byte order mark)", ".txt"),
    (b"\xfe\xff", "UTF-16 text (big-endian, with its byte order mark)", ".txt"),
)
TEXT = re.compile(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*")  # no control characters but tab and line ends
ENDS_TOO = (b"PAR1", b"FEA1")
BZ2 = re.compile(rb"BZh[1-9]1AY&SY")
# what each expected kind is called in the message
EXPECTED = {"text": "text", ".gz": "gzip-compressed data", ".bz2": "bz2-compressed data", ".xz": "xz-compressed data",
            ".zip": "a zip archive", ".parquet": "a Parquet file", ".feather": "an Arrow/Feather file",
            ".npz": "an .npz archive (np.savez)"}
# dtype=str: read_excel types a sheet's text cells of digits as numbers ('02139' -> 2139), which the CSV then loses;
# as text, the CSV holds each cell as written, which fpt's reader types (numbers, dates, codes: fpt.data.codes)
SPREADSHEET = "save its sheet as CSV (Excel: Save As 'CSV UTF-8'; pandas, with openpyxl (pip install openpyxl): " \
              "pandas.read_excel(path, dtype=str).to_csv('x.csv', index=False), which keeps codes such as '02139')"


def what_it_is(path: Path) -> tuple[str, str] | None:
    """(what the file is, the suffix it goes by) from its first bytes, where a signature says; None for other text."""
    with open(path, "rb") as f:
        head = f.read(HEAD)
        f.seek(max(0, path.stat().st_size - 4))
        tail = f.read(4)
    if head.startswith(LFS):
        return "a Git LFS pointer (a few lines standing in for the file)", ".lfs"
    if HTML.match(head.removeprefix(b"\xef\xbb\xbf")):
        return "an HTML page (a login or error page saved in place of the file?)", ".html"
    for magic, what, suffix in BINARY:
        if not head.startswith(magic):
            continue
        if suffix == ".bz2" and not BZ2.match(head):
            continue
        if magic in ENDS_TOO and tail != magic:  # text may begin so (a column named FEA1); these files end so too
            continue
        if suffix == ".zip":
            return _zip_kind(path)
        return what, suffix
    return None


def _zip_kind(path: Path) -> tuple[str, str]:
    """A zip archive, an Excel workbook (Office Open XML is a zip), or an .npz (a zip of .npy members)."""
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError):
        return "a zip archive", ".zip"
    if "[Content_Types].xml" in names and any(n.startswith("xl/") for n in names):
        return "an Excel workbook (.xlsx)", ".xlsx"
    if names and all(n.endswith(".npy") for n in names):
        return "an .npz archive of NumPy arrays", ".npz"
    return "a zip archive", ".zip"


def check(path: Path, expected: str, what: str) -> None:
    """Refuse ``path`` in one line when its first bytes say it is not ``expected`` (``EXPECTED``'s keys: "text", or the
    suffix of a binary kind); ``what`` names the format fpt would read it as ("CSV", "a .ts file")."""
    found = what_it_is(path)
    if found is None:
        if expected == "text":
            return
        with open(path, "rb") as f:
            head = f.read(40)
        try:
            shown = head.decode("utf-8")
        except UnicodeDecodeError:
            return  # binary of a kind not listed: the reader's own error names it
        if any(head.startswith(magic) for magic, _, _ in BINARY) or not TEXT.fullmatch(shown):
            return  # the expected kind cut short, or binary: the reader's own error names it
        stem = path.name[: -len(path.suffix)] if path.suffix else path.name
        raise DataError(f"{path}: text (it begins {shown.splitlines()[0][:30]!r}), not {EXPECTED[expected]}"
                        f"{' (decompressed on download?)' if expected in ('.gz', '.bz2', '.xz') else ''}; rename it "
                        f"{stem}{'' if expected in ('.gz', '.bz2', '.xz', '.zip') else '.csv (or the suffix of its format)'}")
    kind, suffix = found
    if suffix == expected:
        return
    raise DataError(f"{path}: {kind}, not {what}; {_fix(path, suffix, expected)}")


def _fix(path: Path, suffix: str, expected: str) -> str:
    """The one step that makes a file of ``suffix`` readable where ``expected`` was wanted."""
    if suffix == ".lfs":
        return "fetch the file itself with git lfs pull (in its repository), or download it again"
    if suffix == ".html":
        return "download the file itself again (logged in, or from its direct link)"
    if suffix in (".xlsx", ".xls"):
        return SPREADSHEET
    if suffix == ".txt":
        return "save it again as UTF-8 (Excel: 'CSV UTF-8'; pandas: to_csv(..., encoding='utf-8'))"
    if suffix in (".gz", ".bz2", ".xz", ".zip") and expected == "text":
        return f"name it {path.name}{suffix} (fpt decompresses a table named so), or decompress it"
    if suffix == ".npy":
        return "save the arrays in an .npz: np.savez('d.npz', X=X, y=y)"
    if suffix in (".parquet", ".feather", ".npz"):
        return f"rename it {path.name[: -len(path.suffix)] if path.suffix else path.name}{suffix}"
    return "give the file in the format its name says"


__all__ = ["check", "what_it_is"]
