"""claims.md's verdicts from synthetic results.csv rows: the step-12 rule (n >= 3 seeds, Welch's t-test, collapsed
and at-chance cells not evidence, provenance, cap-bound steps)."""

from __future__ import annotations

from fpt.cli import main
from fpt.presentation.claims import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    Check,
    Stat,
    check_column,
    evaluate,
    greater,
    relation_holds,
    relation_test,
)
from fpt.presentation.tables import write_csv


def row(table, name, column, paper, ours, std=1.0, n=3, above="yes", metric="test_accuracy", collapsed="no",
        at_chance="no", commits="abc1234", dirty="0 of 3", bound=""):
    return {"table": table, "scale": "quick", "row": name, "column": column, "paper_column": column,
            "metric": metric, "paper": paper, "ours": ours, "ours_std": std, "n": n, "above_majority": above,
            "collapsed": collapsed, "at_chance": at_chance, "commits": commits, "dirty": dirty,
            "converge_bound": bound, "status": "done" if ours is not None else "failed"}


def test_paper_figures_relations():
    assert relation_holds("decreasing", [90, 80, 70], 0.0) is True
    assert relation_holds("decreasing", [80, 90], 2.0) is False
    assert relation_holds("max", [54, 53, 38], 0.0) is True and relation_holds("max", [54, 60, 38], 0.0) is False
    assert relation_holds("recovers", [97.2, 98.0, 91.7], 0.0) is True  # Table 9's MNIST
    assert relation_holds("at_least", [38.4, 38.0], 0.0, 2.0) is True
    assert relation_holds("close", [38.5, 38.6], 0.0, 2.0) is True


def test_welch_decides_with_the_seeds_spread():
    assert greater(Stat(90, 1, 3), Stat(80, 1, 3)) is True
    assert greater(Stat(80, 1, 3), Stat(90, 1, 3)) is False
    assert greater(Stat(81, 5, 3), Stat(80, 5, 3)) is None  # within the spread: inconclusive
    assert greater(Stat(90, 0, 3), Stat(80, 0, 3)) is True  # no spread at all
    assert relation_test("at_least", [Stat(79, 1, 3), Stat(80, 1, 3)], 2.0) is None
    assert relation_test("close", [Stat(95.4, 0.2, 3), Stat(94.5, 0.2, 3)], 2.0) is True


def test_one_seed_collapsed_at_chance_and_below_majority_cells_are_not_evidence():
    check = Check("table2", ("language_gpt2", "random"), "decreasing")
    cells = {"language_gpt2": row("table2", "language_gpt2", "mnist", 98, 95, n=1, std=None),
             "random": row("table2", "random", "mnist", 91.7, 60)}
    outcome, reason, _, _ = check_column(check, cells)
    assert outcome == INCONCLUSIVE and "n=1 < 3 seeds" in reason
    cells["language_gpt2"] = row("table2", "language_gpt2", "mnist", 98, 95, collapsed="yes: seeds 0;2")
    outcome, reason, _, _ = check_column(check, cells)
    assert outcome == INCONCLUSIVE and "collapsed (seeds 0;2), not evidence" in reason
    cells["language_gpt2"] = row("table2", "language_gpt2", "mnist", 98, 95, at_chance="yes: seeds 1")
    assert "at chance" in check_column(check, cells)[1]
    cells["language_gpt2"] = row("table2", "language_gpt2", "mnist", 98, 95, above="no")
    assert "not above the majority class" in check_column(check, cells)[1]
    cells["language_gpt2"] = row("table2", "language_gpt2", "mnist", 98, 95)
    assert check_column(check, cells)[0] == HOLDS
    cells = {"language_gpt2": row("table2", "language_gpt2", "bit-xor", 100, 99), "random":
             row("table2", "random", "bit-xor", 100, 50)}
    assert check_column(check, cells)[0] == "skip"  # the paper's 100 vs 100 shows no ordering


def test_cap_bound_steps_are_not_evidence():
    check = Check("table6", ("fpt", "random"), "less")
    cells = {"fpt": row("table6", "fpt", "mnist", 5000, 1000, metric="steps_to_converge", bound=">="),
             "random": row("table6", "random", "mnist", 20000, 1500, metric="steps_to_converge")}
    outcome, reason, _, _ = check_column(check, cells)
    assert outcome == INCONCLUSIVE and "lower bound" in reason
    cells["fpt"] = row("table6", "fpt", "mnist", 5000, 500, metric="steps_to_converge", bound="=")
    assert check_column(check, cells)[0] == HOLDS


