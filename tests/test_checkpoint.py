import pytest
import torch

from fpt import checkpoint
from fpt.config import RunConfig
from fpt.errors import CheckpointError
from fpt.model import InputSpec
from fpt.pipeline import build_model

SPEC = InputSpec(seq_len=6, num_classes=2, token_dim=3)


def _model(path, seed=0):
    return build_model(RunConfig(body=path, init="random", seed=seed), SPEC)


def test_only_trainable_parameters_are_stored(tiny_gpt2_dir, tmp_path):
    model = _model(tiny_gpt2_dir)
    fp = checkpoint.fingerprint(model)
    version = checkpoint.save(tmp_path / "ck", model, {"a": 1}, fp)
    from safetensors.torch import load_file

    assert checkpoint.find(tmp_path / "ck") == version
    stored = load_file(version / "trainable.safetensors")
    assert set(stored) == {n for n, p in model.named_parameters() if p.requires_grad}
    assert not any("attn.c_attn" in n for n in stored)
    assert checkpoint.read_metadata(tmp_path / "ck")["fingerprint"] == fp


def test_round_trip_restores_trained_values(tiny_gpt2_dir, tmp_path):
    model = _model(tiny_gpt2_dir)
    with torch.no_grad():
        model.head.weight.add_(1.0)
    checkpoint.save(tmp_path / "ck", model, {}, checkpoint.fingerprint(model))
    fresh = _model(tiny_gpt2_dir)
    checkpoint.load_trainable(tmp_path / "ck", fresh, checkpoint.fingerprint(fresh))
    torch.testing.assert_close(fresh.head.weight, model.head.weight)


def test_fingerprint_mismatch_is_refused(tiny_gpt2_dir, tmp_path):
    model = _model(tiny_gpt2_dir, seed=0)
    checkpoint.save(tmp_path / "ck", model, {}, checkpoint.fingerprint(model))
    other = _model(tiny_gpt2_dir, seed=1)  # a different random frozen body
    assert checkpoint.fingerprint(other) != checkpoint.fingerprint(model)
    with pytest.raises(CheckpointError, match="different --body/--init/--seed"):
        checkpoint.load_trainable(tmp_path / "ck", other, checkpoint.fingerprint(other))


def test_fingerprint_ignores_trained_parameters(tiny_gpt2_dir):
    model = _model(tiny_gpt2_dir)
    before = checkpoint.fingerprint(model)
    with torch.no_grad():
        model.head.weight.add_(1.0)
    assert checkpoint.fingerprint(model) == before


def test_missing_and_corrupt_checkpoints_are_named(tiny_gpt2_dir, tmp_path):
    model = _model(tiny_gpt2_dir)
    with pytest.raises(CheckpointError, match="trainable.safetensors does not exist"):
        checkpoint.load_trainable(tmp_path / "nope", model, "x")
    checkpoint.save(tmp_path / "ck", model, {}, "fp")
    with pytest.raises(CheckpointError, match="cannot resume"):
        checkpoint.load_resume_state(tmp_path / "ck", model, torch.optim.Adam(model.parameters()))


def test_save_replaces_atomically(tiny_gpt2_dir, tmp_path):
    model = _model(tiny_gpt2_dir)
    checkpoint.save(tmp_path / "ck", model, {}, "fp", step=1)
    (tmp_path / "ck.tmp").mkdir()  # debris of an old-layout killed save is cleared
    (tmp_path / "ck" / ".step-00000002.tmp-999999999").mkdir()  # debris of a killed save (a dead pid) too
    checkpoint.save(tmp_path / "ck", model, {}, "fp", step=2)
    checkpoint.save(tmp_path / "ck", model, {}, "fp", step=3)
    # versions are immutable; a pointer names the current one; the previous one is kept as a fallback
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["current", "step-00000002", "step-00000003"]
    assert (tmp_path / "ck" / "current").read_text().strip() == "step-00000003"
    assert checkpoint.find(tmp_path / "ck").name == "step-00000003"
    assert not (tmp_path / "ck.tmp").exists() and not (tmp_path / "ck.old").exists()


def test_a_training_state_of_the_old_name_is_still_read():
    """state.json written before best_accuracy was renamed best_score (it holds R² for regression)."""
    old = {"step": 6, "best_accuracy": 0.5, "best_step": 3, "steps_to_target": None, "wall_seconds": 1.0,
           "train_seconds": 1.0, "train_examples": 48, "evals_since_best": 1, "diverged_at": None}
    from fpt.rundir import TrainState

    state = TrainState.from_json(old, "state.json")
    assert state.best_score == 0.5 and state.step == 6 and "best_accuracy" not in state.to_json()
