from fpt.analysis.convergence import steps_to_converge


def test_first_evaluation_within_a_point_of_the_best():
    rows = [{"step": s, "acc": a} for s, a in [(10, 0.5), (20, 0.80), (30, 0.905), (40, 0.91), (50, 0.90)]]
    assert steps_to_converge(rows, "acc") == 30
    assert steps_to_converge(rows, "acc", tolerance=0.0) == 40
    assert steps_to_converge([], "acc") is None
