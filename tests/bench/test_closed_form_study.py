"""bench/closed_form_study.py: the training examples only, poolings over real positions, ranks, and a tiny run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench_scripts import load

study = load("closed_form_study")


def test_a_table_is_its_examples_that_are_not_test_and_a_ucr_set_its_train_file(tmp_path):
    path = study.dataset_path("iris", tmp_path)
    _, data = study.training_task(path, "global")
    assert len(data.train) == 150 - 30  # the seeded test fifth held out, as bench/own_data.py's runs hold it out
    pytest.importorskip("aeon")
    _, data = study.training_task(study.dataset_path("ItalyPowerDemand", tmp_path), "global")
    assert len(data.train) == 67  # the archive's TRAIN file, every series of it; TEST is never read


def test_a_ts_files_integer_classes_are_classes_as_the_library_reads_them(tmp_path):
    """PigCVP's 52 classes are labelled 1..52: the archive says class labels, which the study must take from the
    format as fpt train does (it once read them as a quantity and scored R²)."""
    path = tmp_path / "Many" / "Many_TRAIN.ts"
    path.parent.mkdir()
    rows = [",".join(str(v) for v in np.random.default_rng(c).normal(size=8)) + f":{c % 26 + 1}" for c in range(52)]
    text = ("@problemName Many\n@univariate true\n@equalLength true\n@classLabel true "
            + " ".join(str(c) for c in range(1, 27)) + "\n@data\n" + "\n".join(rows) + "\n")
    path.write_text(text)
    path.with_name("Many_TEST.ts").write_text(text)
    _, data = study.training_task(path, "global")
    assert data.objective.name == "classification" and data.spec.num_classes == 26


@pytest.mark.parametrize(("recipe", "round2"), [
    (study.Recipe(members=2, blocks="last", poolings="max,mean"), False),
    (study.Recipe(members=1, blocks="0", poolings="flatten,last", inputs=False), False),
    (study.Recipe(members=3, blocks="0", poolings="max,flatten", scales="1,2", standardise=False), True),
    (study.Recipe(members=3, blocks="0", poolings="max,flatten", scales="1,4", hop="one"), True)])
def test_a_recipe_reads_what_the_library_feature_map_gives(tmp_path, tiny_bert_dir, recipe, round2):
    """Slices of the cached members are fit=closed-form's own features: no second feature map in bench/."""
    from dataclasses import replace

    from fpt.closed_form import read_features
    from fpt.pipeline import assemble

    path = study.dataset_path("iris", tmp_path)
    x, y, classes = study.features("iris", path, recipe, 1, tmp_path / "cache", tiny_bert_dir, round2)
    config, data = study.training_task(path, "global", tiny_bert_dir)
    config = replace(config, fit="closed-form", seed=study.run_seed(1), device="cpu", precision="fp32",
                     cf_members=recipe.members, cf_blocks=recipe.blocks, cf_poolings=recipe.poolings,
                     cf_inputs=recipe.inputs, cf_scales=recipe.scales, cf_hop=recipe.hop or "scale")
    exp = assemble(config, data)
    expected = read_features(exp, data.train.data)
    assert x.shape == expected.shape == (120, exp.model.num_features)
    np.testing.assert_allclose(x, expected, rtol=2e-3, atol=2e-3)  # the cache keeps float16
    assert classes == 3 and y.shape == (120, 1)


def test_ranks_within_an_axis_count_the_base_recipe_and_share_ties():
    rows = [{"dataset": d, "axis": a, "choice": c, "cv": v}
            for d, a, c, v in [("GunPoint", "base", "base", 0.8), ("GunPoint", "pool", "max", 0.9),
                               ("GunPoint", "members", "E=1", 0.8), ("ArrowHead", "base", "base", 0.7),
                               ("ArrowHead", "pool", "max", 0.6), ("ArrowHead", "members", "E=1", 0.5)]]
    table, text = study.summarise(rows)
    assert {(r["dataset"], r["choice"]): r["cv"] for r in table}[("GunPoint", "max")] == 0.9
    lines = {line.split(" | ")[1]: line for line in text.splitlines()[2:]}
    assert lines["max"].endswith("| 0.750 | – | 1.50 |")  # ranks 1 and 2
    assert lines["E=1"].endswith("| 0.650 | – | 1.75 |")  # a tie (1.5) then 2
    assert "pool 1.50, members 1.25" in lines["base"]


