"""The formats ``--data`` reads, as declared entries (the modalities they hold: ``fpt.data.modalities``).

Each entry names the file suffixes it reads, how it recognises a path (a file or a folder), its reader
(``RawData``: the splits as the data defines them), the modality it fixes (or None: decided from the
contents), where its layout fixes the target, and how ``fpt predict`` reads one set of new examples in it
(a format with suffixes from its files, one without from a folder; the modalities it may hold for that).
``fpt.data.detect`` asks the entries in order; the first that claims a path reads it; ``for_inputs`` picks
the predict reader of a path for a model's modality. A new format is its reader module plus one entry here
(the error and help texts list the suffixes from the entries); tests/data/test_kinds.py checks every entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fpt.data.base import Checks, Inputs, RawData, shown
from fpt.data.images import IMAGE_SUFFIXES, UNREAD_PHOTOS
from fpt.data.sniff import SPREADSHEET
from fpt.data.tables import BUILDERS, table_suffix
from fpt.errors import DataError, SchemaError


@dataclass(frozen=True)
class Request:
    """What ``--data`` asks of a reader beyond the path: the RunConfig fields of these names (``fpt.data.load``)."""

    target: str | None
    modality: str
    image_channels: str
    image_size: int
    drop: tuple[str, ...] = ()  # drop_columns: a table's columns left out (a reader of other data leaves it)
    series: tuple[str, ...] = ()  # series_id: a long-format table's id (and order) columns (a table's readers only)


@dataclass(frozen=True)
class Format:
    name: str
    suffixes: tuple[str, ...]  # the file suffixes it reads (none: folders only)
    files: str | None  # how the texts name its files (None: it reads folders only)
    folder: str | None  # how the texts name a folder of it (None: it reads files only)
    claims: Callable[[Path], bool]  # whether an existing file or folder is this format's
    read: Callable[[Any, Request], RawData]
    modality: str | None = None  # the one modality it holds (--modality may only name it), or None
    target: str | None = None  # where the layout fixes the target (then --target may only name ``target_name``)
    target_name: str | None = None
    predict: Callable[[Path, Checks], Inputs] | None = None  # fpt predict's reader of one set (None: not read)
    takes: str | None = None  # what fpt predict reads of it, as the texts name it
    holds: tuple[str, ...] | None = None  # the modalities fpt predict reads from it (None: any)
    predict_files: tuple[str, ...] = ()  # file suffixes fpt predict reads one example from (a folder format's files)

    def predicts(self, modality: str) -> bool:
        """Whether fpt predict reads new inputs of a ``modality`` model from this format."""
        return self.predict is not None and (self.holds is None or modality in self.holds)


def _tables_claim(p: Path) -> bool:
    from fpt.data.tables import split_files

    return table_suffix(p) in BUILDERS if p.is_file() else bool(split_files(p))


def _read_tables(path: Any, r: Request) -> RawData:
    from fpt.data.tables import read_tables

    return read_tables(Path(path), r.target, r.modality, r.drop, r.series)


def _images_claim(p: Path) -> bool:
    from fpt.data.images import has_images
    from fpt.data.listing import children

    return p.is_dir() and (has_images(p, 2) or has_images(p, 3) or any(is_dir for _, is_dir in children(p)))


def _read_images(path: Any, r: Request) -> RawData:
    from fpt.data.images import read_image_folder

    return read_image_folder(Path(path), r.image_channels, r.image_size)


def _image_table_claim(p: Path) -> bool:
    from fpt.data.image_table import find

    return find(p) is not None


def _read_image_table(path: Any, r: Request) -> RawData:
    from fpt.data.image_table import read_image_table

    return read_image_table(Path(path), r.target, r.image_channels, r.image_size)


def _predict_image_table(path: Path, checks: Checks) -> Inputs:
    from fpt.data.image_table import find, read_labelled_inputs

    if path.is_dir():  # a folder of either layout
        return _predict_images(path, checks)
    found = find(path)
    if found is None:
        raise SchemaError(f"{path}: a table, but none of its columns names the images beside it, and the model was "
                          f"trained on image data; give {takes('image')}")
    return read_labelled_inputs(path, checks, found)


def _series_claim(p: Path) -> bool:
    from fpt.data.timeseries import is_ucr

    return is_ucr(p)


def _read_series(path: Any, r: Request) -> RawData:
    from fpt.data.timeseries import read_timeseries

    return read_timeseries(Path(path))


def _read_npz(path: Any, r: Request) -> RawData:
    from fpt.data.arrays import read_npz

    return read_npz(Path(path), r.modality, r.image_channels, r.image_size)


def _hub_claim(p: Path) -> bool:
    from fpt.data.hub import is_saved_dataset

    return p.is_dir() and is_saved_dataset(p)


def _read_hub(path: Any, r: Request) -> RawData:
    from fpt.data.hub import load_hub

    return load_hub(str(path), r.target, r.modality, r.image_channels, r.image_size, r.drop, r.series)


def _predict_tables(path: Path, checks: Checks) -> Inputs:
    from fpt.data.tables import read_table_inputs

    return read_table_inputs(path, checks)


def _predict_images(path: Path, checks: Checks) -> Inputs:
    """A folder of images beside a table that names them (Kaggle's layout) is labelled by its rows; any other image
    file or folder is read as training read images (here, not in fpt.data.images: image_table reads through it)."""
    from fpt.data.image_table import find, read_labelled_inputs
    from fpt.data.images import read_image_inputs

    found = find(path) if path.is_dir() else None
    if found is not None:
        return read_labelled_inputs(path, checks, found)
    return read_image_inputs(path, checks)


def _predict_series(path: Path, checks: Checks) -> Inputs:
    from fpt.data.timeseries import read_series_inputs

    return read_series_inputs(path, checks)


def _predict_npz(path: Path, checks: Checks) -> Inputs:
    from fpt.data.arrays import read_npz_inputs

    return read_npz_inputs(path, checks)


# In the order detect asks them: a saved dataset folder before anything else, a UCR file before a table of the
# same suffix (.tsv), images with their labels' table before a table folder (Kaggle's train.csv names the images of
# train/), a table folder of split files before a folder of class folders.
FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("hub", (), None, "a dataset saved with save_to_disk()", _hub_claim, _read_hub),
    Format("timeseries", (".ts", ".tsv"), "*_TRAIN.ts or *_TRAIN.tsv", "*_TRAIN.ts", _series_claim, _read_series,
           "timeseries", "the label after each series' last ':' (or first field of a .tsv line)", "target",
           _predict_series, "a UCR/UEA .ts or .tsv file (e.g. NAME_TEST.ts)", ("timeseries",)),
    Format("npz", (".npz",), ".npz", None, lambda p: p.is_file() and p.suffix.lower() == ".npz", _read_npz,
           target="the array y", target_name="y", predict=_predict_npz,
           takes="an .npz of X (optionally y, to score)"),
    Format("image-table", (), "labels.csv beside the images it names", "images and a table naming them "
           "(DIR/labels.csv of id,label + DIR/train/*.png)", _image_table_claim, _read_image_table, "image",
           predict=_predict_image_table, takes="a folder of images and a table naming them (DIR/labels.csv + "
           "DIR/train/*.png), or that table", holds=("image",), predict_files=tuple(BUILDERS)),
    Format("tables", tuple(BUILDERS), ".csv, .tsv, .jsonl (each also .gz, .bz2, .xz, .zip), .parquet, .feather",
           "train.csv (+ test.csv)", _tables_claim, _read_tables, predict=_predict_tables,
           takes="one table file (e.g. DIR/test.csv; CSV/TSV/JSON lines/Parquet/Feather)",
           holds=("tabular", "sequence", "timeseries")),
    Format("images", (), None, "class folders of images (DIR/<class>/*.png)", _images_claim, _read_images, "image",
           "each image's class folder", "class", _predict_images,
           "an image file or a folder of images (DIR/*.png or DIR/<class>/*.png)", ("image",),
           tuple(sorted(IMAGE_SUFFIXES))),
)}
SUFFIXES = tuple(dict.fromkeys(s for f in FORMATS.values() for s in f.suffixes))  # every suffix --data may name


# Files practitioners point --data at that fpt does not read, with the one step that makes them a file it does.
_SPREADSHEET = f"a spreadsheet: {SPREADSHEET}"
_TEXT = "text of no declared layout: a comma- or tab-separated table with a header row is read when named .csv or " \
        ".tsv; one separated by spaces (numpy.savetxt's default): pandas.read_csv(path, sep=r'\\s+', header=None)" \
        ".to_csv('x.csv', index=False) and name its columns"
CONVERT = {
    ".xlsx": _SPREADSHEET, ".xls": _SPREADSHEET, ".xlsm": _SPREADSHEET, ".ods": _SPREADSHEET,
    ".txt": _TEXT, ".data": _TEXT, ".dat": _TEXT,
    ".npy": "one array: save it in an .npz, numpy.savez('d.npz', X=X, y=y) (y to train or to score)",
    ".pkl": "a pickle, which fpt never reads (loading one can run any code): save a DataFrame with to_parquet("
            "'x.parquet'), arrays with numpy.savez('d.npz', X=X, y=y)",
    ".arff": "Weka's ARFF: the UCR/UEA archive ships each set as .ts too (NAME_TRAIN.ts); else scipy.io.arff.loadarff "
             "and save a .csv",
    ".h5": "HDF5: save the arrays as numpy.savez('d.npz', X=X, y=y)",
}
CONVERT.update({".pickle": CONVERT[".pkl"], ".hdf5": CONVERT[".h5"]})
# an iPhone's photos (HEIC/HEIF): Pillow has no decoder for them, so they are an image fpt cannot read, not an unknown file
_HEIC = ("an HEIC/HEIF photo (an iPhone's), which Pillow does not decode: convert it to .jpg (macOS: sips -s format "
         "jpeg IN.heic --out OUT.jpg; Python: pillow-heif's register_heif_opener(), then Image.open(...).save('x.jpg'))")
CONVERT.update(dict.fromkeys(sorted(UNREAD_PHOTOS), _HEIC))


def unknown_format(p: Path, give: str) -> str:
    """The one-line error for a file no format reads: what it is and how to convert it where fpt knows the kind,
    else what to give instead (``give``)."""
    how = CONVERT.get(p.suffix.lower()) or (_zip_fix(p) if p.suffix.lower() == ".zip" and p.is_file() else None)
    if how is not None:
        return f"{p}: {how}"
    return f"{p}: unknown format {p.suffix or '(no suffix)'!r}; give {give}"


def _zip_fix(p: Path) -> str | None:
    """What a zip archive named only .zip holds and how to give it (a Kaggle download: train.csv, test.csv, ...)."""
    import zipfile

    try:
        with zipfile.ZipFile(p) as z:
            members = [m for m in z.namelist() if not m.endswith("/") and not m.startswith("__MACOSX/")]
    except (zipfile.BadZipFile, OSError):
        return None
    if len(members) == 1 and table_suffix(Path(members[0])) in BUILDERS:
        inner = Path(members[0]).name
        return (f"a zip archive of one table, {members[0]}: name it {inner}.zip (fpt reads a table compressed so), "
                "or unzip it and give the table")
    return f"a zip archive of {len(members)} files ({shown(members, 4)}): unzip it and give the folder or the file to read"


def file_kinds() -> str:
    """The files --data reads, as the texts list them."""
    return ", ".join(f.files for f in reversed(FORMATS.values()) if f.files)


def folder_kinds() -> str:
    """The folders --data reads, as the texts list them."""
    folders = [f.folder for f in reversed(FORMATS.values()) if f.folder]
    return ", ".join(folders[:-1]) + ", or " + folders[-1]


def takes(modality: str) -> str:
    """What fpt predict reads for a ``modality`` model, as the texts name it: the formats that hold it alone first."""
    fits = sorted((f for f in FORMATS.values() if f.predicts(modality)), key=lambda f: f.holds is None)
    return " or ".join(f.takes for f in fits if f.takes)


def predict_kinds() -> str:
    """Every input fpt predict reads, as the texts list them."""
    return ", ".join(f.takes for f in reversed(FORMATS.values()) if f.predict is not None and f.takes)


def for_inputs(p: Path, modality: str) -> Format:
    """The format whose predict reader reads the existing file or folder ``p`` for a ``modality`` model; a path
    no such format reads is a one-line error saying what to give instead."""
    readers = [f for f in FORMATS.values() if f.predict is not None]
    found = [f for f in readers if not f.suffixes] if p.is_dir() else \
        [f for f in readers if table_suffix(p) in f.suffixes or p.suffix.lower() in f.predict_files]
    fits = [f for f in found if f.predicts(modality)]
    # of several folder readers (class folders, or images beside their labels' table), the one that claims it; of
    # several file readers, the first (a .tsv: a UCR file before a table)
    fit = next((f for f in fits if p.is_dir() and len(fits) > 1 and f.claims(p)), fits[0] if fits else None)
    if fit is not None:
        return fit
    if p.is_dir():
        from fpt.data.tables import split_files

        splits = split_files(p)
        held = " (it holds split files " + ", ".join(f.name for f in splits.values()) + ")" if splits else ""
        raise SchemaError(f"{p}: a folder{held}; the model takes {modality} data: give {takes(modality)}")
    if not found:
        suffixes = ", ".join(dict.fromkeys(s for f in readers for s in f.suffixes))
        folders = " or ".join(f.takes for f in readers if not f.suffixes and f.takes)
        raise DataError(unknown_format(p, f"a {suffixes} file or {folders}"))
    raise SchemaError(f"{p}: {found[0].takes}, but the model was trained on {modality} data; give {takes(modality)}")


def claiming(p: Path) -> Format | None:
    """The first format that claims the existing file or folder ``p``."""
    return next((f for f in FORMATS.values() if f.claims(p)), None)


__all__ = ["CONVERT", "FORMATS", "SUFFIXES", "Format", "Request", "claiming", "file_kinds", "folder_kinds", "for_inputs",
           "predict_kinds", "takes", "unknown_format"]
