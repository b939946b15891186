from pathlib import Path

import pytest

import fpt
from fpt.convergence import steps_to_converge


def test_first_evaluation_within_a_point_of_the_best():
    rows = [{"step": s, "acc": a} for s, a in [(10, 0.5), (20, 0.80), (30, 0.905), (40, 0.91), (50, 0.90)]]
    assert steps_to_converge(rows, "acc") == 30
    assert steps_to_converge(rows, "acc", tolerance=0.0) == 40
    assert steps_to_converge([], "acc") is None


def test_reach_and_stay_lower_bound_and_no_learning():
    from fpt.convergence import converged

    rising = [{"step": s, "acc": a} for s, a in [(50, 0.5), (100, 0.7), (150, 0.9), (200, 0.91), (250, 0.9)]]
    assert converged(rising, "acc", "target") == {"step": 150, "bound": "=", "reason": ""}
    spike = [{"step": s, "acc": a} for s, a in [(50, 0.5), (100, 0.95), (150, 0.6), (200, 0.9), (250, 0.91)]]
    assert converged(spike, "acc")["step"] == 200  # reached at 100 but did not stay
    capped = [{"step": s, "acc": a} for s, a in [(50, 0.5), (100, 0.6), (150, 0.7), (200, 0.8)]]
    assert converged(capped, "acc", "steps")["bound"] == ">="
    flat = [{"step": s, "acc": a} for s, a in [(50, 0.52), (100, 0.51), (150, 0.52), (200, 0.52)]]
    out = converged(flat, "acc", "steps")
    assert out["step"] is None and out["reason"].startswith("no learning")  # not "converged at step 50"


def _summary(val, test, val_set_size=500):
    return {"task": "digits", "val_set": "val", "test_set": "test", "val_accuracy": val, "test_accuracy": test,
            "eval": {"test_accuracy": test}, "diverged_at": None, "baselines": {"chance": 0.1, "majority": {
                "val": 0.1, "test": 0.1}}, "task_info": {"split_sizes": {"val": val_set_size, "test": 1000}}}


def test_collapse_at_chance_and_above_majority_with_a_binomial_margin(tmp_path):
    import json
    import math

    from fpt.convergence import eval_sizes, health, run_health

    uniform = [{"step": s, "wall_seconds": s / 10, "val_loss": math.log(10) + 0.01, "val_accuracy": 0.1}
               for s in (50, 100, 150)]  # as fpt train writes them (the strict reader asks for wall_seconds)
    spike = _summary(0.171, 0.11)  # a validation spike early on, then the uniform output
    h = health(spike, uniform, eval_sizes(spike))
    assert h["collapsed"] and not h["at_chance"]  # 17.1 is beyond the margin on 500 examples, the curve is not
    assert h["above_majority"] is False  # 11% on 1,000 test examples: within 10% + 1.645 * 0.95%
    assert any(r.startswith("collapsed") for r in h["reasons"])
    learnt = [{"step": 50, "val_loss": 0.5, "val_accuracy": 0.9}]
    h = health(_summary(0.11, 0.9), learnt, {"val": 500, "test": 1000})
    assert h["at_chance"] and not h["collapsed"] and h["above_majority"] is True
    # a run written before the flags: computed from its files
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in uniform))
    (tmp_path / "config.yaml").write_text("task_options: {}\n")
    assert run_health(tmp_path, spike)["collapsed"]


def test_provenance_commit_and_dirty():
    from fpt.provenance import environment, run_commit

    assert run_commit({"environment": {"fpt_git_commit": "3a2ebbd (with uncommitted changes)"}}) == ("3a2ebbd", True)
    assert run_commit({"environment": {"fpt_git_commit": "3a2ebbd"}}) == ("3a2ebbd", False)
    assert run_commit({}) == (None, None)
    env = environment()
    assert "commit" in env and "dirty" in env


def test_binomial_margin_is_wilsons_upper_bound_not_walds():
    """The Wald margin z * sqrt(p (1 - p) / n) is 0 at p = 0 and too narrow on small sets; Wilson's score bound is
    z^2 / (n + z^2) at p = 0; both here computed by hand from Wilson's formula."""
    import math

    from fpt.convergence import Z_ONE_SIDED_95, binomial_margin

    z = Z_ONE_SIDED_95
    assert binomial_margin(0.0, 20) == pytest.approx(z * z / (20 + z * z), rel=1e-3)  # Wald: 0
    centre, half = (0.5 + z * z / 20) / (1 + z * z / 10), z / (1 + z * z / 10) * math.sqrt(0.25 / 10 + z * z / 400)
    assert binomial_margin(0.5, 10) == pytest.approx(centre + half - 0.5, rel=1e-3)
    assert binomial_margin(1.0, 20) == 0.0 and binomial_margin(0.3, None) == 0.0


def test_binomial_margin_is_scipys_wilson_bound_to_the_last_bit_without_importing_scipy_stats(monkeypatch):
    """binomial_margin computes scipy.stats.binomtest(k, n).proportion_ci(method="wilson")'s bound itself: every fit
    ends in health(), and importing scipy.stats for it cost each fpt train process ~1 CPU-s. The same float, for
    every k of every n up to 40, and for accuracies between the k/n at two levels."""
    import sys

    from scipy.stats import binomtest, norm

    from fpt.convergence import Z_ONE_SIDED_95, binomial_margin

    def scipys(p: float, n: int, z: float) -> float:
        k = min(max(round(p * n), 0), n)
        high = binomtest(k, n).proportion_ci(confidence_level=2.0 * float(norm.cdf(z)) - 1.0, method="wilson").high
        return max(float(high) - p, 0.0)

    cases = [(k / n, n, Z_ONE_SIDED_95) for n in range(1, 41) for k in range(n + 1)]
    cases += [(p, n, z) for n in (7, 20, 333, 1000, 10_000) for p in (0.0, 0.013, 0.1, 0.4999, 0.5, 0.77, 0.999, 1.0)
              for z in (Z_ONE_SIDED_95, 1.96)]
    expected = {(p, n, z): scipys(p, n, z) for p, n, z in cases}
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # importing it now raises ImportError
    ours = {(p, n, z): binomial_margin(p, n, z) for p, n, z in expected}
    assert ours == expected
    assert len(ours) > 900 and ours[(0.1, 1000, Z_ONE_SIDED_95)] == pytest.approx(0.0167, abs=1e-4)


def test_a_run_records_its_commit_by_twelve_characters():
    """git's default abbreviation (7, lengthened once the repository holds another object sharing them) recorded the
    lane's one pinned commit as fd06ce5 and, sessions later, fd06ce52."""
    import subprocess

    from fpt.provenance import environment, git_commit

    here = Path(fpt.__file__).resolve().parent
    head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    if head.returncode != 0:
        pytest.skip("fpt is not a git checkout here")
    git_commit.cache_clear()
    assert environment()["commit"] == head.stdout.strip()[:12]