def test_a_tiny_study_writes_its_files_and_resumes(tmp_path, tiny_bert_dir, monkeypatch):
    monkeypatch.setattr(study, "CHOICES", [study.CHOICES[0], ("members", "E=1", study.Recipe(members=1)),
                                           ("poolings", "flatten", study.Recipe(poolings="flatten", blocks="last"))])
    out = tmp_path / "s"
    argv = ["--out", str(out), "--datasets", "iris,diabetes", "--repeats", "2", "--folds", "3",
            "--body", tiny_bert_dir, "--cache", str(tmp_path / "cache")]
    assert study.main(argv) == 0
    rows = [json.loads(line) for line in (out / "study.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * 3 * 2
    iris = next(r for r in rows if r["dataset"] == "iris" and r["choice"] == "E=1")
    assert iris["metric"] == "accuracy" and iris["folds"] == 3 and iris["n_train"] == 120
    assert iris["cv"] == pytest.approx(np.mean(iris["fold_scores"])) and 0 <= iris["cv"] <= 1
    base = next(r for r in rows if r["dataset"] == "iris" and r["axis"] == "base" and r["repeat"] == 0)
    tokens = 4 * 2  # iris: 4 feature tokens of 2 values, once after the members' features
    assert base["n_features"] - tokens == 3 * (iris["n_features"] - tokens)  # E=3 members side by side
    assert next(r for r in rows if r["dataset"] == "diabetes")["metric"] == "r2"
    assert len(list((tmp_path / "cache" / "iris").glob("*.npz"))) == 3 * 2  # one per member seed, shared by choices
    flat = next(r for r in rows if r["dataset"] == "iris" and r["choice"] == "flatten")
    assert flat["n_features"] == 3 * 4 * 32 + 4 * 2  # E=3 x 4 tokens x width 32, then the 4 tokens of 2 values
    assert (out / "study.csv").read_text().startswith("dataset,choice,axis,cv,repeats,spread")
    assert "| members | E=1 |" in (out / "table.md").read_text()
    assert study.main(argv) == 0  # resumed: nothing runs again
    assert len((out / "study.jsonl").read_text().splitlines()) == len(rows)


def test_ppv_is_the_share_of_real_positions_above_each_units_training_median():
    # 2 examples, T=3 positions, D=2 units; example 1's last position is padding (all zeros)
    h = np.array([[[1.0, -1.0], [2.0, 0.5], [3.0, 2.0]],
                  [[4.0, 1.0], [5.0, 3.0], [0.0, 0.0]]])
    got = study.ppv_features(h.reshape(2, -1), np.array([1, 3, 2]))
    # unit 0's median over the 5 real positions is 3, unit 1's is 1: strictly above counts
    assert got.tolist() == [[0.0, 1 / 3], [1.0, 0.5]]


def test_a_round2_recipe_reads_members_at_their_scales(tmp_path, tiny_bert_dir):
    recipe = study.Recipe(members=3, blocks="0", poolings="max", standardise=False, scales="1,2")
    path = study.dataset_path("iris", tmp_path / "data")
    x, y, classes = study.features("iris", path, recipe, 0, tmp_path / "cache", tiny_bert_dir, round2=True)
    assert x.shape == (120, 3 * 32 + 4 * 2) and classes == 3
    names = sorted(p.name for p in (tmp_path / "cache").glob("*.npz"))
    assert names == [f"iris-{tiny_bert_dir.split('/')[-1]}-global-pretrained-{s}-k{k}-t0-b0.npz"
                     for s, k in ((0, 1), (1, 2), (2, 1))]


def _seq_rows(official: tuple[float, float], gpt2: tuple[float, float], measured: float) -> list[dict]:
    out = []
    for axis, choice, values in [("base", "official", official), ("input_init", "gpt2", gpt2),
                                 ("measured", "N(0, 0.056)", (measured, measured))]:
        out += [{"dataset": d, "axis": axis, "choice": choice, "cv": v, "repeat": 0}
                for d, v in zip(study.SEQUENCES, values, strict=True)]
    return out


def test_the_seqinit_rule_takes_the_best_mean_cv_among_the_librarys_draws_and_a_tie_keeps_official():
    got = study.decide_seqinit(_seq_rows((0.33, 0.34), (0.58, 0.34), 0.9))  # the measured draw is never chosen
    assert got["chosen"] == "gpt2" and got["mean_cv"] == {"official": 0.335, "gpt2": 0.46}
    assert study.decide_seqinit(_seq_rows((0.40, 0.30), (0.30, 0.40), 0.9))["chosen"] == "official"  # a tie
    assert study.decide_seqinit(_seq_rows((0.40, 0.30), (0.30, 0.3996), 0.0))["chosen"] == "official"  # to 3 places
    assert "measured" in study.NOT_CHOSEN and [a for a, _, _ in study.SEQINIT] == ["base", "input_init", "measured"]


def test_the_seqinit_fields_leave_earlier_recipes_ids_alone():
    assert study.recipe_id(study.BASE3) == study.recipe_id(study.replace(study.BASE3, input_init="", embed_std=0.0))
    assert study.recipe_id(study.BASE_SEQ) != study.recipe_id(study.replace(study.BASE_SEQ, input_init="gpt2"))


def _round5_rows(cv: dict[str, tuple[float, float]]) -> list[dict]:
    axis = {c: a for a, c, _ in study.ROUND5}
    return [{"dataset": d, "axis": axis[c], "choice": c, "cv": v, "repeat": 0}
            for c, values in cv.items() for d, v in zip(("diabetes", "GunPoint"), values, strict=True)]


def test_the_round5_rule_ranks_the_head_searches_against_the_default_and_never_picks_the_measured_ridge():
    base, wider, widest, longer, ridge = (c for _, c, _ in study.ROUND5)
    got = study.decide_round5(_round5_rows({base: (0.46, 0.98), wider: (0.48, 0.98), widest: (0.47, 0.98),
                                            longer: (0.47, 0.97), ridge: (0.60, 0.99)}))
    assert [(d["axis"], d["chosen"], d["rank"]) for d in got] == [("head search", wider, 1.5)]  # 1st, then 2.0
    assert got[0]["base_rank"] == 3.0  # diabetes 4th, GunPoint tied first of three (2.0)
    # equal mean ranks and means: the default stays
    tie = study.decide_round5(_round5_rows({base: (0.47, 0.97), wider: (0.47, 0.97), widest: (0.47, 0.97),
                                            longer: (0.47, 0.97), ridge: (0.9, 0.9)}))
    assert tie[0]["chosen"] == base


def test_the_round5_ridge_row_is_the_tokens_alone_and_its_field_leaves_earlier_ids_alone(tmp_path, tiny_bert_dir):
    assert study.recipe_id(study.BASE5) == study.recipe_id(study.replace(study.BASE5, inputs_only=False))
    ridge = study.ROUND5[-1][2]
    path = study.dataset_path("iris", tmp_path / "data")
    x, y, classes, widths, inputs = study.features_and_layout("iris", path, ridge, 0, tmp_path / "cache",
                                                              tiny_bert_dir, round2=True)
    full, *_ = study.features_and_layout("iris", path, study.replace(ridge, inputs_only=False, members=1), 0,
                                         tmp_path / "cache", tiny_bert_dir, round2=True)
    assert x.shape == (120, 4 * 2) and widths == [] and inputs == 0 and classes == 3
    np.testing.assert_array_equal(x, full[:, -4 * 2:])  # the tokens' columns the head search sees beside the body


def _round6_rows(cv: dict[str, tuple[float, float]]) -> list[dict]:
    axis = {c: a for a, c, _ in study.ROUND6}
    return [{"dataset": d, "axis": axis[c], "choice": c, "cv": v, "repeat": 0}
            for c, values in cv.items() for d, v in zip(("ArrowHead", "diabetes"), values, strict=True)]


def test_the_round6_rule_takes_the_best_mean_rank_and_a_tie_with_the_default_keeps_it():
    base, averaged, two, three = (c for _, c, _ in study.ROUND6)
    assert base == study.SHIPPED6 and [a for a, _, _ in study.ROUND6] == ["base", "draws", "draws", "draws"]
    got = study.decide_round6(_round6_rows({base: (0.80, 0.46), averaged: (0.82, 0.47), two: (0.81, 0.46),
                                            three: (0.82, 0.45)}))
    assert got["chosen"] == averaged and got["rank"][averaged] == 1.25  # tied first (1.5), then first
    assert got["rank"] == {base: 3.25, averaged: 1.25, two: 2.75, three: 2.75} and got["sets"] == ["ArrowHead", "diabetes"]
    # a tie in mean rank with the default keeps it, though the candidate's mean CV is higher
    tie = study.decide_round6(_round6_rows({base: (0.80, 0.47), averaged: (0.90, 0.46), two: (0.70, 0.40),
                                            three: (0.70, 0.40)}))
    assert tie["rank"][base] == tie["rank"][averaged] == 1.5 and tie["chosen"] == base
    # tied candidates without the default: the higher mean CV
    among = study.decide_round6(_round6_rows({base: (0.70, 0.40), averaged: (0.80, 0.47), two: (0.90, 0.46),
                                              three: (0.60, 0.30)}))
    assert among["rank"][averaged] == among["rank"][two] == 1.5 and among["chosen"] == two


def _draw_features(seed: int, n: int = 60, members: int = 3, width: int = 5, inputs: int = 4):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, members * width + inputs)), [width] * members


