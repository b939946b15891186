"""FPT on your own data beside non-FPT baselines, on the same train/validation/test splits.

    python bench/user_data.py --data-root data/user                  # FPT figures from the committed runs
    python bench/user_data.py --data-root data/user --run            # retrain FPT from each committed config.yaml
    python bench/user_data.py --out docs/results/data/baselines.jsonl

The files come from ``python bench/user_data_files.py --out data/user``. For each dataset the splits are
rebuilt exactly as ``fpt train --data`` made them, from the run's own ``config.yaml`` (``--val-fraction``,
``--test-fraction``, ``--split-seed``, target and image options) through ``fpt.data``, so every method sees
the same training, validation and test examples. Baselines train on the training split, choose their one
hyperparameter (if any) on the validation split, and are scored once on the test split:

- tables: logistic regression (classification) / ridge (regression) on fpt's own tabular tokens flattened
  (standardised values, missing-value indicators, one-hot categories); C / alpha chosen on validation.
- UCR series: 1-NN Euclidean distance (no hyperparameter), and ROCKET and MiniROCKET (aeon, 10,000 kernels,
  ridge classifier with built-in cross-validation; needs the ``[bench]`` extra). Each also fitted on
  train + validation (the archive's whole TRAIN file, the UCR protocol) as a second row.
- images: logistic regression on the pixels (as fpt resizes them) with C on validation, and a small CNN (two
  3x3 conv layers + pooling + linear, Adam) with its epoch chosen on validation.

FPT's figures are ``test_accuracy`` (``test_r2``, ``test_mae`` for regression) at the validation-selected step
of the run's ``summary.json``. One JSON line per (dataset, method) goes to stdout and to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

R = "docs/results/data/"
DATASETS = {  # name: (committed run directories, the first one's config.yaml defining the splits; the file under --data-root)
    "breast-cancer": ((R + "breast-cancer",), "bc.csv"),
    "diabetes": ((R + "diabetes",), "diab.csv"),
    "gunpoint": ((R + "gunpoint", R + "gunpoint-round1"), "GunPoint/GunPoint_TRAIN.ts"),
    "italy-power-demand": ((R + "italy-power-demand", R + "italy-power-demand-round1"),
                           "ItalyPowerDemand/ItalyPowerDemand_TRAIN.ts"),
    "shapes": ((R + "shapes",), "shapes"),
}


def splits_of(config, path: Path):  # noqa: ANN001, ANN201 (RunConfig -> RawData with train/val/test)
    """The train/val/test splits of ``fpt train --data path`` with this run's data options."""
    from fpt.data import load
    from fpt.data.base import finish_splits, infer_objective

    raw = load(str(path), config.target_column, config.modality, config.image_channels, config.image_size)
    train = raw.splits["train"]
    objective, _ = infer_objective(train.y, raw.targets, config.objective, train.where, raw.declared)
    raw = finish_splits(raw, config.val_fraction, config.test_fraction, config.split_seed,
                        stratify=objective == "classification")
    return raw, objective


def _labels(raw) -> dict[str, np.ndarray]:  # noqa: ANN001
    return {k: np.array([str(v) for v in s.y[:, 0]]) for k, s in raw.splits.items()}


def _pick(scores: dict, higher: bool = True):  # noqa: ANN202
    """The first setting with the best validation score (settings in the order tried)."""
    best = max(scores.values()) if higher else min(scores.values())
    return next(k for k, v in scores.items() if v == best)


# --- tables -------------------------------------------------------------------------------


def tables(raw, objective: str, config) -> list[dict]:  # noqa: ANN001
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.metrics import mean_absolute_error, r2_score

    from fpt.data.tokenisers import TabularTokens

    tok = TabularTokens.fit(raw.splits["train"].x, config.max_categories)
    X = {k: tok(s.x)[0].reshape(len(s), -1).numpy() for k, s in raw.splits.items()}
    if objective == "classification":
        y = _labels(raw)
        models = {c: LogisticRegression(C=c, max_iter=5000).fit(X["train"], y["train"]) for c in (0.01, 0.1, 1.0, 10.0, 100.0)}
        val = {c: float((m.predict(X["val"]) == y["val"]).mean()) for c, m in models.items()}
        c = _pick(val)
        test = float((models[c].predict(X["test"]) == y["test"]).mean())
        return [{"method": "logistic regression", "hyperparameter": {"C": c}, "val_accuracy": val[c],
                 "test_accuracy": test}]
    y = {k: s.y[:, 0].astype(float) for k, s in raw.splits.items()}
    models = {a: Ridge(alpha=a).fit(X["train"], y["train"]) for a in (0.01, 0.1, 1.0, 10.0, 100.0)}
    val = {a: float(r2_score(y["val"], m.predict(X["val"]))) for a, m in models.items()}
    a = _pick(val)
    pred = models[a].predict(X["test"])
    return [{"method": "ridge regression", "hyperparameter": {"alpha": a}, "val_r2": val[a],
             "test_r2": float(r2_score(y["test"], pred)), "test_mae": float(mean_absolute_error(y["test"], pred))}]


