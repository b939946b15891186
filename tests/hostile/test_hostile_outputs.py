"""Damage (issue 39): every output path fpt writes goes through one guarded writer (fpt.outputs), checked before
any work: an existing file needs --force, a link out of its folder is refused even with --force, a run's or an
export's own files are never another command's output."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hostile_helpers import FAST, files, one_line, table

from bench_scripts import load as load_bench
from fpt import outputs
from fpt.cli import main
from fpt.errors import ConfigError, FptError

RUN_FILES = ["config.yaml", "metrics.jsonl", "summary.json", "data.json", "selection.json", "best/x.csv",
             "checkpoint/y.csv", "run.lock"]


def test_an_existing_file_needs_force(tmp_path):
    mine = tmp_path / "mine.csv"
    mine.write_text("mine")
    with pytest.raises(ConfigError, match="exists"):
        outputs.check_file(mine)
    assert outputs.check_file(mine, force=True) == mine


def test_fpt_replaces_its_own_output_without_force(tmp_path):
    ours = tmp_path / "report.html"
    ours.write_text("<!-- fpt -->")
    assert outputs.check_file(ours, fpt_wrote=outputs.starts_with(b"fpt")) == ours


def test_a_link_to_a_file_elsewhere_is_refused_even_with_force(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "elsewhere" / "precious.txt"
    target.write_text("precious")
    (tmp_path / "out").mkdir()
    link = tmp_path / "out" / "claims.md"
    link.symlink_to(target)
    with pytest.raises(ConfigError, match="symbolic link"):
        outputs.write_text(link, "overwritten", force=True)
    assert target.read_text() == "precious"


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_link_that_leads_nowhere_is_refused(kind, tmp_path):
    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "missing.csv" if kind == "dangling" else link)
    with pytest.raises(ConfigError, match="leads nowhere"):
        outputs.check_file(link, force=True)


def test_force_replaces_a_link_in_its_folder_not_its_target(tmp_path):
    target = tmp_path / "old.csv"
    target.write_text("old")
    link = tmp_path / "new.csv"
    link.symlink_to(target.name)
    outputs.write_text(link, "new", force=True)
    assert not link.is_symlink() and link.read_text() == "new" and target.read_text() == "old"


@pytest.mark.parametrize("name", RUN_FILES)
def test_a_runs_own_files_are_never_an_output(name, run_copy):
    path = run_copy / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with pytest.raises(ConfigError, match="never replaces"):
        outputs.check_file(path, force=True)


@pytest.mark.parametrize("name", ["config.json", "fpt_model.safetensors", "README.md", "body/config.json"])
def test_an_exports_own_files_are_never_an_output(name, export_copy):
    with pytest.raises(ConfigError, match="export"):
        outputs.check_file(export_copy / name, force=True)


def test_a_folder_output_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        outputs.check_dir(tmp_path / "f")


def test_predict_refuses_a_link_out_of_its_folder(run_copy, tmp_path, capsys):
    data = table(tmp_path / "new.csv", n=6, seed=1)
    (tmp_path / "keep").mkdir()
    precious = tmp_path / "keep" / "notes.txt"
    precious.write_text("notes")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "p.csv").symlink_to(precious)
    assert main(["predict", str(run_copy), str(data), "--out", str(tmp_path / "out" / "p.csv"), "--force"]) == 2
    one_line(capsys, "predict", "symbolic link")
    assert precious.read_text() == "notes"


def test_predict_on_a_self_looping_out_is_one_line(run_copy, tmp_path, capsys):
    data = table(tmp_path / "new.csv", n=6, seed=1)
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    assert main(["predict", str(run_copy), str(data), "--out", str(loop)]) == 2
    one_line(capsys, "predict", "leads nowhere")


def test_predict_never_writes_into_the_best_folder(run_copy, tmp_path, capsys):
    data = table(tmp_path / "new.csv", n=6, seed=1)
    before = files(run_copy)
    assert main(["predict", str(run_copy), str(data), "--out", str(run_copy / "best" / "p.csv"), "--force"]) == 2
    one_line(capsys, "predict")
    assert files(run_copy) == before


def test_plot_refuses_a_png_fpt_did_not_write_and_replaces_its_own(run_copy, tmp_path, capsys):
    mine = tmp_path / "curves.png"
    mine.write_bytes(b"\x89PNG my own figure")
    assert main(["plot", str(run_copy), "--out", str(mine)]) == 2
    one_line(capsys, "plot", "exists")
    assert mine.read_bytes() == b"\x89PNG my own figure"
    assert main(["plot", str(run_copy)]) == 0  # RUN/curves.png, fpt's own
    first = (run_copy / "curves.png").stat().st_mtime_ns
    assert main(["plot", str(run_copy)]) == 0  # again, without --force: it is fpt's
    assert (run_copy / "curves.png").stat().st_mtime_ns >= first


def test_report_refuses_a_report_html_fpt_did_not_write(run_copy, capsys):
    (run_copy / "report.html").write_text("<html>my notes</html>")
    assert main(["report", str(run_copy), "--attention", "never"]) == 2
    one_line(capsys, "report", "report.html")
    assert (run_copy / "report.html").read_text() == "<html>my notes</html>"
    assert main(["report", str(run_copy), "--attention", "never", "--force"]) == 0
    assert main(["report", str(run_copy), "--attention", "never"]) == 0  # its own now


def test_report_md_is_never_written_through_a_link_elsewhere(run_copy, tmp_path, capsys):
    precious = tmp_path / "precious.md"
    precious.write_text("mine")
    (run_copy / "report.md").symlink_to(precious)
    assert main(["report", str(run_copy), "--attention", "never"]) == 2
    one_line(capsys, "report", "symbolic link")
    assert precious.read_text() == "mine"


def _side_by_side(argv):
    return load_bench("side_by_side").main(argv)


def test_side_by_side_never_replaces_a_runs_summary(run_copy, tmp_path, capsys):
    summary = (run_copy / "summary.json").read_bytes()
    assert _side_by_side(["--a", "a", str(run_copy.parent), "--b", "b", str(run_copy.parent),
                          "--out", str(run_copy / "summary.json"), "--force"]) == 2
    assert "never replaces" in capsys.readouterr().err
    assert (run_copy / "summary.json").read_bytes() == summary


def test_side_by_side_refuses_a_users_file_without_force(run_copy, tmp_path, capsys):
    mine = tmp_path / "mine.md"
    mine.write_text("mine")
    assert _side_by_side(["--a", "a", str(run_copy.parent), "--b", "b", str(run_copy.parent), "--out", str(mine)]) == 2
    assert "exists" in capsys.readouterr().err and mine.read_text() == "mine"


def test_train_choose_refuses_a_users_selection_json_before_cross_validating(tiny_bert_dir, tmp_path, capsys):
    data = table(tmp_path / "d.csv")
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "selection.json").write_text('{"my": "selection"}')
    started = time.perf_counter()
    assert main(["train", "--data", str(data), "--body", tiny_bert_dir, "--init", "random", "--device", "cpu",
                 "--quiet", "--choose", "lr=0.001", "--choose", "lr=0.01", "--out", str(folder)]) == 2
    err = one_line(capsys, "train", "selection.json", "not an fpt run")
    assert "cross-validation" not in err and time.perf_counter() - started < 20
    assert (folder / "selection.json").read_text() == '{"my": "selection"}'
    assert sorted(os.listdir(folder)) == ["selection.json"]


def test_train_refuses_a_users_summary_before_building(tiny_bert_dir, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "summary.json").write_text("{}")
    assert main(["train", "--data", str(table(tmp_path / "d.csv")), "--body", tiny_bert_dir, "--init", "random",
                 "--quiet", "--out", str(folder)]) == 2
    one_line(capsys, "train", "summary.json")
    assert files(folder) == {"summary.json": b"{}"}


def test_train_out_that_is_a_file_is_refused(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["train", "--task", "bit-xor", "--body", tiny_bert_dir, "--init", "random", "--quiet",
                 "--out", str(tmp_path / "f")]) == 2
    one_line(capsys, "train", "is a file")


def test_train_out_that_links_elsewhere_is_refused(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "run").symlink_to(tmp_path / "b", target_is_directory=True)
    assert main(["train", "--task", "bit-xor", "--body", tiny_bert_dir, "--init", "random", "--quiet",
                 "--out", str(tmp_path / "a" / "run")]) == 2
    one_line(capsys, "train", "symbolic link")
    assert os.listdir(tmp_path / "b") == []


def test_export_into_a_link_elsewhere_is_refused(run_copy, tmp_path, capsys):
    (tmp_path / "target").mkdir()
    (tmp_path / "exports").mkdir()
    (tmp_path / "exports" / "e").symlink_to(tmp_path / "target", target_is_directory=True)
    assert main(["export", str(run_copy), str(tmp_path / "exports" / "e"), "--force"]) == 2
    one_line(capsys, "export", "symbolic link")
    assert os.listdir(tmp_path / "target") == []


def test_sweep_refuses_a_folder_with_a_users_results_before_any_trial(tiny_bert_dir, tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\nbase: {{task: bit-xor, body: {tiny_bert_dir}, init: random, steps: 2, eval_every: 2, "
                    "batch_size: 4, device: cpu}\ngrid: {lr: [0.001]}\nseeds: [0]\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.csv").write_text("my,results\n")
    assert main(["sweep", str(spec), "--out", str(out), "--quiet"]) == 2
    one_line(capsys, "sweep", "results.csv", "exists")
    assert files(out) == {"results.csv": b"my,results\n"}


def test_reproduce_refuses_a_users_results_csv_before_any_run(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.csv").write_text("my,own\n")
    assert main(["reproduce", "table2", "--scale", "quick", "--out", str(out), "--quiet", "--only", "nothing"]) == 2
    one_line(capsys, "reproduce", "results.csv")
    assert files(out) == {"results.csv": b"my,own\n"}


def test_the_guarded_writer_is_importable_for_every_command():
    # claims and the bench scripts write through it too: one mechanism, a stable import
    from fpt.outputs import check_dir, check_file, write_text  # noqa: F401

    assert issubclass(ConfigError, FptError) and FAST["baselines"] == "none" and Path
