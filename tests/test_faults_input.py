"""Fuzz suite of bad input: every reader, the config and the CLI, as an adversary would feed them.

Each case of ``CASES`` writes its bad input under a fresh folder, then acts (a reader, the config
loader, ``fpt.cli.main`` in-process, or ``fpt`` in a subprocess where a crash would kill pytest)
and is classified:

- ``clear``: a user error (non-zero exit, or one of ``USER_ERRORS`` raised) whose message is one
  line, has no traceback and names what the case expects (the file, line or field);
- ``unclear``: a user error whose message is not that;
- ``traceback``: any other exception, or a traceback / signal death in a subprocess;
- ``silent``: the bad input was accepted;
- ``damaged``: a file that existed before the case (its input, a previous run's results) changed.

Every case must be ``clear``; ``test_tally`` prints the counts (``pytest -s`` shows them) and the
hypothesis tests feed random input to the readers, the unpickler, the config and ``safe_run_name``.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import lmdb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fpt.cli import USER_ERRORS, main
from fpt.config import RunConfig, from_dict, load_yaml, parse_overrides
from fpt.data import listops as lo
from fpt.data import tape as td
from fpt.data.image_files import read_cifar_batch, read_mnist
from fpt.data.safe_pickle import safe_loads
from fpt.errors import ConfigError, DataError
from fpt.paths import MAX_NAME, safe_run_name

TALLY: Counter = Counter()
OUTCOMES: dict[str, str] = {}
FUZZ = Counter()  # hypothesis examples per target

# --- writers of good input (each case then breaks one thing) ---------------------------------


def idx_bytes(array: np.ndarray, magic: int | None = None, dims: tuple | None = None) -> bytes:
    magic = magic if magic is not None else 0x800 | array.ndim
    dims = array.shape if dims is None else dims
    return magic.to_bytes(4, "big") + b"".join(int(d).to_bytes(4, "big") for d in dims) + array.astype(np.uint8).tobytes()


def write_mnist(root: Path, images: bytes | None = None, labels: bytes | None = None, n: int = 6) -> Path:
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for prefix in ("train", "t10k"):
        (raw / f"{prefix}-images-idx3-ubyte").write_bytes(idx_bytes(np.zeros((n, 28, 28), np.uint8)))
        (raw / f"{prefix}-labels-idx1-ubyte").write_bytes(idx_bytes(np.arange(n) % 10))
    if images is not None:
        (raw / "train-images-idx3-ubyte").write_bytes(images)
    if labels is not None:
        (raw / "train-labels-idx1-ubyte").write_bytes(labels)
    return raw


def cifar_batch(data: object = None, labels: object = None, protocol: int = 2) -> bytes:
    data = np.zeros((4, 3072), np.uint8) if data is None else data
    labels = [0, 1, 2, 3] if labels is None else labels
    return pickle.dumps({b"batch_label": b"x", b"data": data, b"labels": labels}, protocol=protocol)


def write_cifar(root: Path, batch1: bytes | None = None) -> Path:
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        (folder / name).write_bytes(cifar_batch())
    meta = {b"label_names": [f"c{i}".encode() for i in range(10)]}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=2))
    if batch1 is not None:
        (folder / "data_batch_1").write_bytes(batch1)
    return folder


def write_listops(folder: Path, train_body: bytes | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    good = "Source\tTarget\r\n( ( ( [MAX 4 ) 3 ) ] )\t4\r\n( ( ( [SM 3 ) 9 ) ] )\t2\r\n"
    for split in lo.SPLITS:
        (folder / lo.file_name(split)).write_text(good, newline="")
    if train_body is not None:
        (folder / "basic_train.tsv").write_bytes(train_body)
    return folder / "basic_train.tsv"


def record(i: int) -> dict:
    return {"id": f"d{i}", "primary": "ACDEFGHIK" * (1 + i % 3), "protein_length": np.int64(9),
            "fold_label": np.int64(i % 1195), "evolutionary": np.zeros((9, 20), np.float32)}


def write_lmdb(path: Path, n: int = 40, num_examples: object = None, raw: dict | None = None) -> Path:
    env = lmdb.open(str(path), map_size=1 << 24)
    with env.begin(write=True) as txn:
        txn.put(b"num_examples", pickle.dumps(n if num_examples is None else num_examples))
        for i in range(n):
            txn.put(str(i).encode(), pickle.dumps(record(i), protocol=3))
        for key, value in (raw or {}).items():
            txn.put(key, value)
    env.close()
    return path


def write_tape(root: Path) -> Path:
    folder = root / "remote_homology"
    folder.mkdir(parents=True, exist_ok=True)
    for split in td.SPLITS:
        write_lmdb(folder / td.file_names(split)[0], n=200 if split == "train" else 8)
    return folder


def truncate(path: Path, size: int) -> Path:
    with open(path, "r+b") as f:
        f.truncate(size)
    return path


def scramble_pages(path: Path) -> Path:
    """Overwrite the start of every page after the meta pages: pointers now lead anywhere."""
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(0)
    for at in range(8192 + 16, len(data), 4096):
        data[at:at + 64] = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))
    return path


class Reduce:
    """A pickle that calls ``func(*args)`` (then BUILD with ``state`` when given)."""

    def __init__(self, func, args, state=None):
        self.func, self.args, self.state = func, args, state

    def __reduce__(self):
        return (self.func, self.args) if self.state is None else (self.func, self.args, self.state)


def _multiarray():
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy 1
        from numpy.core import multiarray
    return multiarray


# --- the cases ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    name: str
    area: str  # mnist | cifar | listops | tape-json | tape-lmdb | pickle | config | cli
    make: Callable[[Path], Callable[[], object]]  # writes the input under the folder, returns the action
    expect: tuple[str, ...] = ()  # fragments the message must hold (file, line, field, fix)
    process: bool = False  # run in a subprocess: ``make`` returns an argv for ``python -m fpt``


def cli(*argv: str) -> Callable[[], tuple[int, str]]:
    def act() -> tuple[int, str]:
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                rc = main(list(argv))
            except SystemExit as exc:  # argparse's usage errors
                rc = exc.code if isinstance(exc.code, int) else 1
        return rc, err.getvalue()
    return act


def _mnist(images=None, labels=None):
    def make(d: Path):
        write_mnist(d, images, labels)
        return lambda: read_mnist(d, "train")
    return make


def _cifar(batch: bytes):
    def make(d: Path):
        path = d / "data_batch_1"
        path.write_bytes(batch)
        return lambda: read_cifar_batch(path)
    return make


def _listops(body: bytes):
    def make(d: Path):
        path = write_listops(d / "listops", body)
        return lambda: lo.read_split(path)
    return make


def _tape_json(text: str):
    def make(d: Path):
        path = d / "remote_homology_valid.json"
        path.write_text(text)
        return lambda: td.read_json(path)
    return make


def _lmdb(change: Callable[[Path], object], **kw):
    def make(d: Path):
        path = write_lmdb(d / "remote_homology_valid.lmdb", **kw)
        change(path)
        return lambda: td.read_lmdb(path)
    return make


def _pickle(data: bytes | Callable[[], bytes], **kw):
    def make(d: Path):
        raw = data() if callable(data) else data
        return lambda: safe_loads(raw, "fixture.pkl", **kw)
    return make


def _yaml(text: bytes):
    def make(d: Path):
        path = d / "run.yaml"
        path.write_bytes(text)
        return lambda: from_dict(RunConfig, load_yaml(path), where=str(path))
    return make


def _override(*items: str):
    return lambda d: lambda: from_dict(RunConfig, parse_overrides(list(items)), where="command line")


def _cli(*argv: str, setup: Callable[[Path], object] | None = None):
    def make(d: Path):
        if setup is not None:
            setup(d)
        return cli(*argv)
    return make


MA = _multiarray()
ALIAS_BOMB = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n".encode() for p, c in zip("abcdefgh", "bcdefghi", strict=True)
) + b"task_options: {n: *i}\nsteps: *i\n"

CASES = [
    # MNIST IDX
    Case("mnist: empty images file", "mnist", _mnist(images=b""), ("train-images-idx3-ubyte", "truncated")),
    Case("mnist: header declares 0 images", "mnist", _mnist(images=idx_bytes(np.zeros((0, 28, 28)))), ("holds no data",)),
    Case("mnist: wrong magic", "mnist", _mnist(images=idx_bytes(np.zeros((6, 28, 28)), magic=0x801)), ("magic number",)),
    Case("mnist: cut-off body", "mnist", _mnist(images=idx_bytes(np.zeros((6, 28, 28)))[:-100]), ("truncated", "record 5")),
    Case("mnist: bytes after the records", "mnist", _mnist(images=idx_bytes(np.zeros((6, 28, 28))) + b"xx"),
         ("2 unexpected bytes",)),
    Case("mnist: label 10", "mnist", _mnist(labels=idx_bytes(np.array([0, 1, 2, 10, 4, 5]))), ("record 3 is 10",)),
    Case("mnist: 5 labels for 6 images", "mnist", _mnist(labels=idx_bytes(np.arange(5))), ("5 labels",)),
    Case("mnist: 27x28 images", "mnist", _mnist(images=idx_bytes(np.zeros((6, 27, 28)))), ("27x28",)),
    Case("mnist: gzip cut short", "mnist", lambda d: (raw := write_mnist(d), (raw / "train-images-idx3-ubyte").unlink(),
                                                       (raw / "train-images-idx3-ubyte.gz").write_bytes(
                                                           gzip.compress(idx_bytes(np.zeros((6, 28, 28))))[:-30]),
                                                       lambda: read_mnist(d, "train"))[-1], ("gzip",)),
    Case("mnist: header declares 2**32-1 images", "mnist",
         _mnist(images=idx_bytes(np.zeros(0), magic=0x803, dims=(2**32 - 1, 28, 28))), ("truncated",)),
    # CIFAR-10 batches
    Case("cifar: float labels (1.7)", "cifar", _cifar(cifar_batch(labels=[1.7, 0, 1, 2])), ("data_batch_1", "record 0", "1.7")),
    Case("cifar: bool labels", "cifar", _cifar(cifar_batch(labels=[True, False, True, False])), ("record 0", "bool")),
    Case("cifar: float label array", "cifar", _cifar(cifar_batch(labels=np.array([1.0, 2.0, 3.0, 4.0]))), ("float64",)),
    Case("cifar: label 10", "cifar", _cifar(cifar_batch(labels=[0, 1, 10, 2])), ("record 2 is 10",)),
    Case("cifar: label 10**30", "cifar", _cifar(cifar_batch(labels=[0, 1, 10**30, 2])), ("record 2",)),
    Case("cifar: labels a string", "cifar", _cifar(cifar_batch(labels="0123")), ("'labels' is a str",)),
    Case("cifar: empty batch", "cifar", _cifar(cifar_batch(np.zeros((0, 3072), np.uint8), [])), ("holds no images",)),
    Case("cifar: float32 data", "cifar", _cifar(cifar_batch(np.zeros((4, 3072), np.float32))), ("float32", "uint8")),
    Case("cifar: data (4, 1024)", "cifar", _cifar(cifar_batch(np.zeros((4, 1024), np.uint8))), ("(4, 1024)",)),
    Case("cifar: cut-off pickle", "cifar", _cifar(cifar_batch()[:-700]), ("data_batch_1", "truncated")),
    Case("cifar: text file", "cifar", _cifar(b"<html>404 not found</html>\n"), ("not a readable pickle",)),
    Case("cifar: os.system global", "cifar", _cifar(pickle.dumps(Reduce(os.system, ("true",)), protocol=2)),
         ("system", "refusing")),
    # ListOps TSV
    Case("listops: misplaced brackets", "listops", _listops(b"Source\tTarget\n] 4 3 [MAX\t4\n"), ("line 2", "starts with ']'")),
    Case("listops: wrong Target", "listops", _listops(b"Source\tTarget\n[MAX 4 3 ]\t4\n[MIN 4 3 ]\t4\n"),
         ("line 3", "evaluates to 3")),
    Case("listops: symbols after the tree", "listops", _listops(b"Source\tTarget\n[SM 1 ] 2\t1\n"), ("line 2", "more follows")),
    Case("listops: operator without arguments", "listops", _listops(b"Source\tTarget\n[MAX [MIN ] 3 ]\t3\n"),
         ("line 2", "no arguments")),
    Case("listops: ']' before its operator", "listops", _listops(b"Source\tTarget\n[MAX 3 ] ] [MIN 2\t3\n"), ("line 2",)),
    Case("listops: cut-off line", "listops", _listops(b"Source\tTarget\n[MAX 4 [MIN 3\t3\n"), ("line 2", "closing")),
    Case("listops: unknown symbol", "listops", _listops(b"Source\tTarget\n[MAX 4 x ]\t4\n"), ("line 2", "'x'")),
    Case("listops: not UTF-8", "listops", _listops(b"Source\tTarget\n[MAX 4 \xff ]\t4\n"), ("line 2", "UTF-8")),
    Case("listops: empty file", "listops", _listops(b""), ("empty file",)),
    Case("listops: header only", "listops", _listops(b"Source\tTarget\n"), ("no examples",)),
    # TAPE JSON
    Case("tape json: not JSON", "tape-json", _tape_json('[{"primary": "A", '), ("not valid JSON",)),
    Case("tape json: a dict", "tape-json", _tape_json('{"primary": "A"}'), ("expected a list",)),
    Case("tape json: float fold_label", "tape-json", _tape_json('[{"primary": "ACD", "fold_label": 1.5}]'),
         ("record index 0", "fold_label")),
    Case("tape json: bool fold_label", "tape-json", _tape_json('[{"primary": "ACD", "fold_label": true}]'), ("fold_label",)),
    Case("tape json: residue J", "tape-json", _tape_json('[{"primary": "ACJ", "fold_label": 1}]'), ("'J'",)),
    Case("tape json: not UTF-8", "tape-json", lambda d: (p := d / "x.json", p.write_bytes(b"[\xff]"),
                                                          lambda: td.read_json(p))[-1], ("UTF-8",)),
    # TAPE LMDB
    Case("tape lmdb: data.mdb cut to 8 KB", "tape-lmdb", _lmdb(lambda p: truncate(p / "data.mdb", 8192)),
         ("data.mdb", "truncated", "download")),
    Case("tape lmdb: data.mdb cut to 100 bytes", "tape-lmdb", _lmdb(lambda p: truncate(p / "data.mdb", 100)),
         ("data.mdb", "truncated")),
    Case("tape lmdb: data.mdb cut by one byte", "tape-lmdb",
         _lmdb(lambda p: truncate(p / "data.mdb", (p / "data.mdb").stat().st_size - 1)), ("truncated",)),
    Case("tape lmdb: scrambled pages", "tape-lmdb", _lmdb(lambda p: scramble_pages(p / "data.mdb")), ("remote_homology_valid",)),
    Case("tape lmdb: num_examples 10**15", "tape-lmdb", _lmdb(lambda p: None, num_examples=10**15), ("num_examples says",)),
    Case("tape lmdb: key 10**40", "tape-lmdb", _lmdb(lambda p: None, raw={b"1" * 40: b"x"}), ("unexpected key",)),
    Case("tape lmdb: no data.mdb", "tape-lmdb", _lmdb(lambda p: (p / "data.mdb").unlink()), ("expected data.mdb",)),
    Case("tape lmdb: record is os.system", "tape-lmdb",
         _lmdb(lambda p: None, raw={b"0": pickle.dumps(Reduce(os.system, ("true",)))}), ("key b'0'", "refusing")),
    # the restricted unpickler
    Case("pickle: bytes(200 MB) in 26 bytes", "pickle", _pickle(b"\x80\x04cbuiltins\nbytes\nJ\x00\x00\x00\x0c\x85R."),
         ("fixture.pkl", "refused")),
    Case("pickle: bytearray(10**8)", "pickle", _pickle(lambda: pickle.dumps(Reduce(bytearray, (10**8,)), protocol=2)),
         ("refused",)),
    Case("pickle: BINBYTES8 declaring 200 MB", "pickle", _pickle(b"\x80\x04\x8e" + (2 * 10**8).to_bytes(8, "little") + b"."),
         ("truncated",)),
    Case("pickle: BYTEARRAY8 declaring 200 MB", "pickle",
         _pickle(b"\x80\x05\x96" + (2 * 10**8).to_bytes(8, "little") + b"."), ("truncated",)),
    Case("pickle: BINUNICODE8 declaring 200 MB", "pickle",
         _pickle(b"\x80\x04\x8d" + (2 * 10**8).to_bytes(8, "little") + b"."), ("truncated",)),
    Case("pickle: LONG4 declaring 2 GB", "pickle", _pickle(b"\x80\x02\x8b\xff\xff\xff\x7f."), ("truncated",)),
    Case("pickle: _reconstruct of 10**9 elements", "pickle",
         _pickle(lambda: pickle.dumps(Reduce(MA._reconstruct, (np.ndarray, (10**9,), b"b")), protocol=2)), ("refused",)),
    Case("pickle: object array with a short list (numpy segfault)", "pickle",
         _pickle(lambda: pickle.dumps(Reduce(MA._reconstruct, (np.ndarray, (0,), b"b"),
                                             (1, (10**6,), np.dtype("O"), False, [])), protocol=2)), ("refused",)),
    Case("pickle: numpy.ndarray((10**9,))", "pickle",
         _pickle(lambda: pickle.dumps(Reduce(np.ndarray, ((10**9,),)), protocol=2)), ("refused",)),
    Case("pickle: datetime dtype with a broken state (numpy segfault)", "pickle",
         _pickle(lambda: pickle.dumps(Reduce(np.dtype, ("M8", False, True), (3, "|", None, None, None, -1, -1, 63)),
                                      protocol=2)), ()),
    Case("pickle: eval global", "pickle", _pickle(lambda: pickle.dumps(Reduce(eval, ("1",)))), ("builtins.eval",)),
    Case("pickle: input over the size cap", "pickle", _pickle(pickle.dumps(b"x" * 100), max_bytes=64), ("more than the 64",)),
    Case("pickle: str() of a list of shared strings", "pickle",
         _pickle(lambda: pickle.dumps(Reduce(str, ([("x" * 1000)] * 100,)), protocol=4)), ("refused",)),
    # configuration: YAML files and key=value
    Case("yaml: not UTF-8", "config", _yaml(b"steps: 5\nbody: \xff\xfe\n"), ("run.yaml", "UTF-8", "line 2")),
    Case("yaml: bad syntax", "config", _yaml(b"steps: [5\n"), ("run.yaml", "not valid YAML")),
    Case("yaml: a list at the top", "config", _yaml(b"- 1\n- 2\n"), ("run.yaml", "mapping")),
    Case("yaml: unknown field", "config", _yaml(b"stepz: 5\n"), ("stepz",)),
    Case("yaml: alias bomb", "config", _yaml(ALIAS_BOMB), ("run.yaml",)),
    Case("yaml: a directory", "config", lambda d: (d.joinpath("run.yaml").mkdir(),
                                                  lambda: load_yaml(d / "run.yaml"))[-1], ("run.yaml", "directory")),
    Case("yaml: diverge_loss -1", "config", _yaml(b"diverge_loss: -1\n"), ("diverge_loss", "> 0")),
    Case("override: diverge_loss=-1", "config", _override("diverge_loss=-1"), ("diverge_loss", "> 0")),
    Case("override: diverge_loss=nan", "config", _override("diverge_loss=nan"), ("diverge_loss",)),
    Case("override: device=tpu", "config", _override("device=tpu"), ("device", "cuda:N")),
    Case("override: device=cuda:x", "config", _override("device=cuda:x"), ("device",)),
    Case("override: steps=[", "config", _override("steps=["), ("steps=[", "not valid YAML")),
    Case("override: =5", "config", _override("=5"), ("no key",)),
    Case("override: steps=ten", "config", _override("steps=ten"), ("steps", "integer")),
    Case("override: no '='", "config", _override("steps"), ("key=value",)),
    # the command line
    Case("cli: train --data wine.csv (abbreviation)", "cli", _cli("train", "--data", "wine.csv", "--steps", "1"), ("--data",)),
    Case("cli: train --step 1 (abbreviation)", "cli", _cli("train", "--step", "1"), ("--step",)),
    Case("cli: train --device tpu", "cli", _cli("train", "--device", "tpu"), ("device",)),
    Case("cli: train diverge_loss=-1 over a previous run", "cli",
         _cli("train", "--out", "runs/previous", "diverge_loss=-1"), ("diverge_loss",)),
    Case("cli: train --config DIR", "cli", _cli("train", "--config", "runs"), ("directory",)),
    Case("cli: reproduce ../tasks", "cli", _cli("reproduce", "../tasks"), ("unknown table '../tasks'",)),
    Case("cli: reproduce ../../x --dry-run", "cli", _cli("reproduce", "../../x", "--dry-run"), ("unknown table",)),
    Case("cli: reproduce /etc/passwd --dry-run", "cli", _cli("reproduce", "/etc/passwd", "--dry-run"), ("unknown table",)),
    Case("cli: params --token-dim 0", "cli", _cli("params", "--token-dim", "0", "--seq-len", "4", "--classes", "2"),
         ("--token-dim",)),
    Case("cli: params --seq-len -3", "cli", _cli("params", "--token-dim", "4", "--seq-len", "-3", "--classes", "2"),
         ("--seq-len",)),
    Case("cli: data listops --data-dir D task.tokenisation=lra (no files)", "cli",
         _cli("data", "listops", "--data-dir", "nodata", "task.tokenisation=lra"), ("nodata",)),
    Case("cli: data listops --data-dir D task.x=1", "cli",
         _cli("data", "listops", "--data-dir", "d", "task.x=1", setup=lambda d: write_listops(d / "d" / "listops")),
         ("'x'",)),
    Case("cli: data listops with a wrong Target", "cli",
         _cli("data", "listops", "--data-dir", "d",
              setup=lambda d: write_listops(d / "d" / "listops", b"Source\tTarget\n[MAX 4 3 ]\t3\n")),
         ("basic_train.tsv: line 2",)),
    Case("cli: data cifar10 with an empty batch", "cli",
         _cli("data", "cifar10", "--data-dir", "d",
              setup=lambda d: write_cifar(d / "d", cifar_batch(np.zeros((0, 3072), np.uint8), []))), ("holds no images",)),
    Case("cli: data mnist with an empty file", "cli",
         _cli("data", "mnist", "--data-dir", "d", setup=lambda d: write_mnist(d / "d", images=b"")), ("truncated",)),
    Case("cli: data remote-homology, train LMDB cut (subprocess)", "cli",
         lambda d: (truncate(write_tape(d / "d") / "remote_homology_train.lmdb" / "data.mdb", 12288),
                    ["data", "remote-homology", "--data-dir", "d"])[-1],
         ("remote_homology_train.lmdb/data.mdb", "truncated"), process=True),
    Case("cli: data remote-homology, train LMDB scrambled (subprocess)", "cli",
         lambda d: (scramble_pages(write_tape(d / "d") / "remote_homology_train.lmdb" / "data.mdb"),
                    ["data", "remote-homology", "--data-dir", "d"])[-1],
         ("remote_homology_train.lmdb",), process=True),
]


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def classify(case: Case, folder: Path) -> tuple[str, str]:
    """``(outcome, message)`` of one case, run with ``folder`` as the working directory."""
    previous = folder / "runs" / "previous"
    previous.mkdir(parents=True)
    (previous / "summary.json").write_text(json.dumps({"val_accuracy": 1.0}))
    act = case.make(folder)
    before = snapshot(folder)
    if case.process:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.run([sys.executable, "-m", "fpt", *act], cwd=folder, capture_output=True, text=True,
                              env=env, timeout=300, check=False)
        rc, message = proc.returncode, proc.stderr
        if rc < 0 or "Traceback" in message:
            return "traceback", f"exit {rc}: {message[-300:]}"
        outcome = "silent" if rc == 0 else "clear"
    else:
        try:
            result = act()
        except USER_ERRORS as exc:
            rc, message, outcome = 2, str(exc), "clear"
        except BaseException as exc:  # noqa: BLE001 (the point is to catch everything)
            return "traceback", f"{type(exc).__name__}: {exc}"[:300]
        else:
            if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], int):  # cli()
                rc, message = result
                if "Traceback" in message:
                    return "traceback", message[-300:]
                outcome = "silent" if rc == 0 else "clear"
            else:
                rc, message, outcome = 0, f"accepted: {result!r:.200}", "silent"
    if snapshot(folder) != before:
        return "damaged", message
    if outcome == "clear":
        lines = message.strip().splitlines()
        # argparse's usage errors print the usage first; the error itself is the last line.
        usage = len(lines) > 1 and lines[0].startswith("usage:") and ": error: " in lines[-1]
        if not lines or (len(lines) != 1 and not usage) or not all(e in message for e in case.expect):
            outcome = "unclear"
    return outcome, message


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_a_clear_error(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outcome, message = classify(case, tmp_path)
    TALLY[outcome] += 1
    OUTCOMES[case.name] = outcome
    assert outcome == "clear", f"{case.name}: {outcome}: {message}"


# --- random input -------------------------------------------------------------------------------

FUZZ_SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                         suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
GOOD_PICKLES = [pickle.dumps(o, protocol=p) for p in (2, 3, 5) for o in [
    {b"data": np.arange(24, dtype=np.uint8).reshape(2, 12), b"labels": [1, 2], "o": np.array([1, "x"], dtype=object),
     "s": np.float32(2), "d": np.zeros(1, [("a", "i4"), ("b", "f8")]), "t": np.array(["2020-01-01"], "M8[D]"),
     "set": {1}, "c": 1j, "ba": bytearray(b"ab")}]]


@FUZZ_SETTINGS
@given(base=st.sampled_from(GOOD_PICKLES), edits=st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 255), st.sampled_from(["set", "delete", "insert"])), min_size=1, max_size=4))
def test_mutated_pickles_load_or_fail_clearly(base, edits):
    data = bytearray(base)
    for where, byte, how in edits:
        at = min(int(where * len(data)), len(data) - 1)
        if how == "set":
            data[at] = byte
        elif how == "delete":
            del data[at]
        else:
            data.insert(at, byte)
    FUZZ["pickle"] += 1
    try:
        safe_loads(bytes(data), "f.pkl")
    except DataError as exc:
        assert str(exc).startswith("f.pkl: ") and "\n" not in str(exc)


@FUZZ_SETTINGS
@given(raw=st.binary(max_size=64), n=st.integers(0, 3), rows=st.integers(0, 3), cols=st.integers(0, 3))
def test_random_idx_files_load_or_fail_clearly(tmp_path, raw, n, rows, cols):
    from fpt.data.image_files import read_idx

    path = tmp_path / "x-idx3-ubyte"
    path.write_bytes((0x803).to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in (n, rows, cols)) + raw)
    FUZZ["idx"] += 1
    try:
        array = read_idx(path, 0x803)
    except DataError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
    else:
        assert array.shape == (n, rows, cols) and array.size == len(raw) > 0


SYMBOL = st.sampled_from([*lo.SYMBOLS, "(", ")", "x", "12"])


@FUZZ_SETTINGS
@given(tokens=st.lists(SYMBOL, max_size=12), target=st.sampled_from(["0", "3", "9", "10", "-1", "a", ""]))
def test_random_listops_lines_are_read_exactly_or_refused(tmp_path, tokens, target):
    path = tmp_path / "basic_train.tsv"
    source = " ".join(tokens)
    path.write_text(f"Source\tTarget\n{source}\t{target}\n")
    FUZZ["listops"] += 1
    try:
        expected = lo.evaluate_source(source)
    except ValueError:
        expected = None
    try:
        _, y = lo.read_split(path)
    except DataError as exc:
        assert f"{path}: line 2" in str(exc) and "\n" not in str(exc)
        assert expected is None or target != str(expected)
    else:
        assert expected is not None and y.tolist() == [expected] and target == str(expected)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 2000) | st.floats(allow_nan=False) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["primary", "fold_label", "id", "x"]), inner, max_size=4), max_leaves=8)


@FUZZ_SETTINGS
@given(data=JSON)
def test_random_tape_json_loads_or_fails_clearly(tmp_path, data):
    path = tmp_path / "remote_homology_valid.json"
    path.write_text(json.dumps(data))
    FUZZ["tape-json"] += 1
    try:
        split = td.read_json(path)
    except DataError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
    else:
        assert all(0 <= y < td.NUM_FOLDS for y in split.fold_label)


FIELDS = [f for f in RunConfig.__dataclass_fields__ if f != "task_options"]


@FUZZ_SETTINGS
@given(key=st.sampled_from([*FIELDS, "task.n_bits", "stepz", ""]), value=st.text(max_size=12))
def test_random_overrides_build_a_config_or_fail_clearly(key, value):
    FUZZ["config"] += 1
    try:
        from_dict(RunConfig, parse_overrides([f"{key}={value}"]), where="command line")
    except ConfigError as exc:
        assert "\n" not in str(exc)


@FUZZ_SETTINGS
@given(parts=st.lists(st.text(max_size=300), min_size=1, max_size=4))
def test_safe_run_name_is_one_component_inside_its_root(tmp_path, parts):
    FUZZ["run-name"] += 1
    name = safe_run_name(*parts)
    assert name and len(name) <= MAX_NAME and name not in (".", "..")
    assert not name.startswith((".", "-")) and not set(name) & set("/\\:\0\n\r\t ")
    root = (tmp_path / "runs").resolve()
    assert (root / name).resolve().parent == root


def test_safe_run_name_examples():
    assert safe_run_name("bit-xor", "minilm", "checkpoint:../..", "20250101-120000") == \
        "bit-xor-minilm-checkpoint_.._..-20250101-120000"
    assert safe_run_name("..") == "run" and safe_run_name("") == "run" and safe_run_name("/") == "_"
    assert safe_run_name("a" * 500) != safe_run_name("a" * 499) and len(safe_run_name("a" * 500)) == MAX_NAME


def test_tally(capsys):
    """The counts of this run (every outcome but ``clear`` is a failure above)."""
    ran = sum(TALLY.values())
    line = (f"input fault cases: {ran} run of {len(CASES)}; clear errors {TALLY['clear']}, unclear {TALLY['unclear']}, "
            f"tracebacks {TALLY['traceback']}, silent results {TALLY['silent']}, damaged {TALLY['damaged']}; "
            f"random examples: {dict(FUZZ)}")
    with capsys.disabled():
        print("\n" + line)
    if ran == len(CASES):
        assert TALLY["clear"] == len(CASES), line



def test_default_run_directory_stays_under_runs(tmp_path, monkeypatch):
    """`--init checkpoint:../..` must not make the default run name escape runs/."""
    seen = {}

    def fake_fit(exp, out, resume, progress, **_):
        seen["out"] = Path(out)
        raise KeyboardInterrupt  # stop here: the name is what this test is about

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("fpt.pipeline.build", lambda config, **_: None)
    monkeypatch.setattr("fpt.train.fit", fake_fit)
    assert main(["train", "--init", "checkpoint:../..", "--steps", "1", "--quiet"]) == 130
    out = (tmp_path / seen["out"]).resolve()
    assert out.parent == (tmp_path / "runs").resolve() and ".." not in seen["out"].parts
