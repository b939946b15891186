"""fpt export --onnx: the ONNX file says what it is (metadata_props), for runtimes that never see config.json."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fpt
from fpt.export import FORMAT, write_onnx


def test_onnx_metadata_names_classes_format_task_objective_and_the_tokeniser_contract(tiny_gpt2_dir, tmp_path):
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    rng = np.random.default_rng(0)
    rows = ["text,label"] + [f"{''.join(rng.choice(list('ab' if i % 2 else 'cd'), rng.integers(3, 9)))},"
                             f"{['even', 'odd'][i % 2]}" for i in range(30)]
    (tmp_path / "seq.csv").write_text("\n".join(rows) + "\n")
    exp = fpt.build(data=str(tmp_path / "seq.csv"), body=tiny_gpt2_dir, init="random", steps=2, eval_every=2,
                    batch_size=8, device="cpu")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    record = write_onnx(fpt.load(tmp_path / "run"), tmp_path / "model.onnx")

    meta = {p.key: p.value for p in onnx.load(str(tmp_path / "model.onnx")).metadata_props}
    assert meta["fpt_format"] == FORMAT and meta["fpt_version"] == fpt.__version__
    assert meta["task"] == "data" and meta["modality"] == "sequence"
    assert json.loads(meta["objective"]) == {"objective": "classification"}
    assert json.loads(meta["class_names"]) == [["even", "odd"]] and json.loads(meta["output_names"]) == ["label"]
    contract = json.loads(meta["tokeniser_contract"])
    assert set(contract["inputs"]) == {"x", "lengths"} and "not raw rows" in contract["inputs"]["x"]
    assert "tokeniser" in contract["inputs"]["x"] and "class_names" in contract["decode"]
    assert sorted(meta) == record["metadata"]  # config.json's record lists the keys
