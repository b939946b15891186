"""fpt export: a self-contained directory that fpt.load reads offline in a fresh process, with the run's logits.

The body of these runs is a tiny saved model directory that is deleted after exporting: the export
must not need it (nor the hub, nor a cache). ONNX (``--onnx``) must agree with PyTorch within 1e-4.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import fpt
from fpt.cli import main
from fpt.errors import CheckpointError
from fpt.run import Run


def _table(path: Path, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = ["x1,x2,kind,label"]
    for i in range(n):
        rows.append(f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{'pq'[i % 2]},{['low', 'high'][i % 2]}")
    path.write_text("\n".join(rows) + "\n")


def _fresh_python(code: str, cwd: Path) -> str:
    """Run ``code`` in a new interpreter, offline; returns its stdout (fails the test with its stderr)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def tabular(tiny_bert_dir, tmp_path_factory) -> dict:
    """A trained --data run whose body directory is gone once it is exported."""
    root = tmp_path_factory.mktemp("export")
    body = root / "body"
    shutil.copytree(tiny_bert_dir, body)
    (root / "data").mkdir()
    _table(root / "data" / "train.csv", 60, 0)
    _table(root / "data" / "test.csv", 30, 1)
    exp = fpt.build(data=str(root / "data"), target="label", body=str(body), init="random", steps=6, eval_every=2,
                    batch_size=8, device="cpu")
    fpt.fit(exp, out=root / "run", progress=False)  # leaves the model at the selected (best/) parameters
    with torch.inference_mode():
        logits = exp.forward(exp.data.eval_sets["test"].x).float().numpy()
    # The run read back here, not in a new interpreter (seconds of imports): fpt.load builds a new model from the run
    # directory and the body's (fpt keeps no model between loads); the export below is the one read in a fresh process.
    run_logits = fpt.load(root / "run").logits(str(root / "data" / "test.csv"))
    Run(root / "run").export(root / "export")
    shutil.rmtree(body)  # from here on only the export holds the body's weights
    return {"root": root, "logits": logits, "exp": exp, "run_logits": run_logits}


def test_export_reloads_offline_in_a_fresh_process_with_the_runs_logits(tabular):
    root = tabular["root"]
    assert not (root / "body").exists()
    _fresh_python(f"""
        import numpy as np, fpt
        model = fpt.load({str(root / 'export')!r})
        np.save("export_logits.npy", model.logits({str(root / 'data' / 'test.csv')!r}))
        np.save("export_labels.npy", model.predict({str(root / 'data' / 'test.csv')!r}).astype(str))
        np.save("export_proba.npy", model.predict_proba({str(root / 'data' / 'test.csv')!r}))
    """, root)
    exported = np.load(root / "export_logits.npy")
    assert exported.shape == tabular["logits"].shape == (30, 1, 2)
    assert np.abs(exported - tabular["logits"]).max() <= 1e-5
    assert np.abs(tabular["run_logits"] - tabular["logits"]).max() <= 1e-5  # fpt.load(RUN_DIR) too
    classes = tabular["exp"].data.info["classes"]["label"]
    assert list(np.load(root / "export_labels.npy")) == [classes[i] for i in tabular["logits"][:, 0].argmax(1)]
    assert np.allclose(np.load(root / "export_proba.npy"), torch.softmax(torch.from_numpy(tabular["logits"][:, 0]), -1),
                       atol=1e-5)


