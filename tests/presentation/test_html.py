import dataclasses
import json
import shlex
import shutil

from fpt.config import train_command
from fpt.experiments.grid import Cell, Table
from fpt.presentation import html as R
from fpt.presentation.tables import write_report
from fpt.train import resume_config


def test_merge_markdown_keeps_other_text_and_replaces_its_own_section():
    first = R.merge_markdown("# Table\n\nby fpt reproduce\n", "ours 1")
    assert first.startswith("# Table\n\nby fpt reproduce\n") and "ours 1" in first
    second = R.merge_markdown(first, "ours 2")
    assert second.count(R.BEGIN) == 1 and "ours 1" not in second and "by fpt reproduce" in second
    assert R.merge_markdown(None, "x") == f"{R.BEGIN}\nx\n{R.END}\n"


def test_train_command_rebuilds_the_config(xor_run):
    from fpt.cli import parser
    from fpt.cli._args import config_from_args

    saved = resume_config(xor_run)
    command = train_command(saved.to_dict(), "elsewhere")
    args = parser().parse_args(shlex.split(command)[1:])
    assert config_from_args(args) == saved and args.out == "elsewhere"


def test_single_run_report(xor_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(xor_run, run)
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**summary, "environment": {"torch": "9.9-trained"}}))
    html_path, md_path = R.write(run, R.Options(attention="auto", attention_examples=4))
    page = html_path.read_text()
    assert "<h2>Runs</h2>" in page and "<h2>Parameters per group (trained / total)</h2>" in page
    assert page.count('<img src="data:image/png;base64,') == 4  # curves + mean, example, heads
    assert (run / "attention" / "checkpoint-layer0" / "score.json").is_file()  # computed: bit-xor is cheap
    assert "torch" in page and "transformers" in page and "fpt_git_commit" in page
    assert "9.9-trained" in page  # the versions recorded at training time, when the summary has them
    md = md_path.read_text()
    assert md.startswith(R.BEGIN) and "](report_files/curves-bit-xor.png)" in md
    assert "](attention/checkpoint-layer0/mean.png)" in md and (run / "report_files" / "curves-bit-xor.png").is_file()


def test_reproduce_output_report(xor_run, tmp_path):
    out = tmp_path / "all" / "table6"
    shutil.copytree(xor_run, tmp_path / "all" / "runs" / "abc123")  # the shared store beside the table
    config = resume_config(xor_run)
    cells = [Cell("fpt", "bit-xor", config, "steps_to_converge", 500.0),
             Cell("random", "bit-xor", None, "steps_to_converge", 20000.0, skip="not at this scale")]
    table = Table("table6", "Table 6: steps to converge", "quick", ["fpt", "random"], ["bit-xor"], cells)
    summary = json.loads((xor_run / "summary.json").read_text())
    results = [{"cell": cells[0], "summary": summary, "status": "done", "note": "", "seed": 0,
                "run_dir": tmp_path / "all" / "runs" / "abc123"},
               {"cell": cells[1], "summary": None, "status": "skipped", "note": "not at this scale"}]
    write_report(table, results, out, "fpt reproduce table6 --scale quick")
    original = (out / "report.md").read_text()

    R.write(out, R.Options(attention="never"))
    page = (out / "report.html").read_text()
    assert "<title>Table 6: steps to converge</title>" in page and "<h2>Paper vs ours</h2>" in page
    # the page shows the cell as report.md and results.csv have it (steps to converge: reach-and-stay, a
    # cap-bound count as ">= N", a flat curve as "no learning": fpt.presentation.tables)
    import csv

    from fpt.presentation.tables import cell_text

    row = next(r for r in csv.DictReader((out / "results.csv").open()) if r["row"] == "fpt")
    shown = cell_text(row, bold=False)
    assert shown.endswith("/ 500") or "/ 500 (" in shown
    assert f"<td>{shown}</td>" in page and "<td>skipped / 20000</td>" in page
    assert "../runs/abc123" in (out / "results.csv").read_text()
    assert "<code>../runs/abc123</code>" in page  # the run results.csv names, in the shared store
    assert "fpt reproduce table6 --scale quick" in page
    assert '<img src="data:image/png;base64,' in page and "<h2>Attention" not in page
    md = (out / "report.md").read_text()
    assert md.startswith(original.rstrip("\n")) and md.count(R.BEGIN) == 1
    assert "# Table 6" not in md.split(R.BEGIN)[1]  # the reproduce text keeps the only title

    R.write(out, R.Options(attention="never"))  # idempotent: the section is replaced, not appended
    again = (out / "report.md").read_text()
    assert again.count(R.BEGIN) == 1 and again.startswith(original.rstrip("\n"))


