"""claims.md's verdicts from synthetic results.csv rows, one test per rule of claims_md.RULE: evidence (n >= 3 seeds,
collapsed and at-chance cells, cap-bound steps), Welch and TOST at the t distribution, Holm over columns, every check
of a claim, the lr-choosing seed left out, Table 7's train evaluation, Table 13's columns, the provenance gate."""

from __future__ import annotations

import pytest

from fpt.cli import main
from fpt.errors import ConfigError
from fpt.presentation.claims import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    PROVENANCE,
    TRAIN_EVALUATION,
    Check,
    Stat,
    cell_evidence,
    column_verdict,
    evaluate,
    evaluate_check,
    greater,
    relation_holds,
    relation_test,
)
from fpt.presentation.claims_md import claims_text
from fpt.presentation.tables import write_csv
from fpt.presentation.verdict_provenance import Gate, distinct_commits
from fpt.presentation.verdict_stats import holm, t_quantile, tost, welch_se_df


def row(table, name, column, paper, ours, std=1.0, n=3, above="yes", metric="test_accuracy", collapsed="no",
        at_chance="no", commits="abc1234", dirty="0 of 3", bound="", values=None, seeds="0;1;2"):
    return {"table": table, "scale": "quick", "row": name, "column": column, "paper_column": column,
            "metric": metric, "paper": paper, "ours": ours, "ours_std": std, "n": n, "above_majority": above,
            "collapsed": collapsed, "at_chance": at_chance, "commits": commits, "dirty": dirty,
            "converge_bound": bound, "status": "done" if ours is not None else "failed", "seeds": seeds,
            "values": values if values is not None else ("" if ours is None else ";".join([str(ours)] * n))}


def _write(root, table, rows):
    (root / table).mkdir(parents=True, exist_ok=True)
    write_csv(rows, root / table / "results.csv")


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
    # a chain holds only when every pair does; one pair the other way makes it fail
    assert relation_test("decreasing", [Stat(90, 1, 3), Stat(80, 1, 3), Stat(70, 1, 3)]) is True
    assert relation_test("decreasing", [Stat(90, 1, 3), Stat(80, 1, 3), Stat(95, 1, 3)]) is False


def test_close_uses_the_t_quantile_at_welchs_df_at_three_seeds():
    """Table 7 as issue 36 found it: 0.70 + 1.645 x 0.778 = 1.98 passed a tolerance of 2.0; at Welch's df (2.43)
    the one-sided 95% t quantile is 2.60, so 0.70 + 2.60 x 0.778 = 2.72: inconclusive."""
    train, test = Stat(95.33, 1.28, 3), Stat(94.63, 0.42, 3)
    se, df = welch_se_df(train, test)
    assert se == pytest.approx(0.778, abs=1e-3) and df == pytest.approx(2.43, abs=0.01)
    assert t_quantile(df) == pytest.approx(2.60, abs=0.01)
    assert 0.70 + 1.645 * se < 2.0 < 0.70 + t_quantile(df) * se
    assert relation_test("close", [train, test], 2.0) is None
    within, _ = tost(train, test, 2.0)
    assert within == pytest.approx(0.107, abs=0.002)
    # with the same spread over many seeds the t quantile approaches the normal one and the claim holds
    assert relation_test("close", [Stat(95.33, 1.28, 30), Stat(94.63, 0.42, 30)], 2.0) is True
    assert relation_test("close", [Stat(99.0, 0.1, 3), Stat(90.0, 0.1, 3)], 2.0) is False  # far beyond the tolerance


