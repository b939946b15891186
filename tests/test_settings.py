"""fpt.settings: one resolution step decides every default, and what it decides is what a run uses and records."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

import fpt
import fpt.train
from fpt.config import RunConfig, from_dict, loaded
from fpt.data.modalities import MODALITIES
from fpt.pipeline import data_facts, with_task
from fpt.settings import (
    DATA_BUDGET_FIELDS,
    DATA_FITTED_FIELDS,
    DATA_TASK,
    PRESETS,
    TASK_FIELDS,
    TOKENISED_FIELDS,
    DataFacts,
    TaskDefaults,
    declared,
    preset_values,
    resolve,
    tokenised,
    unresolved,
)
from fpt.tasks import TASKS, task_defaults

REPO = Path(__file__).resolve().parents[1]
PAPER_TASKS = [name for name in TASKS.names() if name != DATA_TASK]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("task", PAPER_TASKS)
def test_every_preset_and_task_resolves_from_its_declarations(preset, task):
    config = with_task(from_dict(RunConfig, {"task": task, "preset": preset}))
    declared, given_by_preset = task_defaults(task), preset_values(preset, task)
    for name in TASK_FIELDS:  # the preset's value where it has one, else the task's declaration
        assert getattr(config, name) == given_by_preset.get(name, getattr(declared, name)), name
    for name, value in given_by_preset.items():
        assert getattr(config, name) == (value if name != "task_options" else {**value}), name
    assert None not in (config.lr, config.steps, config.eval_every, config.readout)
    assert with_task(config) == config  # resolving a resolved config changes nothing


def test_tasks_declare_what_differs_from_the_paper():
    assert task_defaults("remote-homology").lr == 1e-4  # SPEC section 1
    assert (task_defaults("bit-xor").target, task_defaults("bit-memory").target) == (1.0, 0.99)
    assert task_defaults(DATA_TASK).patience == 10
    assert task_defaults("digits") == TaskDefaults()


def test_given_fields_win_and_a_data_run_leaves_its_budget_to_the_data():
    config = from_dict(RunConfig, {"data": "x.csv", "steps": 9})
    assert (config.steps, config.eval_every, config.readout, config.lr) == (9, None, None, None)
    full = resolve(unresolved(config), task_defaults(DATA_TASK), MODALITIES["timeseries"].facts(1000, {}))
    assert (full.steps, full.eval_every, full.readout, full.lr, full.patience) == (9, 9, "flatten", 1e-3, 10)
    assert set(DATA_BUDGET_FIELDS) == {"steps", "eval_every", "readout"}


@pytest.mark.parametrize(("preset", "modality", "fit", "expected"), [
    ("fast", "sequence", "closed-form", "gpt2"),  # the seqinit study's choice: N(0, 0.02) symbol tables
    ("fast", "sequence", "gradient", "official"),  # gradient training keeps the preset's
    ("fast", "timeseries", "closed-form", "official"),
    ("fast", "tabular", "closed-form", "official"),
    ("fast", "image", "closed-form", "official"),
    ("paper", "image", "closed-form", "gpt2"),  # the paper's own field default
])
def test_a_data_runs_input_init_waits_for_its_data_and_its_fit(preset, modality, fit, expected):
    config = from_dict(RunConfig, {"data": "x.csv", "fit": fit, "preset": preset})
    assert config.input_init is None
    full = resolve(unresolved(config), task_defaults(DATA_TASK), MODALITIES[modality].facts(100, {}))
    assert full.input_init == expected
    assert resolve(unresolved(full), task_defaults(DATA_TASK), MODALITIES[modality].facts(100, {})) == full  # config.yaml's


@pytest.mark.parametrize(("preset", "fit", "readout", "input_init"), [
    ("fast", "gradient", "mean", "official"),  # preset fast's facts; no input_init declared: the preset's
    ("paper", "gradient", "last", "gpt2"),  # the paper preset reads no fast facts: the field defaults
    ("paper", "closed-form", "last", "official"),  # a closed-form fit's facts, whatever the preset
    ("fast", "closed-form", "mean", "official"),
])
def test_what_waits_for_the_data_is_the_facts_its_modality_declares_not_its_name(preset, fit, readout, input_init):
    facts = DataFacts(100, fast={"readout": "mean"}, closed_form={"input_init": "official"})
    config = from_dict(RunConfig, {"data": "x.csv", "fit": fit, "preset": preset})
    full = resolve(unresolved(config), task_defaults(DATA_TASK), facts)
    assert (full.readout, full.input_init) == (readout, input_init)
    given = resolve(unresolved(from_dict(RunConfig, {"data": "x.csv", "fit": fit, "preset": preset, "readout": "last",
                                                     "input_init": "gpt2"})), task_defaults(DATA_TASK), facts)
    assert (given.readout, given.input_init) == ("last", "gpt2")  # given fields win over the facts


@pytest.mark.parametrize(("fit", "given", "cut"), [
    ("closed-form", None, True), ("closed-form", False, False), ("closed-form", True, True),
    ("gradient", None, None), ("auto", None, None), ("auto", True, True),  # auto: each candidate's fit decides
])
def test_the_tokenisers_fields_are_declared_by_the_same_rule_as_the_rest(fit, given, cut):
    series = MODALITIES["timeseries"].facts(30, {})
    assert TOKENISED_FIELDS == ("cf_difference",)
    values = {"fit": fit, "cf_difference": given}
    assert tokenised(values, series).get("cf_difference", given) == cut
    if given is None:
        assert tokenised(values, series) == {"cf_difference": declared(values, series, "cf_difference", None)}
    # the data options carry a fit, not a preset: no entry declares a tokeniser's field under preset fast
    assert all(not set(entry.fast) & set(TOKENISED_FIELDS) for entry in MODALITIES.values())
    assert all(tokenised({"fit": fit}, entry.facts(30, {})) == {"cf_difference": None}
               for name, entry in MODALITIES.items() if name != "timeseries")


@pytest.mark.parametrize("given", ["official", "gpt2"])
def test_a_given_input_init_wins_over_the_symbol_closed_form_default(given):
    config = from_dict(RunConfig, {"data": "x.csv", "fit": "closed-form", "input_init": given})
    full = resolve(unresolved(config), task_defaults(DATA_TASK), MODALITIES["sequence"].facts(100, {}))
    assert full.input_init == given


def test_a_paper_task_resolves_input_init_without_data():
    assert from_dict(RunConfig, {"task": "bit-xor"}).input_init == "official"  # preset fast
    assert from_dict(RunConfig, {"task": "bit-xor", "preset": "paper"}).input_init == "gpt2"


def _series(path: Path, n: int = 40) -> Path:
    rng = np.random.default_rng(0)
    y = np.arange(n) % 2
    X = np.sin(np.linspace(0, 6, 24))[None, None, :] * (1 + y[:, None, None]) + 0.1 * rng.normal(size=(n, 1, 24))
    np.savez(path, X=X.astype(np.float32), y=y)
    return path


def _table(path: Path, n: int = 40) -> Path:
    rng = np.random.default_rng(0)
    rows = ["x1,x2,label"] + [f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{'ab'[i % 2]}" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _texts(path: Path, n: int = 40) -> Path:
    rows = ["text,label"] + [f"{'ab ' * (1 + i % 4)}{'cd' if i % 2 else 'ef'},{i % 2}" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


KINDS = {"bit-xor": None, "bit-memory": None, "digits": None, "tabular": _table, "timeseries": _series,
         "sequence": _texts}
# what each --data kind's tokeniser fits to its training examples when not given, as config.yaml records it
FITTED = {"tabular": {}, "timeseries": {"series_patch": 1, "series_stride": 1}, "sequence": {"sequence_max_len": 5}}


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_the_resolved_config_is_what_runs_and_what_config_yaml_records(kind, preset, tmp_path, tiny_gpt2_dir,
                                                                      monkeypatch):
    fields = {"preset": preset, "body": tiny_gpt2_dir, "init": "random", "device": "cpu", "baselines": "none"}
    if KINDS[kind] is None:
        fields.update(task=kind, steps=2, eval_every=2, eval_subset=None)
        if kind == "bit-memory":
            fields["task_options"] = {"n_bits": 10, "token_dim": 5, "eval_size": 20}
    else:
        fields["data"] = str(KINDS[kind](tmp_path / ("d.npz" if kind == "timeseries" else "d.csv")))
    given = from_dict(RunConfig, fields)
    exp = fpt.build(given)
    assert exp.config == resolve(unresolved(given), task_defaults(given.task), data_facts(given, exp.data))
    assert None not in (exp.config.lr, exp.config.steps, exp.config.eval_every, exp.config.readout)
    if given.data:  # the tokens' shape its tokeniser chose is recorded; another modality's fields stay unused (None)
        assert {k: getattr(exp.config, k) for k in DATA_FITTED_FIELDS} == \
            {k: FITTED[kind].get(k) for k in DATA_FITTED_FIELDS}
        # the target column a table's reader chose is recorded; an array's y is fixed by the layout (not used)
        assert exp.config.target_column == (None if kind == "timeseries" else "label")
    used = []
    make = fpt.train.make_optimizer
    monkeypatch.setattr(fpt.train, "make_optimizer", lambda params, lr: used.append(lr) or make(params, lr))
    if given.data:  # a --data budget is hundreds of steps: the resolved config, cut to two, is what trains
        exp = fpt.build(from_dict(RunConfig, {**exp.config.to_dict(), "steps": 2, "eval_every": 2}))
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert used == [exp.config.lr]
    recorded = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert recorded == exp.config.to_dict() and recorded["lr"] is not None
    assert fpt.Run(tmp_path / "run").config() == exp.config  # read back through the same resolution


def test_a_data_run_whose_config_yaml_records_null_token_fields_still_loads_predicts_and_resumes(tmp_path,
                                                                                                tiny_gpt2_dir):
    """config.yaml written before the tokeniser's choices were recorded: series_patch/series_stride null."""
    data = _series(tmp_path / "d.npz")
    exp = fpt.build(data=str(data), body=tiny_gpt2_dir, init="random", fit="gradient", steps=2, eval_every=2,
                    device="cpu", baselines="none")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    X = np.load(data)["X"]
    before = fpt.load(tmp_path / "run", device="cpu").predict_proba(X)
    path = tmp_path / "run" / "config.yaml"
    old = {**yaml.safe_load(path.read_text()), "series_patch": None, "series_stride": None}
    path.write_text(yaml.safe_dump(old, sort_keys=False))
    config = fpt.Run(tmp_path / "run").config()
    assert (config.series_patch, config.series_stride) == (None, None)
    assert np.array_equal(fpt.load(tmp_path / "run", device="cpu").predict_proba(X), before)
    resumed = fpt.train.resume_config(tmp_path / "run", {"steps": 4})
    summary = fpt.fit(fpt.build(resumed), out=tmp_path / "run", resume=True, progress=False)
    assert summary["steps"] == 4 and yaml.safe_load(path.read_text())["series_patch"] == 1


