"""The fpt command, run in-process through its entry point."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fpt.cli import main


def test_params_json_counts(tiny_gpt2_dir, capsys):
    assert main(["params", "--body", tiny_gpt2_dir, "--init", "random", "--token-dim", "16", "--seq-len", "8",
                 "--classes", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    g = out["groups"]
    assert g["input"]["trainable"] == 16 * 32 + 32
    assert g["positions"]["trainable"] == 8 * 32
    assert g["output"]["trainable"] == 32 * 10 + 10
    assert g["layernorm"]["in_blocks"] == 2 * 4 * 32 and g["layernorm"]["outside_blocks"] == 2 * 32
    assert g["attention"]["trainable"] == 0 and out["trainable"] == sum(v["trainable"] for v in g.values())


def test_train_then_eval(tiny_gpt2_dir, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "6", "--eval-every", "3",
                 "--batch-size", "4", "task.eval_size=32", "--out", str(run), "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[0])
    assert summary["steps"] == 6
    assert main(["eval", str(run)]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert evaluated["test_accuracy"] == pytest.approx(summary["test_accuracy"])


@pytest.mark.parametrize("argv, message", [
    (["train", "--task", "bit-xr"], "unknown task 'bit-xr'. Did you mean 'bit-xor'"),
    (["train", "--steps", "ten"], "field 'steps': expected an integer"),
    (["train", "task.bits=3"], "unknown field(s) ['bits']"),
    (["eval", "/nonexistent/run"], "is not a run directory"),
    (["train", "--freeze", "outputs"], "unknown group(s) ['outputs']"),
])
def test_user_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def _checkpoint_step(run):
    try:
        return int((run / "checkpoint" / "current").read_text().strip().split("-")[1].split(".")[0])
    except (OSError, ValueError):
        return 0


def test_sigkill_then_resume_matches_an_uninterrupted_run(tiny_gpt2_dir, tmp_path):
    import torch

    args = ["--body", tiny_gpt2_dir, "--init", "random", "--steps", "120", "--eval-every", "10",
            "--batch-size", "8", "--target", "1.0", "task.eval_size=64", "--quiet"]
    # The command this test starts and kills computes with as many threads as the uninterrupted run and the resume
    # here (a sum split over other threads may round differently); those two are in-process: a command started is
    # seconds of imports, and the resume reads what the killed process left, whichever process resumes it.
    threads = str(torch.get_num_threads())
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    cmd = [sys.executable, "-m", "fpt.cli", "train", *args]
    straight = tmp_path / "straight"
    assert main(["train", *args, "--out", str(straight)]) == 0

    killed = tmp_path / "killed"
    proc = subprocess.Popen([*cmd, "--out", str(killed)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while _checkpoint_step(killed) < 40 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 0 < _checkpoint_step(killed) < 120
    assert main(["train", "--resume", str(killed), "--quiet"]) == 0
    a = json.loads((straight / "summary.json").read_text())
    b = json.loads((killed / "summary.json").read_text())
    assert b["steps"] == a["steps"]
    assert abs(b["test_accuracy"] - a["test_accuracy"]) <= 0.005
    rows = [json.loads(x)["step"] for x in (killed / "metrics.jsonl").read_text().splitlines()]
    assert rows == sorted(set(rows)) and rows[-1] == b["steps"]


def test_pretrain_writes_a_body_that_train_can_use(tiny_gpt2_dir, tmp_path, capsys):
    out = tmp_path / "pre"
    assert main(["pretrain", "--body", tiny_gpt2_dir, "--steps", "4", "--eval-every", "2", "--batch-size", "4",
                 "task.eval_size=16", "--out", str(out), "--quiet"]) == 0
    assert (out / "body" / "body.safetensors").is_file()
    import yaml

    saved = yaml.safe_load((out / "config.yaml").read_text())
    assert saved["freeze"] == "none" and saved["init"] == "random"
    assert main(["train", "--body", tiny_gpt2_dir, "--init", f"checkpoint:{out / 'body'}", "--steps", "2",
                 "--eval-every", "2", "--batch-size", "4", "task.eval_size=16", "--out", str(tmp_path / "t"),
                 "--quiet"]) == 0


def test_the_command_freezes_the_collector_only_at_exit():
    """fpt's command line registers gc.freeze as an exit handler, once per process however often main runs, so the
    interpreter's shutdown skips full collections over torch's objects; nothing is frozen while it runs, and an exit
    handler registered before it runs after it (LIFO) and sees the collector frozen."""
    code = ("import atexit, gc\n"
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
            "from fpt.cli import main\n"
            "counts = []\n"
            "for _ in range(2):\n"
            "    try:\n"
            "        main(['--version'])\n"
            "    except SystemExit:\n"
            "        pass\n"
            "    counts.append(atexit._ncallbacks())\n"
            "print('registered once:', counts[0] == counts[1], 'frozen while running:', gc.get_freeze_count() > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[-2:] == ["registered once: True frozen while running: False", "frozen at exit: True"]
