"""A relative --body folder is saved absolute in the run's config, as --data is: fpt predict and eval from another
directory (or on a moved run) load the same folder, not 'not in the local Hugging Face cache'. A registered name or
a hub id with no folder of that name stays a name; a stored run's relative body still reads as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from fpt.bodies import located
from fpt.cli import main
from fpt.run import Run
from fpt.settings import RunConfig

STEPS = ["--init", "random", "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--device", "cpu", "--quiet"]


def test_a_relative_body_folder_is_absolute_and_a_name_stays_a_name(tmp_path, monkeypatch, tiny_bert_dir):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(tiny_bert_dir, tmp_path / "bodies" / "tiny")
    assert located("bodies/tiny") == str(tmp_path / "bodies" / "tiny")
    assert located("bodies/none") == "bodies/none"  # no such folder: a hub id, as given
    (tmp_path / "minilm").mkdir()  # a registered name is read before any folder of that name (build_body)
    assert located("minilm") == "minilm"
    assert located(tiny_bert_dir) == tiny_bert_dir


def test_predict_from_another_directory_loads_a_relative_body(tmp_path, monkeypatch, capsys, tiny_bert_dir,
                                                           tiny_tables):
    work, other = tmp_path / "work", tmp_path / "other"
    other.mkdir()
    shutil.copytree(tiny_bert_dir, work / "tiny")
    data = tiny_tables.classification("d.csv")
    monkeypatch.chdir(work)
    assert main(["train", "--data", str(data), "--body", "tiny", *STEPS, "--out", str(work / "run")]) == 0
    monkeypatch.chdir(other)
    assert main(["predict", str(work / "run"), str(data), "--out", str(other / "p.csv")]) == 0, \
        capsys.readouterr().err  # it was: cannot load the model config for 'tiny': it is not in the local HF cache
    saved = yaml.safe_load((work / "run" / "config.yaml").read_text())
    assert saved["body"] == str(work / "tiny")
    # a run stored before: its body relative, read from the directory it names, as it always was
    saved["body"] = "tiny"
    (work / "run" / "config.yaml").write_text(yaml.safe_dump(saved))
    monkeypatch.chdir(work)
    assert main(["predict", str(work / "run"), str(data), "--out", str(other / "q.csv")]) == 0
    assert Path(other / "q.csv").read_text() == Path(other / "p.csv").read_text()


def test_a_run_saved_with_the_absolute_body_agrees_with_the_relative_config_that_started_it(tmp_path, monkeypatch,
                                                                                            tiny_bert_dir):
    # a sweep or reproduce re-run plans the config as written (body 'tiny'); the run saved it absolute, and the resume
    # check (fpt.run.Run.resumable) called the two different experiments
    from fpt.pipeline import agrees

    monkeypatch.chdir(tmp_path)
    shutil.copytree(tiny_bert_dir, tmp_path / "tiny")
    wanted = RunConfig(task="bit-xor", body="tiny")
    saved = RunConfig(task="bit-xor", body=str(tmp_path / "tiny"))
    assert agrees(saved, wanted) and agrees(wanted, saved)
    assert not agrees(RunConfig(task="bit-xor", body=tiny_bert_dir), wanted)


def test_resume_with_the_relative_body_the_run_started_with_is_the_same_experiment(tmp_path, monkeypatch, capsys,
                                                                                  tiny_bert_dir):
    # the start command given again with --resume and a larger --steps: it was 'cannot resume with changed field(s)
    # ['body']', the run having saved the folder absolute
    monkeypatch.chdir(tmp_path)
    shutil.copytree(tiny_bert_dir, tmp_path / "tiny")
    assert main(["train", "--body", "tiny", *STEPS, "--out", "run"]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", "run", "--body", "tiny", *STEPS[:2], "--steps", "6", *STEPS[4:]]) == 0, \
        capsys.readouterr().err
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["body"] == str(tmp_path / "tiny")
    (tmp_path / "other").mkdir()
    shutil.copytree(tiny_bert_dir, tmp_path / "other" / "tiny")
    monkeypatch.chdir(tmp_path / "other")  # 'tiny' here is another folder: a different body, refused
    assert main(["train", "--resume", str(tmp_path / "run"), "--body", "tiny", "--steps", "8", "--quiet"]) == 2
    assert "cannot resume with changed field(s) ['body']" in capsys.readouterr().err


def _saved_body(body_dir: str, where: Path) -> None:
    """A body as fpt pretrain writes it (``--init checkpoint:WHERE``), its tensors a seeded random draw."""
    from fpt.bodies import BodySpec, build_body
    from fpt.bodies.init import save_body

    spec = BodySpec(body_dir, "random", seq_len=8, seed=3)
    save_body(build_body(spec), spec, where)


def test_a_relative_init_checkpoint_is_saved_absolute_and_predict_reads_it_from_another_directory(
        tmp_path, monkeypatch, capsys, tiny_bert_dir, tiny_tables):
    work, other = tmp_path / "work", tmp_path / "other"
    other.mkdir()
    _saved_body(tiny_bert_dir, work / "pre" / "body")
    data = tiny_tables.classification("d.csv")
    monkeypatch.chdir(work)
    steps = [s for s in STEPS if s not in ("--init", "random")]
    assert main(["train", "--data", str(data), "--body", tiny_bert_dir, "--init", "checkpoint:pre/body", *steps,
                 "--out", str(work / "run")]) == 0
    saved = yaml.safe_load((work / "run" / "config.yaml").read_text())
    assert saved["init"] == f"checkpoint:{work / 'pre' / 'body'}"  # it was 'checkpoint:pre/body'
    monkeypatch.chdir(other)
    capsys.readouterr()
    assert main(["predict", str(work / "run"), str(data), "--out", str(other / "p.csv")]) == 0, \
        capsys.readouterr().err  # it was: --init checkpoint:pre/body: pre/body/body.safetensors does not exist
    monkeypatch.chdir(work)
    assert main(["predict", str(work / "run"), str(data), "--out", str(other / "q.csv")]) == 0
    assert (other / "q.csv").read_text() == (other / "p.csv").read_text()
    # its export names the saved body by its run and folder alone, as it names a body folder: no local path
    Run(work / "run").export(other / "export")
    doc = json.loads((other / "export" / "config.json").read_text())
    assert doc["body"]["init"] == doc["run_config"]["init"] == "checkpoint:pre/body"
    assert str(tmp_path) not in (other / "export" / "config.json").read_text()

    from fpt.bodies.init import init_located

    assert init_located("checkpoint:pre/body") == f"checkpoint:{work / 'pre' / 'body'}"
    assert init_located("checkpoint:/abs/body") == "checkpoint:/abs/body"
    assert init_located("random") == "random"


def test_a_run_saved_with_the_absolute_checkpoint_agrees_with_the_relative_config_that_started_it(tmp_path,
                                                                                                  monkeypatch):
    from fpt.pipeline import agrees

    monkeypatch.chdir(tmp_path)
    wanted = RunConfig(task="bit-xor", init="checkpoint:pre/body")
    saved = RunConfig(task="bit-xor", init=f"checkpoint:{tmp_path / 'pre' / 'body'}")
    assert agrees(saved, wanted) and agrees(wanted, saved)
    assert not agrees(RunConfig(task="bit-xor", init=f"checkpoint:{tmp_path / 'other' / 'body'}"), wanted)


def test_resume_with_the_relative_checkpoint_the_run_started_with_is_the_same_experiment(tmp_path, monkeypatch,
                                                                                       capsys, tiny_bert_dir):
    # the start command given again with --resume and a larger --steps: it was 'cannot resume with changed field(s)
    # ['init']', the run having saved checkpoint:PATH absolute
    monkeypatch.chdir(tmp_path)
    _saved_body(tiny_bert_dir, tmp_path / "pre" / "body")
    # --steps given once per command: a flag given twice with two values is refused (tests/cli/test_overrides_given_twice.py)
    start = ["train", "--body", tiny_bert_dir, "--init", "checkpoint:pre/body", *STEPS[4:]]
    assert main([*start, "--steps", "4", "--out", "run"]) == 0
    capsys.readouterr()
    assert main([*start, "--resume", "run", "--steps", "6"]) == 0, capsys.readouterr().err
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["init"] == \
        f"checkpoint:{tmp_path / 'pre' / 'body'}"
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["steps"] == 6
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")  # 'pre/body' here names another place: a different init, refused
    assert main(["train", "--resume", str(tmp_path / "run"), "--init", "checkpoint:pre/body", "--steps", "8",
                 "--quiet"]) == 2
    assert "cannot resume with changed field(s) ['init']" in capsys.readouterr().err
