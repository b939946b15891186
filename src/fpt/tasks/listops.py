"""ListOps (Long Range Arena): the value 0-9 of a nested MIN/MAX/MED/SM expression.

Two tokenisations, recorded in ``TaskData.info["tokenisation"]``:
- ``paper``: alphanumeric symbols only (the operators and digits, 14 + padding), cut to the
  first 512 tokens: the paper's (older) pipeline, whose figure is on ``basic_val``. Most
  examples are cut.
- ``lra``: ``]`` kept as a symbol (LRA writes it ``X``), 15 + padding, up to 2000 tokens,
  Long Range Arena's pipeline, whose figures are on ``basic_test``.
Both select on ``basic_val`` and report ``basic_test`` (and ``basic_val``).
Inputs are padded on the right with id 0; the head reads the last real token (lengths).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fpt.data import listops as lo
from fpt.errors import ConfigError, DataError, option, speaks_flags
from fpt.model import InputSpec
from fpt.tasks.base import TASKS, Batch, DataSource, TaskData, TensorSource

# Symbol code (fpt.data.listops.SYMBOLS order) -> token id; DROP removes the symbol.
DROP = -1
TOKENISATIONS: dict[str, tuple[list[str], list[int]]] = {
    "paper": (["<pad>", "MIN", "MAX", "MED", "SM", *lo.DIGITS], [1, 2, 3, 4, DROP, *range(5, 15)]),
    "lra": (["<pad>", *lo.SYMBOLS], list(range(1, 16))),
}
DEFAULT_MAX_LEN = {"paper": 512, "lra": 2000}
PAPER_SPLIT = {"paper": "val", "lra": "test"}  # the paper's figure is on basic_val; LRA reports test
# Where a data_dir may hold the files: ours, LRA's release folder, or lra_release itself.
SUBDIRS = ("listops", "listops-1000", "lra_release/listops-1000")


def _help(text: str, default: Any) -> Any:
    return field(default=default, metadata={"help": text})


@dataclass(frozen=True)
class ListOpsOptions:
    tokenisation: str = _help("paper (alphanumeric symbols, 512 tokens) | lra (']' kept, 2000)", "paper")
    max_len: int | None = _help("tokens kept per example (the rest is cut); default 512 paper, 2000 lra", None)
    n_train: int | None = _help("use only the first N training examples (quick CPU runs); default all", None)
    generate: bool = _help("generate missing files under DATA_DIR/listops instead of failing", False)
    generate_train: int | None = _help("examples to generate for basic_train.tsv; default n_train, else 96000", None)
    generate_val: int = _help("examples to generate for basic_val.tsv", 2_000)
    generate_test: int = _help("examples to generate for basic_test.tsv", 2_000)
    generate_seed: int = _help("seed of the generator (independent of the run's seed)", 0)
    generate_min_len: int = _help("generated expressions are longer than this many symbols (LRA: 500)", 500)
    generate_max_len: int = _help("generated expressions are shorter than this many symbols (LRA: 2000)", 2000)
    generate_max_depth: int = _help("generated trees have at most this many levels (LRA: 10)", 10)

    def __post_init__(self) -> None:
        if self.tokenisation not in TOKENISATIONS:
            raise ConfigError(f"listops: tokenisation {self.tokenisation!r} is not one of {', '.join(TOKENISATIONS)}")
        if self.max_len is not None and self.max_len < 1:
            raise ConfigError("listops: max_len must be >= 1")
        if self.n_train is not None and self.n_train < 1:
            raise ConfigError("listops: n_train must be >= 1")
        if min(self.generate_val, self.generate_test) < 1 or (self.generate_train is not None and self.generate_train < 1):
            raise ConfigError("listops: generate_train, generate_val and generate_test must be >= 1")
        if not (0 <= self.generate_min_len and self.generate_min_len + 1 < self.generate_max_len
                and self.generate_max_depth >= 1):
            raise ConfigError("listops: need 0 <= generate_min_len < generate_max_len - 1 and generate_max_depth >= 1")

    @property
    def lra_generator(self) -> bool:
        return (self.generate_min_len, self.generate_max_len, self.generate_max_depth) == (500, 2000, 10)

    @property
    def generated_dir(self) -> str:
        """Where generated files go: LRA's rules in ``listops/``; other rules in a folder named by them."""
        if self.lra_generator:
            return "listops"
        return f"listops-generated-len{self.generate_min_len}-{self.generate_max_len}-depth{self.generate_max_depth}"

    @property
    def seq_len(self) -> int:
        return self.max_len if self.max_len is not None else DEFAULT_MAX_LEN[self.tokenisation]


