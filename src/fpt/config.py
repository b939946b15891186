"""Typed, frozen run configuration; YAML files and ``key=value`` overrides.

Unknown keys and wrong types fail loudly, naming where the bad value came from.
"""

from __future__ import annotations

import dataclasses
import json
import re
import reprlib
import shlex
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fpt.errors import ConfigError  # noqa: F401  (re-exported: raised here)

_SHOW = reprlib.Repr()
_SHOW.maxstring = _SHOW.maxother = 80


def show(value: Any) -> str:
    """``repr(value)`` cut short, so an error message stays one readable line whatever the input
    (a YAML alias bomb, a 10 MB string)."""
    return _SHOW.repr(value)


def near(name: Any, known: list[str]) -> str:
    """' (did you mean 'x'?)' for the closest known name, or '' when none is close: an error's hint."""
    import difflib

    close = difflib.get_close_matches(str(name), known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _help(text: str, default: Any = dataclasses.MISSING, **kw: Any) -> Any:
    if default is dataclasses.MISSING:
        return field(metadata={"help": text}, **kw)
    return field(default=default, metadata={"help": text}, **kw)


@dataclass(frozen=True)
class RunConfig:
    preset: str = _help("fast | paper: the defaults of fields not given. fast (the default of fpt train, config "
                        "files, fpt sweep, fpt.build and the sklearn estimators): step 8's fastest settings that "
                        "reach the same accuracy (dropout 0, the official input init, per-task batch size, lr, "
                        "evaluation on a 200-example validation subset, mnist-5k in 49 tokens; precision auto uses "
                        "a CPU's native bf16; docs/results/performance.md). paper: the paper's settings (fpt "
                        "reproduce pins them; RunConfig's own field defaults)", "paper")
    task: str = _help("registered task name (fpt list shows them)", "bit-xor")
    task_options: dict = _help("task options, e.g. {n_bits: 5}; on the command line task.n_bits=5", default_factory=dict)
    data_dir: str = _help("directory holding datasets' files (each task's own layout)", "data")
    download: bool = _help("download missing dataset files where the task knows how (needs network)", False)
    data: str | None = _help("your own dataset (sets task=data): a CSV/TSV, JSON lines, Parquet or .npz file, UCR/UEA "
                             "*_TRAIN.ts/.tsv, an image folder DIR/<class>/*.png, a directory of train/val/test files, "
                             "a saved Hugging Face dataset, or a hub dataset id. fpt data --data PATH shows every choice",
                             None)
    target_column: str | None = _help("--data: the column(s) to predict, comma-separated for several outputs (default: "
                                      "a column named target, label, labels, class or y, else the last column); "
                                      "--target NAME sets it when NAME is not a number", None)
    objective: str = _help("--data: auto | classification | regression (auto: text, bool or <= 20 distinct integer "
                           "values classify, other numbers regress)", "auto")
    modality: str = _help("--data: auto | tabular | image | timeseries | sequence (auto: from the files; a table "
                          "whose only feature is text is a sequence)", "auto")
    val_fraction: float = _help("--data without its own validation split: share held out of the training examples "
                                "(all examples when the data has no splits) for validation (stratified for "
                                "classification, seeded by split_seed)", 0.2)
    test_fraction: float = _help("--data without its own test split: share held out for testing", 0.2)
    folds: int | None = _help("--data without its own validation split: validate on one of FOLDS shuffled folds "
                              "(stratified for classification, seeded by split_seed) of the training examples "
                              "that are not test, instead of the val_fraction hold-out; needs fold. With fpt "
                              "train --choose: the number of folds to cross-validate over (default 5, fewer for "
                              "small data)", None)
    fold: int | None = _help("--data with folds: which fold (0..folds-1) is the validation split", None)
    split_seed: int = _help("--data: seed of the train/val/test split (part of the data's definition, not the run's)", 0)
    train_on_val: bool = _help("--data: train on the training and validation splits together (the second run of "
                               "fpt train --refit). Nothing can then be selected on validation: needs one evaluation, "
                               "at the end (eval_every >= steps), and the summary's validation figures are left out",
                               False)
    max_categories: int = _help("--data tabular: categories kept per text column (most frequent in train; the rest "
                                "and unseen ones share an unknown slot)", 50)
    image_size: int = _help("--data images: resized to SIZE x SIZE pixels", 32)
    patch_size: int = _help("--data images: p x p patches, one token each ((SIZE/p)^2 tokens of p*p*channels)", 4)
    image_channels: str = _help("--data images: auto | rgb | gray (auto: rgb if any training image has colour)", "auto")
    series_patch: int | None = _help("--data time series: points per token (default: so that the longest training "
                                     "series makes at most 64 tokens)", None)
    series_stride: int | None = _help("--data time series: points between token starts (default: series_patch, "
                                      "no overlap)", None)
    series_norm: str = _help("--data time series: series (each series and channel to mean 0, std 1) | global (train "
                             "mean/std per channel; preset fast's for --data) | none",
                             "series")
    sequence_tokens: str = _help("--data sequences: auto | chars | words (auto: words if any training text has a "
                                 "space, else characters)", "auto")
    sequence_max_len: int | None = _help("--data sequences: symbols kept per example (default: the longest training "
                                         "sequence, at most 512); longer ones are cut and counted", None)
    baselines: str = _help("--data: what else is fitted on the same split and shown beside the run: none | fast "
                           "(classic models: logistic/ridge regression and gradient boosting for tables, 1-NN and "
                           "MiniRocket for time series, logistic regression on pixels) | all (fast, plus two controls "
                           "trained like the run: the same model on a frozen random body, and on no-lm, one trained "
                           "block without a language model) | auto (fast with --data; paper tasks have none)", "auto")
    body: str = _help("body: a registered name (minilm, gpt2, ...), a Hugging Face id, or a local model directory", "minilm")
    init: str = _help("body weights: pretrained | random (default init) | stats (pretrained mean/std only) | "
                      "checkpoint:PATH (a body written by fpt pretrain)", "pretrained")
    freeze: str = _help("freeze policy: a name (paper, output, paper+lora, ...) or trained groups joined by ','",
                        "paper")
    lora_rank: int = _help("with the freeze group lora: the rank r of each attention projection's adapter "
                           "(fpt.bodies.lora; needs pip install 'fpt[lora]')", 8)
    lora_alpha: float = _help("with the freeze group lora: the adapters' scale alpha (the update is alpha / r * B A)",
                              16.0)
    layers: int | None = _help("use only the first N blocks of the body", None)
    dropout: float = _help("dropout inside the body (the paper: 0.1)", 0.1)
    input_init: str = _help("input layer init: gpt2 (an embedding table drawn N(0, 0.02), GPT-2's own init; a "
                            "linear layer orthogonal with gain sqrt(2), bias 0) | official (as the official FPT "
                            "code: nn.Embedding's default N(0, 1); orthogonal gain 1.41, bias 0). docs/fidelity.md",
                            "gpt2")
    input_dropout: bool = _help("dropout (at the rate `dropout`) on the output of a linear input layer, as the "
                                "official code's input network has; never after an embedding table (nor there)",
                                False)
    padding: str = _help("mask (padding is masked out of attention and the head reads each example's last real "
                         "token) | ignore (as the official code: no attention mask, the head reads the last "
                         "position of the padded batch, a padding token for shorter examples; results then depend "
                         "on trim_padding, bucket_batches and batch sizes)", "mask")
    vit_positions: str = _help("ViT bodies only: resized (ViT's pretrained position table fitted to the task's "
                               "length) | official (a new zero-initialised table of 1024 rows, as the official code)",
                               "resized")
    lstm_variant: str = _help("LSTM bodies only: fpt (each block one nn.LSTM then a LayerNorm, zero initial states) | "
                              "official (the official code's LNLSTM: layer norm inside the cell, uniform init, random "
                              "initial states drawn on every forward pass, dropout on each step's output)", "fpt")
    readout: str = _help("what the output head reads: last (the final states of the last k real tokens, the "
                         "paper's) | mean (the mean final state of every real token, one output token; how "
                         "sentence bodies such as MiniLM were trained to be read) | flatten (the final states of "
                         "all seq_len positions side by side, zeros past an example's length, into one linear "
                         "layer: GPT4TS's classification head, which keeps the per-position detail that the "
                         "other two lose; one output token, a head of seq_len x width inputs)", "last")
    fit: str = _help("how the trained pieces are fitted: gradient (Adam steps on the groups --freeze trains, "
                     "selected on validation) | closed-form (no gradient step: seeded input layers, the frozen body "
                     "read once as a feature map, pooled per block, and a linear head fitted in closed form with its "
                     "penalty chosen by cross-validation over every training example; fpt.closed_form) | auto (--data: "
                     "the two compared by k-fold cross-validation on the training examples, or by validation on large "
                     "data, and the better one trained; fpt.select.choose_fit). Default: gradient; fpt train --data "
                     "(preset fast): auto, unless the command line sets a field only gradient training reads (--steps, "
                     "--lr, --eval-every, --patience, --batch-size, --freeze, --readout, ...) or --refit, --choose",
                     "gradient")
    cf_members: int | None = _help("fit=closed-form: seeded input layers (members) whose features are concatenated, "
                                   "as ROCKET's kernels (default: fpt.feature_map.ClosedForm)", None)
    cf_blocks: str | None = _help("fit=closed-form: the blocks whose hidden states are pooled: all | last | indices "
                                  "joined by ',' (negative from the end, e.g. 0,-1) (default: fpt.feature_map.ClosedForm)",
                                  None)
    cf_poolings: str | None = _help("fit=closed-form: how each block's states become features, joined by ',': mean | "
                                    "max (over real positions) | last (the last real token) | flatten (every position, "
                                    "zeros past the end) (default: fpt.feature_map.ClosedForm)", None)
    cf_standardise: bool | None = _help("fit=closed-form: standardise each feature with the fitted examples' mean and "
                                        "std before the head (folded into the exported head) (default: "
                                        "fpt.feature_map.ClosedForm)", None)
    cf_inputs: bool | None = _help("fit=closed-form: the tokens themselves beside the body's features (continuous "
                                   "tokens side by side, zeros past the end; symbol ids as counts), so the head can "
                                   "always do what a linear model on the inputs does (default: "
                                   "fpt.feature_map.ClosedForm)", None)
    cf_head: str | None = _help("fit=closed-form: ridge (penalty by efficient leave-one-out; class scores, softmax "
                                "for probabilities) | logistic (classification, calibrated probabilities; C by k-fold) "
                                "(default: fpt.feature_map.ClosedForm)", None)
    steps: int = _help("maximum optimizer steps", 2000)
    batch_size: int = _help("examples per optimizer step", 16)
    grad_accum: int = _help("split each step's batch into this many micro-batches (same result, less memory)", 1)
    lr: float | None = _help("Adam learning rate; default: the task's (1e-3, the paper's)", None)
    clip: float = _help("gradient-norm clipping (the paper: 1.0); 0 disables", 1.0)
    seed: int = _help("seed for data, initialisation and dropout", 0)
    ensemble: int = _help("--data: train N models that differ only in their seed (seed, seed+1, ...; in "
                          "OUT/members/) and predict with their averaged class probabilities (regression: outputs). "
                          "Costs N trainings; on 30-50 training series one run's accuracy moves by 5-10 points with "
                          "the seed. 1: one model", 1)
    eval_every: int = _help("evaluate on the validation set every N steps", 50)
    eval_subset: int | None = _help("during training, evaluate a fixed seeded subset of N validation examples "
                                    "(less time per evaluation); reaching the target is confirmed on the whole "
                                    "validation set, and the reported figures are whole sets at the selected and last "
                                    "steps. Default: the whole validation set", None)
    eval_batch_size: int = _help("examples per evaluation batch", 256)
    target: float | None = _help("held-out accuracy (0-1; R² for regression) that counts as reached; default: the "
                                 "task's. With --data, --target NAME (not a number) names the target column", None)
    stop_at_target: bool = _help("stop once the target is reached", True)
    patience: int | None = _help("stop after N evaluations without improvement (default: none; --data: 10)", None)
    tie_break: str = _help("an evaluation that equals the best validation accuracy: first (the earlier step stays "
                           "selected, the paper's) | loss (the lower validation loss wins and counts as an improvement "
                           "for patience: a small validation set reaches 100 percent long before the model is done)", "first")
    diverge_loss: float = _help("a training loss above this (or NaN/inf) marks the run diverged and stops it", 100.0)
    last_block_rows: bool = _help("compute the last block only for the k tokens the head reads (same result, less work)",
                                  True)
    trim_padding: bool = _help("cut each batch to its longest real sequence (same result unless padding=ignore; less work)", True)
    bucket_batches: int = _help("variable-length tasks (ListOps, remote homology): sort training examples by length "
                                "within windows of this many batches, so each batch wastes little padding; "
                                "0 = plain shuffling", 50)
    precision: str = _help("auto | fp32 | bf16: bf16 autocast (auto: bf16 on CUDA; on a CPU, bf16 where it computes "
                           "bf16 natively (AVX-512 BF16 or AMX) under preset fast, fp32 under preset paper)", "auto")
    compile: bool = _help("torch.compile the model for training and evaluation (CUDA; first steps are slower)", False)
    cache_features: str = _help("auto | on | off: when only the output head trains and inputs are fixed, compute "
                                "the frozen features once and train the head on the cache", "auto")
    device: str = _help("auto | cpu | cuda | cuda:N | mps", "auto")

    def __post_init__(self) -> None:
        self._check_data_fields()
        checks = [
            (self.preset in PRESETS, "preset", f"must be one of {', '.join(PRESETS)}"),
            (self.steps >= 1, "steps", "must be >= 1"),
            # torch.manual_seed takes a signed 64-bit integer; a larger seed was an OverflowError naming no field
            (0 <= self.seed < 2**63, "seed", "must be an integer in 0..2**63-1 (e.g. 0)"),
            (0 <= self.split_seed < 2**63, "split_seed", "must be an integer in 0..2**63-1 (e.g. 0)"),
            (self.batch_size >= 1, "batch_size", "must be >= 1"),
            (self.grad_accum >= 1 and self.batch_size % self.grad_accum == 0, "grad_accum",
             f"must be >= 1 and divide batch_size={self.batch_size}"),
            (self.eval_every >= 1, "eval_every", "must be >= 1"),
            (self.ensemble >= 1, "ensemble", "must be >= 1 (the number of seeds trained; 1: one model)"),
            (self.eval_batch_size >= 1, "eval_batch_size", "must be >= 1"),
            (self.eval_subset is None or self.eval_subset >= 1, "eval_subset",
             "must be >= 1 (validation examples per evaluation during training); omit it for the whole set"),
            (self.bucket_batches >= 0, "bucket_batches", "must be >= 0 (0 disables length bucketing)"),
            (self.lr is None or self.lr > 0, "lr", "must be > 0"),
            (self.clip >= 0, "clip", "must be >= 0 (0 disables clipping)"),
            (0 <= self.dropout < 1, "dropout", "must be in [0, 1)"),
            (isinstance(self.lora_rank, int) and self.lora_rank >= 1, "lora_rank", "must be an integer >= 1"),
            (self.lora_alpha > 0, "lora_alpha", "must be > 0"),
            (self.target is None or 0 < self.target <= 1, "target", "is an accuracy in (0, 1], e.g. 0.99"),
            (self.patience is None or self.patience >= 1, "patience", "must be >= 1"),
            (self.tie_break in TIE_BREAKS, "tie_break", f"must be one of {', '.join(TIE_BREAKS)}"),
            (self.diverge_loss > 0, "diverge_loss", "must be > 0 (a training loss above it stops the run; the default "
                                                     "is 100)"),
            (bool(re.fullmatch(r"auto|cpu|cuda(:[0-9]{1,3})?|mps", self.device)), "device",
             "must be auto, cpu, cuda, cuda:N (N a GPU index) or mps"),
            (self.cache_features in {"auto", "on", "off"}, "cache_features", "must be auto, on or off"),
            (self.readout in READOUTS, "readout", f"must be one of {', '.join(READOUTS)}"),
            (self.fit in FITS, "fit", f"must be one of {', '.join(FITS)}"),
            (self.fit != "auto" or self.data is not None, "fit",
             "auto cross-validates on your own data's training examples: give --data PATH, or fit=gradient"),
            (self.cf_members is None or self.cf_members >= 1, "cf_members", "must be >= 1 (seeded input layers)"),
            (self.cf_head is None or self.cf_head in CF_HEADS, "cf_head", f"must be one of {', '.join(CF_HEADS)}"),
            (self.baselines in BASELINE_LEVELS, "baselines", "must be auto, none, fast or all"),
            (self.precision in {"auto", "fp32", "bf16"}, "precision", "must be auto, fp32 or bf16"),
            (self.layers is None or self.layers >= 1, "layers", "must be >= 1"),
            (self.init in {"pretrained", "random", "stats"} or self.init.startswith("checkpoint:"), "init",
             "must be pretrained, random, stats or checkpoint:PATH"),
            (self.input_init in {"gpt2", "official"}, "input_init", "must be gpt2 or official"),
            (self.padding in {"mask", "ignore"}, "padding", "must be mask or ignore"),
            (self.vit_positions in {"resized", "official"}, "vit_positions", "must be resized or official"),
            (self.lstm_variant in {"fpt", "official"}, "lstm_variant", "must be fpt or official"),
        ]
        for ok, name, msg in checks:
            if not ok:
                raise ConfigError(f"config field {name!r}={show(getattr(self, name))} {msg}")

    def _check_data_fields(self) -> None:
        """--data and its options: valid values, and used only with --data (the task becomes ``data``)."""
        if self.data is not None:
            if self.task not in {"bit-xor", DATA_TASK}:  # bit-xor: the default, i.e. no task was chosen
                raise ConfigError(f"config field 'data'={show(self.data)} trains on your dataset, but task="
                                  f"{self.task!r} was also given; drop --task (or use task={DATA_TASK})")
            object.__setattr__(self, "task", DATA_TASK)
            local = Path(str(self.data)).expanduser()
            if isinstance(self.data, str) and not local.is_absolute() and local.exists():
                # A relative path means the directory the run was started in: saved absolute, so that fpt eval,
                # predict and --resume from another directory read the same file, not another of that name.
                object.__setattr__(self, "data", str(local.absolute()))
            checks = [
                (bool(str(self.data).strip()), "data", "is empty; give a file, a folder or a dataset id"),
                (self.objective in {"auto", "classification", "regression"}, "objective",
                 "must be auto, classification or regression"),
                (self.modality in {"auto", "tabular", "image", "timeseries", "sequence"}, "modality",
                 "must be auto, tabular, image, timeseries or sequence"),
                (0 < self.val_fraction < 1, "val_fraction", "must be in (0, 1), e.g. 0.1"),
                (0 < self.test_fraction < 1 and self.val_fraction + self.test_fraction < 1, "test_fraction",
                 f"must be in (0, 1) and leave training examples with val_fraction={self.val_fraction}"),
                (not self.train_on_val or self.eval_every >= self.steps, "train_on_val",
                 f"trains on the validation split, so nothing may be selected on it: evaluate once, at the end "
                 f"(eval_every >= steps={self.steps}; eval_every is {self.eval_every}); fpt train --refit does this"),
                (self.folds is None or self.folds >= 2, "folds", "must be >= 2 (the number of folds; omit it for "
                                                                  "the val_fraction hold-out)"),
                (self.fold is None or self.folds is not None, "fold", "needs folds (the number of folds, >= 2): give "
                                                                    "both or neither"),
                (self.folds is None or self.fold is not None, "folds", "needs fold (the validation fold, 0.."
                                                                     f"{(self.folds or 2) - 1}): give both or neither"),
                (self.fold is None or self.folds is None or 0 <= self.fold < self.folds, "fold",
                 f"must be in 0..{(self.folds or 2) - 1} (folds={self.folds})"),
                (self.max_categories >= 1, "max_categories", "must be >= 1"),
                (self.image_size >= 1, "image_size", "must be >= 1"),
                (self.patch_size >= 1 and self.image_size % self.patch_size == 0, "patch_size",
                 f"must be >= 1 and divide image_size={self.image_size} (e.g. 4)"),
                (self.image_channels in {"auto", "rgb", "gray"}, "image_channels", "must be auto, rgb or gray"),
                (self.series_patch is None or self.series_patch >= 1, "series_patch", "must be >= 1"),
                (self.series_stride is None or self.series_stride >= 1, "series_stride", "must be >= 1"),
                (self.series_norm in {"series", "global", "none"}, "series_norm", "must be series, global or none"),
                (self.sequence_tokens in {"auto", "chars", "words"}, "sequence_tokens", "must be auto, chars or words"),
                (self.sequence_max_len is None or self.sequence_max_len >= 1, "sequence_max_len", "must be >= 1"),
            ]
            for ok, name, msg in checks:
                if not ok:
                    raise ConfigError(f"config field {name!r}={show(getattr(self, name))} {msg}")
            return
        if self.task == DATA_TASK:
            raise ConfigError(f"task {DATA_TASK!r} trains on your own dataset: give it with --data PATH")
        defaults = {f.name: f.default for f in dataclasses.fields(self) if f.name in (*DATA_FIELDS, *DATA_RUN_FIELDS)}
        given = [name for name, default in defaults.items() if getattr(self, name) != default]
        if given:
            raise ConfigError(f"config field(s) {', '.join(given)} apply only to your own dataset; give it with "
                              "--data PATH (or drop them)")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


DATA_TASK = "data"  # the task that reads --data (fpt.tasks.user_data)
PRESETS = ("fast", "paper")
DEFAULT_PRESET = "fast"  # what from_dict (the CLI, config files, sweeps, fpt.build, fpt.sklearn) fills in
# The fast preset: what step 8's sweeps chose (docs/results/performance.md, examples/fast/*.yaml), for the fields
# a config does not give. Every task (--data and the sklearn estimators included): dropout 0 and the official
# input init, chosen by every sweep (Bit XOR, digits, mnist-5k, Bit Memory); precision auto then uses a CPU's
# native bf16 (fpt.pipeline.resolve_precision). The paper preset is RunConfig's own field defaults.
FAST: dict[str, Any] = {"dropout": 0.0, "input_init": "official", "tie_break": "loss"}
FAST_TASKS: dict[str, dict[str, Any]] = {
    # bench/specs/bit-xor-bf16.yaml, bit-xor-dropout.yaml; examples/fast/bit-xor.yaml
    "bit-xor": {"batch_size": 8, "lr": 0.002, "eval_every": 20, "eval_subset": 200},
    # bench/specs/mnist-5k-defaults.yaml, mnist-5k-batch-dropout.yaml; examples/fast/mnist-5k.yaml: 28x28 in 49
    # patches of 4x4 (the official code's tokenisation) instead of the paper's 32x32 in 64
    "mnist-5k": {"task_options": {"image_size": 28}, "eval_every": 25, "eval_subset": 200},
    # bench/specs/bit-memory-100.yaml (swept at the quick size, 5 x 100 bits); examples/fast/bit-memory-100.yaml
    "bit-memory": {"lr": 0.003, "eval_subset": 200},
    # digits (bench/specs/digits-dropout.yaml): batch 16 and lr 1e-3, the paper's; only FAST
    # --data: a series standardised channel by channel with the training split's mean and std, not each series by
    # its own (a series' level and scale are often its class; sets already z-normalised per series, as most of the
    # UCR archive is, are unchanged). Chosen on validation, 3 seeds: BasicMotions 0.792 -> 1.000, JapaneseVowels
    # 0.809 -> 0.988, PickupGestureWiimoteZ 0.433 -> 0.600, equal on GunPoint (docs/results/own-data/norm/).
    # A table, images or symbols ignore it.
    DATA_TASK: {"series_norm": "global"},
}


# The fields a preset sets (precision: what auto means on a CPU, fpt.pipeline.resolve_precision).
PRESET_FIELDS = ("task_options", "dropout", "input_init", "batch_size", "lr", "eval_every", "eval_subset", "precision",
                 "tie_break", "series_norm")
# A config.yaml written before presets existed records every field the first presets set (the rest came later).
PRE_PRESET_FIELDS = PRESET_FIELDS[:8]


def preset_defaults(preset: str, task: str) -> dict[str, Any]:
    """The values ``preset`` gives ``task``'s fields that a config leaves out ({} for paper: the field defaults)."""
    if preset == "paper":
        return {}
    return {**FAST, **FAST_TASKS.get(task, {})}


def apply_preset(fields: dict[str, Any], where: str = "config") -> dict[str, Any]:
    """``fields`` with the preset's values for the fields they leave out (task options: the options not given).

    No preset given: the fast one, except for a config that records every field a preset sets (a config.yaml
    written before presets existed), which ran the paper's."""
    if "preset" in fields:
        preset = fields["preset"]
    else:
        preset = "paper" if all(name in fields for name in PRE_PRESET_FIELDS) else DEFAULT_PRESET
    if preset not in PRESETS:
        raise ConfigError(f"{where}: field 'preset'={show(preset)} must be one of {', '.join(PRESETS)} (fast: the "
                          "fastest validated settings; paper: the paper's)")
    task = DATA_TASK if fields.get("data") is not None else str(fields.get("task", RunConfig.task))
    out = {**fields, "preset": preset}
    for name, value in preset_defaults(preset, task).items():
        if name == "task_options":
            given = fields.get("task_options")
            out[name] = {**value, **given} if isinstance(given, dict) else given if given is not None else dict(value)
        elif name not in fields:
            out[name] = value
    return out
BASELINE_LEVELS = ("auto", "none", "fast", "all")  # RunConfig.baselines (fpt.baselines)
# RunConfig.readout: the heads fpt.model.FPT builds. A copy of fpt.model.READOUTS, since config sits below the model
# and may not import it; tests/test_model.py checks that the two agree.
READOUTS = ("last", "mean", "flatten")
FITS = ("gradient", "closed-form", "auto")  # RunConfig.fit (fpt.train.fit, fpt.closed_form, fpt.select.choose_fit)
CF_HEADS = ("ridge", "logistic")  # RunConfig.cf_head (fpt.closed_form)
TIE_BREAKS = ("first", "loss")  # RunConfig.tie_break (fpt.train.fit's selection)
# The fields that describe --data and how it is tokenised (fpt data --data PATH takes them as flags too).
DATA_FIELDS = ("data", "target_column", "objective", "modality", "val_fraction", "test_fraction", "folds", "fold",
               "split_seed", "train_on_val", "max_categories", "image_size", "patch_size", "image_channels",
               "series_patch", "series_stride", "series_norm", "sequence_tokens", "sequence_max_len")
# Run fields that only an own-data run has (the paper's tasks are run one seed at a time, each a table cell)
DATA_RUN_FIELDS = ("ensemble",)


def target_alias(fields: dict[str, Any]) -> dict[str, Any]:
    """``target=NAME`` with ``data``: NAME is the target column when it is not a number (a number in (0, 1] is
    still the target accuracy; any other number is ambiguous: an error naming both fixes). Returns the fields
    with a column moved to ``target_column``."""
    target = fields.get("target")
    if fields.get("data") is None or target is None or isinstance(target, bool):
        return fields
    try:
        number = float(target)
    except (TypeError, ValueError):
        number = None
    if number is not None:
        if 0 < number <= 1:
            return fields
        raise ConfigError(f"target={show(target)} with data: a stopping accuracy is in (0, 1], so this is not one; "
                          f"for the target column {show(str(target))} give --target-column {target} (target_column), "
                          "for a stopping accuracy give a number in (0, 1] (e.g. --target 0.9)")
    if not isinstance(target, str):
        return fields
    if fields.get("target_column") not in (None, target):
        raise ConfigError(f"target={show(target)} and target_column={show(fields['target_column'])} both name the "
                          "target column; give one")
    out = {k: v for k, v in fields.items() if k != "target"}
    out["target_column"] = target
    return out


def field_help(cls: type) -> dict[str, str]:
    return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(cls)}


