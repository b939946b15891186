"""A run's settings: the fields of a run (RunConfig), every default they take, and the one step that resolves them.

``resolve(given, task, data)`` is the only place a default is decided. It combines, in this order:

1. the fields the user gave (a config file, the command line, ``fpt.build(...)``, the sklearn estimator's
   arguments, a saved config.yaml), which always win;
2. the preset (``fast`` or ``paper``): FAST and FAST_TASKS below for the fields not given; the paper preset is
   RunConfig's own field defaults;
3. the task's facts (``TaskDefaults``: lr, patience, target), declared on the task class where it is
   registered (``defaults = TaskDefaults(...)``), as timm declares a model's default_cfg;
4. the data's facts (``DataFacts``: training examples, what its modality's entry declares, the target column a
   table's reader chose, what its tokeniser fitted) for a ``--data`` run: the step budget, the evaluation interval,
   the readout and input init its modality declares (a time series' under preset fast, symbol sequences' for a
   closed-form fit), the target column and the tokens' shape (series_patch, series_stride, sequence_max_len), when
   the user gave none.

Steps 3 and 4 need the task and its data, which sit above this module: a config read from a file or the
command line is resolved through step 2, and the fields that wait for the task or the data hold None
(``UNSET``: "not given, the task's or the data's"); ``fpt.pipeline.assemble`` resolves the rest once the data is
built, so the config a run records (config.yaml) holds every value it used.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fpt.errors import ConfigError, data_kind, option, python_entry, remedy, show, speaks_flags


def plain(value: Any) -> Any:
    """``value`` with NumPy's scalars and arrays as Python's numbers and lists, in mappings and lists too. A NumPy
    value (steps=np.int64(300), task_options={'eval_size': np.int64(16)}, from np.arange or a grid over NumPy values)
    passed every check and failed at fpt.fit or fpt.train_run writing config.yaml (yaml.representer.RepresenterError:
    cannot represent an object); ``fpt.build``'s fields were coerced, ``RunConfig(...)``'s and task options were not."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):  # np.int64, np.float32, np.bool_, ndarray
        return plain(value.tolist())
    return value


DEVICES = re.compile(r"auto|cpu|cuda(:[0-9]{1,3})?|mps")  # what a device field takes
DEVICES_SAID = "auto, cpu, cuda, cuda:N (N a GPU index) or mps"


def device_name(value: Any) -> Any:
    """A ``torch.device`` as its name ('cpu', 'cuda:0'), as a device field reads it; anything else as it is. PyTorch's
    habit (device = torch.device('cuda' if torch.cuda.is_available() else 'cpu'), passed on) was refused as 'expected a
    string', and by fpt.load as a fault of the run's config.yaml or the export's config.json ('export the run again')."""
    kind = type(value)
    return str(value) if kind.__module__ == "torch" and kind.__name__ == "device" else value


def _help(text: str, default: Any = dataclasses.MISSING, **kw: Any) -> Any:
    if default is dataclasses.MISSING:
        return field(metadata={"help": text}, **kw)
    return field(default=default, metadata={"help": text}, **kw)


