"""After aeon's MiniRocket in the same process, torch must not slow down (fpt.baselines.quiet_numba_threads)."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import time, numpy as np, torch
from fpt.baselines import _minirocket
_minirocket(True, 0)  # what fpt does before aeon is imported
from aeon.transformations.collection.convolution_based import MiniRocket
def bench():
    q = torch.randn(8, 12, 150, 32)
    t = time.perf_counter()
    for _ in range(20):
        torch.nn.functional.scaled_dot_product_attention(q, q, q)
    return time.perf_counter() - t
before = min(bench() for _ in range(3))
MiniRocket(random_state=0).fit_transform(np.random.randn(30, 1, 100))
torch.set_num_threads(torch.get_num_threads())  # what fit_models does after the classic models
after = min(bench() for _ in range(3))
import numba
print(numba.threading_layer(), before, after)
"""


# the layer fpt must choose itself; and torch's thread count as a user has it (the collision needs more than one
# thread, which pytest-xdist's one-thread workers would pass on through OMP_NUM_THREADS)
UNSET = {"NUMBA_THREADING_LAYER", "OMP_NUM_THREADS", "MKL_NUM_THREADS"}


def test_torch_keeps_its_speed_after_minirocket():
    pytest.importorskip("aeon")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in __import__("os").environ.items() if k not in UNSET})
    assert done.returncode == 0, done.stderr
    layer, before, after = done.stdout.split()
    assert layer == "workqueue"
    # the collision made it ~100x slower; 5x leaves room for a noisy machine
    assert float(after) < 5 * float(before) + 0.05, done.stdout