def _coerce(value: Any, hint: Any, where: str) -> Any:
    """Convert a YAML/CLI value to the field's declared type, or fail naming ``where``."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None or (isinstance(value, str) and value.lower() in {"none", "null"}):
            if type(None) in args:
                return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, where)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{where}: cannot be {show(value)}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in {"true", "1", "yes", "false", "0", "no"}:
            return value.lower() in {"true", "1", "yes"}
        raise ConfigError(f"{where}: expected true/false, got {show(value)}")
    if hint is int:
        if isinstance(value, bool):
            raise ConfigError(f"{where}: expected an integer, got {show(value)}")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                number = float(value)  # accepts 2e4 as well as 20000
            except ValueError:
                number = None
            if number is not None and number.is_integer():
                return int(number)
        raise ConfigError(f"{where}: expected an integer, got {show(value)}")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"{where}: expected a number, got {show(value)}")
    if hint is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise ConfigError(f"{where}: expected a string, got {show(value)}")
    if hint is dict or origin is dict:
        if isinstance(value, dict):
            return dict(value)
        raise ConfigError(f"{where}: expected a mapping, got {show(value)}")
    return value


def from_saved(data: Any, where: str = "config") -> RunConfig:
    """A RunConfig that fpt itself saved (a run's config.yaml, an export's run_config). One saved before
    presets existed has no ``preset`` key and ran the paper's defaults (whatever fields it lacks, e.g.
    ``eval_subset`` in the oldest runs), so it is read as ``preset: paper``, never as today's default."""
    if isinstance(data, dict) and "preset" not in data:
        data = {**data, "preset": "paper"}
    return from_dict(RunConfig, data, where=where)


