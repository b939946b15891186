"""The ridge head's leave-one-out curve on one set's TRAIN file (issue 40, round 3): why a penalty was picked.

    python bench/closed_form_loo.py BasicMotions --repeat 0 --cache /tmp/fpt-cf-study2

The features are bench/closed_form_study.py's (its cache; repeat r: the members of run seed 1000 r, so repeat 0 is
the benchmark's seed 0 on the whole TRAIN file), the recipe round 2's defaults (E=10, scales 1,2,4,8,16, block 0,
max, standardised, the tokens after them). Prints, for every (scale of the tokens' columns, penalty), the mean
squared leave-one-out error, the leave-one-out accuracy and the least 1 - H_ii (the divisor of the
leave-one-out residuals; negative: the figure is rounding), the Gram matrix's smallest nonzero eigenvalues, and what
each penalty rule of fpt.ridge.pick picks (with ``guard``: fits whose figure is rounding left out). Reads no test split.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from closed_form_study import BASE3, dataset_path, features_and_layout  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--repeat", type=int, default=0)
    p.add_argument("--cache", type=Path, default=Path("/tmp/fpt-cf-study"))
    p.add_argument("--body", default="minilm", help="the frozen body (default minilm, fpt's)")
    args = p.parse_args(argv)
    from fpt.closed_form import _onehot
    from fpt.feature_map import DEFAULTS
    from fpt.ridge import LEAST, ONE_SE, TIES, _errors, _graded, _solver, pick

    x, y, classes, _, inputs = features_and_layout(args.dataset, dataset_path(args.dataset, args.cache / "data"),
                                                   BASE3, args.repeat, args.cache / args.dataset, args.body, True)
    x = x.astype(np.float64)
    mean, std = x.mean(0), x.std(0)
    z = (x - mean) / np.where(std > 1e-12 * max(1.0, float(np.abs(mean).max())), std, 1.0)
    classify = y.dtype.kind != "f"
    targets = _onehot(y, classes) if classify else y.astype(np.float64)
    zc = z - z.mean(0)
    eig = np.linalg.eigvalsh(zc @ zc.T if len(z) <= z.shape[1] else zc.T @ zc)  # (n,) or (F,)
    print(f"{args.dataset}, repeat {args.repeat}: {z.shape[0]} examples x {z.shape[1]} features ({inputs} the tokens')")
    print("smallest nonzero eigenvalues:", np.round(np.sort(eig[eig > 1e-6 * eig.max()])[:3], 1))
    tried = []
    for scale in (1.0, 10.0, 100.0):
        zs = z.copy()
        zs[:, z.shape[1] - inputs:] *= scale
        loo_at, _ = _solver(zs, targets)
        for a in DEFAULTS.alphas:
            loo, room = loo_at(a)  # room: the least 1 - H_ii, the leave-one-out residuals' divisor (exact: in (0, 1])
            tried.append((scale, a, loo, room))
            acc = f"{(loo.argmax(1) == y[:, 0]).mean():.3f}" if classify else "-"
            print(f"tokens x{scale:<5g} penalty {a:7.0e}  LOO squared error {np.mean(_errors(targets, loo)):.5f}  "
                  f"LOO accuracy {acc}  least 1 - H_ii {room:.1e}")
    for scales in ((1.0, 10.0, 100.0), (1.0,)):
        rows = [t for t in tried if t[0] in scales]
        for rule, guard in ((LEAST, False), (TIES, False), (ONE_SE, False), (LEAST, True), (TIES, True)):
            i = pick([t[1] for t in rows], [_graded(targets, t[2], t[3], guard) for t in rows], rule,
                     [t[0] for t in rows])
            print(f"scales {scales}, rule {rule}{', guard' if guard else ''}: tokens x{rows[i][0]:g}, "
                  f"penalty {rows[i][1]:.0e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
