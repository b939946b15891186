"""The relations claims' checks ask (fpt.presentation.relations): one entry each, judged one way, read alike."""

from __future__ import annotations

import pytest

from fpt.presentation.claims import CLAIMS, Check
from fpt.presentation.relations import RELATIONS
from fpt.presentation.verdict_stats import FAILS_DIRECTION, HOLDS_DIRECTION, Stat, pair_p, pairs_p


@pytest.mark.parametrize("name", sorted(RELATIONS))
def test_every_relation_judges_a_column_one_way_and_reads_in_words(name):
    rel = RELATIONS[name]
    ways = [rel.test is not None, rel.value is not None, rel.seeds is not None]
    assert sum(ways) == 1, f"{name}: a column is judged by a test, a computed value or its seeds, exactly one"
    assert rel.paper is None or rel.test is not None  # what the paper's figures show, the seeds test
    text = Check("tableX", ("a", "b", "c"), name, tolerance=2.0, bounds=(1.0, 5.0)).describe()
    assert text.endswith("(tableX)") and "a" in text


def test_an_unknown_relation_is_refused_where_the_check_is_declared():
    with pytest.raises(ValueError, match="relation 'bigger' is not one of decreasing, increasing"):
        Check("table2", ("a", "b"), "bigger")


def test_every_declared_check_names_a_relation():
    assert {c.relation for claim in CLAIMS for c in claim.checks} <= set(RELATIONS)


def test_a_relation_of_several_pairs_holds_by_its_weakest_pair_and_fails_by_its_strongest_reversal():
    a, b, c = Stat(90, 1, 3), Stat(85, 1, 3), Stat(84, 1, 3)
    assert pairs_p([(a, b, 0.0), (b, c, 0.0)]) == (HOLDS_DIRECTION, pair_p(b, c)[1])  # the larger p
    direction, p = pairs_p([(a, b, 0.0), (c, b, 0.0)])
    assert direction == FAILS_DIRECTION and p == pytest.approx(min(1.0, 2 * pair_p(c, b)[1]))


def test_the_paper_and_the_seeds_read_the_same_pairs():
    """decreasing on [a, b, c] asks a > b and b > c of both the paper's figures and the seeds."""
    rel = RELATIONS["decreasing"]
    assert rel.paper([3.0, 2.0, 1.0], 0.0, 0.0) is True and rel.paper([3.0, 1.0, 2.0], 0.0, 0.0) is False
    assert rel.paper([3.0, 2.5, 1.0], 1.0, 0.0) is None  # a difference within the margin
    stats = [Stat(90, 1, 3), Stat(80, 1, 3), Stat(70, 1, 3)]
    assert rel.test(stats, 0.0, (0.0, 0.0)) == pairs_p([(stats[0], stats[1], 0.0), (stats[1], stats[2], 0.0)])
    assert RELATIONS["increasing"].test(stats, 0.0, (0.0, 0.0))[0] == FAILS_DIRECTION
