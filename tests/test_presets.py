"""Presets (step 14): fast, fpt train's default, fills step 8's settings into the fields a config leaves out;
paper is RunConfig's own field defaults, and every fpt reproduce cell pins it."""

from __future__ import annotations

import pytest
import yaml

from fpt.cli import main
from fpt.config import RunConfig, from_dict, train_command
from fpt.errors import ConfigError
from fpt.experiments.grid import expand
from fpt.experiments.runner import KEY_BASELINE, config_key
from fpt.settings import FAST, FAST_TASKS

PAPER = RunConfig()


@pytest.mark.parametrize("task", ["bit-xor", "digits", "mnist-5k", "bit-memory", "cifar10"])
def test_fast_fills_the_sweeps_values_and_paper_the_field_defaults(task):
    fast = from_dict(RunConfig, {"task": task})
    assert fast.preset == "fast"
    expected = {**FAST, **FAST_TASKS.get(task, {})}
    for name, value in expected.items():
        assert getattr(fast, name) == value, name
    assert (fast.dropout, fast.input_init, fast.precision) == (0.0, "official", "auto")
    paper = from_dict(RunConfig, {"task": task, "preset": "paper"})
    assert paper == RunConfig(task=task)
    assert (paper.dropout, paper.input_init, paper.batch_size, paper.eval_subset) == (0.1, "gpt2", 16, None)


def test_per_task_values():
    xor = from_dict(RunConfig, {})  # the README's first command: bit-xor
    assert (xor.batch_size, xor.lr, xor.eval_every, xor.eval_subset) == (8, 0.002, 20, 200)
    mnist = from_dict(RunConfig, {"task": "mnist-5k"})
    assert mnist.task_options == {"image_size": 28} and (mnist.eval_every, mnist.eval_subset) == (25, 200)
    data = from_dict(RunConfig, {"data": "x.csv"})  # --data and the sklearn estimators: the every-task values (and series_norm)
    assert (data.dropout, data.input_init, data.batch_size, data.eval_subset) == (0.0, None, 16, None)  # init: the data's


def test_explicit_values_win():
    config = from_dict(RunConfig, {"task": "mnist-5k", "dropout": 0.1, "batch_size": 32, "eval_subset": None,
                                   "task_options": {"image_size": 32, "val_size": 500}})
    assert (config.dropout, config.batch_size, config.eval_subset) == (0.1, 32, None)
    assert config.task_options == {"image_size": 32, "val_size": 500}
    assert from_dict(RunConfig, {"task": "mnist-5k", "task_options": {"val_size": 500}}).task_options == \
        {"image_size": 28, "val_size": 500}


def test_a_recorded_config_reads_back_the_same_and_an_old_one_as_paper():
    fast = from_dict(RunConfig, {"task": "bit-xor"})
    assert from_dict(RunConfig, fast.to_dict()) == fast
    old = RunConfig(task="bit-xor").to_dict()
    del old["preset"]  # a config.yaml written before presets existed
    assert from_dict(RunConfig, old) == RunConfig(task="bit-xor")


def test_a_bad_preset_names_the_field():
    with pytest.raises(ConfigError, match=r"'preset'='quick'.*fast, paper"):
        from_dict(RunConfig, {"preset": "quick"})


def test_train_command_replays_the_preset():
    assert "--preset paper" in train_command(RunConfig(task="digits").to_dict(), "o")
    fast = from_dict(RunConfig, {"task": "mnist-5k"})
    command = train_command(fast.to_dict(), "o")
    assert "--preset" not in command and "--dropout" not in command and "--task mnist-5k" in command


def test_the_preset_keeps_run_store_keys():
    assert KEY_BASELINE["preset"] == "paper"
    assert config_key(RunConfig(task="digits")) == config_key(from_dict(RunConfig, {"task": "digits", "preset": "paper"}))
    assert config_key(from_dict(RunConfig, {"task": "digits"})) != config_key(RunConfig(task="digits"))


@pytest.mark.parametrize("scale", ["quick", "paper"])
def test_reproduce_cells_pin_the_paper_preset(scale):
    for name in ("table1", "table2"):
        for cell in expand(name, scale).cells:
            if cell.config is not None:
                assert cell.config.preset == "paper", (name, cell.row, cell.column)


def test_config_yaml_records_the_resolved_values(tiny_gpt2_dir, tmp_path):
    out = tmp_path / "run"
    assert main(["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "2", "--eval-every", "2",
                 "--device", "cpu", "--quiet", "--out", str(out)]) == 0
    saved = yaml.safe_load((out / "config.yaml").read_text())
    assert saved["preset"] == "fast"
    assert (saved["dropout"], saved["input_init"], saved["batch_size"], saved["lr"], saved["eval_every"],
            saved["eval_subset"]) == (0.0, "official", 8, 0.002, 2, 200)  # eval_every: given
    paper = tmp_path / "paper"
    assert main(["train", "--preset", "paper", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "2",
                 "--eval-every", "2", "--device", "cpu", "--quiet", "--out", str(paper)]) == 0
    saved = yaml.safe_load((paper / "config.yaml").read_text())
    assert (saved["preset"], saved["dropout"], saved["batch_size"], saved["eval_subset"]) == ("paper", 0.1, 16, None)


def test_a_config_saved_before_presets_reads_as_paper_whatever_fields_it_lacks(tmp_path):
    """The oldest committed runs lack eval_subset (and every run before presets lacks preset): they ran
    the paper's defaults, and reading them back must not turn them into the fast preset."""
    import yaml

    from fpt.config import RunConfig
    from fpt.train import resume_config

    fields = RunConfig().to_dict()
    for name in ("preset", "eval_subset", "baselines"):
        fields.pop(name, None)
    fields["task"] = "bit-xor"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(fields))
    config = resume_config(tmp_path)
    assert config.preset == "paper" and config.dropout == 0.1 and config.eval_subset is None
    assert config == RunConfig(task="bit-xor")