def test_a_data_run_recorded_without_its_target_column_still_loads_predicts_and_is_found_by_its_plan(tmp_path,
                                                                                                 tiny_gpt2_dir):
    """config.yaml written before the target column a table's reader chose was recorded: target_column null. A run
    store's plan (the config as given, target not named) keeps its key and still finds the run either way."""
    from fpt.experiments.runner import Store

    data = _table(tmp_path / "d.csv")
    given = {"data": str(data), "body": tiny_gpt2_dir, "init": "random", "fit": "gradient", "steps": 2,
             "eval_every": 2, "device": "cpu", "baselines": "none"}
    planned = from_dict(RunConfig, given)
    key = Store(tmp_path / "store").plan_config(planned).key
    run = tmp_path / "store" / key
    exp = fpt.build(planned)
    fpt.fit(exp, out=run, progress=False)
    path = run / "config.yaml"
    assert yaml.safe_load(path.read_text())["target_column"] == "label"
    assert fpt.Run(run).resumable(planned, "the plan")
    assert Store(tmp_path / "store").plan_config(planned).key == key
    with pytest.raises(fpt.errors.RunError, match="different config"):
        fpt.Run(run).resumable(from_dict(RunConfig, {**given, "target_column": "x2"}), "another target")
    X = {"x1": np.array([0.1, 2.3]), "x2": np.array([0.5, -0.2])}
    before = fpt.load(run, device="cpu").predict_proba(X)
    path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), "target_column": None}, sort_keys=False))
    assert fpt.Run(run).config().target_column is None
    assert np.array_equal(fpt.load(run, device="cpu").predict_proba(X), before)
    assert fpt.Run(run).resumable(planned, "the plan")
    resumed = fpt.train.resume_config(run, {"steps": 4})
    assert fpt.fit(fpt.build(resumed), out=run, resume=True, progress=False)["steps"] == 4
    assert yaml.safe_load(path.read_text())["target_column"] == "label"


