"""bench/closed_form_loo.py: a set's leave-one-out curve over the tokens' scales and penalties, and each rule's pick."""

from __future__ import annotations

from bench_scripts import load

loo = load("closed_form_loo")


def test_the_curve_covers_every_scale_and_penalty_and_names_each_rules_pick(tmp_path, tiny_bert_dir, capsys):
    from fpt.feature_map import DEFAULTS

    assert loo.main(["iris", "--cache", str(tmp_path), "--body", tiny_bert_dir]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("tokens x")]
    assert len(lines) == 3 * len(DEFAULTS.alphas)  # x1, x10, x100, every penalty
    assert all("LOO squared error" in line and "least 1 - H_ii" in line for line in lines)
    picks = [line for line in out.splitlines() if ", rule " in line]
    assert len(picks) == 10 and all("penalty" in line for line in picks)  # 2 searches x 5 rules
    assert "120 examples" in out  # iris' examples outside the benchmark's test split
