"""Write the datasets of ``docs/results/data/`` as files that ``fpt train --data`` reads.

    python bench/user_data_files.py --out data/user     # needs the [bench] extra (aeon) for the UCR sets

- ``bc.csv``, ``diab.csv``: scikit-learn's breast cancer and diabetes tables (``as_frame``), target last.
- ``GunPoint/GunPoint_TRAIN.ts`` + ``_TEST.ts``, ``ItalyPowerDemand/..._TRAIN.ts`` + ``_TEST.ts``: the UCR
  archive's own train/test splits as shipped inside the ``aeon`` wheel (``aeon.datasets.load_classification``
  reads its bundled copies without a network), written back in the sktime ``.ts`` format.
- ``shapes/<circle|square|triangle>/NNNN.png``: 64x64 drawings (seeded): one filled shape per image at a
  random position, size and colour on white (squares axis-aligned, triangles upright).

Every file is a pure function of the packages' data and ``--seed``; rerunning rewrites the same bytes.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

SHAPES = ("circle", "square", "triangle")
UCR = ("GunPoint", "ItalyPowerDemand")


def write_tables(out: Path) -> None:
    from sklearn.datasets import load_breast_cancer, load_diabetes

    load_breast_cancer(as_frame=True).frame.to_csv(out / "bc.csv", index=False)
    load_diabetes(as_frame=True).frame.to_csv(out / "diab.csv", index=False)


def write_ts(path: Path, name: str, X: np.ndarray, y: np.ndarray) -> None:
    """(n, C, L) series and (n,) labels as an sktime .ts file (equal length, class labels)."""
    classes = " ".join(sorted({str(v) for v in y}))
    lines = [f"@problemName {name}", "@timeStamps false", "@missing false",
             f"@univariate {'true' if X.shape[1] == 1 else 'false'}",
             *([] if X.shape[1] == 1 else [f"@dimensions {X.shape[1]}"]),
             "@equalLength true", f"@seriesLength {X.shape[2]}", f"@classLabel true {classes}", "@data"]
    for series, label in zip(X, y, strict=True):
        lines.append(":".join(",".join(repr(float(v)) for v in channel) for channel in series) + f":{label}")
    path.write_text("\n".join(lines) + "\n")


def write_ucr(out: Path, names: tuple[str, ...] = UCR) -> None:
    from aeon.datasets import load_classification

    for name in names:
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        for split in ("train", "test"):
            X, y = load_classification(name, split=split)  # the copies bundled with aeon: no download
            write_ts(folder / f"{name}_{split.upper()}.ts", name, np.asarray(X, dtype=np.float64), np.asarray(y))


def draw_shape(rng: np.random.Generator, kind: str, size: int = 64):  # noqa: ANN201 (a PIL image)
    """One filled shape on white: random colour (never near-white), size and position; squares axis-aligned,
    triangles upright (equilateral)."""
    from PIL import Image, ImageDraw

    colour = tuple(int(v) for v in rng.integers(0, 200, 3))
    im = Image.new("RGB", (size, size), (255, 255, 255))
    draw = ImageDraw.Draw(im)
    r = float(rng.uniform(0.15, 0.4) * size)  # half the width
    cx, cy = (float(v) for v in rng.uniform(r + 1, size - r - 1, 2))
    if kind == "circle":
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=colour)
    elif kind == "square":
        draw.rectangle([cx - r, cy - r, cx + r, cy + r], fill=colour)
    else:
        h = r * math.sqrt(3)  # height of the equilateral triangle of side 2r
        draw.polygon([(cx - r, cy + h / 2), (cx + r, cy + h / 2), (cx, cy - h / 2)], fill=colour)
    return im


def write_shapes(out: Path, per_class: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for kind in SHAPES:
        (out / "shapes" / kind).mkdir(parents=True, exist_ok=True)
    for i in range(per_class):
        for kind in SHAPES:
            draw_shape(rng, kind).save(out / "shapes" / kind / f"{i:04d}.png")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="data/user")
    p.add_argument("--shapes-per-class", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", choices=["tables", "ucr", "shapes"], nargs="*", default=["tables", "ucr", "shapes"])
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if "tables" in args.only:
        write_tables(out)
    if "ucr" in args.only:
        write_ucr(out)
    if "shapes" in args.only:
        write_shapes(out, args.shapes_per_class, args.seed)
    print(f"wrote {', '.join(args.only)} under {out}")


if __name__ == "__main__":
    main()
