"""Remote homology (TAPE): the SCOP fold (1195 classes) of a protein from its amino-acid sequence.

Tokens are TAPE's ids (``fpt.data.tape.VOCAB``: 5 specials then 25 residue letters, 30 in all),
``<cls> residues <sep>``, padded on the right with ``<pad>`` = 0; the head reads the last
real token, which is always ``<sep>``. Lengths count ``<cls>`` and ``<sep>``.

Sequences longer than ``max_len`` tokens (1024, GPT-2's positions):
- ``drop`` (default): left out of every split, as the paper's code skipped batches longer
  than 1024 tokens. Accuracy is then over the kept sequences; ``info["kept_share"]`` lets a
  report count the dropped ones as wrong (the paper scaled its figures by 0.9739).
- ``truncate``: keep ``<cls>``, the first ``max_len - 2`` residues and ``<sep>``, so a cut
  sequence still ends in the token the head reads for every other sequence.

Evaluation: selection on ``valid`` (the paper's figure), test on ``test_fold_holdout`` (TAPE's
headline), and the other two held-out test splits reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fpt.data import tape as td
from fpt.errors import ConfigError, DataError
from fpt.model import InputSpec
from fpt.settings import TaskDefaults
from fpt.tasks.base import TASKS, Batch, DataSource, TaskData, TensorSource

POLICIES = ("drop", "truncate")
EVAL_SPLITS = ("valid", "test_fold_holdout", "test_superfamily_holdout", "test_family_holdout")
# Ours, then the official FPT code's layout (data/tape/remote_homology).
SUBDIRS = ("remote_homology", "tape/remote_homology")
SUBSAMPLE_SEED = 0  # n_train's subset is the same for every run seed, so seeds are comparable


def _help(text: str, default: Any) -> Any:
    return field(default=default, metadata={"help": text})


@dataclass(frozen=True)
class RemoteHomologyOptions:
    max_len: int = _help("tokens per sequence, <cls> and <sep> included; longer ones follow length_policy", 1024)
    length_policy: str = _help("drop (the paper: leave out sequences longer than max_len, every split) | "
                               "truncate (keep <cls>, the first max_len - 2 residues, <sep>)", "drop")
    n_train: int | None = _help("train on a fixed random subset of N sequences (quick runs); default all", None)

    def __post_init__(self) -> None:
        if self.length_policy not in POLICIES:
            raise ConfigError(f"remote-homology: length_policy {self.length_policy!r} is not one of {', '.join(POLICIES)}")
        if self.max_len < 3:
            raise ConfigError("remote-homology: max_len must be >= 3 (<cls>, one residue, <sep>)")
        if self.n_train is not None and self.n_train < 1:
            raise ConfigError("remote-homology: n_train must be >= 1")


def fit_lengths(split: td.Split, max_len: int, policy: str) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Token ids per kept sequence, the indices kept (into the split) and every raw length (tokens)."""
    seqs, kept, raw = [], [], np.empty(len(split.tokens), dtype=np.int64)
    for i, ids in enumerate(split.tokens):
        raw[i] = len(ids)
        if len(ids) > max_len:
            if policy == "drop":
                continue
            ids = np.concatenate([ids[: max_len - 1], ids[-1:]])  # (max_len,): ends in <sep>
        seqs.append(ids)
        kept.append(i)
    return seqs, np.asarray(kept, dtype=np.int64), raw


def pad(seqs: list[np.ndarray], width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, width) int32 ids padded right with <pad> = 0, and (N,) lengths."""
    x = np.full((len(seqs), width), td.PAD, dtype=np.int32)  # int32 halves memory; nn.Embedding accepts it
    for row, ids in zip(x, seqs, strict=True):
        row[: len(ids)] = ids
    return torch.from_numpy(x), torch.tensor([len(s) for s in seqs], dtype=torch.int64)


def find_dir(root: Path) -> Path:
    """The folder holding the train split; DataError listing the places looked in."""
    for sub in SUBDIRS:
        if td.find_split(root / sub, "train") is not None:
            return root / sub
    raise DataError(td.missing_message([root / sub for sub in SUBDIRS], "train"))


@TASKS.register("remote-homology")
class RemoteHomology:
    Options = RemoteHomologyOptions
    defaults = TaskDefaults(lr=1e-4)  # SPEC section 1: remote homology trains at 1e-4

    def build(self, o: RemoteHomologyOptions, seed: int, source: DataSource) -> TaskData:
        folder = find_dir(source.root)
        info: dict[str, Any] = {
            "tokenisation": "tape", "vocab": list(td.VOCAB), "read": "last real token (<sep>, via lengths)",
            "length_policy": o.length_policy, "max_len": o.max_len, "lengths_count": "tokens with <cls> and <sep>",
            "accuracy_over": "kept sequences" if o.length_policy == "drop" else "all sequences",
            "files": {}, "raw_lengths": {}, "kept_share": {},
        }
        tokens: dict[str, tuple[list[np.ndarray], np.ndarray]] = {}
        for split in td.SPLITS:
            data = td.read_split(folder, split)
            where = str(data.path)
            if not data.tokens:
                raise DataError(f"{where}: no records")
            seqs, kept, raw = fit_lengths(data, o.max_len, o.length_policy)
            if not seqs:
                raise DataError(f"{where}: all {len(raw)} sequences are longer than max_len={o.max_len} tokens; "
                                "raise max_len or use length_policy=truncate")
            long = int((raw > o.max_len).sum())
            info["files"][split] = where
            info["raw_lengths"][split] = {"min": int(raw.min()), "median": float(np.median(raw)), "max": int(raw.max())}
            info[f"{split}_dropped"] = long if o.length_policy == "drop" else 0
            info[f"{split}_truncated"] = long if o.length_policy == "truncate" else 0
            info["kept_share"][split] = round(len(kept) / len(raw), 4)
            tokens[split] = (seqs, data.fold_label[kept])
        seqs, labels = tokens["train"]
        if o.n_train is not None:
            if o.n_train > len(seqs):
                raise DataError(f"{info['files']['train']}: {len(seqs)} training sequences kept; n_train={o.n_train} "
                                "asks for more (lower n_train)")
            rows = np.sort(np.random.default_rng(SUBSAMPLE_SEED).choice(len(seqs), o.n_train, replace=False))
            tokens["train"] = ([seqs[i] for i in rows], labels[rows])
        info["n_train"] = len(tokens["train"][0])
        # Rows past the longest sequence would only ever hold padding (and need position rows
        # the body never trains), so the width stops there when every sequence is shorter.
        width = max(len(s) for seqs, _ in tokens.values() for s in seqs)
        info["seq_len"] = width
        sets = {}
        for split, (seqs, labels) in tokens.items():
            x, lengths = pad(seqs, width)
            sets[split] = Batch(x, torch.from_numpy(labels)[:, None], lengths)  # y (N, 1): one output token
        spec = InputSpec(seq_len=width, num_classes=td.NUM_FOLDS, vocab_size=len(td.VOCAB))
        # Selection reads `valid`; TAPE's headline is fold-level accuracy on test_fold_holdout. The paper's
        # figure is `valid` (its code watched that set), so reports show both.
        info["paper_split"] = "valid"
        return TaskData(spec, TensorSource(sets["train"], seed), {k: sets[k] for k in EVAL_SPLITS},
                        info=info, val="valid", test="test_fold_holdout")
