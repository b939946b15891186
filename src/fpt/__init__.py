"""fpt: frozen pretrained transformers as universal computation engines (Lu et al., 2021).

    import fpt
    exp = fpt.build(task="bit-xor", body="minilm", steps=300)
    summary = fpt.fit(exp, out="runs/xor")
    print(fpt.evaluate(exp), fpt.predict(exp, exp.data.eval_sets["test"].x[:4]))
"""

from fpt.config import RunConfig
from fpt.experiment import Experiment, build
from fpt.train import evaluate, fit, predict

__version__ = "0.1.0"

__all__ = ["Experiment", "RunConfig", "build", "evaluate", "fit", "predict", "__version__"]
