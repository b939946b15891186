"""The layers of fpt, bottom to top: a module imports only from its own layer and the ones below it,
and no import circle exists anywhere (tests/test_layers.py reads every import with ast and checks).

The data path reads as a straight line up the stack: files are read and tokenised (data), a task
says what the tokens and labels are (tasks), the frozen body and the model around it turn tokens
into outputs (model), one loop trains it (training), a run directory holds the result (run), and
everything above reads runs.
"""

from __future__ import annotations

# (layer, the modules in it: a name covers its submodules)
STACK: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("errors", ("fpt.errors", "fpt.layers", "fpt.version")),
    ("base", ("fpt.bounded", "fpt.settings", "fpt.config", "fpt.registry", "fpt.paths", "fpt.provenance", "fpt.objectives",
              "fpt.transforms", "fpt.rundir", "fpt.outputs", "fpt.connect", "fpt.hub",
              "fpt.stops")),
    ("data", ("fpt.data",)),
    ("model", ("fpt.bodies", "fpt.model", "fpt.freeze", "fpt.feature_map")),
    ("tasks", ("fpt.tasks",)),
    ("training", ("fpt.pipeline", "fpt.checkpoint", "fpt.convergence", "fpt.data_stats", "fpt.cache",
                  "fpt.distributed", "fpt.tracking", "fpt.inference", "fpt.ridge", "fpt.closed_form", "fpt.train")),
    ("run", ("fpt.predictor", "fpt.export", "fpt.onnx_raw", "fpt.run", "fpt.refit", "fpt.sklearn", "fpt.baselines",
             "fpt.select", "fpt.ensemble", "fpt.modes")),
    ("analysis", ("fpt.analysis",)),
    ("experiments", ("fpt.experiments",)),
    ("presentation", ("fpt.presentation",)),
    ("cli", ("fpt.cli", "fpt.__main__")),
)

LAYERS: tuple[str, ...] = tuple(name for name, _ in STACK)


def layer_of(module: str) -> str | None:
    """The layer ``module`` (a dotted name) belongs to, or None when no layer claims it."""
    best, length = None, -1
    for name, prefixes in STACK:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = name, len(prefix)
    return best
