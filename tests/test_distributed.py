"""Data-parallel training: 2 CPU processes (gloo) must train exactly what 1 process trains."""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import fpt
from fpt import distributed
from fpt.errors import ConfigError
from fpt.tasks.base import Batch
from fpt.train import resume_config

STEPS = 4


def _fields(body: str, **kw) -> dict:
    # grad_accum 2: no_sync on the first micro-batch; eval_batch_size 16: evaluation shared out by batches.
    return {**dict(task="bit-xor", body=body, init="random", steps=STEPS, batch_size=8, grad_accum=2, eval_every=2,
                   eval_batch_size=16, dropout=0.0, task_options={"eval_size": 40}, device="cpu"), **kw}


def _trained(exp) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in exp.model.named_parameters() if p.requires_grad}


def _worker(rank: int, world: int, tmp: str, body: str) -> None:
    """One rank: an uninterrupted run, a run stopped and resumed, and what DDP communicates."""
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    from fpt.cli import main
    from fpt.train import train_step

    torch.set_num_threads(1)
    tmp_path = Path(tmp)
    # a rank that never comes (its process died starting) ends the wait after minutes, not the default half hour
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'pg'}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(minutes=5))
    try:
        exp = fpt.build(**_fields(body))
        # Each rank names its own run directory: only rank 0's may appear.
        fpt.fit(exp, out=tmp_path / f"ddp-{rank}", progress=False)
        torch.save(_trained(exp), tmp_path / f"params-{rank}.pt")

        fpt.fit(fpt.build(**_fields(body, steps=2)), out=tmp_path / "stopped", progress=False)
        resumed = fpt.build(resume_config(tmp_path / "stopped", {"steps": STEPS}))
        fpt.fit(resumed, out=tmp_path / "stopped", resume=True, progress=False)
        torch.save(_trained(resumed), tmp_path / f"resumed-{rank}.pt")

        exp = fpt.build(**_fields(body))
        group = distributed.current()
        wrapped = distributed.data_parallel(exp, group)
        reduced: list[torch.Tensor] = []

        def counting(state, bucket):
            reduced.extend(bucket.parameters())
            return default_hooks.allreduce_hook(state, bucket)

        wrapped.ddp.register_comm_hook(dist.group.WORLD, counting)
        optimizer = torch.optim.Adam([p for p in exp.model.parameters() if p.requires_grad])
        train_step(wrapped, optimizer, group.shard(exp.data.train.batch(0, 8)))
        trainable = [p for p in exp.model.parameters() if p.requires_grad]
        report = {
            "reduced_is_trainable": len(reduced) == len(trainable) and {id(p) for p in reduced} == {id(p) for p in trainable},
            "ignored": sorted(wrapped.ddp.parameters_to_ignore),
            "frozen": sorted(distributed.frozen_names(exp.model)),
            "n_frozen_params": sum(1 for p in exp.model.parameters() if not p.requires_grad),
        }
        # Last, the command in every rank, rank 0 failing before training (its fit refuses an out that holds a run):
        # rank 0 says why; the others, waiting for its start, stop with a line of their own once its process ends,
        # not at the process group's timeout (rank 0 is the spawned process here: it ends after this).
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            code = main(["train", "--task", "bit-xor", "--body", body, "--init", "random", "--steps", "2",
                         "--batch-size", "8", "--device", "cpu", "--quiet", "--out", str(tmp_path / "ddp-0")])
        report["refused"] = [code, said.getvalue()]
        (tmp_path / f"ddp-report-{rank}.json").write_text(json.dumps(report))
    finally:
        dist.destroy_process_group()


def _rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def _rank_0(_: int, world: int, tmp: str, body: str) -> None:
    _worker(0, world, tmp, body)


