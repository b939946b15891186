"""The library's cf_difference against round 3's study: the same features, the same TRAIN-only CV figure.

Round 3's study (bench/closed_form_study.py --plan round3, choice "difference") read the first difference outside
the library: members 6-10 of a tokenisation of its own. Here the library reads it (``fit=closed-form
cf_difference=true``: fpt.data.tokenisers.SeriesTokens cuts the series' and the difference's windows,
fpt.feature_map.FeatureMap's members from E/2 read the second), and for each repeat this prints the largest
difference between its features and the study's (the study's cache holds them as float16) and the study's k-fold
CV figure (fpt.closed_form.fold_scores, the study's head: tokens unscaled, ties) on both. Usage:

    python bench/closed_form_difference.py GunPoint --cache /tmp/fpt-cf-study2 --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from closed_form_study import ROUND3, dataset_path, features_and_layout, run_seed, training_task  # noqa: E402


def library_features(path: Path, recipe, repeat: int, body: str) -> np.ndarray:
    """The training examples' features as ``fit=closed-form cf_difference=true`` reads them (N, F), float32."""
    from fpt.closed_form import read_features
    from fpt.pipeline import assemble

    fields = {"fit": "closed-form", "cf_difference": True}
    config, data = training_task(path, recipe.series_norm, body, recipe.series_tokens, fields=fields)
    design = recipe.design()
    config = replace(config, seed=run_seed(repeat), init=recipe.init, device="cpu", precision="fp32",
                     cf_members=design.members, cf_blocks=design.blocks, cf_poolings=design.poolings,
                     cf_inputs=design.inputs, cf_scales=design.scales, cf_standardise=design.standardise)
    exp = assemble(config, data)
    return read_features(exp, data.train.data).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--cache", type=Path, default=Path("/tmp/fpt-cf-study2"), help="the study's --cache")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--body", default="minilm")
    p.add_argument("--out", type=Path, required=True, help="JSON file for the figures")
    args = p.parse_args(argv)
    from fpt.closed_form import fold_scores

    recipe = next(r for axis, _, r in ROUND3 if axis == "difference")
    path = dataset_path(args.dataset, args.cache / "data")
    rows = []
    for repeat in range(args.repeats):
        x, y, classes, widths, inputs = features_and_layout(args.dataset, path, recipe, repeat,
                                                            args.cache / args.dataset, args.body, True)
        mine = library_features(path, recipe, repeat, args.body)
        design = replace(recipe.design(), folds=5)
        classify = y.dtype.kind != "f"
        study = fold_scores(x, y, classify, classes, design, repeat, inputs, member_widths=widths)
        library = fold_scores(mine, y, classify, classes, design, repeat, inputs, member_widths=widths)
        gap = float(np.abs(mine - x).max())
        rows.append({"repeat": repeat, "features": list(mine.shape), "max_abs_feature_difference": gap,
                     "max_abs_feature": float(np.abs(mine).max()), "study_cv": statistics.mean(study),
                     "library_cv": statistics.mean(library), "study_folds": study, "library_folds": library})
        print(json.dumps({k: rows[-1][k] for k in ("repeat", "max_abs_feature_difference", "study_cv",
                                                    "library_cv")}), flush=True)
    out = {"dataset": args.dataset, "recipe": "round 3's defaults, the first difference read by members 6-10",
           "study_cv_mean": statistics.mean(r["study_cv"] for r in rows),
           "library_cv_mean": statistics.mean(r["library_cv"] for r in rows), "repeats": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: out[k] for k in ("dataset", "study_cv_mean", "library_cv_mean")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
