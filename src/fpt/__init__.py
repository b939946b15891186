"""fpt: frozen pretrained transformers as universal computation engines (Lu et al., 2021).

    import fpt
    exp = fpt.build(task="bit-xor", body="minilm", steps=300)
    summary = fpt.fit(exp, out="runs/xor")
    print(fpt.evaluate(exp), fpt.predict(exp, exp.data.eval_sets["test"].x[:4]))

    model = fpt.load("runs/xor")                    # a run or export directory, no dataset needed
    model.predict(x)                                # (fpt export runs/xor DIR: self-contained, offline)
"""

from fpt.config import RunConfig
from fpt.experiment import Experiment, build
from fpt.predictor import Predictor, load
from fpt.runs import Run
from fpt.train import evaluate, fit, predict

__version__ = "0.1.0"

__all__ = ["Experiment", "Predictor", "Run", "RunConfig", "build", "evaluate", "fit", "load", "predict", "__version__"]