@dataclass(frozen=True)
class RunConfig:
    preset: str = _help("fast | paper: the defaults of fields not given. fast (what resolve() gives a config that "
                        "names none: fpt train, config files, fpt sweep, fpt.build and the sklearn estimators): the "
                        "fastest settings that reach the same accuracy (dropout 0, the official input init, per-task batch "
                        "size, lr, evaluation on a 200-example validation subset, mnist-5k in 49 tokens; precision auto uses "
                        "a CPU's native bf16; docs/results/performance.md). paper: the paper's settings (fpt "
                        "reproduce pins them): RunConfig's own field defaults, so a RunConfig built directly, "
                        "without resolve(), is this preset", "paper")
    task: str = _help("registered task name (fpt list shows them)", "bit-xor")
    task_options: dict = _help("task options, e.g. {n_bits: 5}; on the command line task.n_bits=5", default_factory=dict)
    data_dir: str = _help("directory holding datasets' files (each task's own layout)", "data")
    download: bool = _help("download missing dataset files where the task knows how (needs network)", False)
    data: str | None = _help("your own dataset (sets task=data): a file or folder in a format fpt reads (fpt.data.formats), "
                             "or a hub dataset id. fpt data --data PATH shows every choice", None)
    target_column: str | None = _help("--data: the column(s) to predict, comma-separated for several outputs (default: "
                                      "a column named target, label, labels, class or y, else the last column; "
                                      "config.yaml records the one chosen); --target NAME sets it when NAME is not "
                                      "a number", None)
    drop_columns: str | None = _help("--data tables: columns that are not features, left out of the model "
                                     "(comma-separated: an identifier, a row number, a column that gives the answer "
                                     "away); each must be a column of the table. fpt predict then accepts them in "
                                     "new inputs and ignores them", None)
    series_id: str | None = _help("--data tables: read a long-format table of time series (a row per time point, as "
                                  "tsfresh and sktime's pd-long keep them): ID or ID,ORDER: the rows with one ID are "
                                  "one series (its target on each of its rows), in the order of the ORDER column "
                                  "(numbers or datetimes; else as the rows come); every other feature column is a "
                                  "channel. fpt predict reads new series the same way and writes one prediction per "
                                  "ID", None)
    objective: str = _help("--data: auto | classification | regression (auto: text, bool or <= 20 distinct integer "
                           "values classify, other numbers regress)", "auto")
    modality: str = _help("--data: auto, or the modality (an entry of fpt.data.modalities) to read it as (auto: from "
                          "the files; a table whose only feature is text is a sequence; timeseries reads a "
                          "table's rows as series, a point per column)", "auto")
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
    sequence_tokens: str = _help("--data sequences: auto | chars | words (auto: words if training texts hold spaces "
                                 "and at least half their words written recur, else characters)", "auto")
    sequence_max_len: int | None = _help("--data sequences: symbols kept per example (default: the longest training "
                                         "sequence, at most 512); longer ones are cut and counted", None)
    baselines: str = _help("--data: what else is fitted on the same split and shown beside the run: none | fast "
                           "(classic models: logistic/ridge regression and gradient boosting for tables, 1-NN and "
                           "MiniRocket for time series, logistic regression on pixels) | all (fast, plus two controls "
                           "trained like the run: the same model on a frozen random body, and on no-lm, one trained "
                           "block without a language model) | auto (with --data: all for a closed-form fit, whose "
                           "controls are two feature reads, else fast; paper tasks have none)", "auto")
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
    input_init: str | None = _help("input layer init: gpt2 (an embedding table drawn N(0, 0.02), GPT-2's own init; a "
                                   "linear layer orthogonal with gain sqrt(2), bias 0) | official (as the official FPT "
                                   "code: nn.Embedding's default N(0, 1); orthogonal gain 1.41, bias 0); --data: the "
                                   "preset's, but gpt2 for a closed-form fit of symbol sequences. docs/fidelity.md",
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
    readout: str | None = _help("what the output head reads: last (the final states of the last k real tokens, the "
                         "paper's) | mean (the mean final state of every real token, one output token; how "
                         "sentence bodies such as MiniLM were trained to be read) | flatten (the final states of "
                         "all seq_len positions side by side, zeros past an example's length, into one linear "
                         "layer: GPT4TS's classification head, which keeps the per-position detail that the "
                         "other two lose; one output token, a head of seq_len x width inputs). --data: flatten for a "
                         "time series under preset fast, else last", "last")
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
                                    "zeros past the end) | ppv (ROCKET's share of real positions above each unit's "
                                    "quartiles over the training examples) (default: fpt.feature_map.ClosedForm)",
                                    None)
    cf_standardise: bool | None = _help("fit=closed-form: standardise each feature with the fitted examples' mean and "
                                        "std before the head (folded into the exported head) (default: "
                                        "fpt.feature_map.ClosedForm)", None)
    cf_inputs: bool | None = _help("fit=closed-form: the tokens themselves beside the body's features (continuous "
                                   "tokens side by side, zeros past the end; symbol ids as counts), so the head can "
                                   "always do what a linear model on the inputs does (default: "
                                   "fpt.feature_map.ClosedForm)", None)
    cf_scales: str | None = _help("fit=closed-form: tokens merged into one per member, cycled over the members, e.g. "
                                  "1,2,4,8,16: member e reads windows scales[e % len] tokens long, so the members see "
                                  "short and long patterns (ROCKET's dilations); symbol ids are never merged (default: "
                                  "fpt.feature_map.ClosedForm)", None)
    cf_hop: str | None = _help("fit=closed-form: how far a member's merged window moves between its tokens: scale (a "
                               "whole window: windows side by side) | half (half a window) | one (one token: every "
                               "offset, as a convolution slides). Default: one for a series (its entry in "
                               "fpt.data.modalities declares it; round 14's TRAIN-only CV), with cf_members left "
                               "unset chosen within a reading budget (30, 20 or 10 members, else 10 side by side); "
                               "scale for any other data", None)
    cf_series_norm: str | None = _help("fit=closed-form, time series: what the members read of each series' level and "
                                       "scale: global (the tokens as --series-norm normalised them) | alternate (the "
                                       "odd members each series and channel normalised by its own mean and std) | "
                                       "choose (the odd members read both ways, the head keeping the one with the "
                                       "lower leave-one-out error on the training examples; summary.json's "
                                       "closed_form.series_norm_kept). Default: choose for a series (its entry in "
                                       "fpt.data.modalities declares it; round 18's TRAIN-only CV), global for any "
                                       "other data", None)
    cf_difference: bool | None = _help("fit=closed-form, time series: the second half of the members (member index "
                                       ">= cf_members / 2) read the series' first difference (per channel, along "
                                       "time; the first point's difference 0), normalised as --series-norm normalises "
                                       "the series, with its own training statistics; the tokens (cf_inputs) stay the "
                                       "series' (MultiRocket's habit; round 3's TRAIN-only CV, OSULeaf 0.858 against "
                                       "0.730). Default: true for a series (its entry in fpt.data.modalities declares "
                                       "it; decided when the series is tokenised), false for any other data", None)
    cf_gains: str | None = _help("fit=closed-form: each member's linear input layer multiplied by one of these, "
                                 "cycled along the scale ladder: member e takes gains[r % len], r its rung (e % the "
                                 "number of cf_scales, counted on after the series' rungs where it reads the first "
                                 "difference), so the members of one scale and source share one gain and the head "
                                 "picks among them (ROCKET draws each kernel's scale), e.g. 0.25,4. Default: 0.25,4 "
                                 "for a series (its entry in fpt.data.modalities declares it; round 13's TRAIN-only "
                                 "CV), 1 (as drawn) for any other data", None)
    cf_head: str | None = _help("fit=closed-form: ridge (penalty by efficient leave-one-out; class scores, softmax "
                                "for probabilities) | logistic (classification, calibrated probabilities; C by k-fold) "
                                "(default: fpt.feature_map.ClosedForm)", None)
    steps: int | None = _help("maximum optimizer steps", 2000)
    batch_size: int = _help("examples per optimizer step; a larger one than a finite training set draws the whole "
                            "set once, with a note", 16)
    grad_accum: int = _help("split each step's batch into this many micro-batches (same result, less memory)", 1)
    lr: float | None = _help("Adam learning rate", None)
    clip: float = _help("gradient-norm clipping (the paper: 1.0); 0 disables", 1.0)
    seed: int = _help("seed for data, initialisation and dropout", 0)
    ensemble: int = _help("--data: train N models that differ only in their seed (seed, seed+1, ...; in "
                          "OUT/members/) and predict with their averaged class probabilities (regression: outputs). "
                          "Costs N trainings; on 30-50 training series one run's accuracy moves by 5-10 points with "
                          "the seed. 1: one model", 1)
    eval_every: int | None = _help("evaluate on the validation set every N steps", 50)
    eval_subset: int | None = _help("during training, evaluate a fixed seeded subset of N validation examples "
                                    "(less time per evaluation); reaching the target is confirmed on the whole "
                                    "validation set, and the reported figures are whole sets at the selected and last "
                                    "steps. Default: the whole validation set", None)
    eval_batch_size: int = _help("examples per evaluation batch", 256)
    target: float | None = _help("held-out accuracy (0-1; R² for regression) that counts as reached. With --data, "
                                 "--target NAME (not a number) names the target column", None)
    stop_at_target: bool = _help("stop once the target is reached", True)
    patience: int | None = _help("stop after N evaluations without improvement", None)
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

    @python_entry  # fpt.RunConfig(...) is Python's: its refusals name fields (data=PATH), the command line's its flags
    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0 or f.name == "task_options":
                object.__setattr__(self, f.name, plain(value))  # an array stays one, for _check_settings to refuse
            elif f.name == "device":
                object.__setattr__(self, f.name, device_name(value))
        self._check_settings()
        self._check_data_fields()
        checks = [
            (self.preset in PRESETS, "preset", f"must be one of {', '.join(PRESETS)}"),
            (self.steps is None or self.steps >= 1, "steps", "must be >= 1"),
            # torch.manual_seed takes a signed 64-bit integer; a larger seed was an OverflowError naming no field
            (0 <= self.seed < 2**63, "seed", "must be an integer in 0..2**63-1 (e.g. 0)"),
            (0 <= self.split_seed < 2**63, "split_seed", "must be an integer in 0..2**63-1 (e.g. 0)"),
            (self.batch_size >= 1, "batch_size", "must be >= 1"),
            (self.grad_accum >= 1 and self.batch_size % self.grad_accum == 0, "grad_accum",
             f"must be >= 1 and divide batch_size={self.batch_size}"),
            (self.eval_every is None or self.eval_every >= 1, "eval_every", "must be >= 1"),
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
            (bool(DEVICES.fullmatch(self.device)), "device", f"must be {DEVICES_SAID}"),
            (self.cache_features in {"auto", "on", "off"}, "cache_features", "must be auto, on or off"),
            (self.readout is None or self.readout in READOUTS, "readout", f"must be one of {', '.join(READOUTS)}"),
            (self.fit in FITS, "fit", f"must be one of {', '.join(FITS)}"),
            (self.fit != "auto" or self.data is not None, "fit",
             "auto cross-validates on your own data's training examples: give "
             f"{option('data', 'PATH', placeholder=True)}, or {option('fit', 'gradient')}"),
            (self.cf_members is None or self.cf_members >= 1, "cf_members", "must be >= 1 (seeded input layers)"),
            (self.cf_head is None or self.cf_head in CF_HEADS, "cf_head", f"must be one of {', '.join(CF_HEADS)}"),
            (not self.cf_difference or self.fit in ("closed-form", "auto"), "cf_difference",
             f"is read by the closed-form fit's members only: give {option('fit', 'closed-form')} or auto, or drop it"),
            (self.baselines in BASELINE_LEVELS, "baselines", "must be auto, none, fast or all"),
            (self.precision in {"auto", "fp32", "bf16"}, "precision", "must be auto, fp32 or bf16"),
            (self.layers is None or self.layers >= 1, "layers", "must be >= 1"),
            (self.init in {"pretrained", "random", "stats"} or self.init.startswith("checkpoint:"), "init",
             "must be pretrained, random, stats or checkpoint:PATH"),
            (self.input_init in {"gpt2", "official", None}, "input_init", "must be gpt2 or official"),
            (self.padding in {"mask", "ignore"}, "padding", "must be mask or ignore"),
            (self.vit_positions in {"resized", "official"}, "vit_positions", "must be resized or official"),
            (self.lstm_variant in {"fpt", "official"}, "lstm_variant", "must be fpt or official"),
        ]
        for ok, name, msg in checks:
            if not ok:
                raise ConfigError(f"config field {name!r}={show(getattr(self, name))} {msg}")

    def _check_settings(self) -> None:
        """Each field holds one setting: RunConfig(data=frame) (or fpt.build(config, steps=array)) failed in the
        range checks with pandas' "truth value of a DataFrame is ambiguous", naming no field."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "task_options" and isinstance(value, Mapping):
                continue
            if value is None or isinstance(value, (str, numbers.Number, os.PathLike)) and data_kind(value) is None:
                continue
            if f.name == "data":
                fix = "give a path (a file, a folder or a dataset id), or data in memory to fpt.build(data=...)"
            elif f.name == "task_options":
                fix = "give a mapping of the task's options (e.g. {'n_bits': 5})"
            elif isinstance(value, (list, tuple)) and f.name in ("target_column", "drop_columns", "series_id"):
                fix = "give the column names comma-separated (e.g. 'a,b')"
            else:
                fix = f"give one value for {f.name}"
            raise ConfigError(f"config field {f.name!r} is {show(value)}, where a field holds one setting (text, a "
                              f"number, true/false); {fix}")

    def _check_data_fields(self) -> None:
        """--data and its options: valid values, and used only with --data (the task becomes ``data``)."""
        if self.data is not None:
            if self.task not in {"bit-xor", DATA_TASK}:  # bit-xor: the default, i.e. no task was chosen
                raise ConfigError(f"config field 'data'={show(self.data)} trains on your dataset, but task="
                                  f"{self.task!r} was also given; drop {option('task')} (or give "
                                  f"{option('task', DATA_TASK)})")
            object.__setattr__(self, "task", DATA_TASK)
            local = Path(str(self.data)).expanduser()
            if isinstance(self.data, str) and not Path(self.data).is_absolute() and local.exists():
                # A relative path means the directory the run was started in: saved absolute, so that fpt eval,
                # predict and --resume from another directory read the same file, not another of that name. '~/x.csv'
                # (fpt.build(data=...), where no shell expands it; pandas' read_csv does) is the home folder's.
                object.__setattr__(self, "data", str(local.absolute()))
            checks = [
                (bool(str(self.data).strip()), "data", "is empty; give a file, a folder or a dataset id"),
                (self.objective in {"auto", "classification", "regression"}, "objective",
                 "must be auto, classification or regression"),
                # modality: its names are the data layer's entries, above this module; fpt.data.modalities.requested
                # checks it where the data is read (fpt.data.load, in-memory data, the sklearn estimators)
                (0 < self.val_fraction < 1, "val_fraction", "must be in (0, 1), e.g. 0.1"),
                (0 < self.test_fraction < 1, "test_fraction", "must be in (0, 1), e.g. 0.2"),
                (not self.train_on_val or None in (self.steps, self.eval_every) or self.eval_every >= self.steps,
                 "train_on_val",
                 f"trains on the validation split, so nothing may be selected on it: evaluate once, at the end "
                 f"(eval_every >= steps={self.steps}; eval_every is {self.eval_every}); "
                 f"{'fpt train --refit' if speaks_flags() else 'fpt.train_run(..., refit=True)'} does this"),
                (self.folds is None or self.folds >= 2, "folds", "must be >= 2 (the number of folds; omit it for "
                                                                  "the val_fraction hold-out)"),
                (self.fold is None or self.folds is not None, "fold", "needs folds (the number of folds, >= 2): give "
                                                                    "both or neither"),
                (self.folds is None or self.fold is not None, "folds", "needs fold (the validation fold, 0.."
                                                                     f"{(self.folds or 2) - 1}): give both or neither"),
                (self.fold is None or self.folds is None or 0 <= self.fold < self.folds, "fold",
                 f"must be in 0..{(self.folds or 2) - 1} (folds={self.folds})"),
                (self.drop_columns is None or all(n.strip() for n in str(self.drop_columns).split(",")),
                 "drop_columns", "must name columns, comma-separated (e.g. id,row), or be left out"),
                (self.series_id is None or (all(n.strip() for n in str(self.series_id).split(","))
                                            and len(str(self.series_id).split(",")) <= 2),
                 "series_id", "must name the series' id column, and optionally its order column: ID or ID,ORDER"),
                (self.max_categories >= 1, "max_categories", "must be >= 1"),
                (self.image_size >= 1, "image_size", "must be >= 1"),
                (patches := self.patch_size >= 1 and self.image_size % self.patch_size == 0, "patch_size",
                 "" if patches else f"must be >= 1 and divide image_size={self.image_size} (e.g. {_near_divisor(self)})"),
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
            if self.val_fraction + self.test_fraction >= 1:
                # the two together, not test_fraction alone: val_fraction 0.99 was blamed on the default test_fraction
                raise ConfigError(f"config fields val_fraction={self.val_fraction} and test_fraction="
                                  f"{self.test_fraction} hold out every example, leaving none to train on (their sum "
                                  f"must be under 1): {remedy('lower {} or {}', 'val_fraction', 'test_fraction')}")
            return
        if self.task == DATA_TASK:
            raise ConfigError(f"task {DATA_TASK!r} trains on your own dataset: give it with "
                              f"{option('data', 'PATH', placeholder=True)}")
        defaults = {f.name: f.default for f in dataclasses.fields(self) if f.name in (*DATA_FIELDS, *DATA_RUN_FIELDS)}
        defaults["cf_difference"] = self.cf_difference if not self.cf_difference else None  # off: any task's design
        given = [name for name, default in defaults.items() if getattr(self, name) != default]
        if given:
            raise ConfigError(f"config field(s) {', '.join(given)} apply only to your own dataset; give it with "
                              f"{option('data', 'PATH', placeholder=True)} (or drop them)")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)



def _near_divisor(config: RunConfig) -> int:
    """The divisor of image_size closest to patch_size (the smaller on a tie): the example a refused patch_size is
    given ('e.g. 4' did not divide an image_size of 30)."""
    size = max(config.image_size, 1)
    small = [d for d in range(1, math.isqrt(size) + 1) if size % d == 0]
    return min({*small, *(size // d for d in small)}, key=lambda d: (abs(d - config.patch_size), d))


BASELINE_LEVELS = ("auto", "none", "fast", "all")  # RunConfig.baselines (fpt.baselines)
# RunConfig.readout: the heads fpt.model.FPT builds (last token, mean over tokens, every token side by side).
READOUTS = ("last", "mean", "flatten")
FITS = ("gradient", "closed-form", "auto")  # RunConfig.fit (fpt.train.fit, fpt.closed_form, fpt.select.choose_fit)
CF_HEADS = ("ridge", "logistic")  # RunConfig.cf_head (fpt.closed_form)
TIE_BREAKS = ("first", "loss")  # RunConfig.tie_break (fpt.train.fit's selection)
# The fields that describe --data and how it is tokenised (fpt data --data PATH takes them as flags too).
DATA_FIELDS = ("data", "target_column", "drop_columns", "series_id", "objective", "modality", "val_fraction", "test_fraction",
               "folds", "fold", "split_seed", "train_on_val", "max_categories", "image_size", "patch_size", "image_channels",
               "series_patch", "series_stride", "series_norm", "sequence_tokens", "sequence_max_len",
               "cf_difference")  # the series tokeniser reads cf_difference: it cuts the difference's windows too
# Run fields that only an own-data run has (the paper's tasks are run one seed at a time, each a table cell)
DATA_RUN_FIELDS = ("ensemble",)

DATA_TASK = "data"  # the task that reads --data (fpt.tasks.user_data)
PRESETS = ("fast", "paper")
DEFAULT_PRESET = "fast"  # what a config that names none gets (the CLI, config files, sweeps, fpt.build, fpt.sklearn)
# The fast preset: the fastest settings that reach the paper's accuracy (docs/results/performance.md,
# examples/fast/*.yaml), for the fields a config does not give. Every task (--data and the sklearn estimators
# included): dropout 0 and the official input init, chosen by every sweep (Bit XOR, digits, mnist-5k, Bit Memory);
# precision auto then uses a CPU's native bf16 (fpt.pipeline.resolve_precision). The paper preset is RunConfig's
# own field defaults.
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
# A config.yaml written before presets existed ran the paper's settings and records every field of a run as it
# was then, these included (the fields added since, e.g. eval_subset, it lacks): read without a preset, it is
# one of those, never today's default preset.
SAVED_PRESET = "paper"  # the preset of a config saved before presets existed (no preset key): the paper's
PRE_PRESET_FIELDS = ("task_options", "dropout", "input_init", "batch_size", "lr", "eval_every", "eval_subset",
                     "precision")


@dataclass(frozen=True)
class TaskDefaults:
    """What a task declares about its runs (``defaults = TaskDefaults(...)`` on the registered task class): the
    values of the fields a config leaves unset (None)."""

    lr: float = 1e-3  # the paper's Adam learning rate for every task but remote homology
    patience: int | None = None  # evaluations without improvement before stopping; None: never
    target: float | None = None  # validation accuracy that counts as solved (steps_to_target); None: none


@dataclass(frozen=True)
class DataFacts:
    """What a --data run's defaults depend on, known once its data is split and its tokeniser fitted: training
    examples, the values the tokeniser chose for the fields that shape its tokens (``fitted``: RunConfig field ->
    value, e.g. series_patch: 8; the modality's entry in fpt.data.modalities maps them), the target column(s) read,
    where the reader chose them among a table's columns (None where the layout fixes the target: an image's class
    folder, a series' label, an array y), and what the modality's entry declares for the fields of
    ``DATA_DECLARED_FIELDS`` (field -> value): under preset fast (``fast``, e.g. a time series' readout), and for a
    closed-form fit whatever the preset (``closed_form``, e.g. symbol sequences' input_init)."""

    n_train: int
    fitted: Mapping[str, Any] = field(default_factory=dict)
    target_column: str | None = None
    fast: Mapping[str, Any] = field(default_factory=dict)
    closed_form: Mapping[str, Any] = field(default_factory=dict)


# --data runs: the default budget in epochs of the training split, within these bounds (steps), and the
# number of evaluations it is cut into (eval_every = steps / EVALUATIONS, at least MIN_EVAL_EVERY steps).
BUDGET_EPOCHS, MIN_STEPS, MAX_STEPS, EVALUATIONS, MIN_EVAL_EVERY = 30, 200, 2000, 20, 10
# The fields a --data run fits to its data when not given (None until its data is built).
DATA_BUDGET_FIELDS = ("steps", "eval_every", "readout")
# The fields whose value a --data run's tokeniser chooses from the training examples when not given (None until
# it is fitted; a field of another modality than the run's stays None: it is not used); cf_difference: true where
# the series tokeniser cut the first difference (given, or declared for a closed-form fit by the series' entry).
DATA_FITTED_FIELDS = ("series_patch", "series_stride", "sequence_max_len", "cf_difference")
# The field a --data table's reader chooses when not given (fpt.data.base.choose_targets); None where the data's
# layout fixes its target (it is not used).
DATA_READ_FIELDS = ("target_column",)
# The fields that wait for the task's declaration when not given.
TASK_FIELDS = ("lr", "patience", "target")
# The closed-form fit's design fields: None until a closed-form run resolves them (fpt.feature_map.ClosedForm).
CLOSED_FORM_FIELDS = ("cf_members", "cf_blocks", "cf_poolings", "cf_standardise", "cf_inputs", "cf_head",
                      "cf_scales", "cf_hop", "cf_difference", "cf_gains", "cf_series_norm")
# A --data run's input_init, when not given, waits for its data and its fit (None until then): what its modality
# declares for a closed-form fit (fpt.data.modalities: symbol sequences' embedding tables), else the preset's.
DATA_INIT_FIELDS = ("input_init",)
# The fields whose value a modality's entry may declare (DataFacts.fast, DataFacts.closed_form): they wait for the data.
DATA_DECLARED_FIELDS = ("readout", "input_init", "cf_difference", "cf_gains", "cf_hop", "cf_series_norm")
# Those of the closed-form design among them: left unset, a --data run takes its modality's declaration when it is
# resolved with its data (a closed-form fit's), else ClosedForm's default (fpt.feature_map.resolve).
DATA_DESIGN_FIELDS = ("cf_gains", "cf_hop", "cf_series_norm")
# Those a tokeniser reads (a series' first difference is cut beside it): declared where the data is tokenised
# (``tokenised``; fpt.tasks.user_data), then resolved as what the tokeniser did (DATA_FITTED_FIELDS). The data
# options carry the run's fit, not its preset: an entry declares these for a fit only (a test checks it).
TOKENISED_FIELDS = tuple(name for name in DATA_DECLARED_FIELDS if name in DATA_FITTED_FIELDS)
# Every field that may hold None for "not given; the task's, the data's or the fit's" before resolution.
UNSET = (*DATA_BUDGET_FIELDS, *DATA_FITTED_FIELDS, *DATA_READ_FIELDS, *TASK_FIELDS, *CLOSED_FORM_FIELDS,
         *DATA_INIT_FIELDS)


def preset_values(preset: str, task: str) -> dict[str, Any]:
    """The values ``preset`` gives ``task``'s fields that a config leaves out ({} for paper: the field defaults)."""
    if preset == "paper":
        return {}
    return {**FAST, **FAST_TASKS.get(task, {})}


def preset_of(given: Mapping[str, Any], where: str = "config") -> str:
    """The preset of ``given``: its own, else the default one, except for a config that records the fields every
    config.yaml written before presets existed records (it ran the paper's)."""
    if "preset" in given:
        preset = given["preset"]
    else:
        preset = SAVED_PRESET if all(name in given for name in PRE_PRESET_FIELDS) else DEFAULT_PRESET
    if preset not in PRESETS:
        raise ConfigError(f"{where}: field 'preset'={show(preset)} must be one of {', '.join(PRESETS)} (fast: the "
                          "fastest validated settings; paper: the paper's)")
    return preset


def resolve(given: Mapping[str, Any], task: TaskDefaults | None = None, data: DataFacts | None = None,
            where: str = "config") -> RunConfig:
    """The run's config: ``given`` (field -> value, already of the field's type), then the preset, the task's
    declaration and the data's facts for what it leaves out (see the module's docstring).

    Without ``task`` the task fields left out stay None; without ``data`` a --data run's budget fields left out
    stay None (both: resolved later, by ``fpt.pipeline.assemble``). A None given for one of those fields counts as
    left out. Resolving a resolved config again changes nothing."""
    preset = preset_of(given, where)  # before the Nones go: an old config.yaml is known by the fields it records
    given = {k: v for k, v in given.items() if not (v is None and k in UNSET)}
    task_name = DATA_TASK if given.get("data") is not None else str(given.get("task", RunConfig.task))
    values = {**given, "preset": preset}
    deferred = set(DATA_INIT_FIELDS) if task_name == DATA_TASK else set()  # they wait for the data and the fit
    for name, value in preset_values(preset, task_name).items():
        if name in deferred:
            continue
        if name == "task_options":
            mine = given.get("task_options")
            values[name] = {**value, **mine} if isinstance(mine, dict) else mine if mine is not None else dict(value)
        elif name not in given:
            values[name] = value
    if task_name == DATA_TASK:
        for name in (*DATA_BUDGET_FIELDS, *DATA_INIT_FIELDS):
            values.setdefault(name, None)
    if task is not None:
        for name in TASK_FIELDS:
            if values.get(name) is None:
                values[name] = getattr(task, name)
    if data is not None and task_name == DATA_TASK:
        values.update(data_budget(values, data))
        values.update({k: v for k, v in data.fitted.items() if k in DATA_FITTED_FIELDS and values.get(k) is None})
        if values.get("target_column") is None:
            values["target_column"] = data.target_column
        if values.get("input_init") is None:
            values["input_init"] = declared(values, data, "input_init",
                                            preset_values(preset, task_name).get("input_init", _default("input_init")))
        for name in DATA_DESIGN_FIELDS:
            if values.get(name) is None:
                values[name] = declared(values, data, name, None)
    return RunConfig(**values)


def declared(values: Mapping[str, Any], data: DataFacts, name: str, otherwise: Any) -> Any:
    """What ``data``'s modality declares for field ``name`` (one of ``DATA_DECLARED_FIELDS``) under ``values``' fit
    and preset: a closed-form fit's value first, then preset fast's; ``otherwise`` where it declares neither."""
    if values.get("fit", _default("fit")) == "closed-form" and name in data.closed_form:
        return data.closed_form[name]
    if values.get("preset") == "fast" and name in data.fast:
        return data.fast[name]
    return otherwise


def tokenised(values: Mapping[str, Any], data: DataFacts) -> dict[str, Any]:
    """The fields of ``TOKENISED_FIELDS`` that ``values`` (a --data run's data options: its fit) leaves unset (None),
    as ``data``'s modality declares them (``declared``; None where it declares nothing): what the tokeniser reads."""
    return {name: declared(values, data, name, None) for name in TOKENISED_FIELDS if values.get(name) is None}


def data_budget(values: Mapping[str, Any], data: DataFacts) -> dict[str, Any]:
    """A --data run's budget fields that ``values`` leaves unset (None), fitted to its data: to a training split of
    ``n_train`` examples steps = 30 epochs within [200, 2000], eval_every = steps / 20 (at least 10), and the
    readout its modality declares (``declared``: a time series' under preset fast), else the field default.
    Patience (the data task's: 10 evaluations) then stops a run that has stopped improving."""
    out: dict[str, Any] = {}
    if values.get("readout") is None:
        out["readout"] = declared(values, data, "readout", _default("readout"))
    steps = values.get("steps")
    if steps is None:
        batch_size = values.get("batch_size", _default("batch_size"))
        steps = out["steps"] = min(MAX_STEPS, max(MIN_STEPS, math.ceil(BUDGET_EPOCHS * data.n_train / batch_size)))
    if values.get("eval_every") is None:
        out["eval_every"] = min(steps, max(MIN_EVAL_EVERY, steps // EVALUATIONS))
    return out


def unresolved(config: RunConfig) -> dict[str, Any]:
    """``config``'s fields less those still waiting for the task or the data (None): what to ``resolve`` again."""
    return {k: v for k, v in config.to_dict().items() if not (v is None and k in UNSET)}


def _default(name: str) -> Any:
    return RunConfig.__dataclass_fields__[name].default


def default_text(name: str) -> str:
    """What field ``name`` takes when not given, in words (the command line's help)."""
    if name == "preset":
        return DEFAULT_PRESET
    if name in TASK_FIELDS:
        return f"the task's; {getattr(TaskDefaults(), name)} where it declares none"
    default = {} if name == "task_options" else _default(name)
    preset = {k for values in (FAST, *FAST_TASKS.values()) for k in values} | {"precision"}
    text = f"the preset's; paper: {default}" if name in preset else str(default)
    return f"{text}; --data: fitted to the training examples" if name in DATA_BUDGET_FIELDS else text


# Fields only gradient training reads: a command line that sets one asks for gradient training (fit=gradient),
# unless it also gives --fit.
GRADIENT_FIELDS = ("steps", "lr", "eval_every", "patience", "batch_size", "grad_accum", "clip", "eval_subset",
                   "tie_break", "freeze", "lora_rank", "lora_alpha", "readout", "dropout", "compile")


def train_fit(given: Mapping[str, Any], other_mode: bool = False) -> str | None:
    """``auto`` where a training call chooses the fit (fpt.select.choose_fit) for the fields it was ``given``: fit=auto,
    or no fit and nothing that asks for something else: ``other_mode`` (--refit, --choose, --resume), a ``fold`` (one
    fold's run) or a field of ``GRADIENT_FIELDS``. None: the config's own (its preset's own data only: see
    ``train_config``). ``fpt train``, ``fpt.build``, ``fpt.train_run`` given fields, and the scikit-learn estimators
    all ask here."""
    if given.get("fit") == "auto":
        return "auto"
    if "fit" in given or other_mode or given.get("fold") is not None:
        return None
    return None if set(GRADIENT_FIELDS) & set(given) else "auto"


def train_config(config: RunConfig, given: Mapping[str, Any], other_mode: bool = False) -> RunConfig:
    """``config`` as a training call runs it: own data under preset fast chooses its fit (``train_fit``) unless told."""
    if train_fit(given, other_mode) == "auto" and config.data is not None and config.preset == "fast":
        return dataclasses.replace(config, fit="auto")
    return config
