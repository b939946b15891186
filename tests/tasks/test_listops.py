"""ListOps: generator against LRA's spec, the TSV format, the reader's errors, both tokenisations."""

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from fpt.cli import main
from fpt.data import listops as lo
from fpt.errors import DataError
from fpt.tasks import build_task
from fpt.tasks.base import DataSource, task_defaults

SMALL = {"min_len": 20, "max_len": 120}  # a narrow window keeps generation fast
EXAMPLE = "( ( ( ( [MIN 8 ) 2 ) ( ( ( [MIN 8 ) 6 ) ] ) ) ] )"  # SPEC 2b's sample of LRA's print format


def parse(source: str) -> list:
    """The tree as nested lists [op, arg, ...] (test helper, independent of the evaluator)."""
    stack: list[list] = [[]]
    for tok in source.split():
        if tok in lo.OPERATORS:
            stack.append([tok])
        elif tok == lo.END:
            node = stack.pop()
            stack[-1].append(node)
        elif tok not in ("(", ")"):
            stack[-1].append(int(tok))
    (tree,) = stack[0]
    return tree


def nodes(tree, depth: int = 1):
    yield tree, depth
    if isinstance(tree, list):
        for child in tree[1:]:
            yield from nodes(child, depth + 1)


@pytest.fixture(scope="module")
def default_window() -> list[tuple[str, int]]:
    return lo.generate({"train": 300}, seed=0)["train"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    lo.generate_files(root / "listops", {"train": 60, "val": 20, "test": 20}, seed=3, **SMALL)
    return root


# --- semantics and print format ----------------------------------------------------------

def test_operators_follow_lra():
    assert lo.apply("[MED", [3, 6]) == 4 and lo.apply("[MED", [6, 3, 9]) == 6
    assert lo.apply("[SM", [7, 8, 9]) == 4 and lo.apply("[MIN", [4, 2]) == 2 and lo.apply("[MAX", [4, 2]) == 4
    rng = np.random.default_rng(0)
    for _ in range(300):
        args = rng.integers(0, 10, rng.integers(2, 11)).tolist()
        assert lo.apply("[MED", args) == int(np.median(args))
        assert lo.apply("[SM", args) == np.sum(args) % 10


def test_print_format_and_evaluator():
    assert lo.to_source("[MIN 8 2 [MIN 8 6 ] ]") == EXAMPLE
    assert lo.to_source(EXAMPLE, parens=False) == "[MIN 8 2 [MIN 8 6 ] ]"
    assert lo.evaluate_source(EXAMPLE) == 2
    assert lo.evaluate_source("[MAX 4 3 [MIN 2 3 ] 1 0 ]") == 4
    assert lo.evaluate_source("[SM 9 [MED 3 6 ] ]") == 3
    for bad in ("[MAX 4 3", "4 ]", "[MAX ]", "[MAX 4 ] 3", "[FOO 1 ]", ""):
        with pytest.raises(ValueError):
            lo.evaluate_source(bad)


# --- generator ---------------------------------------------------------------------------

def test_generator_matches_the_spec(default_window):
    sources = [s for s, _ in default_window]
    assert len(set(sources)) == len(sources) == 300
    lengths = np.array([len(lo.encode_source(s)) for s in sources])
    assert lengths.min() > 500 and lengths.max() < 2000
    for source, target in default_window:
        tree = parse(source)
        assert lo.to_source(lo.to_source(source, parens=False)) == source  # exactly LRA's binarised print
        assert lo.evaluate_source(source) == target
        for node, depth in nodes(tree):
            assert depth <= 10
            if isinstance(node, list):
                assert depth < 10 and 2 <= len(node) - 1 <= 10
    labels = np.bincount([t for _, t in default_window], minlength=10) / 300
    assert labels.min() > 0.01 and labels.max() < 0.3  # LRA's is skewed towards 0 and 9, never degenerate
    # SPEC 2b: about 88% are longer than 512 once ']' is dropped (the paper's tokenisation)
    paper = np.array([int((lo.encode_source(s) != lo.SYMBOLS.index("]")).sum()) for s in sources])
    assert 0.8 < (paper > 512).mean() < 0.95


def test_generator_options_and_determinism():
    a = lo.generate({"train": 30, "val": 10}, seed=1, **SMALL)
    assert a == lo.generate({"train": 30, "val": 10}, seed=1, **SMALL)
    assert a != lo.generate({"train": 30, "val": 10}, seed=2, **SMALL)
    assert not {s for s, _ in a["train"]} & {s for s, _ in a["val"]}
    shallow = lo.generate({"train": 50}, seed=0, min_len=6, max_len=60, max_depth=3)["train"]
    assert max(d for s, _ in shallow for _, d in nodes(parse(s))) <= 3
    with pytest.raises(ValueError, match="no new example"):
        lo.generate({"train": 5000}, seed=0, min_len=3, max_len=5, patience=20_000)  # only 400 such trees exist
    with pytest.raises(ValueError, match="min_len"):
        lo.generate({"train": 1}, min_len=10, max_len=11)


def test_files_are_lra_tsv(data_dir):
    path = data_dir / "listops" / "basic_train.tsv"
    raw = path.read_bytes()
    lines = raw.split(b"\r\n")
    assert lines[0] == b"Source\tTarget" and lines[-1] == b"" and len(lines) == 62
    assert raw.count(b"\n") == raw.count(b"\r\n")
    rows = list(lo.read_rows(path))
    assert len(rows) == 60 and rows[0][0] == f"{path}: line 2"
    for _, source, target in rows:
        assert source.startswith("( ") and source.endswith(" ] )")
        assert lo.evaluate_source(source) == target


def test_lf_files_read_like_crlf(data_dir, tmp_path):
    crlf = data_dir / "listops" / "basic_val.tsv"
    lf = tmp_path / "basic_val.tsv"
    lf.write_bytes(crlf.read_bytes().replace(b"\r\n", b"\n"))
    a, b = lo.read_split(crlf), lo.read_split(lf)
    assert all(np.array_equal(x, y) for x, y in zip(a[0], b[0], strict=True)) and np.array_equal(a[1], b[1])


# --- reader errors -----------------------------------------------------------------------

GOOD = "( ( [SM 3 ) ] )"


@pytest.mark.parametrize("body, line, message", [
    (b"Source,Target\r\n", 1, "header"),
    (b"", None, "empty file"),
    (f"Source\tTarget\r\n{GOOD}\t3\r\n{GOOD}\r\n".encode(), 3, "1 tab-separated field"),
    (f"Source\tTarget\r\n{GOOD}\t3\t3\r\n".encode(), 2, "3 tab-separated field"),
    (b"Source\tTarget\r\n\r\n", 2, "1 tab-separated field"),
    (f"Source\tTarget\r\n{GOOD}\tx\r\n".encode(), 2, "not a digit"),
    (f"Source\tTarget\r\n{GOOD}\t10\r\n".encode(), 2, "outside 0-9"),
    (f"Source\tTarget\r\n{GOOD}\t-1\n".encode(), 2, "outside 0-9"),
    (f"Source\tTarget\n{GOOD}\t3\n[FIRST 3 ]\t3\n".encode(), 3, "unknown symbol '[FIRST'"),
    (b"Source\tTarget\n[SM 3 ]\t3\n[SM 3 12 ]\t3\n", 3, "unknown symbol '12'"),
    (b"Source\tTarget\n[SM 3 ]\t3\n[SM 3\x01 ]\t3\n", 3, "unknown symbol"),
    (b"Source\tTarget\n[SM 3 4\t7\n", 2, "1 operators but 0 closing"),
    (b"Source\tTarget\n( )\t7\n", 2, "empty Source"),
    (b"Source\tTarget\n[SM 3 \xff ]\t7\n", 2, "not UTF-8"),
])
def test_broken_files_name_file_and_line(tmp_path, body, line, message):
    path = tmp_path / "basic_train.tsv"
    path.write_bytes(body)
    with pytest.raises(DataError, match=re.escape(message)) as err:
        lo.read_split(path)
    assert str(path) in str(err.value)
    if line is not None:
        assert f"line {line}:" in str(err.value)


def test_missing_files_say_how_to_get_them(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        lo.read_split(tmp_path / "basic_val.tsv")
    with pytest.raises(DataError, match="fpt listops-generate") as err:
        build_task("listops", {}, 0, DataSource(tmp_path))
    assert "lra_release" in str(err.value)


# --- the task ----------------------------------------------------------------------------

def test_paper_tokenisation(data_dir):
    data = build_task("listops", {"max_len": 40}, 0, DataSource(data_dir))
    assert list(data.eval_sets) == ["val", "test"] and task_defaults("listops").target is None
    assert data.spec.vocab_size == 15 == len(data.info["vocab"]) and data.spec.seq_len == 40
    assert data.spec.num_classes == 10 and data.info["tokenisation"] == "paper"
    assert data.info["read"] == "last real token (lengths)"
    codes, y = lo.read_split(data_dir / "listops" / "basic_val.tsv")
    val = data.eval_sets["val"]
    assert val.x.shape == (20, 40) and torch.equal(val.y[:, 0], torch.from_numpy(y))
    raw = np.array([int((c != lo.SYMBOLS.index("]")).sum()) for c in codes])  # ']' dropped
    assert torch.equal(val.lengths, torch.from_numpy(np.minimum(raw, 40)))
    assert data.info["val_truncated"] == int((raw > 40).sum()) > 0
    assert data.info["truncated_share"]["val"] == pytest.approx((raw > 40).mean(), abs=1e-4)
    assert data.info["raw_lengths"]["val"]["max"] == raw.max()
    vocab = data.info["vocab"]
    first = val.x[0, : val.lengths[0]].tolist()
    symbols = [lo.SYMBOLS[c].lstrip("[") for c in codes[0] if lo.SYMBOLS[c] != "]"]  # MIN ... 0-9 only
    assert [vocab[i] for i in first] == symbols[:40]


def test_lra_tokenisation_keeps_brackets(data_dir):
    data = build_task("listops", {"tokenisation": "lra"}, 0, DataSource(data_dir))
    assert list(data.eval_sets) == ["val", "test"] and (data.val, data.test) == ("val", "test")
    assert data.info["paper_split"] == "test"
    assert data.spec.vocab_size == 16 and data.spec.seq_len == 2000 and data.info["vocab"][0] == "<pad>"
    train = data.train.data
    end, ops = data.info["vocab"].index("]"), [data.info["vocab"].index(o) for o in lo.OPERATORS]
    for x, n in zip(train.x, train.lengths, strict=True):
        real = x[:n]
        assert (real != 0).all() and (x[n:] == 0).all()  # padded on the right with 0
        assert int((real == end).sum()) == int(sum((real == o).sum() for o in ops))
        assert int(real[-1]) == end  # the head reads a real token: the closing bracket
    assert data.info["train_truncated"] == 0 and data.info["truncated_share"]["train"] == 0


def test_n_train_lra_layout_and_generate(data_dir, tmp_path):
    lra = tmp_path / "lra_release" / "listops-1000"
    lra.mkdir(parents=True)
    for split in lo.SPLITS:
        (lra / lo.file_name(split)).write_bytes((data_dir / "listops" / lo.file_name(split)).read_bytes())
    data = build_task("listops", {"n_train": 7}, 0, DataSource(tmp_path / "lra_release"))
    assert len(data.train) == 7 and data.info["files"].endswith("listops-1000")
    with pytest.raises(DataError, match="holds 60 examples; n_train=61"):
        build_task("listops", {"n_train": 61}, 0, DataSource(tmp_path / "lra_release"))
    gen = tmp_path / "gen"
    options = {"generate": True, "n_train": 8, "generate_val": 4, "generate_test": 4, "tokenisation": "lra"}
    data = build_task("listops", options, 0, DataSource(gen))
    assert len(data.train) == 8 and len(data.eval_sets["test"]) == 4
    assert (gen / "listops" / "basic_test.tsv").is_file() and not list(gen.glob("listops/*.part"))


def test_cli_generates_and_refuses_to_overwrite(tmp_path, capsys):
    argv = ["listops-generate", "--out", str(tmp_path), "--train", "5", "--val", "2", "--test", "2",
            "--min-len", "10", "--max-len", "40", "--seed", "4"]
    assert main(argv) == 0
    assert len(list(lo.read_rows(tmp_path / "basic_train.tsv"))) == 5
    assert main(argv) == 2 and "--force" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0


def test_trains_through_a_body(tiny_gpt2_dir, data_dir):
    import fpt

    exp = fpt.build(task="listops", body=tiny_gpt2_dir, init="random", steps=2, batch_size=4, eval_every=2,
                    data_dir=str(data_dir), task_options={"max_len": 64}, device="cpu")
    summary = fpt.fit(exp, progress=False)
    assert summary["steps"] == 2 and 0 <= summary["test_accuracy"] <= 1  # headline: val


def test_generation_with_other_rules_lives_in_its_own_folder(data_dir):
    # data_dir holds an LRA-rule set in listops/: short, shallow generated files must not replace or reuse it
    options = {"generate": True, "n_train": 30, "generate_val": 10, "generate_test": 10, "tokenisation": "lra",
               "generate_min_len": 5, "generate_max_len": 40, "generate_max_depth": 3}
    data = build_task("listops", options, 0, DataSource(data_dir))
    folder = data_dir / "listops-generated-len5-40-depth3"
    assert data.info["files"] == str(folder) and (folder / "basic_train.tsv").is_file()
    assert data.info["generator"] == {"seed": 0, "min_len": 5, "max_len": 40, "max_depth": 3}
    assert data.info["raw_lengths"]["train"]["max"] < 40 and len(data.train) == 30
    with pytest.raises(ValueError, match="generate_min_len"):
        build_task("listops", {**options, "generate_min_len": 40}, 0, DataSource(data_dir))