# --- time series --------------------------------------------------------------------------


def nearest(fit_x: np.ndarray, fit_y: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """Accuracy of 1-NN with Euclidean distance: ``fit_x`` (n, d) flattened series, ``x`` (m, C, L)."""
    d = ((x.reshape(len(x), -1)[:, None, :] - fit_x[None]) ** 2).sum(-1)  # (m, n)
    return float((fit_y[d.argmin(1)] == y).mean())


def series(raw) -> list[dict]:  # noqa: ANN001
    X = {k: np.stack(s.x).astype(np.float64) for k, s in raw.splits.items()}  # (n, C, L), equal length
    y = _labels(raw)
    rows = []
    for fit_on in ("train", "train+val"):
        Xf = X["train"] if fit_on == "train" else np.concatenate([X["train"], X["val"]])
        yf = y["train"] if fit_on == "train" else np.concatenate([y["train"], y["val"]])
        flat = Xf.reshape(len(Xf), -1)

        rows.append({"method": "1-NN Euclidean", "fit_on": fit_on,
                     **({"val_accuracy": nearest(flat, yf, X["val"], y["val"])} if fit_on == "train" else {}),
                     "test_accuracy": nearest(flat, yf, X["test"], y["test"])})
        from fpt.baselines import quiet_numba_threads

        quiet_numba_threads()  # before aeon: numba's OpenMP pool beside torch's slows torch ~100x
        try:
            from aeon.classification.convolution_based import MiniRocketClassifier, RocketClassifier
        except ImportError:
            rows.append({"method": "ROCKET", "fit_on": fit_on, "skipped": "aeon is not installed (pip install -e '.[bench]')"})
            continue
        for name, cls in (("ROCKET", RocketClassifier), ("MiniROCKET", MiniRocketClassifier)):
            model = cls(n_kernels=10000, random_state=0).fit(Xf, yf)
            row = {"method": name, "fit_on": fit_on, "hyperparameter": {"n_kernels": 10000, "random_state": 0}}
            if fit_on == "train":
                row["val_accuracy"] = float((model.predict(X["val"]) == y["val"]).mean())
            row["test_accuracy"] = float((model.predict(X["test"]) == y["test"]).mean())
            rows.append(row)
    return rows


# --- images -------------------------------------------------------------------------------


def images(raw, seed: int = 0) -> list[dict]:  # noqa: ANN001
    import torch
    from sklearn.linear_model import LogisticRegression

    y = _labels(raw)
    classes = sorted(set(y["train"]))
    X = {k: np.stack(s.x).astype(np.float32) / 255 for k, s in raw.splits.items()}  # (n, S, S, C)
    flat = {k: v.reshape(len(v), -1) for k, v in X.items()}
    mean, std = flat["train"].mean(0), flat["train"].std(0) + 1e-6
    flat = {k: (v - mean) / std for k, v in flat.items()}
    models = {c: LogisticRegression(C=c, max_iter=3000).fit(flat["train"], y["train"]) for c in (0.001, 0.01, 0.1, 1.0)}
    val = {c: float((m.predict(flat["val"]) == y["val"]).mean()) for c, m in models.items()}
    c = _pick(val)
    rows = [{"method": "logistic regression on pixels", "hyperparameter": {"C": c}, "val_accuracy": val[c],
             "test_accuracy": float((models[c].predict(flat["test"]) == y["test"]).mean())}]

    torch.manual_seed(seed)
    channels = X["train"].shape[-1]
    net = torch.nn.Sequential(
        torch.nn.Conv2d(channels, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.LazyLinear(len(classes)))
    mu, sd = float(X["train"].mean()), float(X["train"].std())
    t = {k: torch.from_numpy((v - mu) / sd).permute(0, 3, 1, 2) for k, v in X.items()}  # (n, C, S, S)
    idx = {k: torch.tensor([classes.index(v) for v in y[k]]) for k in y}
    net(t["train"][:1])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(seed)
    history, best_state, best_val = [], None, -1.0
    for epoch in range(1, 41):
        net.train()
        for batch in torch.randperm(len(idx["train"]), generator=gen).split(32):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(t["train"][batch]), idx["train"][batch]).backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            acc = float((net(t["val"]).argmax(1) == idx["val"]).float().mean())
        history.append(acc)
        if acc > best_val:
            best_val, best_epoch = acc, epoch
            best_state = {k: v.clone() for k, v in net.state_dict().items()}
    net.load_state_dict(best_state)
    with torch.no_grad():
        test = float((net(t["test"]).argmax(1) == idx["test"]).float().mean())
    rows.append({"method": "small CNN (2 conv layers)", "hyperparameter": {"epoch": best_epoch, "epochs_tried": 40},
                 "val_accuracy": best_val, "test_accuracy": test})
    return rows


# --- FPT ------------------------------------------------------------------------------------


def fpt_summary(run_dir: Path, config, path: Path, retrain: bool) -> tuple[dict, str]:  # noqa: ANN001
    import dataclasses

    if retrain:
        import fpt

        with tempfile.TemporaryDirectory(prefix="fpt-bench-") as tmp:
            exp = fpt.build(dataclasses.replace(config, data=str(path)))
            summary = fpt.fit(exp, out=Path(tmp) / "run", progress=False)
        source = "retrained here (--run) from " + str(run_dir / "config.yaml")
    else:
        summary = json.loads((run_dir / "summary.json").read_text())
        source = str(run_dir / "summary.json")
    return summary, source


def fpt_fields(summary: dict, source: str, config, sizes: dict) -> dict:  # noqa: ANN001
    from fpt.config import RunConfig

    ran_on = summary.get("task_info", {}).get("split_sizes")
    if ran_on != sizes:
        raise SystemExit(f"{source}: the run's splits {ran_on} are not the ones rebuilt here {sizes}; regenerate the "
                         "files with bench/user_data_files.py")
    keys = ("val_accuracy", "test_accuracy") if "test_accuracy" in summary else ("val_r2", "test_r2", "test_mae")
    options = {k: getattr(config, k) for k in ("series_patch", "series_stride", "image_size", "patch_size", "lr", "steps",
                                                "eval_every") if getattr(config, k) != getattr(RunConfig(), k)}
    return {"method": f"FPT ({config.body}, {config.init}, freeze {config.freeze})", "from": source, "options": options,
            "selected_step": summary["selected_step"], **{k: summary[k] for k in keys}}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-root", default="data/user", help="where bench/user_data_files.py wrote the files")
    p.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=list(DATASETS))
    p.add_argument("--run", action="store_true", help="retrain FPT from each committed config.yaml instead of reading "
                                                      "its summary.json")
    p.add_argument("--out", default=None, help="also write the JSON lines here (e.g. docs/results/data/baselines.jsonl)")
    args = p.parse_args(argv)
    from fpt.config import RunConfig, from_dict, load_yaml

    lines = []
    for name in args.datasets:
        run_dirs, rel = DATASETS[name]
        run_dirs, path = [Path(d) for d in run_dirs if (Path(d) / "config.yaml").exists()], Path(args.data_root) / rel
        if not run_dirs:
            print(f"{name}: no committed run in {DATASETS[name][0]}; skipped", file=sys.stderr)
            continue
        configs = [from_dict(RunConfig, load_yaml(d / "config.yaml"), where=str(d / "config.yaml")) for d in run_dirs]
        config = configs[0]
        raw, objective = splits_of(config, path)
        sizes = {k: len(s) for k, s in raw.splits.items()}
        started = time.perf_counter()
        if raw.modality == "tabular":
            rows = tables(raw, objective, config)
        elif raw.modality == "timeseries":
            rows = series(raw)
        elif raw.modality == "image":
            rows = images(raw)
        else:
            raise SystemExit(f"{name}: no baseline for modality {raw.modality}")
        rows[:0] = [fpt_fields(*fpt_summary(d, c, path, args.run), c, sizes) for d, c in zip(run_dirs, configs, strict=True)]
        for row in rows:
            line = {"dataset": name, "data": rel, "splits": sizes, "split": raw.split_from, **row}
            lines.append(json.dumps(line))
            print(lines[-1], flush=True)
        print(f"{name}: {time.perf_counter() - started:.0f}s", file=sys.stderr)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
