"""Task plugins: a task class in another distribution, registered under the ``fpt.tasks`` entry point group.

The plugin distribution is a folder on ``sys.path`` (PYTHONPATH) holding the plugin module and a
``*.dist-info`` with ``METADATA`` and ``entry_points.txt`` -- what ``pip install`` of a package
with ``[project.entry-points."fpt.tasks"]`` leaves behind. The commands run through ``fpt.cli.main`` in this
process with that folder first on ``sys.path`` and the task registry as a fresh process has it (``installed``):
importlib.metadata finds the distribution as it would on PYTHONPATH. Laziness (nothing read before a name is
asked for) is checked in a fresh interpreter, where ``sys.modules`` shows what was imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

PLUGIN = textwrap.dedent('''
    """A tiny task in a separate distribution: the parity of 4 random bits."""
    from dataclasses import dataclass

    import numpy as np
    import torch

    from fpt.model import InputSpec
    from fpt.tasks.base import Batch, GeneratedSource, TaskData


    @dataclass(frozen=True)
    class ParityOptions:
        n_bits: int = 4
        eval_size: int = 64


    def sample(rng, size, n_bits):
        bits = rng.integers(0, 2, size=(size, n_bits))
        x = torch.from_numpy(bits.astype(np.float32)[..., None])  # (B, n, 1)
        return Batch(x, torch.from_numpy((bits.sum(1) % 2)[:, None].astype(np.int64)))


    class ParityTask:
        Options = ParityOptions

        def build(self, o, seed, source):
            def draw(rng, size):
                return sample(rng, size, o.n_bits)

            spec = InputSpec(seq_len=o.n_bits, num_classes=2, token_dim=1)
            val = draw(np.random.default_rng([seed, 2]), o.eval_size)
            test = draw(np.random.default_rng([seed, 1]), o.eval_size)
            return TaskData(spec, GeneratedSource(draw, seed), {"val": val, "test": test}, info={"plugin": True})


    NOT_A_TASK = 42
''')

ENTRY_POINTS = textwrap.dedent('''
    [fpt.tasks]
    parity = fpt_demo_plugin:ParityTask
    broken = fpt_demo_plugin_missing:Task
    answer = fpt_demo_plugin:NOT_A_TASK
    bit-xor = fpt_demo_plugin:ParityTask
''')


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    (site / "fpt_demo_plugin.py").write_text(PLUGIN)
    info = site / "fpt_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fpt-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


def fpt_process(plugin_path: Path, code: str) -> subprocess.CompletedProcess:
    """``python -c code`` with the plugin distribution on PYTHONPATH, in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


class Result(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def installed(monkeypatch, capsys) -> Callable[[Path], Callable[..., Result]]:
    """``installed(site)``: the distribution in folder ``site`` on ``sys.path``, the task registry as a new process
    has it (no plugin read yet, its built-in tasks only: restored afterwards, with the plugin modules unimported),
    and a ``fpt(*argv)`` that runs a command in this process and returns its exit code and output."""
    from fpt.tasks import TASKS

    monkeypatch.setattr(TASKS, "_items", {n: o for n, o in TASKS._items.items() if n not in TASKS.plugin_sources})
    monkeypatch.setattr(TASKS, "_plugins_loaded", False)
    monkeypatch.setattr(TASKS, "plugin_errors", {})
    monkeypatch.setattr(TASKS, "plugin_sources", {})
    before = set(sys.modules)

    def install(site: Path) -> Callable[..., Result]:
        monkeypatch.syspath_prepend(str(site))

        def fpt(*argv: str) -> Result:
            from fpt.cli import main

            capsys.readouterr()
            code = main(list(argv))
            out = capsys.readouterr()
            return Result(code, out.out, out.err)

        return fpt

    yield install
    for name in set(sys.modules) - before:
        if name.startswith(("fpt_demo_plugin", "my_tasks")):
            del sys.modules[name]


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("fpt: warning:")]


def test_plugin_task_is_listed_and_broken_ones_are_one_line_warnings(plugin_path, installed):
    r = installed(plugin_path)("list")
    assert r.returncode == 0, r.stderr
    tasks = r.stdout.splitlines()[0]
    assert "parity" in tasks and "bit-xor" in tasks and "broken" not in tasks and "answer" not in tasks
    assert "plugin parity" in r.stdout and "fpt-demo-plugin 0.1" in r.stdout
    assert "Traceback" not in r.stderr
    warnings = _warnings(r.stderr)
    assert len(warnings) == 3 == len(r.stderr.strip().splitlines()), r.stderr
    broken, = (w for w in warnings if "broken" in w)
    assert "fpt_demo_plugin_missing:Task" in broken and "fpt-demo-plugin 0.1" in broken
    assert "ModuleNotFoundError" in broken
    answer, = (w for w in warnings if "answer" in w)
    assert "not a task class" in answer
    clash, = (w for w in warnings if "bit-xor" in w)
    assert "already built in" in clash