def from_dict(cls: type, data: dict[str, Any], where: str = "config") -> Any:
    """Build dataclass ``cls`` from a mapping, rejecting unknown keys and wrong types."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of fields, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted((k for k in data if k not in names), key=str)
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {show(unknown)}{near(unknown[0], sorted(names))}; "
                          f"known fields: {', '.join(sorted(names))}")
    if cls is RunConfig:
        data = apply_preset(data, where)
    values = {k: _coerce(v, hints[k], f"{where}: field {k!r}") for k, v in data.items()}
    try:
        return cls(**values)
    except ConfigError as exc:  # a dataclass's own check: say where its values came from, once
        if str(exc).startswith(where):
            raise
        raise ConfigError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``key=value`` strings -> nested dict; ``task.n_bits=5`` goes to task_options."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not key=value (e.g. steps=500 or task.n_bits=5)")
        key, raw = item.split("=", 1)
        if not key or key == "task.":
            raise ConfigError(f"override {show(item)} has no key before '='; write key=value (e.g. steps=500)")
        try:
            value = yaml.safe_load(raw) if raw else ""
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or type(exc).__name__
            raise ConfigError(f"override {show(item)}: the value is not valid YAML ({problem}); give a number, "
                              "true/false, a word, or \"quoted text\"") from None
        if key.startswith("task."):
            out.setdefault("task_options", {})[key[len("task."):]] = value
        else:
            out[key.replace("-", "_")] = value
    return out


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if key == "task_options" and isinstance(value, dict):
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


def load_yaml(path: str | Path) -> dict[str, Any]:
    from fpt import stored

    path = Path(path)
    try:
        text = stored.read_bytes(path, stored.LIMITS["config.yaml"], ConfigError).decode("utf-8")
        data = yaml.safe_load(text)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path} is a directory; give the YAML file (e.g. {path / 'config.yaml'})") from None
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise ConfigError(f"config file {path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} on line {line}); "
                          "save it as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"config file {path} is not valid YAML{at}: {problem}") from None
    except RecursionError:
        raise ConfigError(f"config file {path}: nested too deeply to read") from None
    if data is None:
        return {}
    stored.expanded(data, f"config file {path}", error=ConfigError)  # an alias bomb, before anyone walks it
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping of fields at the top level (key: value lines), "
                          f"got a {type(data).__name__}")
    return data


def save_yaml(config: RunConfig, path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))


def train_command(config: dict[str, Any], out: str) -> str:
    """The ``fpt train`` command line that reproduces a config (fields that differ from its preset's defaults)."""
    preset = config.get("preset", "paper")
    base = {k: config[k] for k in ("task", "data") if config.get(k) is not None}
    defaults = from_dict(RunConfig, {**base, "preset": preset}).to_dict()
    # the command line's preset and task (task options are all given)
    defaults.update(preset=DEFAULT_PRESET, task=RunConfig.task, data=None, task_options={})
    parts = ["fpt", "train"]
    for key, value in config.items():
        if key == "task_options" or (key in defaults and defaults[key] == value):
            continue
        parts += [f"--{key.replace('_', '-')}", shlex.quote(yaml_scalar(value))]
    parts += [shlex.quote(f"task.{k}={yaml_scalar(v)}") for k, v in (config.get("task_options") or {}).items()]
    return " ".join([*parts, "--out", shlex.quote(out)])


def yaml_scalar(value: Any) -> str:
    """A value as the command line reads it (YAML)."""
    # The CLI reads values as YAML, and JSON is YAML: lists and None survive the round trip.
    return value if isinstance(value, str) else json.dumps(value)
