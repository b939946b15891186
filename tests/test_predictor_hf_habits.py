"""A Hugging Face user's reflexes on fpt's Predictor: ``Predictor.from_pretrained(dir)``, ``model.save_pretrained(dir)``
and ``model.push_to_hub(...)`` fail as AttributeErrors (hasattr stays False) that name fpt's call for each."""

from __future__ import annotations

import copy
import pickle

import pytest

import fpt


def test_from_pretrained_on_the_class_names_fpt_load():
    with pytest.raises(AttributeError, match=r"Predictor has no from_pretrained: fpt\.load\(path\) loads a run "):
        fpt.Predictor.from_pretrained("runs/x")
    assert not hasattr(fpt.Predictor, "from_pretrained")
    with pytest.raises(AttributeError, match=r"^type object 'Predictor' has no attribute 'nothing_here'$"):
        fpt.Predictor.nothing_here  # noqa: B018


def test_save_pretrained_and_push_to_hub_name_the_export(xor_run, tmp_path):
    model = fpt.load(xor_run)
    with pytest.raises(AttributeError) as info:
        model.save_pretrained(tmp_path / "out")
    assert str(info.value) == (
        "Predictor has no save_pretrained: fpt.Run(run_dir).export(out) (fpt export RUN_DIR OUT) writes a "
        f"self-contained directory that fpt.load(out) reads back; this model came from {xor_run}, which fpt.load "
        "reads as it is")
    assert not (tmp_path / "out").exists()
    with pytest.raises(AttributeError, match=r"push_to_hub: .*huggingface_hub\.upload_folder"):
        model.push_to_hub("me/xor")
    assert not hasattr(model, "save_pretrained")
    with pytest.raises(AttributeError, match=r"^'Predictor' object has no attribute 'nothing_here'$"):
        model.nothing_here  # noqa: B018
    # copy and pickle look up dunder names the instance lacks: they are untouched
    again = pickle.loads(pickle.dumps(model))
    assert copy.copy(model).source == again.source == model.source
    x = fpt.build(task="bit-xor", body=model.config.body, task_options={"eval_size": 32}).data.eval_sets["test"].x[:4]
    assert (again.predict(x) == model.predict(x)).all()
