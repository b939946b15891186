"""Remote homology: TAPE's LMDB and JSON formats, its vocabulary, length policies, strict and safe reading."""

import json
import os
import pickle
import re
from pathlib import Path

import lmdb
import numpy as np
import pytest
import torch

from fpt.data import tape as td
from fpt.errors import ConfigError, DataError
from fpt.tasks import build_task
from fpt.tasks.base import DataSource, task_defaults

# tape/tokenizers.py IUPAC_VOCAB, copied as data so a change to ours is caught.
TAPE_IUPAC = {"<pad>": 0, "<mask>": 1, "<cls>": 2, "<sep>": 3, "<unk>": 4, "A": 5, "B": 6, "C": 7, "D": 8, "E": 9,
              "F": 10, "G": 11, "H": 12, "I": 13, "K": 14, "L": 15, "M": 16, "N": 17, "O": 18, "P": 19, "Q": 20,
              "R": 21, "S": 22, "T": 23, "U": 24, "V": 25, "W": 26, "X": 27, "Y": 28, "Z": 29}
LETTERS = "ACDEFGHIKLMNPQRSTVWY"
# Residues per split: train has two sequences longer than 12 tokens (16 and 22 with <cls>/<sep>).
LENGTHS = {"train": [5, 3, 14, 8, 20, 7, 9, 4], "valid": [6, 2, 11], "test_fold_holdout": [4, 12],
           "test_superfamily_holdout": [3, 5, 7], "test_family_holdout": [9, 1]}


def make_records(split: str) -> list[dict]:
    """Records shaped as TAPE's: numpy int64 labels and lengths, per-residue numpy arrays."""
    rng = np.random.default_rng(len(split))
    out = []
    for i, n in enumerate(LENGTHS[split]):
        primary = "".join(rng.choice(list(LETTERS), n))
        out.append({"id": f"d{split[:4]}{i}_", "primary": primary, "protein_length": np.int64(n),
                    "class_label": np.int64(rng.integers(7)), "fold_label": np.int64(rng.integers(1195)),
                    "superfamily_label": np.int64(rng.integers(1800)), "family_label": np.int64(rng.integers(3400)),
                    "secondary_structure": rng.integers(0, 3, n).astype(np.int64),
                    "solvent_accessibility": rng.integers(0, 2, n).astype(np.int64),
                    "evolutionary": rng.random((n, 20)).astype(np.float32)})
    out[-1]["fold_label"] = np.int64(1194)  # the largest label is valid
    return out


def numpy1_pickle(obj: object) -> bytes:
    """A pickle as numpy 1 wrote TAPE's files (protocol 3, globals under numpy.core)."""
    return pickle.dumps(obj, protocol=3).replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")


def write_lmdb(path: Path, records: list, num_examples: int | None = None, dumps=numpy1_pickle,
               raw: dict[bytes, bytes] | None = None) -> Path:
    env = lmdb.open(str(path), map_size=1 << 24)
    with env.begin(write=True) as txn:
        txn.put(b"num_examples", pickle.dumps(len(records) if num_examples is None else num_examples))
        for i, record in enumerate(records):
            txn.put(str(i).encode(), dumps(record))
        for key, value in (raw or {}).items():
            txn.put(key, value)
    env.close()
    return path


def plain(record: dict) -> dict:
    return {k: v.tolist() if isinstance(v, np.ndarray | np.generic) else v for k, v in record.items()}


def write_json(path: Path, records: list) -> Path:
    path.write_text(json.dumps([plain(r) for r in records]))
    return path


def write_all(root: Path, fmt: str, dumps=numpy1_pickle) -> Path:
    folder = root / "remote_homology"
    folder.mkdir(parents=True, exist_ok=True)
    for split in td.SPLITS:
        lmdb_name, json_name = td.file_names(split)
        if fmt == "lmdb":
            write_lmdb(folder / lmdb_name, make_records(split), dumps=dumps)
        else:
            write_json(folder / json_name, make_records(split))
    return folder


