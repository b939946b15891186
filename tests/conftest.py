"""Shared fixtures: tiny random bodies saved as local model directories (no network)."""

from __future__ import annotations

import os
from pathlib import Path

# Under pytest-xdist (-n 2 in pyproject's addopts) each worker gets one thread: two workers with two threads each
# would oversubscribe CI's 2 cores. Set before torch is imported, and inherited by the commands tests start.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
# precision auto as on a CPU without native bf16: the same figures on every processor (tests that are
# about bf16 patch fpt.pipeline.cpu_has_native_bf16 themselves)
os.environ["FPT_NATIVE_BF16"] = "0"
torch.set_num_threads(1 if os.environ.get("PYTEST_XDIST_WORKER") else min(2, torch.get_num_threads()))


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> str:
    from transformers import GPT2Config, GPT2Model

    path = tmp_path_factory.mktemp("tiny-gpt2")
    torch.manual_seed(0)
    GPT2Model(GPT2Config(n_layer=2, n_embd=32, n_head=4, n_positions=128, vocab_size=50)).save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> str:
    from transformers import BertConfig, BertModel

    path = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=128, vocab_size=50)
    BertModel(config).save_pretrained(path)
    return str(path)


@pytest.fixture(params=["gpt2", "bert"])
def tiny_body_dir(request, tiny_gpt2_dir, tiny_bert_dir) -> str:
    return {"gpt2": tiny_gpt2_dir, "bert": tiny_bert_dir}[request.param]


# --- tiny trained runs, trained once per session, that many tests read (never write to them) ---------

def _fit(out, **fields):
    import fpt

    exp = fpt.build(init="random", batch_size=4, eval_every=3, steps=6, device="cpu", **fields)
    fpt.fit(exp, out=out, progress=False)
    return out


@pytest.fixture(scope="session")
def xor_run(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """bit-xor on a causal 2-block, 4-head body."""
    return _fit(tmp_path_factory.mktemp("runs") / "xor", task="bit-xor", body=tiny_gpt2_dir,
                task_options={"eval_size": 32})


@pytest.fixture(scope="session")
def memory_run(tiny_bert_dir, tmp_path_factory) -> Path:
    """bit-memory (3 strings of 20 bits, 10-bit tokens: 8 tokens) on a bidirectional body."""
    return _fit(tmp_path_factory.mktemp("runs") / "memory", task="bit-memory", body=tiny_bert_dir,
                task_options={"n_strings": 3, "n_bits": 20, "token_dim": 10, "eval_size": 16})


# --- the ragged-series closed-form run (tests/test_closed_form_data.series_run_as_reported) ------------

# The flags of the run that the hop, gains and series-reading tests each read: --cf-members 4 on a random tiny BERT
# two members: one of each reading under cf_series_norm=choose (the odd member reads its windows twice), the gains
# 0.25 and 4 both drawn; each member is a body the export traces twice (model.onnx, model_raw.onnx), ~5 CPU-s a member
RAGGED_SERIES_FLAGS = ("--init", "random", "--fit", "closed-form", "--cf-members", "2", "--device", "cpu", "--quiet",
                       "--baselines", "none")


@pytest.fixture(scope="session")
def ragged_series_run(tiny_bert_dir, tmp_path_factory) -> dict:
    """``series_run_as_reported`` with RAGGED_SERIES_FLAGS, trained once per session: {"root": the folder of
    r_TRAIN.ts, r_TEST.ts and run/, "run": run/, "config": its config.yaml}. Four tests read it (never write)."""
    from tests.test_closed_form_data import series_run_as_reported

    root = tmp_path_factory.mktemp("ragged-series")
    config = series_run_as_reported(root, tiny_bert_dir, list(RAGGED_SERIES_FLAGS))
    return {"root": root, "run": root / "run", "config": config}


@pytest.fixture(scope="session")
def ragged_series_export(ragged_series_run) -> Path:
    """``ragged_series_run`` exported with its ONNX graph, once per session (the export traces the model: ~10 s)."""
    import fpt

    pytest.importorskip("onnxscript")  # fpt[export]
    return fpt.Run(ragged_series_run["run"]).export(ragged_series_run["root"] / "export", onnx=True)


# --- the README's paper-task example, run once per session ----------------------------------------

@pytest.fixture(scope="session")
def readme_paper_block(tmp_path_factory) -> dict:
    """The namespace of the README's second python block, executed as written (in an empty folder): the pretrained
    MiniLM trained on bit-xor to its target. tests/test_readme.py checks what the block computes, and
    tests/test_e2e.py reads its run as Table 6's pretrained side, the same config it would otherwise train again."""
    import re

    readme = Path(__file__).resolve().parents[1] / "README.md"
    _, paper_task = re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("readme-paper-task"))  # the block may write runs/ (out="runs/xor")
    try:
        namespace: dict = {}
        exec(compile(paper_task, str(readme), "exec"), namespace)
    finally:
        os.chdir(cwd)
    return namespace


# --- small tables for --data runs ----------------------------------------------------------------

class TinyTables:
    """Small seeded CSV tables under one folder, as fpt train --data reads them (the same bytes every time)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def classification(self, name: str, n: int = 60, labels: tuple[str, ...] = ("a", "b"), kinds: str | None = None,
                       shift: float = 2.0) -> Path:
        """x1,x2[,kind],label: row i of class i % len(labels), whose x1 is N(0, 1) + shift * class (and kind, a
        text column, the class's letter of ``kinds``); x2 is noise."""
        rng = np.random.default_rng(0)
        rows = ["x1,x2," + ("kind," if kinds else "") + "label"]
        for i in range(n):
            c = i % len(labels)
            rows.append(f"{rng.normal() + shift * c:.3f},{rng.normal():.3f}," + (f"{kinds[c]}," if kinds else "")
                        + labels[c])
        path = self.root / name
        path.write_text("\n".join(rows) + "\n")
        return path

    def regression(self, name: str, n: int = 80) -> Path:
        """a,b,c,price: price = 100 + 30 a - 10 b exactly, c is noise."""
        rng = np.random.default_rng(0)
        x = rng.normal(size=(n, 3))
        y = 100 + 30 * x[:, 0] - 10 * x[:, 1]
        path = self.root / name
        path.write_text("a,b,c,price\n" + "".join(f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{v:.3f}\n"
                                                   for r, v in zip(x, y, strict=True)))
        return path


@pytest.fixture
def tiny_tables(tmp_path) -> TinyTables:
    return TinyTables(tmp_path)


def pytest_collection_modifyitems(config, items) -> None:
    """Under pytest-xdist, the slow end-to-end tests (a minute or more each on CI) lead the workers' shares of the
    collection, the tests of a SHARED fixture the first worker's, the other slow ones the other workers': a long
    test started early on each core leaves short ones to share at the end (tests/worker_order.py says how
    worksteal hands them out)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from worker_order import worker_order

        def shared(item) -> int | None:
            names = getattr(item, "fixturenames", ())
            return next((i for i, name in enumerate(SHARED) if name in names), None)

        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        items[:] = worker_order(items, workers, shared, lambda item: item.get_closest_marker("slow") is not None)


# Fixtures that a slow test shares with another test (each trains or starts something the tests only read): here,
# in tests/experiments/test_sweep.py (local_sweep and ray_instance, a local Ray, module-scoped) and in
# tests/test_distributed.py (torchrun_run, module-scoped).
SHARED = ("readme_paper_block", "local_sweep", "ray_instance", "torchrun_run")
