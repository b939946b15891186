"""bench/closed_form_members.py: the rule declared before its figures (the fewest members within both tolerances)."""

from __future__ import annotations

from bench_scripts import load

members = load("closed_form_members")


def _rows(cv):
    return [{"dataset": d, "members": e, "cv": v} for (d, e), v in cv.items()]


def test_the_rule_takes_the_fewest_members_within_both_tolerances_of_ten():
    cv = {("a", 10): 0.90, ("a", 5): 0.899, ("a", 3): 0.87, ("a", 2): 0.86,
          ("b", 10): 0.80, ("b", 5): 0.797, ("b", 3): 0.80, ("b", 2): 0.70}
    got = members.decide(_rows(cv))
    assert got["chosen"] == 5 and got["sets"] == ["a", "b"]
    assert abs(got["against_10"][5]["mean"] - (-0.002)) < 1e-12 and abs(got["against_10"][3]["worst"] + 0.03) < 1e-12


def test_one_set_too_far_below_keeps_ten_and_a_set_without_every_count_is_left_out():
    cv = {("a", 10): 0.90, ("a", 5): 0.905, ("a", 3): 0.85, ("a", 2): 0.85,
          ("b", 10): 0.80, ("b", 5): 0.788, ("b", 3): 0.80, ("b", 2): 0.80,  # b: E=5 0.012 below (past 0.01)
          ("c", 10): 0.50, ("c", 5): 0.10}  # c: never measured at 3 or 2, so not among the sets
    got = members.decide(_rows(cv))
    assert got["chosen"] == 10 and got["sets"] == ["a", "b"]
    assert got["against_10"][5]["mean"] > -members.MEAN_LOSS  # the mean alone would have passed