def _write(root, table, rows):
    (root / table).mkdir(parents=True, exist_ok=True)
    write_csv(rows, root / table / "results.csv")


def test_claims_md_from_results_fixed_and_tuned_with_provenance(tmp_path):
    root = tmp_path / "quick"
    _write(root, "table2", [row("table2", "language_gpt2", "mnist", 98.0, 95.0),
                            row("table2", "random", "mnist", 91.7, 90.0, commits="def5678", dirty="1 of 3"),
                            row("table2", "language_gpt2", "listops", 38.4, 30.0, std=3.0),
                            row("table2", "random", "listops", 34.3, 29.0, std=2.0)])
    _write(root, "table2-tuned", [row("table2-tuned", "language_gpt2", "mnist", 98.0, 95.0),
                                  row("table2-tuned", "random", "mnist", 91.7, 99.0)])
    _write(root, "table3", [row("table3", "transformer", "mnist", 91.7, 60.0),
                            row("table3", "lstm_3_layer", "mnist", 70.9, 80.0)])
    _write(root, "table1", [row("table1", "fpt", "mnist", 98.0, 95.0),
                            row("table1", "control_no_lm", "mnist", None, 94.5, std=1.0)])
    # a tuned cell not run itself, whose row still carries figures (read from the grid's shared run at the paper's lr)
    _write(root, "table1-tuned", [{**row("table1-tuned", "fpt", "mnist", 98.0, 95.0), "status": "not run"},
                                  {**row("table1-tuned", "control_no_lm", "mnist", None, 80.0), "status": "not run"}])
    verdicts = {item["claim"].text.split(" (Table")[0]: item for item in evaluate(root)}
    first = verdicts["A language-pretrained frozen body beats a random one, which beats a frozen random LSTM"]
    table2, table3 = first["checks"]
    assert table2["verdict"] == HOLDS and "inconclusive in table2/listops" in table2["why"]
    assert table2["tuned"]["verdict"] == FAILS  # under tuned lr the random body wins: the claim is not robust
    assert table3["verdict"] == FAILS
    assert first["verdict"] == INCONCLUSIVE and first["tuned_verdict"] == FAILS
    assert not first["clean"] and "mixes 2 commits (abc1234, def5678)" in first["provenance"]
    assert "1 of 24 runs from a tree with uncommitted changes" in first["provenance"]
    assert main(["claims", "--results", str(root)]) == 0
    md = (root / "claims.md").read_text()
    assert "Welch's t-test" in md and "**Verdict (lr tuned per cell): does not hold**" in md
    assert "verdicts read runs that mix commits" in md
    assert "table1 / mnist (fixed lr): FPT 95 ± 1 (n=3) vs control_no_lm 94.5 ± 1 (n=3): the control does as well" in md
    assert "table1-tuned / mnist (tuned lr): FPT 95 ± 1 (n=3) vs control_no_lm 80 ± 1 (n=3): fpt, control_no_lm not run" in md


def test_training_that_fails_counts_collapse_divergence_and_chance_and_needs_three_seeds():
    check = Check("table13", ("plus_attention",), "unstable")
    assert check_column(check, {"plus_attention": row("table13", "plus_attention", "mnist", 89, 13, n=1)})[:2] == \
        (INCONCLUSIVE, "n=1 < 3 seeds")
    # a constant answer at the label prior: not "collapsed" (its loss is below ln C) but at chance
    mixed = row("table13", "plus_attention", "listops", 36.8, 16, collapsed="yes: seeds 0", at_chance="yes: seeds 1;2")
    outcome, reason, _, _ = check_column(check, {"plus_attention": mixed})
    assert outcome == HOLDS and "(0;1;2)" in reason
    some = row("table13", "plus_attention", "digits", 47.7, 36, collapsed="yes: seeds 0;1")
    assert check_column(check, {"plus_attention": some})[:2] == (INCONCLUSIVE, "2 of 3 seeds collapsed, diverged or at chance")
    learnt = row("table13", "plus_attention", "bit-memory", 100, 96.7)
    assert check_column(check, {"plus_attention": learnt})[0] == FAILS