def test_export_directory_follows_hugging_face_conventions(tabular):
    from safetensors import safe_open

    root = tabular["root"]
    out = root / "export"
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "body", "config.json", "fpt_model.safetensors"]
    doc = json.loads((out / "config.json").read_text())
    exp = tabular["exp"]
    # local paths by their names alone (tests/test_export_portable.py): the body directory as ./NAME, the data's name
    assert doc["model_type"] == "fpt" and doc["run_config"] == {**exp.config.to_dict(), "body": "./body", "data": "data"}
    assert doc["body"]["id"] == "./body" and doc["body"]["fingerprint"] == exp.body_fingerprint
    assert doc["body"]["hf_configs"]["./body"]["model_type"] == "bert"
    assert doc["input"]["spec"]["seq_len"] == 3 and doc["input"]["schema"]["features"][2]["categories"] == ["p", "q"]
    assert doc["preprocessing"] == json.loads((root / "run" / "data.json").read_text())
    assert doc["outputs"] == {"names": ["label"], "classes": [["high", "low"]]}
    summary = json.loads((root / "run" / "summary.json").read_text())
    assert doc["metrics"]["test_accuracy"] == summary["test_accuracy"]
    assert doc["checkpoint"]["slot"] == "best" and doc["checkpoint"]["step"] == summary["selected_step"]
    with safe_open(out / "fpt_model.safetensors", "pt") as f:
        names = set(f.keys())
    state = exp.model.state_dict()
    assert names == set(state)  # every tensor: the frozen body's as well as the trained ones
    assert any(n.startswith("body.blocks.") for n in names) and "head.weight" in names
    card = (out / "README.md").read_text()
    assert card.startswith("---\nlibrary_name: fpt\n")
    for words in ("| `kind` | categorical | p, q |", f"| `test_accuracy` | {summary['test_accuracy']:.4f} |",
                  "fpt train --task data --data", "`label`: 2 classes: `high`, `low`", "fpt predict"):
        assert words in card, words


def test_a_damaged_or_occupied_export_is_refused(tabular, tmp_path, capsys):
    root = tabular["root"]
    copy = tmp_path / "copy"
    shutil.copytree(root / "export", copy)
    data = bytearray((copy / "fpt_model.safetensors").read_bytes())
    data[-1] ^= 0xFF
    (copy / "fpt_model.safetensors").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"fpt_model\.safetensors does not match its sha256"):
        fpt.load(copy)
    assert main(["export", str(root / "run"), str(root / "export")]) == 2
    assert "an export; give --force to replace it" in capsys.readouterr().err
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    assert main(["export", str(root / "run"), str(tmp_path / "busy")]) == 2
    assert "choose a new or empty DIR" in capsys.readouterr().err
    assert main(["export", str(root / "run"), str(root / "run" / "inside")]) == 2
    assert main(["predict", str(tmp_path / "busy"), str(root / "data" / "test.csv")]) == 2
    assert "neither a run directory" in capsys.readouterr().err


def _onnx_logits(ort, file: Path, x: torch.Tensor, lengths: torch.Tensor | None) -> np.ndarray:
    session = ort.InferenceSession(str(file), providers=["CPUExecutionProvider"])
    feeds = {"x": x.numpy(), **({"lengths": lengths.numpy()} if lengths is not None else {})}
    assert [i.name for i in session.get_inputs()] == list(feeds)
    return session.run(None, feeds)[0]


