"""tests/worker_order.py: the collection's order for pytest-xdist's worksteal workers (tests/conftest.py)."""

from __future__ import annotations

import pytest

from worker_order import shares, worker_order


class _Node:
    shutting_down = False

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices


def _worksteal_first_shares(n: int, workers: int) -> list[list[int]]:
    """What pytest-xdist's worksteal scheduler itself sends each worker first, for a collection of ``n`` tests."""
    from xdist.scheduler.worksteal import WorkStealingScheduling

    sched = WorkStealingScheduling.__new__(WorkStealingScheduling)
    sched.numnodes, sched.node2collection, sched.node2pending, sched.pending = workers, {}, {}, []
    sched.collection, sched.steal_requested_from_node, sched.log = None, None, lambda *a: None
    nodes = [_Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, [f"t{i}" for i in range(n)])
    sched.schedule()
    return [node.sent for node in nodes]


@pytest.mark.parametrize("n, workers", [(10, 2), (11, 2), (2671, 2), (13, 3), (7, 1)])
def test_shares_are_where_worksteal_splits_the_collection(n, workers):
    starts = shares(n, workers)
    sent = _worksteal_first_shares(n, workers)
    assert [s[0] for s in sent] == starts
    assert [len(s) for s in sent] == [b - a for a, b in zip(starts, [*starts[1:], n], strict=True)]


def test_shared_tests_lead_the_first_share_and_slow_ones_the_others():
    # (name, SHARED fixture index or None, slow)
    items = [("a", None, False), ("s1", None, True), ("b", None, False), ("x1", 1, True), ("c", None, False),
             ("y0", 0, False), ("s2", None, True), ("d", None, False), ("x2", 1, False), ("e", None, False),
             ("s3", None, True), ("f", None, False), ("g", None, False), ("h", None, False)]
    order = worker_order(items, 2, lambda i: i[1], lambda i: i[2])
    names = [i[0] for i in order]
    assert sorted(names) == sorted(i[0] for i in items)
    first, second = names[:7], names[7:]  # worksteal's two shares of 14
    assert first == ["y0", "x1", "x2", "a", "b", "c", "d"]  # grouped by fixture, then the others in order
    assert second == ["s1", "s2", "s3", "e", "f", "g", "h"]
    # three workers: the slow tests dealt to the second and third shares in turn
    names = [i[0] for i in worker_order(items, 3, lambda i: i[1], lambda i: i[2])]
    starts = shares(len(items), 3)
    assert names[starts[0]:starts[0] + 3] == ["y0", "x1", "x2"]
    assert names[starts[1]:starts[1] + 2] == ["s1", "s3"] and names[starts[2]] == "s2"
    # one worker: the shared ones, then the slow ones, then the rest
    names = [i[0] for i in worker_order(items, 1, lambda i: i[1], lambda i: i[2])]
    assert names[:6] == ["y0", "x1", "x2", "s1", "s2", "s3"] and names[6:] == list("abcdefgh")
