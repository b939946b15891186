"""The order pytest-xdist's worksteal scheduler gets the collection in (tests/conftest.py applies it).

worksteal hands worker i the i-th contiguous share of the collection (``len(pending) // workers left``, in order)
and a worker that runs out steals the unstarted *tail* of another's queue: the head of each share always runs on
its own worker, in order. So the long tests lead the shares, where they start at once instead of leaving one core
idle at the end, and are spread over the workers instead of all leading the first one (whose head would then be
the whole run's critical path):
- the tests that read a SHARED fixture lead the first share, grouped by that fixture (they share one run of it;
  a module-scoped fixture is torn down once the next test is another module's, hence adjacent);
- the other slow tests lead the other shares, dealt in turn (with one worker: after the shared ones);
- everything else fills the rest in collection order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def shares(n: int, workers: int) -> list[int]:
    """Where each worker's share of ``n`` items starts, as worksteal's first distribution splits them."""
    starts, given = [], 0
    for i in range(workers):
        starts.append(given)
        given += (n - given) // (workers - i)
    return starts


def worker_order(items: Sequence[T], workers: int, shared: Callable[[T], int | None],
                 slow: Callable[[T], bool]) -> list[T]:
    """``items`` reordered for ``workers`` worksteal workers: ``shared(item)`` the index of the SHARED fixture it
    reads (None: none), ``slow(item)`` whether it is marked slow."""
    lead = sorted((i for i in items if shared(i) is not None), key=shared)  # sorted() keeps order within a group
    long = [i for i in items if shared(i) is None and slow(i)]
    rest = [i for i in items if shared(i) is None and not slow(i)]
    heads: list[list[T]] = [list(lead)] + [[] for _ in range(workers - 1)]
    for k, item in enumerate(long):
        heads[1 + k % (workers - 1) if workers > 1 else 0].append(item)
    starts = shares(len(items), workers)
    out: list[T] = []
    for w, head in enumerate(heads):
        end = starts[w + 1] if w + 1 < workers else len(items)
        out += head
        take = max(0, end - len(out))  # a share whose head is longer than it: the next share starts later
        out += rest[:take]
        del rest[:take]
    return out + rest