def test_one_seed_collapsed_at_chance_and_below_majority_cells_are_not_evidence():
    check = Check("table2", ("language_gpt2", "random"), "decreasing")
    cells = {"language_gpt2": row("table2", "language_gpt2", "mnist", 98, 95, n=1, std=None),
             "random": row("table2", "random", "mnist", 91.7, 60)}
    outcome, reason = column_verdict(check, cells)
    assert outcome == INCONCLUSIVE and "n=1 < 3 seeds" in reason
    cells["language_gpt2"] = row("table2", "language_gpt2", "mnist", 98, 95, collapsed="yes: seeds 0;2")
    outcome, reason = column_verdict(check, cells)
    assert outcome == INCONCLUSIVE and "collapsed (seeds 0;2), not evidence" in reason
    cells["language_gpt2"] = row("table2", "language_gpt2", "mnist", 98, 95, at_chance="yes: seeds 1")
    assert "at chance" in column_verdict(check, cells)[1]
    cells["language_gpt2"] = row("table2", "language_gpt2", "mnist", 98, 95, above="no")
    assert "not above the majority class" in column_verdict(check, cells)[1]
    cells["language_gpt2"] = row("table2", "language_gpt2", "mnist", 98, 95)
    assert column_verdict(check, cells)[0] == HOLDS
    cells = {"language_gpt2": row("table2", "language_gpt2", "bit-xor", 100, 99), "random":
             row("table2", "random", "bit-xor", 100, 50)}
    assert column_verdict(check, cells)[0] == "skip"  # the paper's 100 vs 100 shows no ordering


def test_cap_bound_steps_are_not_evidence():
    check = Check("table6", ("fpt", "random"), "less")
    cells = {"fpt": row("table6", "fpt", "mnist", 5000, 1000, metric="steps_to_converge", bound=">="),
             "random": row("table6", "random", "mnist", 20000, 1500, metric="steps_to_converge")}
    outcome, reason = column_verdict(check, cells)
    assert outcome == INCONCLUSIVE and "lower bound" in reason
    cells["fpt"] = row("table6", "fpt", "mnist", 5000, 500, metric="steps_to_converge", bound="=")
    assert column_verdict(check, cells)[0] == HOLDS


def test_holm_over_columns_and_the_columns_that_carry_a_check(tmp_path):
    assert holm({"a": 0.01, "b": 0.02, "c": 0.5}) == {"a": 0.05 / 3, "b": 0.05 / 2}
    assert holm({"a": 0.02, "b": 0.03, "c": 0.04}) == {}  # each below 0.05 alone, none below 0.05 / 3 first
    root = tmp_path / "quick"
    # mnist: Welch p = 0.03 (significant alone, not against Holm's 0.05 / 3); digits: p < 1e-4; listops: no evidence
    _write(root, "table2", [row("table2", "language_gpt2", "mnist", 98.0, 92.0, std=1.5),
                            row("table2", "random", "mnist", 91.7, 88.5, std=1.5),
                            row("table2", "language_gpt2", "digits", 68.2, 95.0, std=0.5),
                            row("table2", "random", "digits", 61.7, 80.0, std=0.5),
                            row("table2", "language_gpt2", "listops", 38.4, 37.0, n=1, std=None),
                            row("table2", "random", "listops", 34.3, 20.0)])
    assert relation_test("decreasing", [Stat(92.0, 1.5, 3), Stat(88.5, 1.5, 3)]) is True  # alone it would hold
    result = evaluate_check(root, Check("table2", ("language_gpt2", "random"), "decreasing"), "table2")
    outcomes = {c["column"]: c["outcome"] for c in result["columns"]}
    assert outcomes == {"mnist": INCONCLUSIVE, "digits": HOLDS, "listops": INCONCLUSIVE}
    assert result["verdict"] == HOLDS
    assert result["why"].startswith("carried by table2/digits (Holm over 3 column(s) at 0.05)")
    mnist = next(c for c in result["columns"] if c["column"] == "mnist")
    assert "not significant after Holm over 3 column(s)" in mnist["reason"]
    # a column significantly against it makes the check inconclusive
    _write(root, "table2", [row("table2", "language_gpt2", "digits", 68.2, 95.0, std=0.5),
                            row("table2", "random", "digits", 61.7, 80.0, std=0.5),
                            row("table2", "language_gpt2", "mnist", 98.0, 50.0, std=0.5),
                            row("table2", "random", "mnist", 91.7, 80.0, std=0.5)])
    result = evaluate_check(root, Check("table2", ("language_gpt2", "random"), "decreasing"), "table2")
    assert result["verdict"] == INCONCLUSIVE and "not in table2/mnist" in result["why"]


