import pytest

from fpt.config import RunConfig, from_dict, load_yaml, merge, parse_overrides, save_yaml
from fpt.errors import ConfigError


def test_defaults_are_the_papers():
    c = RunConfig()
    assert (c.task, c.body, c.init, c.freeze, c.clip, c.dropout) == ("bit-xor", "minilm", "pretrained", "paper", 1.0, 0.1)
    assert c.lr is None  # the task's default: 1e-3, 1e-4 for remote homology


def test_types_are_coerced_from_strings():
    c = from_dict(RunConfig, {"steps": "2e3", "lr": "3e-4", "stop_at_target": "false", "layers": "none"})
    assert c.steps == 2000 and c.lr == pytest.approx(3e-4) and c.stop_at_target is False and c.layers is None


@pytest.mark.parametrize("data, match", [
    ({"stepz": 3}, r"unknown field\(s\) \['stepz'\]"),
    ({"steps": "many"}, r"field 'steps': expected an integer"),
    ({"steps": 1.5}, r"field 'steps': expected an integer"),
    ({"lr": "fast"}, r"field 'lr': expected a number"),
    ({"batch_size": 10, "grad_accum": 3}, r"grad_accum.*divide batch_size=10"),
    ({"target": 99}, r"target.*accuracy in \(0, 1\]"),
    ({"init": "pretrain"}, r"init.*pretrained, random, stats or checkpoint:PATH"),
])
def test_bad_values_fail_loudly(data, match):
    with pytest.raises(ConfigError, match=match):
        from_dict(RunConfig, data, where="x.yaml")


def test_error_names_the_source():
    with pytest.raises(ConfigError, match=r"^x.yaml: "):
        from_dict(RunConfig, {"nope": 1}, where="x.yaml")


def test_overrides_and_task_options():
    o = parse_overrides(["steps=500", "task.n_bits=256", "lr=1e-4", "body=gpt2"])
    # preset paper: RunConfig's own field defaults (the fast preset's are tests/test_presets.py's)
    assert from_dict(RunConfig, {**o, "preset": "paper"}) == RunConfig(steps=500, task_options={"n_bits": 256}, lr=1e-4,
                                                                      body="gpt2")
    merged = merge({"task_options": {"eval_size": 10}, "steps": 1}, o)
    assert merged["task_options"] == {"eval_size": 10, "n_bits": 256} and merged["steps"] == 500
    with pytest.raises(ConfigError, match="not key=value"):
        parse_overrides(["steps"])


def test_yaml_round_trip(tmp_path):
    c = from_dict(RunConfig, {"task": "bit-memory", "task_options": {"n_bits": 100, "token_dim": 10}, "steps": 7})
    save_yaml(c, tmp_path / "c.yaml")
    assert from_dict(RunConfig, load_yaml(tmp_path / "c.yaml")) == c