def test_a_config_yaml_written_before_lr_was_recorded_still_loads_and_resolves():
    old = sorted(REPO.glob("docs/results/quick/runs/*/config.yaml"))
    saved = next(yaml.safe_load(p.read_text()) for p in old if "lr: null" in p.read_text())
    config = loaded(saved, "old config.yaml")
    assert config.lr is None and with_task(config).lr == task_defaults(config.task).lr
    assert config.preset == saved.get("preset", "paper")


def test_loading_a_model_never_runs_the_resume_check(tmp_path, tiny_gpt2_dir, monkeypatch):
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", steps=2, eval_every=2, device="cpu")
    fpt.fit(exp, out=tmp_path / "run", progress=False)

    def refuse(*args, **kwargs):
        raise AssertionError("loading read the config through the resume check")

    monkeypatch.setattr(fpt.train, "resume_config", refuse)
    model = fpt.load(tmp_path / "run", device="cpu")
    assert model.config == exp.config and str(model.device) == "cpu"
    exported = fpt.Run(tmp_path / "run").export(tmp_path / "export")
    # a run and its export load alike (the export names a local body by its folder: fpt export)
    from_export = fpt.load(exported, device="cpu").config
    assert dataclasses.replace(from_export, body=model.config.body) == model.config


# Run ids of the paper's tables (fpt reproduce TABLE --scale quick --seeds 0,1,2 --dry-run [--tuned-lr]): three
# committed run stores (docs/results/quick, quick-gpu, lane) find their runs by them.
PINNED = {
    ("table1", "fpt", "bit-memory-100", 0, None): "121218a3bdc7",
    ("table1", "fpt", "bit-memory-100", 1, None): "376f43bee6c9",
    ("table1", "fpt", "bit-memory-100", 0, 0.0001): "c31306f68ca0",
    ("table1", "fpt", "bit-memory-100", 0, 0.001): "121218a3bdc7",  # the fixed-lr run, shared
    ("table3", "transformer", "bit-xor", 0, None): "55d50c860039",
    ("table3", "lstm_3_layer", "bit-memory-100", 0, None): "158d0abd1af9",
    ("table5", "lstm_12_layer", "mnist-5k", 0, None): "6db5c36c649e",
    ("table9", "statistics_only", "bit-memory-100", 0, None): "d2f0f2b17e77",
    ("table13", "plus_feedforward", "bit-memory-100", 0, None): "5ba2a0d7b94b",
    ("table17", "bert", "digits-patch", 0, None): "9516446048ab",
}