def test_a_column_not_run_stays_in_holms_family(tmp_path):
    """The family is the columns where the paper shows the claim: a column with no finished run counts (p = 1), so
    running fewer columns makes no claim easier. Here digits' p (~0.02) is below 0.05 alone, not below 0.05 / 2."""
    root = tmp_path / "quick"
    digits = [row("table13", "fpt", "digits", 68.2, 92.1, std=0.4), row("table13", "plus_ff", "digits", 76.6, 94.6,
                                                                        std=0.9)]
    not_run = [{**row("table13", "fpt", "mnist", 98.0, None, n=0, std=None), "status": "not run"},
               {**row("table13", "plus_ff", "mnist", 98.3, None, n=0, std=None), "status": "not run"}]
    check = Check("table13", ("fpt", "plus_ff"), "increasing")
    _write(root, "table13", digits)
    alone = evaluate_check(root, check, "table13")
    assert alone["verdict"] == HOLDS and "(Holm over 1 column(s) at 0.05)" in alone["why"], alone["why"]
    _write(root, "table13", digits + not_run)
    result = evaluate_check(root, check, "table13")
    mnist = next(c for c in result["columns"] if c["column"] == "mnist")
    assert mnist["outcome"] == INCONCLUSIVE and mnist["reason"] == "not run: fpt, plus_ff"
    assert result["verdict"] == INCONCLUSIVE and "Holm over 2 column(s)" in result["why"]


def test_a_check_with_no_column_to_read_says_why_for_each_column(tmp_path):
    """The paper not showing the relation and a row not run at this scale are different reasons: each is named with
    its columns (Table 17's GPT-2 row needs the hub; the paper does show bert >= gpt2 - 2 there)."""
    root = tmp_path / "quick"
    _write(root, "table17", [
        row("table17", "bert", "listops", 38.3, 38.1), {**row("table17", "gpt2", "listops", 38.4, None),
                                                        "status": "skipped"},
        row("table17", "bert", "bits", 90.0, 95.0), row("table17", "gpt2", "bits", 100.0, 96.0)])
    result = evaluate_check(root, Check("table17", ("bert", "gpt2"), "at_least", tolerance=2.0), "table17")
    assert result["verdict"] == INCONCLUSIVE
    assert result["why"] == ("no column to read: table17/listops [not run at this scale: gpt2]; "
                             "table17/bits [the paper's own figures do not show it]"), result["why"]


def test_a_claim_holds_only_when_every_check_holds(tmp_path):
    root = tmp_path / "quick"
    _write(root, "table2", [row("table2", "language_gpt2", "mnist", 98.0, 95.0),
                            row("table2", "random", "mnist", 91.7, 80.0)])
    _write(root, "table3", [row("table3", "transformer", "mnist", 91.7, 80.0),
                            row("table3", "lstm_3_layer", "mnist", 70.9, 79.0, std=3.0)])
    first = evaluate(root)[0]
    assert [c["verdict"] for c in first["checks"]] == [HOLDS, INCONCLUSIVE]
    assert first["verdict"] == INCONCLUSIVE and "every check must hold" in first["why"]