def test_averaged_heads_are_one_linear_layer_and_one_draw_scores_as_the_librarys_folds():
    """Round 6's (a) ships as one linear layer over the draws' features; with one draw its folds are fold_scores'."""
    from fpt.closed_form import fit_head, fold_scores
    from fpt.feature_map import DEFAULTS

    draws = [_draw_features(s) for s in (0, 1, 2)]
    xs, widths = [x for x, _ in draws], [w for _, w in draws]
    signal = xs[0][:, 0] + xs[1][:, 1] - xs[2][:, 2]
    y = np.digitize(signal, np.quantile(signal, [1 / 3, 2 / 3])).reshape(-1, 1)
    w, b = study.averaged_head(xs, y, True, 3, DEFAULTS, 0, 4, widths)
    assert w.shape == (3, 3 * (3 * 5 + 4)) and b.shape == (3,)
    each = [fit_head(x, y, True, 3, DEFAULTS, 0, 4, member_widths=m) for x, m in zip(xs, widths, strict=True)]
    np.testing.assert_allclose(np.concatenate(xs, 1) @ w.T + b,
                               np.mean([x @ h[0].T + h[1] for x, h in zip(xs, each, strict=True)], 0), atol=1e-10)
    np.testing.assert_allclose(w[:, :19], each[0][0] / 3)  # each draw's block: its head's weights over 3
    for seed in (0, 1):
        assert study.averaged_fold_scores(xs[:1], y, True, 3, DEFAULTS, seed, 4, widths[:1]) == \
            fold_scores(xs[0], y, True, 3, DEFAULTS, seed, 4, member_widths=widths[0])
    scores = study.averaged_fold_scores(xs, y, True, 3, DEFAULTS, 0, 4, widths)
    assert len(scores) == 5 and all(0 <= s <= 1 for s in scores)
    target = (xs[0][:, 0] + 0.1 * signal).reshape(-1, 1)  # regression: three equal draws average to one's figures
    np.testing.assert_allclose(study.averaged_fold_scores([xs[0]] * 3, target, False, 1, DEFAULTS, 0, 4, widths[:1] * 3),
                               fold_scores(xs[0], target, False, 1, DEFAULTS, 0, 4, member_widths=widths[0]), atol=1e-12)