@pytest.mark.parametrize("key", list(PINNED))
def test_run_ids_of_the_paper_tables_never_change(key, tmp_path):
    from fpt.experiments.grid import expand
    from fpt.experiments.runner import Store

    name, row, column, seed, lr = key
    table = expand(name, "quick")
    cell = next(c for c in table.cells if c.row == row and c.column == column)
    assert Store(tmp_path).plan(table, cell, seed, lr).key == PINNED[key]


# Parameters named as a RunConfig field whose default is not that field's default, by meaning: the seed of a
# generated dataset or of example inputs, and the micro-batches of one shard.
NOT_THE_RUNS = {("data/listops.py", "seed"), ("export.py", "seed"), ("distributed.py", "grad_accum")}


def _restated(node: ast.AST) -> list[tuple[str, ast.expr]]:
    """(name, default) of a function's parameters and of a class body's annotated fields (``x: int = 0``)."""
    if isinstance(node, ast.arguments):
        pairs = list(zip(node.args[len(node.args) - len(node.defaults):], node.defaults, strict=True))
        pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True) if d is not None]
        return [(arg.arg, default) for arg, default in pairs]
    if isinstance(node, ast.ClassDef):
        return [(s.target.id, s.value) for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None]
    return []


def test_no_function_restates_a_run_fields_default_outside_the_settings():
    """fpt.settings decides every default (the tasks declare theirs): a parameter or a dataclass field named as a
    RunConfig field takes RunConfig's value (``RunConfig.readout``), never a literal copy that would drift from it."""
    defaults = {f.name: f.default for f in dataclasses.fields(RunConfig) if f.default is not dataclasses.MISSING}
    src = REPO / "src" / "fpt"
    found = []
    for path in sorted(src.rglob("*.py")):
        where = path.relative_to(src).as_posix()
        if where == "settings.py" or where.startswith("tasks/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            for name, default in _restated(node):
                if (name in defaults and isinstance(default, ast.Constant) and default.value is not None
                        and type(default.value) is type(defaults[name]) and default.value == defaults[name]
                        and (where, name) not in NOT_THE_RUNS):
                    found.append(f"{where}:{default.lineno}: {name}={default.value!r}")
    assert not found, f"defaults restated outside fpt.settings (use RunConfig.<field>): {found}"


@pytest.mark.parametrize(("image_size", "patch_size", "example"), [(30, 4, 3), (30, 7, 6), (32, 7, 8), (7, 3, 1)])
def test_a_patch_size_that_does_not_divide_the_image_is_given_one_that_does(image_size, patch_size, example):
    with pytest.raises(fpt.errors.ConfigError) as err:  # was: (e.g. 4) whatever the image size, 4 dividing no 30
        RunConfig(data="x.csv", image_size=image_size, patch_size=patch_size)
    assert str(err.value) == (f"config field 'patch_size'={patch_size} must be >= 1 and divide "
                              f"image_size={image_size} (e.g. {example})")
    assert image_size % example == 0