def tokenise(codes: list[np.ndarray], tokenisation: str, max_len: int) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """Token ids (N, max_len) int32 padded right with 0, lengths (N,) after cutting, raw lengths before."""
    lut = np.asarray(TOKENISATIONS[tokenisation][1], dtype=np.int64)
    x = np.zeros((len(codes), max_len), dtype=np.int32)  # int32 halves memory; nn.Embedding accepts it
    raw = np.empty(len(codes), dtype=np.int64)
    for i, c in enumerate(codes):
        ids = lut[c]
        ids = ids[ids != DROP]
        raw[i] = len(ids)
        x[i, : min(len(ids), max_len)] = ids[:max_len]
    return torch.from_numpy(x), torch.from_numpy(np.minimum(raw, max_len)), raw


def find_dir(root: Path) -> Path | None:
    for sub in SUBDIRS:
        if (root / sub / lo.file_name("train")).is_file():
            return root / sub
    return None


@TASKS.register("listops")
class ListOps:
    Options = ListOpsOptions

    def build(self, o: ListOpsOptions, seed: int, source: DataSource) -> TaskData:
        # Files generated with other than LRA's rules live apart, so they never stand in for LRA's set.
        folder = find_dir(source.root) if not (o.generate and not o.lra_generator) else None
        if folder is None and o.generate:
            folder = source.root / o.generated_dir
            if not (folder / lo.file_name("train")).is_file():
                # A quick run (n_train set) need not wait for 96,000 examples.
                n_train = next(n for n in (o.generate_train, o.n_train, 96_000) if n is not None)
                counts = {"train": n_train, "val": o.generate_val, "test": o.generate_test}
                lo.generate_files(folder, counts, o.generate_seed, min_len=o.generate_min_len,
                                  max_len=o.generate_max_len, max_depth=o.generate_max_depth)
        if folder is None:
            tried = ", ".join(str(source.root / s / lo.file_name("train")) for s in SUBDIRS)
            generate = "task.generate=true" if speaks_flags() else "task_options={'generate': True}"
            raise DataError(f"listops: no {lo.file_name('train')} (looked for {tried}). Generate the files with "
                            f"`fpt listops-generate --out {source.root / 'listops'}` (or {generate}), or "
                            f"download Long Range Arena's lra_release and set {option('data_dir')} to the folder holding "
                            "listops-1000/")
        vocab, _ = TOKENISATIONS[o.tokenisation]
        sets: dict[str, Batch] = {}
        info: dict[str, Any] = {"tokenisation": o.tokenisation, "read": "last real token (lengths)", "vocab": vocab,
                                "files": str(folder), "raw_lengths": {}, "truncated_share": {}}
        if o.generate and folder == source.root / o.generated_dir:
            info["generator"] = {"seed": o.generate_seed, "min_len": o.generate_min_len, "max_len": o.generate_max_len,
                                 "max_depth": o.generate_max_depth}
        for split in lo.SPLITS:
            codes, y = lo.read_split(folder / lo.file_name(split), o.n_train if split == "train" else None)
            if split == "train" and o.n_train is not None and len(codes) < o.n_train:
                raise DataError(f"{folder / lo.file_name(split)} holds {len(codes)} examples; n_train={o.n_train} "
                                "asks for more (generate a larger file or lower n_train)")
            x, lengths, raw = tokenise(codes, o.tokenisation, o.seq_len)
            sets[split] = Batch(x, torch.from_numpy(y)[:, None], lengths)  # y (N, 1): one output token
            cut = int((raw > o.seq_len).sum())
            info["raw_lengths"][split] = {"min": int(raw.min()), "median": float(np.median(raw)), "max": int(raw.max())}
            info[f"{split}_truncated"] = cut
            info["truncated_share"][split] = round(cut / len(raw), 4)
        # Selection reads basic_val, the test figure is basic_test; the paper's own figure was basic_val
        # (it watched that set while training), so reports show both and say which the paper's is.
        info["paper_split"] = PAPER_SPLIT[o.tokenisation]
        spec = InputSpec(seq_len=o.seq_len, num_classes=10, vocab_size=len(vocab))
        evals = {"val": sets["val"], "test": sets["test"]}
        return TaskData(spec, TensorSource(sets["train"], seed), evals, info=info)