def test_the_lr_choosing_seed_is_not_a_reported_seed(tmp_path):
    """A tuned row written with seeds 0-2 (seed 0 chose the lr and was counted): seeds 1-2 remain, n = 2, said."""
    tuned = {**row("table2-tuned", "language_gpt2", "digits", 68.2, 95.0, values="99.0;95.0;91.0",
                   collapsed="yes: seeds 0"), "lr_chosen": "0.001"}
    ev = cell_evidence(tuned)
    assert ev["chooser"] == "0" and ev["n"] == 2 and ev["stat"].mean == pytest.approx(93.0)
    assert ev["collapsed"] == []  # the chooser's flag goes with it
    cells = {"language_gpt2": tuned, "random": {**row("table2-tuned", "random", "digits", 61.7, 80.0),
                                                "lr_chosen": "0.001"}}
    outcome, reason = column_verdict(Check("table2-tuned", ("language_gpt2", "random"), "decreasing"), cells)
    assert outcome == INCONCLUSIVE and "n=2 < 3 seeds (seed 0 chose the lr: not reported)" in reason
    # seeds 0-3: seeds 1-3 reported; a row written with lr_seed already leaves the chooser out of its seeds
    four = {**row("table2-tuned", "language_gpt2", "digits", 68.2, 95.0, n=4, values="99.0;95.0;94.0;96.0",
                  seeds="0;1;2;3"), "lr_chosen": "0.001"}
    assert cell_evidence(four)["n"] == 3 and cell_evidence(four)["stat"].mean == pytest.approx(95.0)
    new = {**row("table2-tuned", "language_gpt2", "digits", 68.2, 95.0, seeds="1;2;3"), "lr_chosen": "0.001",
           "lr_seed": "0"}
    assert cell_evidence(new)["n"] == 3 and cell_evidence(new)["chooser"] is None
    # the fixed-lr table is untouched: no lr was chosen
    assert cell_evidence(row("table2", "language_gpt2", "digits", 68.2, 95.0))["n"] == 3


def test_table7_reads_the_training_set_evaluation_not_the_minibatch_accuracy(tmp_path):
    check = Check("table7", ("train", "test"), "close", tolerance=2.0, transpose=True, columns=("train", "test"),
                  row_metrics=(TRAIN_EVALUATION, "test_accuracy"))
    root = tmp_path / "quick"
    minibatch = [row("table7", "fpt_gpt2_12_layers", "train", 38.5, 95.3, std=0.1, metric="train_accuracy"),
                 row("table7", "fpt_gpt2_12_layers", "test", 38.6, 94.6, std=0.1)]
    _write(root, "table7", minibatch)
    result = evaluate_check(root, check, "table7")
    assert result["verdict"] == INCONCLUSIVE
    assert "train: train_accuracy, not train_eval_accuracy (the last window's minibatch accuracy" in result["why"]
    # runs from before the evaluation (the rerun lane's pinned commit): the train column has no figure
    _write(root, "table7", [{**row("table7", "fpt_gpt2_12_layers", "train", 38.5, None, metric=TRAIN_EVALUATION),
                             "status": "done", "n": 0}, minibatch[1]])
    assert "train: no train_eval_accuracy (runs written before" in evaluate_check(root, check, "table7")["why"]
    evaluated = [row("table7", "fpt_gpt2_12_layers", "train", 38.5, 95.3, std=0.1, metric=TRAIN_EVALUATION),
                 minibatch[1]]
    _write(root, "table7", evaluated)
    result = evaluate_check(root, check, "table7")
    assert result["verdict"] == HOLDS and "t(0.95, df" in result["columns"][0]["reason"]


def test_training_attention_diverges_reads_the_papers_columns_only(tmp_path):
    """Table 13's paper reports divergence on MNIST and CIFAR-10: bit-xor, where every seed learns, is not read."""
    claim = next(c for c in evaluate(tmp_path) if c["claim"].text.startswith("Training the attention layers"))
    check = claim["claim"].checks[0]
    assert check.columns == ("mnist", "cifar10")
    root = tmp_path / "quick"
    chance = "yes: seeds 0;1;2"
    _write(root, "table13", [{**row("table13", "plus_attention", "mnist-5k", 89, 13, at_chance=chance),
                              "paper_column": "mnist"},
                             {**row("table13", "plus_attention", "digits-patch", 47.7, 12, collapsed=chance),
                              "paper_column": "cifar10"},
                             {**row("table13", "plus_attention", "bit-xor", 100, 100), "paper_column": "bit-xor"}])
    result = evaluate_check(root, check, "table13")
    assert [c["column"] for c in result["columns"]] == ["mnist-5k", "digits-patch"]
    assert result["verdict"] == HOLDS and "every column read" in result["why"]


