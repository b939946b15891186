"""Round 21 of the hostile-input cases: a lone LOCAL_RANK, foreign event files in a shared TensorBoard folder, a pandas
Series' element names, reordered columns at the estimators, and the inputs probed after them. Each case failed before
its fix (the commit that added it says how)."""

from __future__ import annotations

from hostile_helpers import FAST, table


def test_a_lone_local_rank_is_no_torchrun_rank(tiny_bert_dir, tmp_path, monkeypatch):
    """Some schedulers and containers set LOCAL_RANK=0 for a single process; fpt read it as a torchrun rank: fpt train
    fitted no baselines beside the run and printed the summary as a rank's JSON, and fpt.train_run refused
    fit=closed-form ('fits in one process: drop torchrun'). torchrun sets RANK and WORLD_SIZE too (and
    TORCHELASTIC_RUN_ID): LOCAL_RANK alone now changes nothing."""
    import fpt

    for name in ("RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "0")
    data = str(table(tmp_path / "t.csv"))
    fields = {**FAST, "body": tiny_bert_dir, "data": data}
    summary = fpt.train_run({**fields, "baselines": "fast"}, tmp_path / "run", progress=False)
    assert summary["world_size"] == 1 and "logistic regression" in summary["baselines_models"]["models"]
    closed = fpt.train_run({**fields, "fit": "closed-form"}, tmp_path / "closed", progress=False)
    assert closed["world_size"] == 1 and (tmp_path / "closed" / "summary.json").is_file()
