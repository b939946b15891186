"""Images labelled by a table, as Kaggle hands them over: ``DIR/train/*.png`` (or the images loose in ``DIR``, or in
one folder of any name, ``DIR/images/``) and ``DIR/labels.csv`` of an id column and a label column (``id,label``,
``image_id,class``, ``filename,breed``, ...), the ids the images' file names with or without their extension.

``--data DIR`` (or ``--data DIR/labels.csv``, the table itself) reads this layout when a table directly in
``DIR`` (any table format; ``sample_submission.csv`` and other ``*submission*`` files are never the labels) has a
column that names the images of the one folder of loose images beside it: that column is the id, the label is
``--target``'s column, else one named target, label, labels, class or y, else the last other column (a table's
rule). A ``test/`` folder of loose images beside (Kaggle's hidden test set) is left out with a note: predict it
with ``fpt predict RUN DIR/test``. Nothing is guessed silently: an id that names no image, an id on two rows, an id
without extension that names two files (``a.png``, ``a.jpg``) are one-line errors naming the table, row and fix;
images the table does not name are left out with a note.

``fpt predict RUN DIR`` reads the same layout (``fpt.data.formats``): scored when the table holds the model's
target column (or a label column), predicted in the table's order otherwise (Kaggle's ``test.csv`` of ids).
"""

from __future__ import annotations

import functools
import unicodedata
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fpt.data.base import SEEDED, TARGET_NAMES, RawData, Split, check_target_values, choose_targets, plain_value
from fpt.data.listing import children
from fpt.errors import DataError, FptWarning, option

SUBMISSION = "submission"  # Kaggle's sample_submission.csv lists the test ids, never the training labels
MATCH_SAMPLE = 1000  # a column's values tried against the images to find the id column


class UnnamedImages(FptWarning):
    """Images beside a labels table that it does not name (or a test/ folder of unlabelled ones) were left out."""


@dataclass
class Listing:
    """What a labels-table layout holds: the table, its id column and the images it names, in its rows' order."""

    table: Path
    folder: Path  # where the images lie (DIR itself, or its one image folder)
    id_column: str
    columns: dict[str, np.ndarray]
    files: list[Path]  # the image of each row
    notes: list[str] = field(default_factory=list)  # what was left out, for the user


def _key(text: str) -> str:
    return unicodedata.normalize("NFC", text.strip())


def _names(folder: Path, root: Path, images: list[Path]) -> dict[str, list[Path]]:
    """Every name an id may give an image: its file name, and its path from ``root`` (``train/abc.png``), each with
    and without the extension."""
    out: dict[str, list[Path]] = {}
    for p in images:
        rel = p.relative_to(root).as_posix()
        keys = {p.name, p.stem, rel, rel[: -len(p.suffix)] if p.suffix else rel}
        for k in keys:
            out.setdefault(_key(k), []).append(p)
    return out


def _text(v: object) -> str:
    return str(plain_value(v))


def _matches(values: np.ndarray, names: dict[str, list[Path]]) -> int:
    """How many distinct images the first values of a column name (a label column of 0/1 beside images 0.png and
    1.png names two; the id column names every one)."""
    return len({_key(_text(v)) for v in values[:MATCH_SAMPLE] if v is not None} & names.keys())


def _peek(d: Path) -> tuple[bool, bool]:
    """(whether ``d`` holds an image file directly, whether it holds a folder with anything in it), read until both
    are known: a folder of 100,000 images is not listed twice to say what it is."""
    from fpt.data.images import IMAGE_SUFFIXES, _skipped

    image = nested = False
    for p, is_dir in children(d):
        if _skipped(p):
            continue
        if is_dir:
            nested = nested or any(not _skipped(c) for c, _ in children(p))
        elif p.suffix.lower() in IMAGE_SUFFIXES:
            image = True
        if image and nested:
            break
    return image, nested


def _image_place(path: Path) -> tuple[Path, list[Path], list[Path], list[Path]] | None:
    """(the folder of the images, its images, the other files in it, test folders left out), or None when ``path``
    is not this layout: its images loose in it, or in exactly one folder of loose images (no class folders)."""
    from fpt.data.images import SPLIT_FOLDERS, _entries, _skipped

    loose, image_folders, tests = False, [], []
    for d, is_dir in children(path):
        if _skipped(d):
            continue
        if not is_dir:
            loose = loose or _peek_file(d)
            continue
        image, nested = _peek(d)
        if nested:
            return None  # class folders (DIR/<class>/, DIR/train/<class>/): the folder layout
        if image:
            (tests if SPLIT_FOLDERS.get(d.name.lower()) == "test" else image_folders).append(d)
            if len(image_folders) > 1:
                return None  # several folders of images: class folders
    if not loose and not image_folders and len(tests) == 1:
        image_folders, tests = tests, []  # test/ alone (a table of its ids to predict): the images
    if loose and not image_folders:
        folder = path
    elif len(image_folders) == 1 and not loose:
        folder = image_folders[0]
    else:
        return None
    _, images, others = _entries(folder)
    return folder, images, others, tests