def test_plugin_task_trains_evaluates_and_describes(plugin_path, installed, tmp_path, tiny_bert_dir):
    out = tmp_path / "run"
    fpt_cmd = installed(plugin_path)
    r = fpt_cmd("train", "--task", "parity", "--body", tiny_bert_dir, "--init", "random", "--steps", "4",
                "--eval-every", "2", "--batch-size", "8", "--device", "cpu", "--out", str(out), "--quiet",
                "task.n_bits=3")
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 4 and 0 <= summary["test_accuracy"] <= 1
    assert "task: parity" in (out / "config.yaml").read_text()
    r = fpt_cmd("eval", str(out))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["test_accuracy"] == pytest.approx(summary["test_accuracy"])
    r = fpt_cmd("data", "parity", "task.n_bits=3")
    assert r.returncode == 0 and "task parity" in r.stdout, r.stderr
    # the paper-table runner's config check (fpt reproduce --dry-run) resolves the plugin task too
    from fpt.config import RunConfig
    from fpt.experiments.validate import check_config

    assert check_config(RunConfig(task="parity", task_options={"n_bits": 3})) == []


def test_loading_is_lazy_and_a_broken_plugin_is_named_when_asked_for(plugin_path, installed):
    code = ("import sys; from fpt.tasks import TASKS; TASKS.get('bit-xor'); "
            "print('fpt_demo_plugin' in sys.modules, TASKS._plugins_loaded)")
    r = fpt_process(plugin_path, code)
    assert r.returncode == 0 and r.stdout.split() == ["False", "False"] and not r.stderr, r.stderr
    r = installed(plugin_path)("train", "--task", "broken", "--steps", "1")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert "Traceback" not in r.stderr and lines[-1].startswith("fpt train: error: task 'broken' is a plugin")
    assert "fpt_demo_plugin_missing" in lines[-1]


def test_registry_plugins_in_process(monkeypatch, capsys):
    """The same through a monkeypatched entry_points (no files): a plugin that raises at import is skipped."""
    import importlib.metadata as md

    from fpt.errors import RegistryError
    from fpt.registry import Registry

    class Good:
        pass

    eps = md.EntryPoints([md.EntryPoint("good", "builtins:object", "g"), md.EntryPoint("bad", "nowhere.at.all:X", "g")])
    monkeypatch.setattr(md, "entry_points", lambda group=None: eps if group == "g" else md.EntryPoints([]))
    reg: Registry = Registry("thing", plugins="g")
    reg.register("own")(Good)
    assert reg.get("own") is Good and not reg._plugins_loaded  # a known name reads no plugins
    assert reg.names() == ["good", "own"] and reg.get("good") is object
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad" in err[0] and "nowhere.at.all:X" in err[0]
    with pytest.raises(RegistryError, match="'bad' is a plugin that could not be loaded"):
        reg.get("bad")
    assert reg.names() == ["good", "own"] and not capsys.readouterr().err  # read once per process


def test_the_plugin_of_docs_user_data_runs_as_written(installed, tmp_path, tiny_bert_dir):
    """docs/user-data.md's parity plugin and its entry point, as the page gives them, installed as pip would leave
    them: `fpt list` shows it as the page's comment says and `fpt train --task parity task.n_bits=6` trains it (a
    tiny body and a few steps here), so the task API the page shows cannot drift from the one fpt reads."""
    import re
    import tomllib

    page = (Path(__file__).resolve().parents[1] / "docs" / "user-data.md").read_text()
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", page, flags=re.S) if "# my_tasks/parity.py" in b]
    (toml,) = [b for b in re.findall(r"```toml\n(.*?)```", page, flags=re.S) if "fpt.tasks" in b]
    entry_points = tomllib.loads(toml)["project"]["entry-points"]["fpt.tasks"]
    site = tmp_path / "site"
    (site / "my_tasks").mkdir(parents=True)
    (site / "my_tasks" / "__init__.py").write_text("")
    (site / "my_tasks" / "parity.py").write_text(code)
    info = site / "my_tasks-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-tasks\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[fpt.tasks]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    fpt_cmd = installed(site)
    r = fpt_cmd("list")
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert "parity" in r.stdout.splitlines()[0].removeprefix("tasks:").replace(",", " ").split()
    assert "plugin parity  " in r.stdout and "(distribution my-tasks 0.1)" in r.stdout
    out = tmp_path / "runs" / "parity"
    r = fpt_cmd("train", "--task", "parity", "task.n_bits=6", "--out", str(out), "--body", tiny_bert_dir,
                "--init", "random", "--steps", "4", "--eval-every", "2", "--device", "cpu", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "n_bits: 6" in (out / "config.yaml").read_text() and (out / "summary.json").is_file()