def test_yaml_errors_name_the_file(tmp_path):
    (tmp_path / "bad.yaml").write_text("steps: [1, 2\n")
    with pytest.raises(ConfigError, match="bad.yaml is not valid YAML"):
        load_yaml(tmp_path / "bad.yaml")
    with pytest.raises(ConfigError, match="does not exist"):
        load_yaml(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_yaml(tmp_path / "list.yaml")


def test_lists_of_column_names_are_taken_as_pandas_and_scikit_learn_take_them(tmp_path):
    """fpt.build(data=df, target=["y"], drop_columns=["id", "row"]) was "field 'target': expected a number" and
    "field 'drop_columns': expected a string"; a config file's YAML list was the same."""
    import pandas as pd

    import fpt
    from fpt.config import target_alias

    assert target_alias({"data": "x.csv", "target": ["a", "b"], "drop_columns": ("id", " row"), "series_id": ["s"]}) \
        == {"data": "x.csv", "target_column": "a,b", "drop_columns": "id,row", "series_id": "s"}
    assert target_alias({"target": [0.9]}) == {"target": [0.9]}  # no data: target is the stopping accuracy
    with pytest.raises(ConfigError, match=r"column 'a,b' has a comma in its name"):
        target_alias({"data": "x.csv", "drop_columns": ["a,b"]})
    frame = pd.DataFrame({"id": range(30), "x": [i % 5 for i in range(30)], "y": [i % 2 for i in range(30)]})
    exp = fpt.build(data=frame, target=["y"], drop_columns=["id"], fit="closed-form", device="cpu", init="random")
    assert exp.data.info["targets"] == ["y"] and exp.data.info["dropped"] == ["id"]
    (tmp_path / "run.yaml").write_text("data: t.csv\ndrop_columns: [id]\ntarget_column: [y]\n")
    config = from_dict(RunConfig, target_alias(load_yaml(tmp_path / "run.yaml")), where="run.yaml")
    assert (config.drop_columns, config.target_column) == ("id", "y")


def test_config_files_are_scanned_by_libyaml_and_still_refuse_a_key_given_twice(tmp_path):
    """`fpt runs` reads every run's config.yaml: PyYAML's pure-Python scanner took ~40 ms a file (12 of the 14 s of
    listing 287 runs); where PyYAML was built with libyaml the reader uses its parser, and the checks made on the
    parsed nodes (a key given twice, with both lines) still hold."""
    import yaml

    from fpt.config import StrictLoader, read_yaml

    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    assert issubclass(StrictLoader, yaml.CSafeLoader)
    (tmp_path / "c.yaml").write_text("steps: 5\nlr: 1e-3\ntask_options: {n: 3}\nlr: 0.5\n")
    with pytest.raises(ConfigError, match=r"c.yaml is not valid YAML \(line 4, column 1\): the key 'lr' is given twice "
                                          r"\(first on line 2\)"):
        read_yaml(tmp_path / "c.yaml")
    (tmp_path / "ok.yaml").write_text("base: &b {lr: 0.1}\nrun:\n  <<: *b\n  lr: 0.2\n  steps: 2e3\n  layers: ~\n")
    assert read_yaml(tmp_path / "ok.yaml") == {"base": {"lr": 0.1}, "run": {"lr": 0.2, "steps": "2e3", "layers": None}}


def test_numpy_values_in_a_config_are_saved_as_plain_numbers(tmp_path):
    """fpt.build coerced its fields (steps=np.int64(4) an int), but not task options (any value), nor the fields of a
    RunConfig made directly: task_options={'eval_size': np.int64(16)}, or fpt.train_run(fpt.RunConfig(steps=
    np.int64(300)), out), went on to fail writing config.yaml (yaml.representer.RepresenterError: ('cannot represent
    an object', np.int64(16))). NumPy's scalars and arrays are Python's numbers and lists."""
    import numpy as np

    options = {"eval_size": np.int64(16), "n_bits": np.int32(5), "p": np.float32(0.5), "on": np.bool_(True),
               "sizes": np.arange(3), "nested": {"k": [np.int64(2)]}}
    plain = {"eval_size": 16, "n_bits": 5, "p": 0.5, "on": True, "sizes": [0, 1, 2], "nested": {"k": [2]}}
    for config in (from_dict(RunConfig, {"task": "bit-xor", "task_options": options, "steps": np.int64(7)}),
                   RunConfig(task="bit-xor", task_options=options, steps=np.int64(7), lr=np.float64(1e-3))):
        assert config.task_options == plain and type(config.steps) is int and config.steps == 7
        assert [type(v) for v in config.task_options.values()][:4] == [int, int, float, bool]
        save_yaml(config, tmp_path / "config.yaml")
        assert load_yaml(tmp_path / "config.yaml")["task_options"] == plain
    with pytest.raises(ConfigError, match="config field 'steps' is"):  # an array is still no one setting
        RunConfig(task="bit-xor", steps=np.arange(3))
