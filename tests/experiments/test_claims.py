"""Claims: verdicts computed from hand-written results.csv files."""

from __future__ import annotations

from fpt.cli import main
from fpt.experiments.claims import FAILS, HOLDS, INCONCLUSIVE, Check, check_column, evaluate, relation_holds
from fpt.report import write_csv


def row(table, name, column, paper, ours, std=None, n=1, above="yes", metric="test_accuracy"):
    return {"table": table, "scale": "quick", "row": name, "column": column, "paper_column": column,
            "metric": metric, "paper": paper, "ours": ours, "ours_std": std, "n": n, "above_majority": above,
            "status": "done" if ours is not None else "failed"}


def test_relations_with_a_noise_margin():
    assert relation_holds("decreasing", [90, 80, 70], 0.0) is True
    assert relation_holds("decreasing", [90, 89, 70], 2.0) is None  # within the seeds' std
    assert relation_holds("decreasing", [80, 90], 2.0) is False
    assert relation_holds("increasing", [60, 62, 65], 0.0) is True
    assert relation_holds("max", [54, 53, 38], 0.0) is True and relation_holds("max", [54, 60, 38], 0.0) is False
    assert relation_holds("recovers", [97.2, 98.0, 91.7], 0.0) is True  # Table 9's MNIST
    assert relation_holds("recovers", [56.5, 68.2, 61.7], 0.0) is False  # Table 9's CIFAR-10
    assert relation_holds("at_least", [38.4, 38.0], 0.0, 2.0) is True
    assert relation_holds("at_least", [38.6, 42.0], 0.0, 2.0) is False


def test_columns_count_only_where_the_paper_shows_the_relation():
    check = Check("table2", ("language_gpt2", "random"), "decreasing")
    cells = {"language_gpt2": row("table2", "language_gpt2", "bit-xor", 100, 99), "random":
             row("table2", "random", "bit-xor", 100, 50)}
    assert check_column(check, cells)[0] == "skip"  # the paper's 100 vs 100 shows no ordering
    cells = {"language_gpt2": row("table2", "language_gpt2", "mnist", 98, 95, above="no"),
             "random": row("table2", "random", "mnist", 91.7, 90)}
    outcome, reason, _, _ = check_column(check, cells)
    assert outcome == INCONCLUSIVE and "majority" in reason


def test_claims_md_from_results(tmp_path):
    root = tmp_path / "quick"
    (root / "table2").mkdir(parents=True)
    write_csv([row("table2", "language_gpt2", "mnist", 98.0, 95.0), row("table2", "random", "mnist", 91.7, 90.0),
               row("table2", "language_gpt2", "listops", 38.4, 30.0, std=3.0, n=3),
               row("table2", "random", "listops", 34.3, 29.0, std=2.0, n=3)], root / "table2" / "results.csv")
    (root / "table3").mkdir()
    write_csv([row("table3", "transformer", "mnist", 91.7, 60.0), row("table3", "lstm_3_layer", "mnist", 70.9, 80.0)],
              root / "table3" / "results.csv")
    (root / "table10").mkdir()
    write_csv([row("table10", "output_only", "listops", 32.8, 20.0), row("table10", "fpt", "listops", 38.4, 30.0)],
              root / "table10" / "results.csv")
    verdicts = {item["claim"].text.split(" (Table")[0]: item for item in evaluate(root)}
    first = verdicts["A language-pretrained frozen body beats a random one, which beats a frozen random LSTM"]
    table2, table3 = first["checks"]
    assert table2["verdict"] == HOLDS and "inconclusive in table2/listops" in table2["why"]  # 30 vs 29, std 3
    assert table3["verdict"] == FAILS  # our LSTM beat the random transformer
    assert first["verdict"] == INCONCLUSIVE and "holds in table2; not in table3" in first["why"]
    assert verdicts["Training only the output layer (a linear probe) is below FPT"]["verdict"] == HOLDS
    six = verdicts["FPT converges in fewer steps than the same frozen architecture with random weights"]
    assert six["verdict"] == INCONCLUSIVE and "no results" in six["checks"][0]["why"]
    assert main(["claims", "--results", str(root)]) == 0
    md = (root / "claims.md").read_text()
    assert "**Verdict: holds**" in md and "mnist: paper language_gpt2/random = 98 / 91.7; ours = 95 / 90: holds" in md
    # several seeds: the mean with its std and n, as the reports give it
    assert "listops: paper language_gpt2/random = 38.4 / 34.3; ours = 30 ± 3 (n=3) / 29 ± 2 (n=3): inconclusive" in md