def test_round6_draws_read_their_members_draw_by_draw_and_the_tokens_once(tmp_path, tiny_bert_dir):
    assert study.recipe_id(study.BASE5) == study.recipe_id(study.replace(study.BASE5, draws=1, draw_head="one"))
    assert study.draws_of(study.BASE5, 2) == [2]  # the default: the repeat's own draw (round 5's base rows)
    assert study.draws_of(study.replace(study.BASE5, draws=2), 2) == [2, 0]
    assert study.draws_of(study.replace(study.BASE5, draws=3), 1) == [1, 2, 0]
    one = study.Recipe(members=2, blocks="0", poolings="max")
    path = study.dataset_path("iris", tmp_path / "data")
    cache = tmp_path / "cache"
    x, y, classes, widths, inputs = study.features_and_layout("iris", path, study.replace(one, draws=2), 2, cache,
                                                              tiny_bert_dir, round2=True)
    draw2, *_, w2, _ = study.features_and_layout("iris", path, one, 2, cache, tiny_bert_dir, round2=True)
    draw0, *_ = study.features_and_layout("iris", path, one, 0, cache, tiny_bert_dir, round2=True)
    assert widths == w2 * 2 and inputs == 4 * 2 and classes == 3 and len(y) == 120
    body = sum(w2)  # draw 2's members, draw 0's members, then the tokens once
    np.testing.assert_array_equal(x, np.concatenate([draw2[:, :body], draw0[:, :body], draw2[:, body:]], 1))