def test_training_that_fails_counts_collapse_divergence_and_chance_and_needs_three_seeds():
    check = Check("table13", ("plus_attention",), "unstable")
    assert column_verdict(check, {"plus_attention": row("table13", "plus_attention", "mnist", 89, 13, n=1)}) == \
        (INCONCLUSIVE, "n=1 < 3 seeds")
    # a constant answer at the label prior: not "collapsed" (its loss is below ln C) but at chance
    mixed = row("table13", "plus_attention", "listops", 36.8, 16, collapsed="yes: seeds 0", at_chance="yes: seeds 1;2")
    outcome, reason = column_verdict(check, {"plus_attention": mixed})
    assert outcome == HOLDS and "(0;1;2)" in reason
    some = row("table13", "plus_attention", "digits", 47.7, 36, collapsed="yes: seeds 0;1")
    assert column_verdict(check, {"plus_attention": some}) == (INCONCLUSIVE, "2 of 3 seeds collapsed, diverged or at chance")
    learnt = row("table13", "plus_attention", "bit-memory", 100, 96.7)
    assert column_verdict(check, {"plus_attention": learnt})[0] == FAILS


def _store(root, random_commit="abc1234", random_dirty="0 of 3"):
    _write(root, "table2", [row("table2", "language_gpt2", "mnist", 98.0, 95.0, commits="abc1234"),
                            row("table2", "random", "mnist", 91.7, 80.0, commits=random_commit, dirty=random_dirty,
                                values="79.0;80.0;81.0")])
    _write(root, "table3", [row("table3", "transformer", "mnist", 91.7, 80.0, commits="abc1234"),
                            row("table3", "lstm_3_layer", "mnist", 70.9, 60.0, commits="abc1234")])


def test_provenance_gate_reads_only_the_declared_commits_clean_runs(tmp_path):
    root = tmp_path / "lane"
    _store(root)
    (root / "COMMIT").write_text("abc1234ffffffffffffffffffffffffffffffff\n")
    first = evaluate(root)[0]
    assert first["verdict"] == HOLDS and first["clean"]  # every cell from the declared commit, clean
    _store(root, random_dirty="1 of 3")
    first = evaluate(root)[0]
    assert first["verdict"] == PROVENANCE and first["checks"][0]["verdict"] == PROVENANCE
    assert "table2/mnist/random (1 of 3 runs from a tree with uncommitted changes)" in first["why"]
    assert first["checks"][0]["why"].startswith("was holds; cells not from commit abc1234 with a clean tree")
    assert first["checks"][1]["verdict"] == HOLDS  # Table 3's cells pass
    _store(root, random_commit="def5678")
    assert "table2/mnist/random (commit def5678, not abc1234)" in evaluate(root)[0]["why"]
    # an exact rerun at the declared commit reproduced the old cell's figures: recorded, it may be read
    (root / "REPRODUCED.csv").write_text("table,row,column,commit,values\ntable2,random,mnist,abc1234,79.0;80.0;81.0\n")
    assert evaluate(root)[0]["verdict"] == HOLDS
    (root / "REPRODUCED.csv").write_text("table,row,column,commit,values\ntable2,random,mnist,abc1234,79.0;80.0;82.0\n")
    assert evaluate(root)[0]["verdict"] == PROVENANCE  # other figures: not a reproduction
    # --commit declares it too; one different from COMMIT is refused
    assert evaluate(root, "abc1234")[0]["verdict"] == PROVENANCE  # the same commit given twice: the same gate
    with pytest.raises(ConfigError, match="differs from"):
        evaluate(root, "0123456789")


def test_provenance_gate_without_a_declared_commit_needs_one_commit_for_all_cells(tmp_path):
    root = tmp_path / "quick"
    _store(root)
    assert evaluate(root)[0]["verdict"] == HOLDS  # no COMMIT: every cell of the verdict from abc1234, clean
    _store(root, random_commit="def5678")
    first = evaluate(root)[0]
    assert first["verdict"] == PROVENANCE
    assert "table2/mnist/random (commit def5678)" in first["why"] and "(commit abc1234)" in first["why"]
    _store(root, random_commit="abc1234;unrecorded")
    assert "run(s) without a recorded commit" in evaluate(root)[0]["why"]
    gate = Gate()
    assert gate.problems([(("t", "r", "c"), {"runs": 0, "commits": set(), "unrecorded": 0, "dirty": 0}, "")]) == []


