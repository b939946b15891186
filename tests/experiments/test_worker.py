"""The trial worker's end: a worker whose executor is killed stops its trial and removes the request folder,
however the executor's threads end."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.experiments.test_sweep_limits import alive, wait_until_gone

from fpt.config import RunConfig
from fpt.experiments.executors import planned_to_dict
from fpt.experiments.planned import Planned

# An executor in miniature: it starts the worker from a thread, as LocalExecutor.run may be called, and that
# thread ends first while the process lives on a moment before it dies without cleaning up (os._exit): what the
# kernel does to a threaded `fpt sweep` killed by SIGKILL, whose threads end one by one. The kernel's parent-death
# signal comes when the starting thread ends, while getppid() still names the executor.
EXECUTOR = """
import json, os, subprocess, sys, threading, time
from pathlib import Path
work, log = Path(sys.argv[1]), Path(sys.argv[2])
request = json.loads((work / "0.json").read_text())
request["parent"] = os.getpid()
(work / "0.json").write_text(json.dumps(request))
def start():
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "fpt.experiments.worker", str(work / "0.json")], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    print(proc.pid, flush=True)
    deadline = time.monotonic() + 120
    while b"fpt worker pid" not in log.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.05)
starter = threading.Thread(target=start)
starter.start()
starter.join()
time.sleep(1.5)  # the starting thread has ended; the process lives on a moment
os._exit(0)
"""


def test_a_worker_whose_executor_dies_thread_by_thread_removes_the_request_folder(tiny_gpt2_dir, tmp_path):
    config = RunConfig(task="bit-xor", body=tiny_gpt2_dir, init="random", steps=1_000_000, eval_every=1000,
                       batch_size=4, device="cpu", task_options={"eval_size": 8})
    work = tmp_path / "fpt-trials-test"
    work.mkdir()
    request = {"trial": planned_to_dict(Planned(config, tmp_path / "run", "k")), "threads": 1,
               "result": str(work / "0.result.json"), "label": "k"}
    (work / "0.json").write_text(json.dumps(request))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", EXECUTOR, str(work), str(tmp_path / "worker.log")], env=env,
                         capture_output=True, text=True, timeout=600)  # the script is bounded itself
    assert out.returncode == 0, out.stderr
    worker = int(out.stdout.split()[0])
    assert b"fpt worker pid" in (tmp_path / "worker.log").read_bytes(), "the worker never started"
    wait_until_gone(worker, 60)
    assert not alive(worker), "the worker kept training after its executor died"
    assert not work.exists(), "the request folder was left behind"
