"""fpt: frozen pretrained transformers as universal computation engines (Lu et al., 2021).

    import fpt
    exp = fpt.build(task="bit-xor", body="minilm", steps=300)
    summary = fpt.fit(exp, out="runs/xor")
    print(fpt.evaluate(exp), fpt.predict(exp, exp.data.eval_sets["test"].x[:4]))

    fpt.train_run(fpt.RunConfig(task="bit-xor"), "runs/xor2")  # as fpt train: --resume, --choose, --refit, ...
    model = fpt.load("runs/xor")                    # a run or export directory, no dataset needed
    model.predict(x)                                # (fpt export runs/xor DIR: self-contained, offline)

``import fpt`` imports none of this until a name is used (PEP 562 module ``__getattr__``), so the
command line and ``import fpt`` stay quick; the layers below are listed in ``fpt.layers``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fpt.version import __version__

# name -> the module that defines it
_EXPORTS = {
    "RunConfig": "fpt.config",
    "Experiment": "fpt.pipeline",
    "build": "fpt.modes",  # fpt.pipeline.build, with own data's fit chosen as fpt train --data chooses it
    "Predictor": "fpt.predictor",
    "load": "fpt.run",
    "Run": "fpt.run",
    "evaluate": "fpt.train",
    "fit": "fpt.train",
    "predict": "fpt.train",
    "train_run": "fpt.modes",
}

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load on first use
    from fpt.config import RunConfig
    from fpt.modes import build, train_run
    from fpt.pipeline import Experiment
    from fpt.predictor import Predictor
    from fpt.run import Run, load
    from fpt.train import evaluate, fit, predict


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fpt' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["Experiment", "Predictor", "Run", "RunConfig", "build", "evaluate", "fit", "load", "predict", "train_run",
           "__version__"]
