"""bench/time_to_accuracy.py's pure parts: selection, the load guard, records, pairing, ratios and the
table. Nothing here runs the official code or trains a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bench_scripts import load

ROOT = Path(__file__).resolve().parents[2]


tta = load("time_to_accuracy")

MACHINE = {"cpu": "test cpu", "cpu_count": 2, "torch": "x"}


def ctx(idle: bool = True, sitting: str = "s1", load: float = 0.1) -> dict:
    return {"sitting": sitting, "threads": 2, "load_average_start": load, "idle": idle, "machine": MACHINE,
            "started_at": "2026-01-01T00:00:00+0000"}


def throughput(impl: str, seed: int, train: float, eval_: float, **kw) -> dict:
    return tta.make_record(impl, "throughput-cifar10", seed, seconds=60.0, steps=None, accuracy=None,
                           context=ctx(**kw), train_samples_per_s=train, eval_samples_per_s=eval_)


def timed(impl: str, seed: int, seconds: float | None, cap: float = 100.0, sitting: str = "s1", **extra) -> dict:
    return tta.make_record(impl, "bit-xor@100%", seed, seconds=seconds, steps=200, accuracy=1.0,
                           context=ctx(sitting=sitting), target=1.0, max_seconds=cap, **extra)


# --- the load guard ------------------------------------------------------------------------------

def test_load_guard_allows_threads_plus_half():
    assert tta.check_load(2.5, threads=2, allow_busy=False) is True
    assert tta.check_load(0.0, threads=1, allow_busy=False) is True


def test_load_guard_refuses_a_busy_machine():
    with pytest.raises(tta.BusyMachineError, match="load average is 2.51"):
        tta.check_load(2.51, threads=2, allow_busy=False)
    with pytest.raises(tta.BusyMachineError):
        tta.check_load(1.6, threads=1, allow_busy=False)


def test_load_guard_with_allow_busy_reports_not_idle():
    assert tta.check_load(9.0, threads=2, allow_busy=True) is False


def test_main_refuses_on_a_busy_machine_before_running_anything(tmp_path, monkeypatch, capsys):
    (tmp_path / "universal_computation").mkdir()
    monkeypatch.setattr(tta.os, "getloadavg", lambda: (7.0, 7.0, 7.0))
    monkeypatch.setattr(tta, "run_one", lambda *a, **k: pytest.fail("a run started on a busy machine"))
    out = tmp_path / "r.jsonl"
    code = tta.main(["--only", "bit-xor", "--seeds", "0", "--official-dir", str(tmp_path), "--out", str(out)])
    assert code == 2
    assert "refusing to measure" in capsys.readouterr().err
    assert not out.exists()


def test_main_with_allow_busy_records_idle_false(tmp_path, monkeypatch, capsys):
    (tmp_path / "universal_computation").mkdir()
    monkeypatch.setattr(tta.os, "getloadavg", lambda: (7.0, 7.0, 7.0))
    monkeypatch.setattr(tta, "machine_info", lambda: MACHINE)
    seen = []

    def fake_run(impl, m, seed, args, context):
        seen.append((m.name, seed, impl))
        return [tta.make_record(impl, "bit-xor@100%", seed, seconds=10.0 if impl == "fpt" else 20.0, steps=1,
                                accuracy=1.0, context=context, target=1.0, max_seconds=args.max_seconds)]

    monkeypatch.setattr(tta, "run_one", fake_run)
    out = tmp_path / "r.jsonl"
    code = tta.main(["--only", "bit-xor", "--seeds", "0,1", "--official-dir", str(tmp_path), "--out", str(out),
                     "--allow-busy", "--pause", "0"])
    assert code == 0
    assert seen == [("bit-xor", 0, "official"), ("bit-xor", 0, "fpt"), ("bit-xor", 1, "official"), ("bit-xor", 1, "fpt")]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 4 and all(r["idle"] is False for r in records)
    captured = capsys.readouterr()
    assert "BUSY MACHINE" in captured.err
    assert "2.00x / 2.00x / 2.00x" in captured.out and "**NO** (2 of 2 busy)" in captured.out


# --- selection and options -----------------------------------------------------------------------

def test_select_by_name_and_prefix():
    assert [m.name for m in tta.select(["bit-xor"])] == ["bit-xor"]
    assert [m.name for m in tta.select(["throughput"])] == ["throughput-bit-memory", "throughput-cifar10"]
    assert len(tta.select(None)) == len(tta.MEASUREMENTS)
    with pytest.raises(ValueError, match="no such measurement"):
        tta.select(["cifar100"])


def test_parse_seeds():
    assert tta.parse_seeds(["0,1", "2"]) == [0, 1, 2]
    assert tta.parse_seeds(["3"]) == [3]
    with pytest.raises(ValueError):
        tta.parse_seeds(["0,0"])


def test_dry_run_alternates_implementations_per_seed(tmp_path, capsys):
    (tmp_path / "universal_computation").mkdir()
    assert tta.main(["--only", "digits", "--seeds", "0,1,2", "--official-dir", str(tmp_path), "--dry-run"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[:6] == ["digits seed 0 official", "digits seed 0 fpt", "digits seed 1 official", "digits seed 1 fpt",
                         "digits seed 2 official", "digits seed 2 fpt"]


def test_quick_bit_memory_matches_fpt_quick_scale():
    tasks = yaml.safe_load((ROOT / "src" / "fpt" / "experiments" / "tasks.yaml").read_text())
    quick = tasks["quick"]["bit-memory"]
    assert quick["name"] == "bit-memory-100"
    assert {k: quick["task_options"][k] for k in tta.BIT_MEMORY_100} == tta.BIT_MEMORY_100
    m = tta.BY_NAME["bit-memory-100"]
    assert m.fpt == {"task": "bit-memory", "task_options": tta.BIT_MEMORY_100}
    assert m.official["n"] == tta.BIT_MEMORY_100["n_bits"] and m.official["patch_size"] == tta.BIT_MEMORY_100["token_dim"]


def test_targets_of_the_brief():
    assert {tta.measurement_key(m.name, t) for m in tta.MEASUREMENTS for t in m.targets} == {
        "bit-xor@100%", "bit-memory-100@95%", "bit-memory-100@96.5%", "bit-memory-100@99%",
        "mnist-5k@90%", "mnist-5k@95%", "digits@95%"}


# --- records -------------------------------------------------------------------------------------

def test_record_format():
    r = tta.make_record("official", "digits@95%", 2, seconds=12.34567, steps=300, accuracy=0.951234567,
                        context=ctx(load=0.42), target=0.95)
    assert list(r)[:6] == ["implementation", "measurement", "seed", "seconds", "steps", "accuracy"]
    assert r["seconds"] == 12.346 and r["accuracy"] == 0.95123 and r["steps"] == 300 and r["target"] == 0.95
    for key in ("sitting", "threads", "load_average_start", "idle", "machine", "started_at"):
        assert key in r
    assert r["machine"]["cpu"] == "test cpu" and r["load_average_start"] == 0.42
    json.dumps(r)  # one JSONL line
    assert tta.make_record("fpt", "x", 0, seconds=None, steps=None, accuracy=None, context=ctx())["seconds"] is None
    with pytest.raises(ValueError):
        tta.make_record("other", "x", 0, seconds=1, steps=1, accuracy=1, context=ctx())


def test_first_reach():
    rows = [{"step": 100, "held_out": 0.5}, {"step": 200, "held_out": None}, {"step": 300, "held_out": 0.95},
            {"step": 400, "held_out": 0.97}]
    assert tta.first_reach(rows, "held_out", 0.95)["step"] == 300
    assert tta.first_reach(rows, "held_out", 0.99) is None


def test_results_from_fpt_metrics():
    m = tta.BY_NAME["mnist-5k"]
    rows = [{"event": "start", "setup_seconds": 3.0, "val_key": "val_accuracy", "batch_size": 16, "eval_every": 50,
             "eval_size": 500, "threads_used": 2}, {"event": "end", "stopped": "target"}]
    metrics = [{"step": 50, "wall_seconds": 10.0, "val_accuracy": 0.5}, {"step": 100, "wall_seconds": 20.0, "val_accuracy": 0.91},
               {"step": 150, "wall_seconds": 30.0, "val_accuracy": 0.96}]
    r90, r95 = tta.results_from_rows("fpt", m, rows, metrics)
    assert (r90["target"], r90["seconds"], r90["steps"], r90["accuracy"]) == (0.90, 20.0, 100, 0.91)
    assert (r95["seconds"], r95["steps"], r95["reached"], r95["stopped"]) == (30.0, 150, True, "target")
    assert "official_estimate" not in r90


def test_results_from_official_rows_keep_its_own_estimate():
    m = tta.BY_NAME["bit-xor"]
    rows = [{"event": "start", "setup_seconds": 5.0, "batch_size": 4, "eval_every": 100, "eval_size": 1000,
             "official_estimate_examples": 100},
            {"event": "eval", "step": 100, "seconds": 4.0, "held_out": 0.8, "estimate": 0.82},
            {"event": "eval", "step": 200, "seconds": 8.0, "held_out": 0.995, "estimate": 1.0},
            {"event": "eval", "step": 300, "seconds": 12.0, "held_out": 1.0, "estimate": 1.0},
            {"event": "end", "stopped": "target"}]
    (r,) = tta.results_from_rows("official", m, rows, None)
    assert (r["seconds"], r["steps"], r["accuracy"]) == (12.0, 300, 1.0)
    assert r["official_estimate"] == {"seconds": 8.0, "steps": 200, "accuracy": 1.0, "held_out_accuracy": 0.995,
                                      "examples": 100}


def test_results_when_the_target_is_not_reached():
    m = tta.BY_NAME["bit-xor"]
    rows = [{"event": "eval", "step": 100, "seconds": 4.0, "held_out": 0.7, "estimate": 0.6},
            {"event": "eval", "step": 200, "seconds": 8.0, "held_out": 0.6, "estimate": 0.65},
            {"event": "end", "stopped": "time"}]
    (r,) = tta.results_from_rows("official", m, rows, None)
    assert r["seconds"] is None and not r["reached"] and r["accuracy"] == 0.7 and r["steps"] == 200
    assert r["official_estimate"] is None
    (f,) = tta.results_from_rows("fpt", m, [{"event": "timeout"}], [])
    assert f["seconds"] is None and f["steps"] is None and f["stopped"] == "timeout"


# --- ratios and the table ------------------------------------------------------------------------

def test_pair_ratio():
    assert tta.pair_ratio(2.0, 5.0, higher_is_better=True) == (2.5, "")
    assert tta.pair_ratio(30.0, 10.0, higher_is_better=False) == (3.0, "")
    assert tta.pair_ratio(None, 10.0, False, official_cap=100.0) == (10.0, ">=")  # official never got there
    assert tta.pair_ratio(20.0, None, False, fpt_cap=100.0) == (0.2, "<=")
    assert tta.pair_ratio(None, None, False, 100.0, 100.0) == (None, "")
    assert tta.pair_ratio(0.0, 5.0, True) == (None, "")


def test_summary():
    assert tta.summary([3.0, 1.0, 2.0]) == (1.0, 2.0, 3.0)
    assert tta.summary([1.0, 4.0]) == (1.0, 2.5, 4.0)
    assert tta.summary([]) is None


def test_table_ratios_min_median_max_over_seeds():
    records = []
    for seed, (o, f) in enumerate([(2.0, 5.0), (2.0, 4.0), (2.0, 6.0)]):
        records += [throughput("official", seed, o, 2 * o), throughput("fpt", seed, f, 2 * f)]
    for seed, (o, f) in enumerate([(30.0, 10.0), (40.0, 10.0), (20.0, 10.0)]):
        records += [timed("official", seed, o, official_estimate={"seconds": o / 2, "held_out_accuracy": 0.9}),
                    timed("fpt", seed, f)]
    text = tta.table(records)
    lines = {line.split(" | ")[0].lstrip("| ") + "/" + line.split(" | ")[1]: line for line in text.splitlines()
             if line.startswith("| ") and "---" not in line}
    assert "2.00x / 2.50x / 3.00x" in lines["throughput-cifar10/train samples/s"]
    assert "2.00x / 2.50x / 3.00x" in lines["throughput-cifar10/eval samples/s"]
    row = lines["bit-xor@100%/seconds to target"]
    assert "2.00x / 3.00x / 4.00x" in row and "30 (reached 3/3)" in row and "10 (reached 3/3)" in row
    assert "15 (0.9)" in row and row.endswith("| yes |")
    assert "Fewer than 3 seeds" not in text


def test_table_marks_bounds_busy_runs_few_seeds_and_skips_errors():
    records = [timed("official", 0, None), timed("fpt", 0, 10.0),
               timed("official", 1, 30.0), tta.make_record("fpt", "bit-xor@100%", 1, seconds=None, steps=None,
                                                            accuracy=None, context=ctx(), error="exit 1: boom")]
    busy = tta.make_record("fpt", "throughput-cifar10", 0, seconds=1, steps=None, accuracy=None, context=ctx(idle=False),
                           train_samples_per_s=4.0, eval_samples_per_s=8.0)
    records += [throughput("official", 0, 2.0, 4.0), busy]
    text = tta.table(records)
    assert "10.00x / 10.00x / 10.00x (>= bounds in 1)" in text  # official censored at its 100 s cap
    assert "(reached 0/1)" in text
    assert "**NO** (1 of 1 busy)" in text
    assert "Fewer than 3 seeds" in text and "counts as the cap" in text


def test_table_pairs_within_a_sitting_only():
    records = [timed("official", 0, 30.0, sitting="a"), timed("fpt", 0, 10.0, sitting="b")]
    assert tta.table(records) == "(no paired official/fpt records)"
    records += [timed("fpt", 0, 15.0, sitting="a")]
    assert "2.00x / 2.00x / 2.00x" in tta.table(records)


def test_table_option_reads_a_records_file(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [timed("official", 0, 30.0), timed("fpt", 0, 10.0)]) + "\n{broken\n")
    assert tta.main(["--table", str(path)]) == 0
    assert "3.00x / 3.00x / 3.00x" in capsys.readouterr().out


def test_targets_keeps_only_the_named_targets_of_time_to_target_measurements():
    chosen = tta.keep_targets(tta.select(["throughput-cifar10", "mnist-5k", "bit-xor"]), [0.9, 1.0])
    by = {m.name: m for m in chosen}
    assert by["mnist-5k"].targets == (0.9,) and by["bit-xor"].targets == (1.0,)
    assert by["throughput-cifar10"].targets == ()
    assert tta.keep_targets(tta.select(["mnist-5k"]), None)[0].targets == (0.90, 0.95)
    with pytest.raises(ValueError, match="digits has targets"):
        tta.keep_targets(tta.select(["digits"]), [0.9])


@pytest.mark.parametrize("name", ["bit-xor", "bit-memory-100", "digits", "mnist-5k"])
def test_fast_example_configs_are_valid_configs_for_their_measurement(name):
    from fpt.config import RunConfig, from_dict, load_yaml

    path = ROOT / "examples" / "fast" / f"{name}.yaml"
    from_dict(RunConfig, load_yaml(path), where=str(path))  # what `fpt train --config` accepts
    options = tta.config_file_options(path, tta.select([name]))
    assert "task" not in options and "body" not in options and options["precision"] == "bf16"


def test_fpt_config_must_match_the_one_measurement_chosen(tmp_path):
    path = ROOT / "examples" / "fast" / "bit-xor.yaml"
    with pytest.raises(ValueError, match="trains 'digits'"):
        tta.config_file_options(path, tta.select(["digits"]))
    with pytest.raises(ValueError, match="exactly one"):
        tta.config_file_options(path, tta.select(["bit-xor", "digits"]))
    other = tmp_path / "c.yaml"
    other.write_text("task: bit-xor\nbody: gpt2\n")
    with pytest.raises(ValueError, match="both implementations here run minilm"):
        tta.config_file_options(other, tta.select(["bit-xor"]))


def test_fpt_option_overrides_the_config_file():
    path = ROOT / "examples" / "fast" / "bit-xor.yaml"
    options = tta.fpt_options(["lr=0.005", "task.n_bits=5"], path, tta.select(["bit-xor"]))
    assert options["lr"] == 0.005 and options["batch_size"] == 8 and options["task_options"] == {"n_bits": 5}
    assert tta.fpt_options(["lr=0.005"], None, tta.select(["bit-xor"])) == {"lr": 0.005}


def test_task_options_given_as_fpt_options_add_to_the_measurements_own():
    m = tta.BY_NAME["bit-memory-100"]
    fields = tta.fpt_fields({"fpt": m.fpt, "fpt_options": {"task_options": {"eval_size": 500}, "lr": 0.003}})
    assert fields == {"task": "bit-memory", "task_options": {**tta.BIT_MEMORY_100, "eval_size": 500}, "lr": 0.003}
    assert m.fpt["task_options"] == tta.BIT_MEMORY_100  # the measurement itself is left as it was


def test_plain_defaults_are_measured_unless_a_preset_is_named():
    chosen = tta.select(["bit-xor"])
    assert tta.fpt_options([], None, chosen, "fast") == {"preset": "fast"}
    assert tta.fpt_options(["dropout=0.1"], None, chosen, "paper") == {"preset": "paper", "dropout": 0.1}
    from fpt.config import RunConfig, from_dict

    fields = tta.fpt_fields({"fpt": tta.BY_NAME["mnist-5k"].fpt, "fpt_options": {"preset": "fast"}})
    config = from_dict(RunConfig, fields)  # as the fpt worker's fpt.build resolves it
    assert config.task_options == {"image_size": 28} and config.dropout == 0.0 and config.eval_subset == 200


def test_test_accuracy_at_each_sides_stop_is_recorded_and_shown():
    m = tta.BY_NAME["bit-xor"]
    official = [{"event": "eval", "step": 100, "seconds": 4.0, "held_out": 1.0, "estimate": 1.0},
                {"event": "end", "stopped": "target", "test_accuracy": 0.998}]
    (o,) = tta.results_from_rows("official", m, official, None)
    fpt_rows = [{"event": "start", "config": {"preset": "fast", "task_options": {}}},
                {"event": "end", "stopped": "target", "test_accuracy": 1.0, "test_accuracy_selected": 0.999}]
    (f,) = tta.results_from_rows("fpt", m, fpt_rows, [{"step": 20, "wall_seconds": 1.0, "val_accuracy": 1.0}])
    assert (o["test_accuracy_at_stop"], f["test_accuracy_at_stop"], f["preset"]) == (0.998, 1.0, "fast")
    records = [tta.make_record(impl, "bit-xor@100%", 0, seconds=r.pop("seconds"), steps=r.pop("steps"),
                               accuracy=r.pop("accuracy"), context=ctx(), **{k: v for k, v in r.items() if k != "target"})
               for impl, r in (("official", o), ("fpt", f))]
    assert "test at stop 0.998" in tta.table(records) and "test at stop 1" in tta.table(records)