def test_one_commit_abbreviated_two_ways_is_one_commit(tmp_path):
    """git lengthens a short hash once the repository holds another object sharing its 7 characters: the lane's runs
    of its one pinned commit recorded fd06ce5 and later fd06ce52, which the claims counted as 2 commits and, with no
    declared commit, failed as a cell of '2 commits' and as cells that disagree on the commit."""
    assert distinct_commits(["abc1234", "abc12345", "abc12345f0", "def5678", "", "abc1234"]) == ["abc12345f0", "def5678"]
    root = tmp_path / "quick"
    _store(root, random_commit="abc1234;abc12345")
    first = evaluate(root)[0]
    assert first["verdict"] == HOLDS and first["clean"], first["why"]  # no COMMIT: one commit, clean
    assert first["provenance"].startswith("12 runs read from 1 commit(s) (abc12345);")
    _store(root, random_commit="abc12345")  # a cell's every run recorded the longer abbreviation
    assert evaluate(root)[0]["verdict"] == HOLDS
    _store(root, random_commit="abc1234;def5678")
    assert "table2/mnist/random (2 commits (abc1234, def5678))" in evaluate(root)[0]["why"]


def test_claims_md_from_results_fixed_and_tuned(tmp_path):
    root = tmp_path / "quick"
    _store(root)
    _write(root, "table2-tuned", [{**row("table2-tuned", "language_gpt2", "mnist", 98.0, 95.0, n=4,
                                         seeds="0;1;2;3", values="95.0;94.0;95.0;96.0"), "lr_chosen": "0.001"},
                                  {**row("table2-tuned", "random", "mnist", 91.7, 99.0, n=4, seeds="0;1;2;3",
                                         values="99.0;98.0;99.0;100.0"), "lr_chosen": "0.001"}])
    _write(root, "table1", [row("table1", "fpt", "mnist", 98.0, 95.0),
                            row("table1", "control_no_lm", "mnist", None, 94.5, std=1.0)])
    # a tuned cell not run itself, whose row still carries figures (read from the grid's shared run at the paper's lr)
    _write(root, "table1-tuned", [{**row("table1-tuned", "fpt", "mnist", 98.0, 95.0), "status": "not run"},
                                  {**row("table1-tuned", "control_no_lm", "mnist", None, 80.0), "status": "not run"}])
    first = evaluate(root)[0]
    assert first["checks"][0]["tuned"]["verdict"] == FAILS  # under tuned lr the random body wins: not robust
    assert first["verdict"] == HOLDS and first["tuned_verdict"] == FAILS
    assert main(["claims", "--results", str(root)]) == 0
    md = (root / "claims.md").read_text()
    assert md == claims_text(root)
    assert "Holm's step-down correction" in md and "**Verdict (lr tuned per cell): does not hold**" in md
    assert "no declared commit" in md
    assert "table1 / mnist (fixed lr): FPT 95 ± 1 (n=3) vs control_no_lm 94.5 ± 1 (n=3): the control does as well" in md
    assert "table1-tuned / mnist (tuned lr): FPT 95 ± 1 (n=3) vs control_no_lm 80 ± 1 (n=3): fpt, control_no_lm not run" in md


def test_bit_xor_length_scaling_is_solved_at_every_length(tmp_path):
    root = tmp_path / "lane"
    claim = next(c for c in evaluate(root) if c["claim"].text.startswith("Bit XOR stays solvable"))
    check = claim["claim"].checks[0]
    _write(root, check.table, [{**row(check.table, "fpt", "n_bits=5", None, 100.0, std=0.0), "paper": ""},
                               {**row(check.table, "fpt", "n_bits=16", None, 99.9, std=0.05), "paper": ""}])
    assert evaluate_check(root, check, check.table)["verdict"] == HOLDS
    _write(root, check.table, [{**row(check.table, "fpt", "n_bits=5", None, 100.0, std=0.0), "paper": ""},
                               {**row(check.table, "fpt", "n_bits=64", None, 60.0, std=2.0), "paper": ""}])
    result = evaluate_check(root, check, check.table)
    assert result["verdict"] == FAILS and "n_bits=64" in result["why"]
