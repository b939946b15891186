import json

import pytest

from fpt.config import RunConfig
from fpt.experiments import SCALES, expand, paper_results, table_names
from fpt.experiments.grid import Cell, Table, paper_value
from fpt.experiments.runner import Store, run_table
from fpt.presentation.tables import write_report


def test_the_projects_copy_of_the_paper_figures_is_the_specs():
    from pathlib import Path

    shared = Path(__file__).resolve().parents[3] / "shared" / "paper_results.json"
    if not shared.is_file():
        pytest.skip("shared/ not beside the repository")
    assert paper_results() == json.loads(shared.read_text())


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("name", table_names())
def test_every_table_expands_to_valid_configs(name, scale):
    table = expand(name, scale)
    assert table.cells and len(table.cells) == len(table.rows) * len(table.columns)
    for cell in table.cells:
        assert (cell.config is None) == (cell.skip is not None or cell.quoted is not None)
        if cell.config is not None:
            assert isinstance(cell.config, RunConfig)
    assert any(c.paper is not None for c in table.cells), "no cell found its paper figure"


def test_paper_figures_are_looked_up_in_every_layout():
    r = paper_results()
    assert paper_value(r, "table3_frozen_random_transformer_vs_lstm", "lstm_3_layer", "bit-xor", False) == 50.0
    assert paper_value(r, "table17_other_bodies", "t5_encoder", "cifar10", False) == 64.7
    assert paper_value(r, "table10_output_only_cached_features", "output_only", "listops", True) == 32.8
    assert paper_value(r, "table14_cifar10_more_params", "plus_all_feedforward", "cifar10", False) == 76.6
    assert paper_value(r, "table11_listops_depth_output_and_layernorm", "random", "6", False) == 35
    assert paper_value(r, "table4_5_lstm_variants", "lstm_12_layer", "mnist", False) == 11.7


def test_table_specific_cells():
    t1 = {(c.row, c.key): c for c in expand("table1", "paper").cells}
    assert t1[("fpt", "cifar10")].config.body == "gpt2-large" and t1[("fpt", "mnist")].config.body == "gpt2"
    assert t1[("full_lstm", "listops")].config.lr == 3e-4 and t1[("full_lstm", "listops")].config.freeze == "none"
    quick = {(c.row, c.key): c for c in expand("table9", "quick").cells}
    assert quick[("statistics_only", "mnist")].config.task == "mnist-5k"
    assert quick[("statistics_only", "mnist")].config.body == "minilm"
    assert quick[("default_random", "remote-homology")].skip
    t3 = {(c.row, c.key): c for c in expand("table3", "quick").cells}
    assert t3[("transformer", "bit-xor")].config.body == "minilm"
    assert t3[("lstm_3_layer", "bit-xor")].config.body == "lstm-3-w384"  # the LSTM has MiniLM's width at quick
    assert {c.config.body for c in expand("table3", "paper").cells if c.config} == {
        "gpt2", "lstm-3", "lstm-12-residual-positional"}
    t2 = {(c.row, c.key): c for c in expand("table2", "quick").cells}
    assert t2[("bit_memory_pretrained", "bit-xor")].pretrain_task == "bit-memory"
    t6 = expand("table6", "paper")
    assert {c.metric for c in t6.cells} == {"steps_to_converge"}
    t7 = {(c.row, c.key): c for c in expand("table7", "paper").cells}
    assert t7[("fpt_gpt2_12_layers", "train")].metric == "train_eval_accuracy"


def test_runner_is_resumable_and_reports_paper_vs_ours(tiny_gpt2_dir, tmp_path):
    config = RunConfig(body=tiny_gpt2_dir, init="random", steps=4, eval_every=2, batch_size=4,
                       task_options={"eval_size": 16})
    table = Table("table3", "Tiny table", "quick", ["transformer", "lstm_3_layer"], ["bit-xor"], [
        Cell("transformer", "bit-xor", config, "test_accuracy", 100.0),
        Cell("lstm_3_layer", "bit-xor", None, "test_accuracy", 50.0, skip="not today"),
    ])
    store = Store(tmp_path / "runs")
    results = run_table(table, store, progress=False)
    assert [r["status"] for r in results] == ["done", "skipped"]
    rows = write_report(table, results, tmp_path, "fpt reproduce tiny")
    ours = rows[0]["ours"]
    assert ours == pytest.approx(100 * results[0]["summary"]["test_accuracy"], abs=0.01)
    assert rows[0]["paper"] == 100.0 and rows[0]["difference"] == pytest.approx(ours - 100.0, abs=0.01)
    report = (tmp_path / "report.md").read_text()
    assert f"**{ours:.1f}** / 100.0" in report and "not today" in report and "fpt reproduce tiny" in report
    assert (tmp_path / "results.csv").read_text().startswith("table,scale,row,column,paper_column,metric,split,paper,ours")
    run_dir = results[0]["run_dir"]
    assert run_dir.parent == store.root and rows[0]["run_dir"] == f"runs/{run_dir.name}"
    mtime = (run_dir / "summary.json").stat().st_mtime
    again = run_table(table, store, progress=False)  # finished cells are not rerun
    assert again[0]["summary"] == results[0]["summary"]
    assert (run_dir / "summary.json").stat().st_mtime == mtime


def test_only_runs_the_selected_cells_and_reports_the_whole_table(tiny_gpt2_dir, tmp_path):
    config = RunConfig(body=tiny_gpt2_dir, init="random", steps=2, eval_every=2, batch_size=4,
                       task_options={"eval_size": 8})
    table = Table("table9", "Tiny table", "quick", ["pretrained", "default_random"], ["bit-xor"], [
        Cell("pretrained", "bit-xor", config, "test_accuracy", 100.0),
        Cell("default_random", "bit-xor", config.__class__(**{**config.to_dict(), "lr": 1e-2}), "test_accuracy",
             100.0),
    ])
    store = Store(tmp_path / "runs")
    first = run_table(table, store, progress=False, only="pretrained/")
    assert [r["status"] for r in first] == ["done", "not run"] and "--only" in first[1]["note"]
    assert not first[1]["run_dir"].exists()
    rows = write_report(table, first, tmp_path, "fpt reproduce tiny --only pretrained/")
    assert "not run / 100.0" in (tmp_path / "report.md").read_text() and len(rows) == 2
    second = run_table(table, store, progress=False, only="default_random")  # the first cell's run is reused
    assert [r["status"] for r in second] == ["done", "done"] and second[0]["summary"] == first[0]["summary"]


def test_unknown_table_and_scale_are_errors():
    from fpt.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown table 'table99'"):
        expand("table99", "quick")
    with pytest.raises(ConfigError, match="unknown scale"):
        expand("table3", "huge")