def test_two_processes_train_what_one_process_trains(tiny_gpt2_dir, tmp_path):
    # Rank 1 is this process, which has torch and transformers imported already; rank 0 a spawned one (a second one
    # spawned imported them again: about 10 s of CPU on CI's 2 cores), whose end releases rank 1 as torchrun's would.
    other = torch.multiprocessing.spawn(_rank_0, args=(2, str(tmp_path), tiny_gpt2_dir), nprocs=1, join=False)
    threads = torch.get_num_threads()
    try:
        _worker(1, 2, str(tmp_path), tiny_gpt2_dir)
    except BaseException:
        for process in other.processes:  # rank 0 may wait for rank 1 in the process group: no one is coming
            process.terminate()
        raise
    finally:
        torch.set_num_threads(threads)
    while not other.join():  # raises rank 0's error, if it had one
        pass

    single = fpt.build(**_fields(tiny_gpt2_dir))
    one = fpt.fit(single, out=tmp_path / "single", progress=False)
    expected = _trained(single)
    for name in ("params-0", "params-1", "resumed-0", "resumed-1"):
        got = torch.load(tmp_path / f"{name}.pt")
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            torch.testing.assert_close(got[key], value, atol=1e-5, rtol=1e-4, msg=f"{name}: {key}")

    # Rank 0 alone wrote the run directory; its numbers are one process's.
    assert (tmp_path / "ddp-0" / "summary.json").exists() and not (tmp_path / "ddp-1").exists()
    two = json.loads((tmp_path / "ddp-0" / "summary.json").read_text())
    assert (two["world_size"], two["global_batch_size"], one["world_size"]) == (2, 8, 1)
    assert two["test_accuracy"] == one["test_accuracy"] and two["selected_step"] == one["selected_step"]
    assert two["val_accuracy_last"] == one["val_accuracy_last"]
    for a, b in zip(_rows(tmp_path / "ddp-0"), _rows(tmp_path / "single"), strict=True):
        assert a["step"] == b["step"] and a["val_accuracy"] == b["val_accuracy"]
        assert a["train_accuracy"] == b["train_accuracy"]
        assert a["val_loss"] == pytest.approx(b["val_loss"], rel=1e-5)
        assert a["train_loss"] == pytest.approx(b["train_loss"], rel=1e-5)
    assert [r["step"] for r in _rows(tmp_path / "stopped")] == [2, 4]

    # DDP all-reduces the trained parameters only, and its start-up broadcast skips every frozen tensor.
    for rank in (0, 1):
        report = json.loads((tmp_path / f"ddp-report-{rank}.json").read_text())
        assert report["reduced_is_trainable"]
        assert report["n_frozen_params"] > 0 and set(report["frozen"]) <= set(report["ignored"])
    # rank 0's error, and rank 1's line: both commands exit 2, neither with a traceback
    [code, said] = json.loads((tmp_path / "ddp-report-0.json").read_text())["refused"]
    out = tmp_path / "ddp-0"
    assert code == 2 and said.strip() == (f"fpt train: error: {out} already holds a run; continue it with --resume {out} "
                                          "or choose another --out")
    [code, said] = json.loads((tmp_path / "ddp-report-1.json").read_text())["refused"]
    assert code == 2 and said.count("\n") == 1 and said.startswith("fpt train: rank ")
    assert "rank 0 stopped before training began" in said and "its error says why" in said


@pytest.fixture(scope="module")
def torchrun_run(tiny_gpt2_dir, tmp_path_factory) -> dict:
    """A 2-step run trained by ``torchrun --nproc-per-node 2 -m fpt train``, once per module: the torchrun test reads
    it, and the --nproc test refuses it and resumes a copy of it (3 processes importing torch and transformers per
    start, instead of a run of its own to begin with)."""
    folder = tmp_path_factory.mktemp("torchrun")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "-m", "fpt",
           "train", "--task", "bit-xor", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "2",
           "--eval-every", "2", "--batch-size", "8", "task.eval_size=32", "--device", "cpu", "--out", "run", "--quiet"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    return {"folder": folder, "done": done}