def test_a_tiny_round6_study_scores_each_candidate_and_times_its_head(tmp_path, tiny_bert_dir, monkeypatch):
    base = study.Recipe(members=1, blocks="0", poolings="max")
    monkeypatch.setattr(study, "ROUND6", [("base", study.SHIPPED6, base),
                                          ("draws", "averaged", study.replace(base, draws=3, draw_head="average")),
                                          ("draws", "E=3", study.replace(base, draws=3))])
    out = tmp_path / "s"
    assert study.main(["--plan", "round6", "--out", str(out), "--datasets", "iris", "--repeats", "2", "--folds", "3",
                       "--body", tiny_bert_dir, "--cache", str(tmp_path / "cache"), "--time-features", "iris"]) == 0
    cost = [json.loads(line) for line in (out / "cost.jsonl").read_text().splitlines()]
    assert [c["members"] for c in cost] == [10, 20, 30, 10]  # the library's own reading, 1, 2 and 3 draws' members
    tokens = 4 * 2
    assert [c["n_features"] - tokens for c in cost] == [m * (cost[0]["n_features"] - tokens) // 10 for m in (10, 20, 30, 10)]
    rows = {(r["choice"], r["repeat"]): r for r in map(json.loads, (out / "study.jsonl").read_text().splitlines())}
    assert len(rows) == 3 * 2
    assert rows[("averaged", 0)]["members_read"] == rows[("E=3", 0)]["members_read"] == 3
    assert rows[("averaged", 0)]["n_features"] == 3 * rows[(study.SHIPPED6, 0)]["n_features"]  # tokens per draw
    assert rows[("E=3", 0)]["n_features"] == 3 * rows[(study.SHIPPED6, 0)]["n_features"] - 2 * 4 * 2  # tokens once
    assert all(r["head_seconds"] > 0 and len(r["fold_scores"]) == 3 for r in rows.values())
    text = (out / "table.md").read_text()
    assert "decide_round6" in text and "| E=3 |" in text and "Chosen: " in text and "| iris | 30 |" in text


def test_a_series_features_are_timed_as_the_library_reads_them_with_the_difference(tmp_path, tiny_bert_dir):
    pytest.importorskip("aeon")
    path = study.dataset_path("ItalyPowerDemand", tmp_path)
    ten, twenty = (study.feature_seconds("ItalyPowerDemand", path, tiny_bert_dir, m) for m in (10, 20))
    assert ten["n_train"] == twenty["n_train"] == 67 and ten["seconds"] > 0
    _, data = study.training_task(path, "global", tiny_bert_dir, fields={"fit": "closed-form", "cf_difference": True})
    tokens = data.spec.seq_len * data.spec.token_dim // 2  # the series' windows, not the difference's
    assert twenty["n_features"] - tokens == 2 * (ten["n_features"] - tokens)


def test_ppv_columns_count_real_positions_above_each_threshold_and_thresholds_read_only_the_rows_given():
    states = np.zeros((2, 4, 2), dtype=np.float16)  # example 1 has 3 real positions, then zeros (past its end)
    states[0] = [[1, -1], [2, -2], [3, -3], [4, -4]]
    states[1, :3] = [[0.5, 5], [2.5, 6], [9, 7]]
    got = study.ppv_columns(states, np.array([[2.0, -2.5], [3.5, 6.5]]))
    np.testing.assert_allclose(got, [[2 / 4, 2 / 4, 1 / 4, 0], [2 / 3, 3 / 3, 1 / 3, 1 / 3]])
    t = study.ppv_thresholds(states, (0.5,))
    np.testing.assert_allclose(t, [[2.5, -1.0]])  # medians over the 7 real positions only: zeros past the end ignored
    rng = np.random.default_rng(0)
    many = rng.normal(size=(20, 6, 3)).astype(np.float16)
    changed = many.copy()
    changed[10:] *= 100  # the rows left out of the thresholds
    np.testing.assert_array_equal(study.ppv_thresholds(many[:10], (0.25, 0.75)),
                                  study.ppv_thresholds(changed[:10], (0.25, 0.75)))


def _ppv_pieces(seed: int, n: int = 40, t: int = 5, d: int = 3):
    """Two members' block states (N, T, D) as the cache holds them (float16), their max columns, and 4 tokens."""
    rng = np.random.default_rng(seed)
    states = [rng.normal(size=(n, t, d)).astype(np.float16) for _ in range(2)]
    return states, [h.astype(np.float32).max(1) for h in states], rng.normal(size=(n, 4)).astype(np.float32)


def test_round7_folds_fit_their_thresholds_on_the_folds_training_part_and_one_quantile_set_scores(monkeypatch):
    from fpt.feature_map import DEFAULTS

    states, maxes, tokens = _ppv_pieces(1)
    n, d = 40, 3
    y = (states[0].astype(np.float32)[:, :, 0] > 0).mean(1, keepdims=True) > 0.5  # a PPV-shaped class
    y = y.astype(int)
    seen = []
    fit = study.ppv_thresholds
    monkeypatch.setattr(study, "ppv_thresholds", lambda h, q: (seen.append(len(h)), fit(h, q))[1])
    scores = study.ppv_fold_scores(maxes, states, tokens, y, True, 2, DEFAULTS, 0, (0.5,))
    assert len(scores) == 5 and all(0 <= s <= 1 for s in scores)
    assert seen == [32] * 10  # 2 members x 5 folds, each over the fold's 32 training rows, never the 8 held out
    x = study.ppv_features_at(maxes, states, tokens, np.arange(n), [fit(h, (0.25, 0.75)) for h in states])
    assert x.shape == (n, 2 * (d + 2 * d) + 4)  # member by member: max, then one PPV per threshold; tokens last


def test_the_round7_rule_takes_the_best_mean_rank_and_a_tie_with_the_default_keeps_it():
    base, quartiles, median = (c for _, c, _ in study.ROUND7)
    assert base == study.SHIPPED7 and [a for a, _, _ in study.ROUND7] == ["base", "ppv", "ppv"]
    assert study.recipe_id(study.ROUND7[0][2]) == study.recipe_id(study.ROUND6[3][2])  # round 6's (c) rows' recipe

    def rows(cv):
        axis = {c: a for a, c, _ in study.ROUND7}
        return [{"dataset": s, "axis": axis[c], "choice": c, "cv": v, "repeat": 0}
                for c, values in cv.items() for s, v in zip(("ACSF1", "GunPoint"), values, strict=True)]

    got = study.decide_round7(rows({base: (0.60, 0.98), quartiles: (0.75, 0.97), median: (0.70, 0.99)}))
    assert got["rank"] == {base: 2.5, quartiles: 2.0, median: 1.5} and got["chosen"] == median
    tie = study.decide_round7(rows({base: (0.60, 0.99), quartiles: (0.75, 0.98), median: (0.50, 0.97)}))
    assert tie["rank"][base] == tie["rank"][quartiles] == 1.5 and tie["chosen"] == base


def test_round8_chooses_ppv_per_fold_by_leave_one_out_and_its_rule_needs_more_sets_won_than_lost(monkeypatch):
    from fpt import closed_form
    from fpt.feature_map import DEFAULTS

    states, maxes, tokens = _ppv_pieces(2)
    y = (maxes[0][:, :1] > np.median(maxes[0][:, 0])).astype(int)
    given = []
    fit = closed_form.fit_head
    monkeypatch.setattr(closed_form, "fit_head", lambda *a, **k: (given.append(k.get("without_ppv")), fit(*a, **k))[1])
    scores = study.ppv_fold_scores(maxes, states, tokens, y, True, 2, DEFAULTS, 0, (0.25, 0.75), choose=True)
    assert len(scores) == 5 and len(given) == 5
    # each member's max columns, then the tokens: member 1's max starts after member 0's max and 2 PPV blocks
    np.testing.assert_array_equal(given[0], np.r_[0:3, 9:12, 18:22])
    study.ppv_fold_scores(maxes, states, tokens, y, True, 2, DEFAULTS, 0, (0.25, 0.75))
    assert given[-1] is None  # round 7's recipes: every column
    base, chosen = (c for _, c, _ in study.ROUND8)
    rows = [{"dataset": s, "axis": a, "choice": c, "cv": v, "repeat": 0}
            for (a, c), values in zip([("base", base), ("ppv", chosen)], [(0.6, 0.9, 0.8), (0.7, 0.8, 0.8)], strict=True)
            for s, v in zip(("ACSF1", "wine", "iris"), values, strict=True)]
    assert study.decide_round8(rows)["chosen"] == base  # one set higher, one lower, one equal: a tie keeps it
    rows[4]["cv"] = 0.95  # wine now higher with the candidate too
    assert study.decide_round8(rows)["chosen"] == chosen


def test_the_round9_rule_reads_only_the_unseen_sets_and_needs_both_rank_and_mean():
    base, chosen = (c for _, c, _ in study.ROUND9)

    def rows(base_cv, chosen_cv, sets=study.UNSEEN):
        return [{"dataset": s, "axis": a, "choice": c, "cv": v, "repeat": 0}
                for (a, c), values in zip([("base", base), ("ppv", chosen)], [base_cv, chosen_cv], strict=True)
                for s, v in zip(sets, values, strict=True)]

    assert study.decide_round9(rows((1.0, 0.5, 0.9), (1.0, 0.6, 0.9)))["chosen"] == chosen
    # higher on one, lower on one: a tie in rank keeps the default, whatever the means
    assert study.decide_round9(rows((1.0, 0.5, 0.9), (0.99, 0.7, 0.9)))["chosen"] == base
    # higher on two, lower on one, but lower in mean: the default
    assert study.decide_round9(rows((1.0, 0.5, 0.9), (0.7, 0.51, 0.91)))["chosen"] == base
    # a set of the earlier rounds is not read; one unseen set missing: no decision
    extra = rows((0.1,), (0.9,), ("ACSF1",))
    assert study.decide_round9(rows((1.0, 0.5, 0.9), (1.0, 0.5, 0.9)) + extra)["chosen"] == base
    assert study.decide_round9(rows((0.5, 0.9), (0.6, 0.9), study.UNSEEN[:2]))["chosen"] is None


def test_round10_alternate_reads_the_odd_members_per_series_and_its_rule_counts_only_the_series_sets(monkeypatch):
    read = []

    def fake(name, path, recipe, seed, cache, body="minilm", scale=1, round2=False, diff=""):
        read.append((seed, recipe.series_norm))
        return {"x": np.ones((4, 7), np.float16), "y": np.zeros((4, 1), int), "shape": np.array([1, 2, 3, 1, 2])}

    monkeypatch.setattr(study, "member_features", fake)
    monkeypatch.setattr(study, "columns", lambda design, shape: np.arange(3))
    base, every, half = (r for _, _, r in study.ROUND10)
    study.features_and_layout("S", None, replace_members(half, 4), 0, None)
    assert [n for _, n in read[:-1]] == ["global", "series"] * 2 and read[-1][1] == "global"  # the tokens: global
    read.clear()
    study.features_and_layout("S", None, replace_members(every, 2), 0, None)
    assert {n for _, n in read} == {"series"}
    assert len({study.recipe_id(r) for _, _, r in study.ROUND10}) == 3
    assert study.recipe_id(base) == study.recipe_id(study.ROUND8[0][2])  # the default's rows are round 8's
    check_series_rule(study.ROUND10, "series_norm", study.decide_round10)


def check_series_rule(plan, axis, decide):
    """Round 10's rule as a plan uses it: the best mean rank over the series sets, a tie keeping the default, PLAID
    never counted."""
    names = [c for _, c, _ in plan]

    def rows(figures, sets=study.SERIES_SETS[:2]):
        return [{"dataset": s, "axis": "base" if i == 0 else axis, "choice": c, "cv": v, "repeat": 0}
                for i, (c, values) in enumerate(zip(names, figures, strict=True)) for s, v in zip(sets, values, strict=True)]

    assert decide(rows([(0.5, 0.9), (0.6, 0.8), (0.5, 0.8)]))["chosen"] == names[0]  # tie: the default
    assert decide(rows([(0.5, 0.8), (0.6, 0.8), (0.7, 0.9)]))["chosen"] == names[2]
    plaid = rows([(0.1,), (0.9,), (0.1,)], ("PLAID",))
    assert decide(rows([(0.5, 0.9), (0.5, 0.9), (0.5, 0.9)]) + plaid)["chosen"] == names[0]


def replace_members(recipe, members):
    from dataclasses import replace

    return replace(recipe, members=members, draws=1, diff_members=0, inputs=True)


def test_round11_members_read_per_series_the_tokens_globally_and_the_stats_follow_the_tokens(monkeypatch, tmp_path):
    read = []

    def fake(name, path, recipe, seed, cache, body="minilm", scale=1, round2=False, diff=""):
        read.append(recipe.series_norm)
        return {"x": np.ones((3, 7), np.float16), "y": np.zeros((3, 1), int), "shape": np.array([1, 2, 3, 1, 2])}

    monkeypatch.setattr(study, "member_features", fake)
    monkeypatch.setattr(study, "columns", lambda design, shape: np.arange(3))
    _, every, stats = (r for _, _, r in study.ROUND11)
    x, _, _, widths, inputs = study.features_and_layout("S", None, replace_members(every, 2), 0, None)
    assert read == ["series", "series", "global"] and inputs == 1 and x.shape == (3, 7)
    path = tmp_path / "S" / "S_TRAIN.ts"
    path.parent.mkdir()
    path.write_text("@problemName S\n@univariate false\n@equalLength false\n@classLabel true a b\n@data\n"
                    "1,2,3:4,4,4:a\n0,10:5,7:b\n-1,1,-1,1:0,0,0,0:a\n")
    np.testing.assert_allclose(study.series_stats(path), [[2, 4, np.std([1, 2, 3]), 0], [5, 6, 5, 1], [0, 0, 1, 0]])
    monkeypatch.setattr(study, "series_stats", lambda p: np.full((3, 4), 9.0, np.float32))
    x, _, _, _, inputs = study.features_and_layout("S", path, replace_members(stats, 2), 0, None)
    assert inputs == 5 and x.shape == (3, 11) and (x[:, -4:] == 9).all()  # the tokens' column, then 2C stats
    names = [c for _, c, _ in study.ROUND11]
    rows = [{"dataset": s, "axis": "base" if i == 0 else "series_norm", "choice": c, "cv": v, "repeat": 0}
            for i, (c, v) in enumerate(zip(names, (0.5, 0.5, 0.6), strict=True)) for s in study.SERIES_SETS[:2]]
    assert study.decide_round11(rows)["chosen"] == names[2]


def test_round12_members_input_gain_is_its_own_cache_entry_and_its_rule_keeps_the_default_on_a_tie(tmp_path):
    base, small, large = (r for _, _, r in study.ROUND12)
    assert (base.gain, small.gain, large.gain) == (0.0, 0.25, 4.0)
    assert len({study.recipe_id(r) for _, _, r in study.ROUND12}) == 3
    assert study.recipe_id(base) == study.recipe_id(study.ROUND10[0][2])  # the default's rows are round 10's
    # the cache key names the gain, so a gain's features never come from the default's file (nor the other way)
    key = "S-minilm-global-pretrained-7-k2-t0-b0-g4"
    np.savez(tmp_path / f"{key}.npz", x=np.full((2, 3), 4.0), y=np.zeros((2, 1)), shape=np.array([1, 1, 1, 0, 2]))
    got = study.member_features("S", None, replace_members(large, 1), 7, tmp_path, "minilm", 2, True)
    assert (got["x"] == 4.0).all()
    check_series_rule(study.ROUND12, "gain", study.decide_round12)


def test_round13_members_cycle_over_round12s_gains_reading_its_files(monkeypatch):
    read = []

    def fake(name, path, recipe, seed, cache, body="minilm", scale=1, round2=False, diff=""):
        read.append((seed, recipe.gain, recipe.gains))
        return {"x": np.ones((3, 7), np.float16), "y": np.zeros((3, 1), int), "shape": np.array([1, 2, 3, 1, 2])}

    monkeypatch.setattr(study, "member_features", fake)
    monkeypatch.setattr(study, "columns", lambda design, shape: np.arange(3))
    base, three, two = (r for _, _, r in study.ROUND13)
    assert (three.gains, two.gains) == ("0.25,1,4", "0.25,4")
    study.features_and_layout("S", None, replace_members(three, 4), 0, None)
    # gain 1 reads the default's file (gain 0.0: no suffix in the cache key), the others round 12's
    assert [(s, g) for s, g, _ in read[:-1]] == [(0, 0.25), (1, 0.0), (2, 4.0), (3, 0.25)]
    assert {gs for _, _, gs in read[:-1]} == {""}  # a member reads its one gain, never the cycle again
    assert len({study.recipe_id(r) for _, _, r in study.ROUND13}) == 3
    assert study.recipe_id(base) == study.recipe_id(study.ROUND12[0][2])
    check_series_rule(study.ROUND13, "gains", study.decide_round13)


def test_round18_keeps_per_fold_the_features_whose_leave_one_out_error_is_lower_and_its_rule_keeps_a_tie():
    from fpt.closed_form import fold_scores
    from fpt.feature_map import DEFAULTS

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)[:, None]
    signal = (y * 3.0 + rng.normal(size=(40, 6))).astype(np.float32)  # the class in every column
    noise = rng.normal(size=(40, 6)).astype(np.float32)
    design = DEFAULTS
    scores, kept = study.kept_fold_scores([(noise, [6]), (signal, [6])], y, True, 2, design, 0, 0)
    assert kept == [1] * 5 and scores == fold_scores(signal, y, True, 2, design, 0, 0, member_widths=[6])
    scores, kept = study.kept_fold_scores([(signal, [6]), (signal.copy(), [6])], y, True, 2, design, 0, 0)
    assert kept == [0] * 5  # equal errors: the first (the features as read)
    assert study.loo_error(signal, y, True, 2, design, 0) > study.loo_error(noise, y, True, 2, design, 0)
    base, half, chosen = (r for _, _, r in study.ROUND18)
    assert (half.norm_members, chosen.norm_choice, chosen.norm_members) == ("alternate", True, "")
    assert len({study.recipe_id(r) for _, _, r in study.ROUND18}) == 3
    assert study.recipe_id(base) == study.recipe_id(study.ROUND16[0][2])  # the default's rows are round 16's
    check_series_rule(study.ROUND18, "series_norm", study.decide_round18)