def test_counts_fall_back_to_the_checkpoint_file(xor_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(xor_run, run)
    config = (run / "config.yaml").read_text().replace("task: bit-xor", "task: no-such-task")
    (run / "config.yaml").write_text(config)
    table = R.counts_table([run], tmp_path)
    row = table.rows[0]
    assert row[-1].startswith("not rebuilt: unknown task") and int(row[-3].replace(",", "")) > 0


def test_parameter_counts_match_fpt_params(xor_run):
    counts = R.parameter_counts(dataclasses.asdict(resume_config(xor_run)))
    assert counts["input"] == (64, 64) and counts["output"] == (66, 66)  # width 32: 1->32 input, 32->2 head
    assert counts["attention"][0] == 0 and counts["attention"][1] > 0


def test_a_data_run_report_has_parameter_counts(tiny_gpt2_dir, tmp_path):
    """--data runs build their task from the config's data fields (pipeline.task_options), not task_options alone."""
    import fpt

    rows = ["a,b,label"] + [f"{i % 7},{(i * 3) % 5},{i % 2}" for i in range(40)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    exp = fpt.build(data=str(tmp_path / "t.csv"), body=tiny_gpt2_dir, init="random", steps=2, eval_every=2,
                    batch_size=8, device="cpu")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    row = R.counts_table([tmp_path / "run"], tmp_path).rows[0]
    assert not row[-1].startswith("not rebuilt") and row[-1].endswith("%"), row
    assert row[1] != "–" and int(row[-3].replace(",", "")) == R._checkpoint_trainable(tmp_path / "run")
    page = R.write(tmp_path / "run", R.Options(attention="never"))[0].read_text()
    assert "<h2>Parameters per group (trained / total)</h2>" in page and "not rebuilt" not in page


def test_a_refit_run_s_baselines_say_their_protocol(tmp_path):
    from fpt.baselines import compare

    run = tmp_path / "run"
    run.mkdir()
    summary = {"val_accuracy": None, "test_accuracy": 0.9, "wall_seconds": 2.0, "selected_step": 5, "steps": 5,
               "refit": {"selected_step": 4, "steps": 5, "selection_val_accuracy": 0.8}}
    result = {"metric": "accuracy", "protocol": "refit", "notes": [],
              "models": {"1-NN Euclidean": {"val": 0.7, "test": 0.85, "chosen": {}, "seconds": 0.1,
                                            "protocol": "refit"}}}
    (run / "summary.json").write_text(json.dumps({**summary, "baselines_models": compare(summary, result)}))
    para, table, line = R.baseline_blocks([run], tmp_path)
    assert para.text.endswith("made on validation only; then each model (fpt's included) refitted on train + "
                              "validation before test, as fpt train --refit does.")
    assert table.rows[0][:4] == ["fpt", "this run", "80.0", "90.0"] and table.rows[1][-1] == "refit"
    assert line.text.endswith("then refit on train+validation")


def test_a_closed_form_run_s_report_says_why_it_has_no_curve_and_repeats_no_note(tiny_bert_dir, tmp_path, capsys):
    """A closed-form run's one metrics row at step 0 was drawn as a learning curve of one point; and rebuilding the
    run to count its parameters read its data again, printing its notes (objective inferred, ...) a second time."""
    import warnings

    import fpt
    from fpt.cli import main

    rows = ["a,b,label"] + [f"{i % 7},{(i * 3) % 5},{i % 2}" for i in range(40)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                          baselines="none", device="cpu"), out=tmp_path / "run", progress=False)
    capsys.readouterr()
    assert main(["report", str(tmp_path / "run"), "--attention", "never"]) == 0
    assert "note:" not in capsys.readouterr().err
    page = (tmp_path / "run" / "report.md").read_text()
    assert "`run`: fitted in closed form (no gradient step), so no learning curve" in page
    assert "curves-" not in page and not list((tmp_path / "run").glob("report_files/curves-*"))