def test_torchrun_cli_writes_one_run_directory(torchrun_run):
    folder, done = torchrun_run["folder"], torchrun_run["done"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert [p.name for p in folder.iterdir()] == ["run"]
    summary = json.loads((folder / "run" / "summary.json").read_text())
    assert (summary["world_size"], summary["global_batch_size"], summary["steps"]) == (2, 8, 2)
    assert [r["step"] for r in _rows(folder / "run")] == [2]
    assert done.stdout.count("run directory: run") == 1  # printed by rank 0 only
    assert not (folder / "run" / "run.lock").exists()


def test_shards_are_disjoint_and_make_the_global_batch():
    batch = Batch(torch.arange(12.0)[:, None, None], torch.arange(12)[:, None], torch.arange(12))
    groups = [distributed.Group(rank, 3) for rank in range(3)]
    shards = [g.shard(batch) for g in groups]
    assert torch.equal(torch.cat([s.x for s in shards]), batch.x)
    assert torch.equal(torch.cat([s.lengths for s in shards]), batch.lengths)
    assert [list(g.mine(range(0, 100, 16))) for g in groups] == [[0, 48, 96], [16, 64], [32, 80]]
    with pytest.raises(ConfigError, match="global batch and must divide evenly over 3 processes"):
        groups[0].per_rank(16)
    with pytest.raises(ConfigError, match="grad_accum=4"):
        groups[0].per_rank(18, grad_accum=4)
    assert distributed.SINGLE.shard(batch) is batch and distributed.current() is distributed.SINGLE


def test_nproc_checks_the_batch_before_starting_processes(tiny_gpt2_dir, capsys):
    from fpt.cli import main

    assert main(["train", "--body", tiny_gpt2_dir, "--batch-size", "9", "--nproc", "2"]) == 2
    err = capsys.readouterr().err
    assert "batch_size=9 is the global batch" in err and "Traceback" not in err


def test_nproc_resume_of_a_finished_run_says_so_before_starting_processes(tiny_gpt2_dir, tmp_path, capsys,
                                                                            monkeypatch):
    from fpt.cli import main

    out = tmp_path / "run"
    fpt.fit(fpt.build(**_fields(tiny_gpt2_dir, steps=2, task_options={"eval_size": 8})), out=out, progress=False)
    summary = (out / "summary.json").read_text()
    started = []
    monkeypatch.setattr(distributed, "launch", lambda nproc, argv: started.append(nproc) or 0)
    # was: 2 processes started, each loading the body, and the finished run evaluated again
    assert main(["train", "--nproc", "2", "--resume", str(out)]) == 0 and started == []
    said = capsys.readouterr()
    assert f"fpt: {out} already finished (step 2, stopped: steps); nothing to resume" in said.err
    assert f"run directory: {out}" in said.out and (out / "summary.json").read_text() == summary
    assert main(["train", "--nproc", "2", "--resume", str(out), "--steps", "3"]) == 0 and started == [2]  # more to do



def test_nproc_into_an_out_holding_a_run_is_refused_before_starting_processes(tiny_gpt2_dir, tmp_path, capsys,
                                                                              monkeypatch):
    from fpt.cli import main

    out = tmp_path / "run"
    fpt.fit(fpt.build(**_fields(tiny_gpt2_dir, steps=2, task_options={"eval_size": 8})), out=out, progress=False)
    started = []
    monkeypatch.setattr(distributed, "launch", lambda nproc, argv: started.append(nproc) or 0)
    train = ["train", "--nproc", "2", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "2", "--batch-size", "8"]
    said = f"fpt train: error: {out} already holds a run; continue it with --resume {out} or choose another --out"
    # was: 2 processes started, each importing torch and transformers and loading the body, for rank 0 to refuse it
    assert main([*train, "--out", str(out)]) == 2 and started == []
    assert capsys.readouterr().err.strip() == said
    (out / "summary.json").unlink()  # stopped after its checkpoint: refused alike (rank 0 would refuse it too)
    assert main([*train, "--out", str(out)]) == 2 and started == []
    assert capsys.readouterr().err.strip() == said
    assert main([*train, "--out", str(tmp_path / "new")]) == 0 and started == [2]  # a new folder: launched


def test_nproc_resume_of_a_refit_run_is_refused_before_starting_processes(tiny_gpt2_dir, tmp_path, capsys,
                                                                          monkeypatch):
    from fpt.cli import main

    out = tmp_path / "run"  # a refit's folder, known by its selection run (a refit stopped before its final run)
    fpt.fit(fpt.build(**_fields(tiny_gpt2_dir, steps=2, task_options={"eval_size": 8})), out=out / "selection",
            progress=False)
    started = []
    monkeypatch.setattr(distributed, "launch", lambda nproc, argv: started.append(nproc) or 0)
    # was: 2 processes started, each refusing '--refit runs in one process' (a flag not given)
    assert main(["train", "--nproc", "2", "--resume", str(out)]) == 2 and started == []
    assert capsys.readouterr().err.strip() == (f"fpt train: error: {out} is a refit run (--refit), which runs in one "
                                               "process: resume it without --nproc")


CHECKED_FIRST = """
import sys
from fpt.cli import main

print("exit", main(["train", "--data", "nope.csv", "--fit", "gradient", "--nproc", "2"]),
      "torch" in sys.modules)
"""


def test_a_missing_data_file_is_refused_before_torch_and_nproc_s_processes(tmp_path):
    done = subprocess.run([sys.executable, "-c", CHECKED_FIRST], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    # was: torch imported, then 2 processes started, each saying the file is missing, and torchrun's report
    assert done.stdout.split() == ["exit", "2", "False"], done.stdout + done.stderr[-2000:]
    assert done.stderr.strip() == (f"fpt train: error: --data nope.csv: no such file or folder (relative to the "
                                   f"current directory {tmp_path}); run from the directory it is relative to, or "
                                   "give its absolute path")


def test_strip_option():
    argv = ["train", "--nproc", "2", "--steps", "3", "--nproc=4", "--out", "x"]
    assert distributed.strip_option(argv, "--nproc") == ["train", "--steps", "3", "--out", "x"]


@pytest.mark.slow
def test_fpt_train_nproc_launches_resumes_and_reports_rank_0_errors(tiny_gpt2_dir, tmp_path, torchrun_run):
    base = [sys.executable, "-m", "fpt", "train", "--nproc", "2", "--body", tiny_gpt2_dir, "--init", "random",
            "--eval-every", "2", "--batch-size", "8", "task.eval_size=32", "--device", "cpu", "--quiet"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    def fpt_train(*extra):
        return subprocess.run([*base, *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    assert torchrun_run["done"].returncode == 0, torchrun_run["done"].stderr[-3000:]
    shutil.copytree(torchrun_run["folder"] / "run", tmp_path / "run")  # a finished 2-process run of 2 steps
    # refused before any process starts (was: rank 0 refused it, rank 1 stopped, each having imported torch and
    # transformers and loaded the body; test_two_processes_train_what_one_process_trains runs that rank-0 error)
    again = fpt_train("--steps", "2", "--out", "run")
    assert again.returncode == 2 and again.stderr.strip() == ("fpt train: error: run already holds a run; continue it "
                                                              "with --resume run or choose another --out")
    resumed = fpt_train("--resume", "run", "--steps", "4")  # --nproc launches the processes that resume it
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["world_size"], summary["steps"]) == (2, 4)
    assert [r["step"] for r in _rows(tmp_path / "run")] == [2, 4]


def test_torchrun_variables_left_in_the_environment_are_named_not_a_bug(tiny_gpt2_dir, tmp_path, capsys, monkeypatch):
    """WORLD_SIZE and LOCAL_RANK exported in a shell or a job (no torchrun): fpt train failed in torch's env://
    rendezvous (ValueError: environment variable RANK expected, but not set), printed as a bug in fpt; and LOCAL_RANK
    alone made fpt train --nproc 2 train in one process without a word (world_size 1). Both are one-line errors."""
    from fpt.cli import main

    for name in ("RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    train = ["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "2", "--batch-size", "8",
             "task.eval_size=8", "--quiet"]
    assert main([*train, "--out", str(tmp_path / "a")]) == 2
    assert capsys.readouterr().err.strip() == (
        "fpt train: error: WORLD_SIZE=2 LOCAL_RANK=0 is set but RANK, MASTER_ADDR, MASTER_PORT is not, which torchrun "
        "sets for each process it starts: start the processes with torchrun --nproc-per-node 2 -m fpt -- train ... (or "
        "fpt train --nproc N), or unset WORLD_SIZE and LOCAL_RANK to train in one process")
    monkeypatch.setenv("RANK", "0")  # torchrun's three (a lone LOCAL_RANK marks nothing: round 21)
    started = []
    monkeypatch.setattr(distributed, "launch", lambda nproc, argv: started.append(nproc) or 0)
    assert main([*train, "--nproc", "2", "--out", str(tmp_path / "b")]) == 2
    assert capsys.readouterr().err.strip() == (
        "fpt train: error: --nproc 2: this process counts as started by torchrun (its environment has LOCAL_RANK=0 "
        "RANK=0 WORLD_SIZE=2), which starts the processes itself: drop --nproc under torchrun, or unset those "
        "variables to have fpt start them")
    assert started == [] and not (tmp_path / "b").exists()