@pytest.fixture(scope="module", params=["lmdb", "json"])
def root(request, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp(request.param)
    write_all(path, request.param)
    return path


def build(root: Path, **options):
    return build_task("remote-homology", options, seed=0, source=DataSource(root))


# --- vocabulary and encoding ----------------------------------------------------------------

def test_vocabulary_is_tapes():
    assert dict(zip(td.VOCAB, range(len(td.VOCAB)), strict=True)) == TAPE_IUPAC
    assert (td.PAD, td.MASK, td.CLS, td.SEP, td.UNK) == (0, 1, 2, 3, 4)
    ids = td.encode("ACZBOU", "x")
    assert ids.tolist() == [2, 5, 7, 29, 6, 18, 24, 3]


@pytest.mark.parametrize("primary, bad", [("ACJK", "'J'"), ("ACdK", "'d'"), ("AC K", "' '"), ("ACé", "'é'")])
def test_letters_outside_tapes_alphabet_are_errors(primary, bad):
    with pytest.raises(DataError, match=f"where: residue {bad} at position 2"):
        td.encode(primary, "where")


# --- the two file formats -------------------------------------------------------------------

def test_lmdb_and_json_read_the_same(tmp_path):
    records = make_records("train")
    a = td.read_lmdb(write_lmdb(tmp_path / "a.lmdb", records))
    b = td.read_lmdb(write_lmdb(tmp_path / "b.lmdb", records, dumps=lambda r: pickle.dumps(r, protocol=5)))
    c = td.read_json(write_json(tmp_path / "c.json", records))
    for split in (a, b, c):
        assert split.ids == [r["id"] for r in records]
        assert [t.tolist() for t in split.tokens] == [td.encode(r["primary"], "").tolist() for r in records]
        assert split.fold_label.dtype == np.int64 and split.fold_label.tolist() == [int(r["fold_label"]) for r in records]


def test_lmdb_records_come_in_index_order_not_key_order(tmp_path):
    records = [{"primary": "A" * (i + 1), "fold_label": i} for i in range(12)]  # keys sort "0", "1", "10", "11", "2"
    split = td.read_lmdb(write_lmdb(tmp_path / "x.lmdb", records))
    assert [len(t) - 2 for t in split.tokens] == list(range(1, 13))
    assert split.fold_label.tolist() == list(range(12))


def test_task_reads_both_formats_identically(tmp_path):
    a, b = build(write_all(tmp_path / "l", "lmdb").parent), build(write_all(tmp_path / "j", "json").parent)
    assert a.spec == b.spec and list(a.eval_sets) == list(b.eval_sets)
    for name in a.eval_sets:
        for ta, tb in zip(a.eval_sets[name], b.eval_sets[name], strict=True):
            assert torch.equal(ta, tb)
    assert torch.equal(a.train.data.x, b.train.data.x) and torch.equal(a.train.data.y, b.train.data.y)
    assert {k: v for k, v in a.info.items() if k != "files"} == {k: v for k, v in b.info.items() if k != "files"}


def test_lmdb_preferred_when_both_are_present(tmp_path):
    folder = write_all(tmp_path, "lmdb")
    write_json(folder / td.file_names("valid")[1], make_records("valid"))
    assert td.find_split(folder, "valid") == folder / "remote_homology_valid.lmdb"


# --- the task -------------------------------------------------------------------------------

def test_task_shape_tokens_and_splits(root):
    data = build(root)
    assert (data.spec.vocab_size, data.spec.num_classes, data.spec.num_outputs) == (30, 1195, 1)
    assert data.spec.seq_len == max(max(v) for v in LENGTHS.values()) + 2  # the longest sequence, not 1024
    assert list(data.eval_sets) == ["valid", "test_fold_holdout", "test_superfamily_holdout", "test_family_holdout"]
    assert (data.val, data.test, data.info["paper_split"]) == ("valid", "test_fold_holdout", "valid")
    assert data.reported == ["test_fold_holdout", "test_superfamily_holdout", "test_family_holdout"]
    assert task_defaults("remote-homology").lr == 1e-4 and data.info["tokenisation"] == "tape"
    for name, batch in {"train": data.train.data, **data.eval_sets}.items():
        records = make_records(name)
        assert len(batch) == len(records) and batch.x.dtype == torch.int32 and batch.y.shape == (len(records), 1)
        assert batch.lengths.tolist() == [n + 2 for n in LENGTHS[name]]
        assert batch.y[:, 0].tolist() == [int(r["fold_label"]) for r in records]
        for row, n, r in zip(batch.x, batch.lengths, records, strict=True):
            assert row[0] == td.CLS and row[n - 1] == td.SEP and (row[n:] == td.PAD).all()
            assert row[1 : n - 1].tolist() == [TAPE_IUPAC[c] for c in r["primary"]]
    assert data.info["raw_lengths"]["train"] == {"min": 5, "median": 9.5, "max": 22}
    assert data.info["train_dropped"] == 0 and data.info["kept_share"]["valid"] == 1.0


def test_drop_leaves_out_long_sequences_everywhere(root):
    data = build(root, max_len=12)  # 12 tokens = 10 residues
    assert data.info["train_dropped"] == 2 and data.info["train_truncated"] == 0
    assert data.info["valid_dropped"] == 1 and data.info["test_fold_holdout_dropped"] == 1
    assert data.info["test_family_holdout_dropped"] == 0
    assert data.info["kept_share"]["train"] == 0.75 and data.info["accuracy_over"] == "kept sequences"
    assert len(data.train.data) == 6 and data.train.data.lengths.max() <= 12
    assert len(data.eval_sets["valid"]) == 2 and data.spec.seq_len == 11  # valid's 9 residues + 2
    assert data.info["raw_lengths"]["train"]["max"] == 22  # raw stats describe the whole file


def test_truncate_cuts_and_ends_in_sep(root):
    data = build(root, max_len=12, length_policy="truncate")
    assert data.info["train_truncated"] == 2 and data.info["train_dropped"] == 0
    assert data.info["valid_truncated"] == 1 and data.spec.seq_len == 12
    batch, records = data.train.data, make_records("train")
    assert len(batch) == len(records) and batch.lengths.tolist() == [min(n + 2, 12) for n in LENGTHS["train"]]
    long = LENGTHS["train"].index(20)
    row = batch.x[long]
    assert row[0] == td.CLS and row[11] == td.SEP
    assert row[1:11].tolist() == [TAPE_IUPAC[c] for c in records[long]["primary"][:10]]


def test_n_train_is_a_fixed_subset(root):
    full = build(root)
    a, b = build(root, n_train=3), build_task("remote-homology", {"n_train": 3}, seed=7, source=DataSource(root))
    assert len(a.train.data) == 3 and torch.equal(a.train.data.x, b.train.data.x)
    assert a.info["n_train"] == 3 and len(a.eval_sets["valid"]) == len(full.eval_sets["valid"])
    rows = {tuple(r.tolist()) for r in full.train.data.x[:, : a.spec.seq_len]}
    assert all(tuple(r.tolist()) in rows for r in a.train.data.x)
    with pytest.raises(DataError, match="n_train=50"):
        build(root, n_train=50)


def test_everything_dropped_is_an_error(root):
    with pytest.raises(DataError, match=r"remote_homology_train\.(lmdb|json): all 8 sequences are longer"):
        build(root, max_len=3)


@pytest.mark.parametrize("options", [{"length_policy": "cut"}, {"max_len": 2}, {"n_train": 0}, {"splits": ["valid"]}])
def test_bad_options(root, options):
    with pytest.raises(ConfigError):
        build(root, **options)


def test_missing_split_names_files_and_source(tmp_path):
    folder = tmp_path / "remote_homology"
    folder.mkdir()
    for split in td.SPLITS[:-1]:
        write_json(folder / td.file_names(split)[1], make_records(split))
    with pytest.raises(DataError) as err:
        build(tmp_path)
    msg = str(err.value)
    assert "test_family_holdout" in msg and "remote_homology_test_family_holdout.lmdb" in msg
    assert "remote_homology_test_family_holdout.json" in msg and td.LMDB_URL in msg
    with pytest.raises(DataError, match=r"remote_homology_train\.lmdb.*tape/remote_homology"):
        build(tmp_path / "elsewhere")


def test_official_code_layout_is_found(tmp_path):
    write_all(tmp_path / "tape", "json")
    assert build(tmp_path).info["files"]["train"].endswith("tape/remote_homology/remote_homology_train.json")


# --- broken input ---------------------------------------------------------------------------

def broken(**change) -> list[dict]:
    records = make_records("valid")
    records[1] = {**{k: v for k, v in records[1].items() if k not in change or change[k] is not None},
                  **{k: v for k, v in change.items() if v is not None}}
    return records


CASES = {
    "no primary": (dict(primary=None), r"has no 'primary'"),
    "no fold_label": (dict(fold_label=None), r"has no 'fold_label'"),
    "label too big": (dict(fold_label=np.int64(1195)), r"fold_label 1195 is outside 0\.\.1194"),
    "label negative": (dict(fold_label=-1), r"fold_label -1 is outside"),
    "label float": (dict(fold_label=3.0), r"fold_label is 3\.0"),
    "bad residue": (dict(primary="ACJ"), r"\(id 'dvali1_'\): residue 'J' at position 2"),
    "empty primary": (dict(primary=""), r"primary is ''"),
}


@pytest.mark.parametrize("case", CASES)
def test_broken_records_name_file_and_key(tmp_path, case):
    change, pattern = CASES[case]
    records = broken(**change)
    lmdb_path = write_lmdb(tmp_path / "remote_homology_valid.lmdb", records)
    with pytest.raises(DataError, match=re.escape(f"{lmdb_path}: key b'1'") + ".*" + pattern):
        td.read_lmdb(lmdb_path)
    json_path = write_json(tmp_path / "remote_homology_valid.json", records)
    with pytest.raises(DataError, match=re.escape(f"{json_path}: record index 1") + ".*" + pattern):
        td.read_json(json_path)


@pytest.mark.parametrize("num_examples, pattern", [(4, r"says 4 but 3 records.*missing 1 record key\(s\): b'3'"),
                                                   (2, r"says 2 but 3 records.*1 key\(s\) beyond it: b'2'")])
def test_num_examples_must_match_records(tmp_path, num_examples, pattern):
    path = write_lmdb(tmp_path / "v.lmdb", make_records("valid"), num_examples=num_examples)
    with pytest.raises(DataError, match=re.escape(str(path)) + ".*" + pattern):
        td.read_lmdb(path)


def test_lmdb_layout_errors(tmp_path):
    path = write_lmdb(tmp_path / "odd.lmdb", make_records("valid"), raw={b"extra": b"x"})
    with pytest.raises(DataError, match=re.escape(str(path)) + r": unexpected key b'extra'"):
        td.read_lmdb(path)
    path = tmp_path / "nonum.lmdb"
    env = lmdb.open(str(path))
    with env.begin(write=True) as txn:
        txn.put(b"0", pickle.dumps({"primary": "A", "fold_label": 0}))
    env.close()
    with pytest.raises(DataError, match=re.escape(str(path)) + r": no key b'num_examples'"):
        td.read_lmdb(path)
    (tmp_path / "empty.lmdb").mkdir()
    with pytest.raises(DataError, match=r"empty\.lmdb: not a readable LMDB"):
        td.read_lmdb(tmp_path / "empty.lmdb")
    path = write_lmdb(tmp_path / "cut.lmdb", [], raw={b"0": numpy1_pickle(make_records("valid")[0])[:-20]})
    with pytest.raises(DataError, match=re.escape(f"{path}: key b'0': not a readable pickle")):
        td.read_lmdb(path)


class Exploit:
    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


class Builtin:
    def __reduce__(self):
        return eval, ("1 + 1",)


@pytest.mark.parametrize("payload", ["system", "eval", "class"])
def test_malicious_pickles_are_refused(tmp_path, payload):
    marker = tmp_path / "pwned"
    evil = {"system": Exploit(f"touch {marker}"), "eval": Builtin(), "class": Path("x")}[payload]
    records = make_records("valid")
    records[2] = {**records[2], "primary": evil}
    path = write_lmdb(tmp_path / "evil.lmdb", records, dumps=pickle.dumps)
    with pytest.raises(DataError, match=re.escape(f"{path}: key b'2': the pickle asks for ") + r".*refusing"):
        td.read_lmdb(path)
    assert not marker.exists()
    with pytest.raises(DataError, match="num_examples"):  # the count is read the same way
        td.read_lmdb(write_lmdb(tmp_path / "evil2.lmdb", [], raw={b"num_examples": pickle.dumps(evil)}))
    assert not marker.exists()


def test_json_layout_errors(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"primary": "A"}')
    with pytest.raises(DataError, match=re.escape(f"{path}: holds a JSON dict; expected a list")):
        td.read_json(path)
    path.write_text('[{"primary": "A", "fold_label": 0}, "ACD"]')
    with pytest.raises(DataError, match=re.escape(f"{path}: record index 1: record is a str")):
        td.read_json(path)
    path.write_text('[{"primary": "A", ')
    with pytest.raises(DataError, match=re.escape(f"{path}: not valid JSON (line 1")):
        td.read_json(path)
