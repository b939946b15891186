"""Helpers of the hostile-input cases: fast training fields, tiny data, and the checks every case makes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

FAST = dict(init="random", steps=2, eval_every=2, batch_size=8, device="cpu", baselines="none")


def table(path: Path, n: int = 24, seed: int = 0, label: tuple[str, str] = ("a", "b")) -> Path:
    rng = np.random.default_rng(seed)
    rows = ["x1,x2,label"] + [f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{label[i % 2]}" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def series(n: int = 24, length: int = 12, channels: int = 1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, channels, length)).astype(np.float32) + y[:, None, None]
    return X, y


def one_line(capsys, command: str, *needles: str) -> str:
    """The command's stderr: exactly one line, fpt's error (no traceback), holding every needle."""
    err = capsys.readouterr().err.strip()
    lines = [line for line in err.splitlines() if "Warning" not in line and line.strip()]
    assert len(lines) == 1 and "Traceback" not in err and lines[0].startswith(f"fpt {command}: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(Path(root).rglob("*")) if p.is_file()}


def dna_run(root: Path, body: str) -> tuple[Path, list[str]]:
    """A symbol-sequence run of 24 DNA strings (``root``/dna.csv of seq, label) trained into ``root``/run, and its
    training texts: the sequence model rounds 11 and 12 predict with."""
    import warnings

    import fpt

    rng = np.random.default_rng(0)
    seqs = ["".join(rng.choice(list("ACGT"), size=rng.integers(10, 30))) for _ in range(24)]
    (root / "dna.csv").write_text("seq,label\n" + "".join(f"{s},{'ab'[i % 2]}\n" for i, s in enumerate(seqs)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=str(root / "dna.csv"), body=body, **FAST), out=root / "run", progress=False)
    return root / "run", seqs