def _peek_file(p: Path) -> bool:
    from fpt.data.images import IMAGE_SUFFIXES

    return p.suffix.lower() in IMAGE_SUFFIXES


def _tables(path: Path) -> list[Path]:
    from fpt.data.tables import BUILDERS, table_suffix

    return [p for p, is_dir in children(path) if not is_dir and table_suffix(p) in BUILDERS and p.is_file()
            and SUBMISSION not in p.name.lower() and not p.name.startswith(".")]


def root(path: Path) -> Path:
    """The folder of the layout: ``path``, or the folder of a table given itself (``--data DIR/labels.csv``)."""
    return path.parent if path.is_file() else path


def find(path: Path) -> tuple[Path, Path, str] | None:
    """(table, image folder, id column) when ``path`` is a folder of this layout whose table names its images, or
    such a table itself, else None. Reads the tables beside the images (small: one row per image)."""
    from fpt.data.tables import BUILDERS, table_suffix

    given = path if path.is_file() and table_suffix(path) in BUILDERS else None
    if given is None and not path.is_dir():
        return None
    path = root(path)
    place = _image_place(path)
    if place is None:
        return None
    folder, images, _, _ = place
    tables = [given] if given is not None else _tables(path)
    if not images or not tables:
        return None
    from fpt.data.tables import read_columns

    names = _names(folder, path, images)
    found = []
    for t in tables:
        try:
            cols = read_columns(t, empty=True)
        except DataError:
            continue  # not a table fpt reads: the layout's other readers name what is wrong with it
        best = max(((_matches(v, names), -i, c) for i, (c, v) in enumerate(cols.items())), default=(0, 0, ""))
        if best[0]:  # the column that names the most images; of equals, the first
            found.append((t, best[2]))
    if not found:
        return None
    if len(found) > 1:
        raise DataError(f"{path}: several tables name the images of {folder.name}/ ({', '.join(t.name for t, _ in found)}"
                        "); keep the labels' table alone beside the images (move the others out)")
    return found[0][0], folder, found[0][1]


def list_labelled(path: Path, found: tuple[Path, Path, str] | None = None) -> Listing:
    """The images a labels table names, row by row; every id checked (no image, two rows, two files)."""
    from fpt.data.images import UNREAD_PHOTOS, skipped_note
    from fpt.data.tables import read_columns

    found = found or find(path)
    if found is None:
        raise DataError(f"{path}: no table beside its images names them; give a table (labels.csv) of an id column "
                        "(the images' file names) and a label column")
    table, folder, id_column = found
    path = root(path)
    _, images, others, tests = _image_place(path)  # type: ignore[misc]  # find() saw it
    names = _names(folder, path, images)
    columns = read_columns(table, empty=True)
    ids = columns[id_column]
    where = f"{table}, column {id_column!r}"
    missing_id = next((i for i, v in enumerate(ids) if v is None or (isinstance(v, float) and np.isnan(v))
                       or not _text(v).strip()), None)
    if missing_id is not None:
        raise DataError(f"{where}, row {missing_id + 1}: no id; give every row the file name of its image, or drop "
                        "the row")
    seen: dict[str, int] = {}
    files: list[Path] = []
    absent: list[int] = []
    for i, v in enumerate(ids):
        key = _key(_text(v))
        if key in seen:
            raise DataError(f"{where}: id {key!r} on rows {seen[key] + 1} and {i + 1}; give each image one row (drop "
                            "the repeated row, or merge its labels)")
        seen[key] = i
        hits = names.get(key, [])
        if len(hits) > 1:
            raise DataError(f"{where}, row {i + 1}: id {key!r} names several images in {folder} "
                            f"({', '.join(p.name for p in hits[:4])}); give the id with its extension "
                            f"({hits[0].name!r}) or remove the other file")
        if not hits:
            absent.append(i)
        else:
            files.append(hits[0])
    if absent:
        first = _text(ids[absent[0]])
        raise DataError(f"{where}: {len(absent)} of {len(ids)} ids name no image in {folder} (first {first!r}, row "
                        f"{absent[0] + 1}); add the images, or drop their rows from {table.name}")
    notes = []
    named = set(files)
    unnamed = [p for p in images if p not in named]
    if unnamed:
        notes.append(f"{folder}: left out {len(unnamed)} of {len(images)} images that {table.name} does not name (e.g. "
                     f"{unnamed[0].name}); add a row for each to train on them")
    for t in tests:
        notes.append(f"{t}: a test folder of unlabelled images, left out of training; predict it with `fpt predict "
                     f"RUN {t}`")
    unread = [p for p in others if p.suffix.lower() in UNREAD_PHOTOS]
    if unread:
        notes.append(skipped_note(unread, folder, "in the folder"))
    return Listing(table, folder, id_column, columns, files, notes)