@pytest.fixture(scope="module")
def sequence(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """A sequence --data run (padded inputs, so the graph takes lengths too) exported by ``fpt export --onnx``, once:
    two tests read its model.onnx (the exporter traces the model: ~5 CPU-s a graph)."""
    pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    root = tmp_path_factory.mktemp("sequence")
    rng = np.random.default_rng(0)
    rows = ["text,label"] + [f"{''.join(rng.choice(list('ab' if i % 2 else 'cd'), rng.integers(3, 12)))},"
                             f"{['even', 'odd'][i % 2]}" for i in range(40)]
    (root / "seq.csv").write_text("\n".join(rows) + "\n")
    exp = fpt.build(data=str(root / "seq.csv"), body=tiny_gpt2_dir, init="random", steps=2, eval_every=2,
                    batch_size=8, device="cpu")
    fpt.fit(exp, out=root / "run", progress=False)
    assert main(["export", str(root / "run"), str(root / "export"), "--onnx"]) == 0
    return root


def test_export_onnx_matches_pytorch(tabular, sequence, tmp_path, monkeypatch):
    import onnx

    ort = pytest.importorskip("onnxruntime")
    from fpt.export import write_onnx

    doc = json.loads((sequence / "export" / "config.json").read_text())
    assert doc["onnx"]["inputs"] == ["x", "lengths"] and doc["onnx"]["max_abs_diff"] <= 1e-4
    model = fpt.load(sequence / "export")
    x, lengths, _ = model.tokens(sequence / "seq.csv")
    assert lengths is not None and int(lengths.min()) < x.shape[1]  # really padded
    assert np.abs(_onnx_logits(ort, sequence / "export" / "model.onnx", x, lengths)
                  - model.forward(x, lengths).numpy()).max() <= 1e-4
    # from an export (the tabular run's body is gone): the ONNX file of the loaded model, inputs x only
    model = fpt.load(tabular["root"] / "export")

    def again(*args, **kwargs):
        raise AssertionError("the graph was read back to be written again (its metadata now goes in before the save)")

    with monkeypatch.context() as patch:
        patch.setattr(onnx, "load", again)
        # the weights in a side file, as a model past protobuf's 2 GB has them: the graph beside it holds the metadata
        patch.setattr("fpt.export.ONNX_SINGLE_FILE_BYTES", 0)
        record = write_onnx(model, tmp_path / "tabular.onnx")
    assert record["external_data"] == "tabular.onnx.data" and (tmp_path / "tabular.onnx.data").stat().st_size > 0
    meta = {p.key: p.value for p in onnx.load(str(tmp_path / "tabular.onnx"), load_external_data=False).metadata_props}
    assert sorted(meta) == record["metadata"] and meta["modality"] == "tabular"
    x, lengths, _ = model.tokens(tabular["root"] / "data" / "test.csv")
    assert record["inputs"] == ["x"] and lengths is None
    assert np.abs(_onnx_logits(ort, tmp_path / "tabular.onnx", x, None) - tabular["logits"]).max() <= 1e-4


def test_onnx_metadata_names_classes_format_task_objective_and_the_tokeniser_contract(sequence):
    """The ONNX file says what it is (metadata_props), for runtimes that never see config.json; and it is the
    optimised graph (fpt.export._export_graph says why): no CastLike node, which ONNX Runtime cannot fold and warns
    about at every session."""
    import onnx

    from fpt.export import FORMAT

    graph = onnx.load(str(sequence / "export" / "model.onnx"))
    meta = {p.key: p.value for p in graph.metadata_props}
    assert meta["fpt_format"] == FORMAT and meta["fpt_version"] == fpt.__version__
    assert meta["task"] == "data" and meta["modality"] == "sequence"
    assert json.loads(meta["objective"]) == {"objective": "classification"}
    assert json.loads(meta["class_names"]) == [["even", "odd"]] and json.loads(meta["output_names"]) == ["label"]
    contract = json.loads(meta["tokeniser_contract"])
    assert set(contract["inputs"]) == {"x", "lengths"} and "not raw rows" in contract["inputs"]["x"]
    assert "tokeniser" in contract["inputs"]["x"] and "class_names" in contract["decode"]
    # config.json's record lists the keys
    assert sorted(meta) == json.loads((sequence / "export" / "config.json").read_text())["onnx"]["metadata"]
    assert graph.doc_string == ("fpt data model (classification): takes tokens, not raw inputs; see metadata_props "
                                "tokeniser_contract")
    ops = [node.op_type for node in graph.graph.node]
    assert "CastLike" not in ops and len(ops) < 150, len(ops)  # 106 optimised; 391 with optimize=False


def test_a_paper_task_export_predicts_raw_arrays(tiny_gpt2_dir, tmp_path):
    body = tmp_path / "body"
    shutil.copytree(tiny_gpt2_dir, body)
    exp = fpt.build(task="bit-xor", body=str(body), init="random", steps=6, eval_every=3, batch_size=4, device="cpu",
                    task_options={"eval_size": 32})
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    x = exp.data.eval_sets["test"].x
    np.save(tmp_path / "x.npy", x.numpy())
    expected = fpt.predict(exp, x).numpy()
    assert main(["export", str(tmp_path / "run"), str(tmp_path / "export")]) == 0
    shutil.rmtree(body)
    _fresh_python("""
        import numpy as np, fpt
        model = fpt.load("export")
        x = np.load("x.npy")
        np.save("pred.npy", model.predict(x))
        np.save("proba.npy", model.predict_proba(x))
    """, tmp_path)
    assert np.array_equal(np.load(tmp_path / "pred.npy"), expected)
    assert np.load(tmp_path / "proba.npy").shape == (32, 5, 2)
    card = (tmp_path / "export" / "README.md").read_text()
    assert "The raw tokens of task `bit-xor`" in card and "5 prediction(s) per example" in card


def test_run_names_its_files_and_loads_best(tabular):
    run = Run(tabular["root"] / "run")
    assert run.config_path.name == "config.yaml" and run.metrics_path.name == "metrics.jsonl"
    assert run.summary_path.name == "summary.json" and run.data_path.name == "data.json"
    assert run.checkpoint_dir.name == "checkpoint" and run.best_dir.name == "best" and run.lock_path.name == "run.lock"
    assert run.is_run() and not Run(tabular["root"]).is_run()
    assert run.config() == tabular["exp"].config
    step = json.loads((run.checkpoint() / "state.json").read_text())["step"]
    assert run.summary()["selected_step"] == step  # best/ when the run has it
    assert run.checkpoint().parent == run.best_dir and run.checkpoint("checkpoint").parent == run.checkpoint_dir
    assert run.preprocessing().features == ["x1", "x2", "kind"] and len(run.metrics()) == 3
    with pytest.raises(ValueError, match="expected 'best' or 'checkpoint'"):
        run.checkpoint("latest")


def test_the_library_never_imports_the_cli():
    src = Path(fpt.__file__).parent
    library = [p for p in src.rglob("*.py") if "cli" not in p.relative_to(src).parts and p.name != "__main__.py"]
    offenders = [str(p.relative_to(src)) for p in library if "from fpt.cli" in p.read_text() or "import fpt.cli" in
                 p.read_text()]
    assert offenders == []
    out = _fresh_python("""
        import sys, fpt, fpt.export, fpt.predictor, fpt.run, fpt.errors, fpt.presentation.html, fpt.data.inputs
        print("fpt.cli" in sys.modules)
    """, Path.cwd())
    assert out.strip() == "False"
    from fpt import errors
    from fpt.cli import USER_ERRORS

    assert USER_ERRORS is errors.USER_ERRORS and issubclass(errors.SchemaError, errors.DataError)


def test_a_flatten_readout_run_reloads_and_exports_the_same_head(tiny_gpt2_dir, tmp_path):
    """readout=flatten (a head over every position) on padded sequences: the run, its export and its ONNX graph
    rebuild the same head and give the trained model's logits."""
    rng = np.random.default_rng(0)
    rows = ["text,label"] + [f"{''.join(rng.choice(list('ab' if i % 2 else 'cd'), rng.integers(3, 12)))},{i % 2}"
                             for i in range(40)]
    (tmp_path / "seq.csv").write_text("\n".join(rows) + "\n")
    exp = fpt.build(data=str(tmp_path / "seq.csv"), body=tiny_gpt2_dir, init="random", steps=2, eval_every=2,
                    batch_size=8, device="cpu", readout="flatten")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    T, D = exp.data.spec.seq_len, exp.model.body.width
    assert exp.model.head.in_features == T * D
    test = exp.data.eval_sets["test"]
    assert test.lengths is not None and int(test.lengths.min()) < T  # really padded
    with torch.inference_mode():
        want = exp.forward(test.x, test.lengths).float().numpy()
    run = fpt.load(tmp_path / "run")
    assert run.config.readout == "flatten" and run.model.head.in_features == T * D
    assert np.abs(run.forward(test.x, test.lengths).numpy() - want).max() <= 1e-5
    pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    ort = pytest.importorskip("onnxruntime")
    assert main(["export", str(tmp_path / "run"), str(tmp_path / "export"), "--onnx"]) == 0
    exported = fpt.load(tmp_path / "export")
    assert np.abs(exported.forward(test.x, test.lengths).numpy() - want).max() <= 1e-5
    doc = json.loads((tmp_path / "export" / "config.json").read_text())
    assert doc["run_config"]["readout"] == "flatten" and doc["onnx"]["max_abs_diff"] <= 1e-4
    assert np.abs(_onnx_logits(ort, tmp_path / "export" / "model.onnx", test.x, test.lengths) - want).max() <= 1e-4
