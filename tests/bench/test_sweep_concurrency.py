"""bench/sweep_concurrency.py's comparison of results tables: same threads per trial must match exactly."""

from __future__ import annotations

from bench_scripts import load


def _load():
    return load("sweep_concurrency")


def _row(setting: str, threads: int, steps: float) -> dict:
    return {"setting": setting, "threads_per_trial": threads, "wall_seconds": 1.0,
            "results": [{"lr": "0.001", "val_accuracy_mean": "1.0", "steps_mean": str(steps)}]}


def test_each_setting_is_compared_with_its_thread_peer_and_the_first():
    lines = _load().compare([_row("local:1", 2, 200.0), _row("local:2", 1, 175.0), _row("ray:2", 1, 175.0),
                             _row("local:4", 1, 150.0)])
    assert lines[0] == "local:2 (1 thread(s) per trial, 1.0 s): a different table from local:1 (2 thread(s) per trial)"
    assert lines[1].startswith("ray:2 (1 thread(s) per trial, 1.0 s): the same table as local:2 (1 thread(s) per trial); "
                               "a different table from local:1")
    assert "a different table from local:2" in lines[2]