def label_column(listing: Listing, target: str | None, where: str, needed: bool = True,
                 known: tuple[str, ...] = ()) -> str | None:
    """The label column: ``target``, else one of ``known`` (a model's targets), else a conventional name, else (when
    ``needed``, training) the last column beside the id; None at predict when the table holds ids alone."""
    others = [c for c in listing.columns if c != listing.id_column]
    if target is not None:
        chosen = choose_targets(others + [listing.id_column], target, where)
        if len(chosen) != 1:
            raise DataError(f"{where}: {option('target', target)} names {len(chosen)} columns; an image has one label "
                            "column")
        if chosen[0] == listing.id_column:
            raise DataError(f"{where}: {option('target', target)} is the id column (it names the images); name the "
                            "label column")
        return chosen[0]
    for name in (*known, *TARGET_NAMES):
        hit = next((c for c in others if c.lower() == name.lower()), None)
        if hit is not None:
            return hit
    if not needed:
        return None
    if not others:
        raise DataError(f"{where}: only the id column {listing.id_column!r}; add a label column (id,label)")
    return others[-1]


def read_image_table(path: Path, target: str | None, channels: str, size: int) -> RawData:
    """``--data DIR`` of images and their labels' table, as image ``RawData`` (one split: fpt holds out its own)."""
    from fpt.data.codes import written_as_codes
    from fpt.data.images import level_notes, load_image, spread
    from fpt.data.pixel_depth import white_level
    from fpt.data.tables import BUILDERS, label_text_check, table_suffix

    listing = list_labelled(path)
    where = str(listing.table)
    label = label_column(listing, target, where)
    assert label is not None
    chosen = "" if target is not None else " (chosen by default: a column named target, label, labels, class or y, " \
        f"else the last beside the id; give {option('target', 'NAME', placeholder=True)})"
    values = listing.columns[label]
    check_target_values(values, label, where, chosen)
    for note in listing.notes:
        warnings.warn(note, UnnamedImages, stacklevel=3)
    files = [str(p) for p in listing.files]
    if channels == "auto":
        from fpt.data.images import _has_colour

        channels = "rgb" if any(_has_colour(f) for f in spread(files)) else "gray"
    level = white_level(files)
    images = [load_image(Path(f), channels, size, level and level[0]) for f in files]
    y = np.array([plain_value(v) for v in values], dtype=object)[:, None]
    split = Split(images, y, f"{listing.folder} labelled by {listing.table.name}")
    raw = RawData("image", {"train": split}, [label], f"images of {listing.folder} labelled by {listing.table}",
                  SEEDED, {"image_channels": channels, "labels_table": listing.table.name,
                           "id_column": listing.id_column, "label_column": label, **level_notes(where, level)})
    if BUILDERS[table_suffix(listing.table)] == "csv" and (values.dtype.kind in "iuf" or written_as_codes(values)):
        # a CSV's "01" and "1" read as the one number 1 and would train as one class, as a table's target would
        # (fpt.tasks.user_data runs it once the objective is classification)
        raw.check_labels = functools.cache(lambda: label_text_check([listing.table], [label]))
    return raw




def read_labelled_inputs(path: Path, checks, found: tuple[Path, Path, str]):  # noqa: ANN001, ANN201 (Checks, Inputs)
    """``fpt predict``'s reader of this layout: the images the table names, in its rows' order, each named by its
    id; scored when the table holds the model's target column (or a label column), else predicted alone."""
    from fpt.data.base import Inputs
    from fpt.data.images import _input_image, _white

    listing = list_labelled(path, found)
    schema = checks.schema
    label = label_column(listing, None, str(listing.table), needed=False, known=tuple(getattr(schema, "targets", ())))
    tok = schema.prep.tokeniser
    images = [_input_image(p, tok.channels, tok.image_size, _white(tok)) for p in listing.files]
    y = None
    if label is not None:
        values = listing.columns[label]
        check_target_values(values, label, str(listing.table))
        y = np.array([plain_value(v) for v in values], dtype=object)[:, None]
        checks.labels(y, f"{listing.table}, column {label!r}")
    ids = [_text(v) for v in listing.columns[listing.id_column]]
    return Inputs(images, y, str(listing.table), ids, list(listing.notes), names_as=listing.id_column)


__all__ = ["Listing", "UnnamedImages", "find", "label_column", "list_labelled", "read_image_table",
           "read_labelled_inputs"]
