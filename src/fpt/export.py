"""``fpt export RUN DIR``: a trained model as a self-contained directory, in Hugging Face's layout.

    DIR/config.json         the RunConfig, the body (id, init, fingerprint of its frozen weights, and the
                            Hugging Face config of its architecture), the input spec and schema, the
                            saved preprocessing (tokeniser, class map, target scaler), the outputs, the
                            checkpoint used, the run's metrics, the command that trained it, the weights'
                            sha256
    DIR/fpt_model.safetensors  every tensor of the model: the trained ones and the frozen body's, so that
                            loading needs no hub, cache or body directory (model.safetensors before)
    DIR/README.md           the model card: what it is, its input schema and outputs, metrics, command
    DIR/body/               the body in the Hugging Face layout it came from (AutoModel.from_pretrained)
    DIR/model.onnx          with --onnx: the same forward pass for ONNX runtimes (checked with
                            onnxruntime when installed)

``fpt.load(DIR)`` rebuilds the architecture offline (named bodies from their known sizes, any other
from the Hugging Face config recorded here), loads every tensor, and checks the frozen body's
fingerprint against the recorded one before predicting. The directory is written beside its
destination and renamed into place, so a kill never leaves half an export.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import logging
import math
import os
import re
import shutil
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import torch

from fpt.errors import CheckpointError, ConfigError, DependencyError, option
from fpt.feature_map import CLOSED_FORM, scores_only

if TYPE_CHECKING:
    from fpt.predictor import Predictor


class Run(Protocol):
    """What an export reads of a run directory (``fpt.run.Run`` is one; fpt.run calls this module, never the
    other way round)."""

    path: Path

    def load(self, which: str | None = None, device: str | None = None) -> Predictor: ...

    def config(self) -> Any: ...

    def summary(self) -> dict[str, Any] | None: ...

FORMAT = "fpt-export-1"
# Not model.safetensors: a transformers class given DIR (BertModel.from_pretrained(DIR)) would load that file's
# fpt-named tensors as nothing and build a random model without an error; without it, it fails loudly (no weights
# file). DIR/body holds the body under transformers' own names.
CONFIG_FILE, WEIGHTS, CARD, ONNX_FILE = "config.json", "fpt_model.safetensors", "README.md", "model.onnx"
LEGACY_WEIGHTS = "model.safetensors"  # the weights file of exports written before (still read)
ONNX_RAW_FILE = "model_raw.onnx"  # --onnx, where the tokeniser is fixed arithmetic: raw features in (fpt.onnx_raw)
BODY_DIR = "body"  # the frozen body in its Hugging Face layout: transformers.AutoModel.from_pretrained(DIR / "body")
# all that fpt export writes in DIR
EXPORT_FILES = {CONFIG_FILE, WEIGHTS, LEGACY_WEIGHTS, CARD, ONNX_FILE, ONNX_FILE + ".data", ONNX_RAW_FILE,
                ONNX_RAW_FILE + ".data", BODY_DIR}
ONNX_SINGLE_FILE_BYTES = 1_500_000_000  # larger models keep their ONNX weights in model.onnx.data (protobuf's 2 GB)
ONNX_TOLERANCE = 1e-3  # max |logit difference| between ONNX Runtime and PyTorch accepted at export
# Summary keys copied into config.json and the model card (besides each objective's val_/test_ metrics).
SUMMARY_KEYS = ("val_set", "test_set", "selected_step", "steps", "steps_to_target", "stopped", "target", "eval",
                "baselines", "wall_seconds", "device")


def is_export(path: str | Path) -> bool:
    """Whether ``path`` is a directory written by ``fpt export`` (a plain save_pretrained() folder is not)."""
    file = Path(path) / CONFIG_FILE
    if not file.is_file() or not weights_file(Path(path)).is_file():
        return False
    try:
        return json.loads(file.read_text()).get("fpt_format") == FORMAT
    except (OSError, ValueError, AttributeError, UnicodeDecodeError):
        return False


def weights_file(path: Path) -> Path:
    """An export's weights: fpt_model.safetensors, or model.safetensors in an export written before."""
    return path / WEIGHTS if (path / WEIGHTS).is_file() or not (path / LEGACY_WEIGHTS).is_file() else \
        path / LEGACY_WEIGHTS


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


# ---------------------------------------------------------------------------------------------- writing


def export_run(run: Run, out: Path, which: str | None = None, onnx: bool = False, force: bool = False) -> Path:
    """Write the export of ``run`` (``which`` checkpoint: best/ by default) to ``out``; returns ``out``."""
    from safetensors.torch import save_file

    from fpt.bodies.hub import recorded_configs, recorded_models
    from fpt.outputs import check_dir
    from fpt.rundir import io_error, write_error

    # the export's folder as its caller named it: fpt export's DIR (cli.export), Run.export's out
    flag, overwrite = option("out"), option("force")
    out = check_dir(out, flag=flag)  # a link out of its folder, a file, part of a run: refused before any work
    if out.resolve() == run.path.resolve() or run.path.resolve() in out.resolve().parents:
        raise ConfigError(f"{out}: an export cannot be written inside its run directory {run.where}; choose another "
                          f"{flag}")
    if out.resolve() in run.path.resolve().parents:  # replacing DIR would delete the run inside it
        raise ConfigError(f"{out}: it contains the run directory {run.where}, which replacing it would delete; choose "
                          f"another {flag}")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (force and is_export(out)))):
        what = "a file" if not out.is_dir() else "a directory holding files" if not is_export(out) else "an export"
        fix = f"; give {overwrite} to replace it" if is_export(out) else \
            f"; fpt replaces only an export it wrote (even with {overwrite}): choose a new or empty {flag}"
        raise FileExistsError(f"{out} is {what}{fix}")
    if out.is_dir() and is_export(out):
        extra = sorted(p.name for p in out.iterdir() if p.name not in EXPORT_FILES)
        if extra:  # --force replaces the export's own files, never files someone added beside them
            raise CheckpointError(f"{out} is an export that also holds {', '.join(extra[:5])}, which fpt did not write; "
                                  f"move them out or choose another {flag}")
    clear_export_debris(out)
    if onnx:
        _onnx_modules()  # fail before the (slow) model build when the exporter is not installed
    # the body's Hugging Face configs, to rebuild it offline later, and its model, saved as body/
    with recorded_configs() as hf_configs, recorded_models() as hf_models:
        pred = run.load(which, device="cpu")
    config = run.config()
    summary = run.summary() or {}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        # Clones: safetensors refuses tensors sharing memory, and the state must outlive the model's buffers.
        state = {name: t.detach().cpu().contiguous().clone() for name, t in pred.model.state_dict().items()}
        save_file(state, str(tmp / WEIGHTS), metadata={"format": "pt", "fpt_format": FORMAT,
                                                       "body_fingerprint": pred.body_fingerprint})
        _default_mode(tmp / WEIGHTS)
        doc = _config_doc(run, pred, config, summary, hf_configs, state, _sha256(tmp / WEIGHTS))
        doc["body"]["hf_layout"] = write_hf_body(pred, hf_models, tmp / BODY_DIR)
        doc = portable(doc, local_paths(run, config, hf_configs))
        if onnx:
            doc["onnx"] = write_onnx(pred, tmp / ONNX_FILE)
            # joined to model.onnx where its weights are inside it (no side file to carry into a second graph)
            tokens_graph = None if doc["onnx"].get("external_data") else tmp / ONNX_FILE
            doc["onnx"]["raw"] = write_raw_onnx(pred, tmp / ONNX_RAW_FILE, tokens_graph)
        (tmp / CONFIG_FILE).write_text(json.dumps(doc, indent=1, default=str) + "\n")
        (tmp / CARD).write_text(model_card(doc, out))
        _replace(tmp, out)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        failed = io_error(exc) if not isinstance(exc, OSError) else None  # an OSError names its file as it is
        if failed is not None:  # safetensors' own error of a full disk was 'this is a bug in fpt'
            raise write_error(out, failed, "nothing of the export was written (one already there is unchanged)") \
                from None
        raise
    return out


def _default_mode(path: Path) -> None:
    """safetensors writes its file 0600; an export is shared like any file the user writes (0666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def clear_export_debris(out: Path) -> None:
    """Remove ``.DIR.tmp-PID`` / ``.DIR.old-PID`` copies of this export that a killed ``fpt export`` left beside it."""
    from fpt.rundir import clear_debris

    clear_debris(Path(out).parent, re.compile(rf"^\.{re.escape(Path(out).name)}\.(?:tmp|old)-(\d+)$"), keep_own=True)


def _replace(tmp: Path, out: Path) -> None:
    """Move the finished export into place: an existing (empty, or --force) one is swapped out, then deleted."""
    from fpt.rundir import fsync_dir

    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.rename(out, old)
    os.rename(tmp, out)
    fsync_dir(out.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _config_doc(run: Run, pred: Predictor, config: Any, summary: dict[str, Any], hf_configs: dict[str, Any],
                state: dict[str, torch.Tensor], sha: str) -> dict[str, Any]:
    from fpt.config import train_command
    from fpt.freeze import group_of_parameters, parameter_totals
    from fpt.version import __version__

    objective = pred.objective
    schema = pred.schema
    trained = {n for n, p in pred.model.named_parameters() if p.requires_grad}
    groups = group_of_parameters(pred.model)
    totals = parameter_totals(pred.model)
    metrics = {f"{split}_{name}": summary.get(f"{split}_{name}") for name in objective.reported
               for split in ("val", "test") if f"{split}_{name}" in summary}
    metrics.update({k: summary[k] for k in SUMMARY_KEYS if k in summary})
    return {
        "fpt_format": FORMAT,
        "model_type": "fpt",  # Hugging Face's convention: what reads this config
        "architectures": ["FPT"],
        "fpt_version": __version__,
        "torch_version": torch.__version__,
        "run_config": config.to_dict(),
        "body": {"id": config.body, "init": config.init, "fingerprint": pred.body_fingerprint,
                 "weights": f"included in {WEIGHTS}", "hf_configs": hf_configs},
        "input": {"spec": asdict(pred.spec), "lengths": pred.lengths, "task": config.task,
                  "task_options": config.task_options, "schema": schema.describe() if schema else None,
                  "info": pred.info},
        "objective": objective.to_json(),
        "preprocessing": pred.preprocessing.to_json() if pred.preprocessing is not None else None,
        "outputs": {"names": pred.output_names, "classes": pred.classes},
        "checkpoint": pred.checkpoint,
        "metrics": metrics,
        "source_run": str(run.where),
        "command": train_command(config.to_dict(), str(run.where)),
        "weights": {"file": WEIGHTS, "sha256": sha, "tensors": len(state),
                    "parameters": totals.total, "trained_parameters": totals.trainable,
                    "trained": sorted(trained), "trained_groups": sorted({groups[n] for n in trained})},
    }


# ---------------------------------------------------------------------------------------------- portable


def local_paths(run: Run, config: Any, hf_configs: dict[str, Any]) -> dict[str, str]:
    """This machine's paths an export would otherwise record (the run, the training data, a local body directory,
    the body's source, e.g. a package's folder in the venv) -> what config.json says instead: the name alone, and
    for a body directory ``./NAME`` (never a registered body's name, so loading cannot mistake it for one)."""
    found: dict[str, str] = {}

    def add(text: Any, name: str | None = None) -> None:
        if not isinstance(text, str) or not text or "\n" in text:
            return
        path = Path(text).expanduser()
        if not (path.is_absolute() or path.exists()):
            return  # a registered body name, a hub id, in-memory data
        for form in {text, str(path), str(path.resolve())}:
            found[form] = name or path.resolve().name
    add(str(run.where))
    add(config.data)
    for source in hf_configs:
        add(source, f"./{Path(source).resolve().name}")
    add(config.body, f"./{Path(config.body).expanduser().resolve().name}")
    if config.init.startswith("checkpoint:"):  # a pretrained body's folder (saved absolute): RUN/body, not the path
        saved = Path(config.init.removeprefix("checkpoint:")).expanduser()
        add(str(saved), f"./{saved.parent.name}/{saved.name}")
    return found


def portable(doc: Any, paths: dict[str, str]) -> Any:
    """``doc`` with every local path in ``paths`` (in any string or key) replaced by its portable name; the
    longest first, so a file inside a replaced folder is replaced whole."""
    order = sorted(paths, key=len, reverse=True)

    def fix(text: str) -> str:
        if text in paths:
            return paths[text]
        for path in order:
            if path in text:
                text = text.replace(path, paths[path].removeprefix("./"))
        return text

    if isinstance(doc, dict):
        return {fix(k) if isinstance(k, str) else k: portable(v, paths) for k, v in doc.items()}
    if isinstance(doc, list):
        return [portable(v, paths) for v in doc]
    return fix(doc) if isinstance(doc, str) else doc


def write_hf_body(pred: Predictor, hf_models: dict[str, Any], out: Path) -> dict[str, Any]:
    """The frozen body in the Hugging Face layout it came from (``save_pretrained``), when the body is one
    Hugging Face model whose every frozen weight fpt ran is that model's own tensor; what config.json records."""
    model = pred.model
    frozen = {name: p for name, p in model.body.named_parameters() if not p.requires_grad}
    if len(hf_models) != 1:
        return {"written": False, "why": f"the body is built from {len(hf_models)} Hugging Face models, not one"}
    (source, hf), = hf_models.items()
    own = {p.data_ptr() for p in hf.parameters()} | {b.data_ptr() for b in hf.buffers()}
    if any("lora" in name for name in frozen):
        return {"written": False, "why": "LoRA adapters are not part of the Hugging Face body"}
    hf_tensors = [t.detach() for t in (*hf.parameters(), *hf.buffers())]
    missing = [name for name, p in frozen.items() if p.data_ptr() not in own and not _leading_rows_of(p, hf_tensors)]
    if missing:
        return {"written": False, "why": f"fpt's frozen weights {missing[:3]} are not the Hugging Face model's own"}
    hf.save_pretrained(str(out))
    for file in out.iterdir():
        _default_mode(file)
    trained = sorted({name.split(".")[0] for name, p in model.body.named_parameters() if p.requires_grad})
    return {"written": True, "dir": BODY_DIR, "class": type(hf).__name__, "frozen_tensors": len(frozen),
            "note": "every frozen weight is fpt's; the trained layer norms are the run's; fpt's positions (its own "
                    f"copy of the first rows, trained or not) and input layer and head are in {WEIGHTS} only",
            "trained_groups_in_fpt": trained}


def _leading_rows_of(tensor: torch.Tensor, hf_tensors: list[torch.Tensor]) -> bool:
    """Whether ``tensor`` is, value for value, the first rows of one of the Hugging Face model's tensors: fpt's own
    copy of a position table (``trimmed_positions``) left frozen, as a closed-form fit leaves it, is the model's own
    table as far as fpt reads it, so the body written beside it is still the one fpt ran."""
    t = tensor.detach()
    return t.dim() >= 1 and any(h.dim() == t.dim() and h.shape[1:] == t.shape[1:] and h.shape[0] >= t.shape[0]
                                and torch.equal(h[: t.shape[0]], t) for h in hf_tensors)


# ---------------------------------------------------------------------------------------------- ONNX


def _onnx_modules() -> None:
    missing = []
    for name in ("onnx", "onnxscript"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise DependencyError(f"{option('onnx')} needs {' and '.join(missing)} (torch.onnx's exporter): pip install "
                              "'fpt[export]' (onnx, onnxscript, onnxruntime)")


def onnx_example(pred: Predictor, n: int = 2, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Example inputs of the exported graph: tokens (and lengths, for padded inputs)."""
    spec = pred.spec
    gen = torch.Generator().manual_seed(seed)
    if spec.token_dim is not None:
        x = torch.randn(n, spec.seq_len, spec.token_dim, generator=gen)
    else:
        x = torch.randint(0, spec.vocab_size, (n, spec.seq_len), generator=gen)
    if not pred.lengths:
        return (x,)
    lengths = torch.randint(spec.num_outputs, spec.seq_len + 1, (n,), generator=gen)
    lengths[0] = spec.seq_len
    return x, lengths


def _export_graph(model: torch.nn.Module, example: tuple[torch.Tensor, ...], path: Path, names: list[str],
                  outputs: list[str], metadata: dict[str, str] | None = None) -> bool:
    """torch.onnx.export (dynamo) with the batch size free, ``metadata`` (if given) in its metadata_props; whether the
    weights went to a side file."""
    batch = torch.export.Dim("batch", min=1)
    dynamic = tuple({0: batch} for _ in example)
    # One file unless protobuf's 2 GB limit forces the weights into a side file (model.onnx.data).
    external = sum(t.numel() * t.element_size() for t in model.state_dict().values()) > ONNX_SINGLE_FILE_BYTES
    buf = io.StringIO()
    loggers = [logging.getLogger(name) for name in ("torch.onnx", "torch.export", "torch._export", "onnxscript")]
    levels = [log.level for log in loggers]
    try:
        # The exporter narrates each stage on stdout and logs about internals: keep the command's output clean.
        with contextlib.redirect_stdout(buf), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for log in loggers:
                log.setLevel(logging.ERROR)
            # optimize (onnxscript's constant folding and clean-up, torch's default) costs ~1.3 of ~5 CPU-s per call
            # on a 2-layer body, and ONNX Runtime runs the unoptimised graph as fast (it optimises at session
            # creation); but without it the file has 3x the nodes (334 against 108: Constant, Shape, CastLike) and
            # ONNX Runtime warns at every session it cannot fold the CastLike nodes. The graph is what a user ships.
            program = torch.onnx.export(model, example, None, input_names=names, output_names=outputs,
                                        dynamic_shapes=dynamic, dynamo=True, external_data=external, optimize=True)
            if metadata is not None:  # set before the one save: loading and saving the file again rewrote its weights
                program.model.metadata_props.clear()
                program.model.metadata_props.update(metadata)
                program.model.doc_string = _onnx_doc_string(metadata)
            program.save(str(path), external_data=external)
    except Exception as exc:  # the exporter raises many types; name the cause on one line
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"{path}: torch.onnx.export failed ({type(exc).__name__}: {reason[:300]}); export "
                              f"without {option('onnx')}") from None
    finally:
        for log, level in zip(loggers, levels, strict=True):
            log.setLevel(level)
    return external


def write_raw_onnx(pred: Predictor, path: Path, tokens_graph: Path | None = None) -> dict[str, Any]:
    """``model_raw.onnx``: the graph from raw features (the tokeniser's arithmetic inside, fpt.onnx_raw) to the
    logits, where the tokeniser is fixed arithmetic; checked against fpt's own tokeniser and model with
    onnxruntime. Returns what config.json records (``written`` False and why, otherwise).

    ``tokens_graph``: model.onnx, written already (its weights inside it): the tokeniser alone is traced and joined to
    it, where tracing the whole model again took as long as model.onnx's own export (11 of 13 CPU-s of a two-member
    closed-form series run); without it the model is traced with the tokeniser."""
    import numpy as np

    from fpt.onnx_raw import RawModel, RawTokens, raw_tokeniser

    if pred.preprocessing is None:
        return {"written": False, "why": "a paper task's inputs are its tokens (model.onnx)"}
    tokens, shape, takes = raw_tokeniser(pred.preprocessing, pred.info)
    if tokens is None:
        return {"written": False, "why": takes}
    gen = torch.Generator().manual_seed(0)
    # at the training data's own scale (each column's or channel's mean and std): near 0, an offset's rounding in
    # float32 (a timestamp's mean) never showed
    raw = torch.randn(3, *shape, generator=gen) * tokens.std + tokens.mean
    raw[0].view(-1)[1] = float("nan")  # a missing value
    if tokens_graph is not None:
        _joined_graph(RawTokens(tokens, pred.lengths).eval(), raw, tokens_graph, path, pred.lengths)
    else:
        model = (pred.model if pred.device.type == "cpu" else copy.deepcopy(pred.model).cpu()).eval()
        _export_graph(RawModel(tokens, model, pred.lengths).eval(), (raw,), path, ["features"], ["logits"])
    record: dict[str, Any] = {"file": path.name, "inputs": ["features"], "takes": takes, "outputs": ["logits"]}
    try:
        import onnxruntime as ort
    except ImportError:
        return {**record, "written": True, "checked_with": "not run (onnxruntime not installed)"}
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {"features": raw.numpy()})[0]
    # fpt's own path: the same raw inputs through the modality's check and the saved tokeniser, then the model
    x, lengths, _ = pred.tokens(raw.numpy())
    # in fp32, as the graph was exported: a run whose precision resolved to bf16 (preset fast on a CPU with native
    # bf16) would otherwise be compared at bf16's rounding (GunPoint's closed-form logits: 0.011 apart)
    want = pred.forward(x, lengths, precision="fp32").numpy()
    diff = float(np.abs(got - want).max())
    if not diff <= ONNX_TOLERANCE:
        raise CheckpointError(f"{path}: ONNX Runtime's logits from raw features differ from fpt's by {diff:.3g}; "
                              f"export without {option('onnx')}")
    return {**record, "written": True, "checked_with": f"onnxruntime {ort.__version__}", "max_abs_diff": diff}


def _joined_graph(tokens: torch.nn.Module, raw: torch.Tensor, model_path: Path, path: Path, lengths: bool) -> None:
    """``tokens`` (raw features -> model.onnx's inputs) traced alone and joined to model.onnx at ``path``: one graph
    from ``features`` to ``logits``, the model's nodes as model.onnx has them; model.onnx's metadata (which says its
    graph takes tokens) is not carried over."""
    import onnx

    inputs = ["x", "lengths"][: 1 + int(lengths)]
    _export_graph(tokens, (raw,), path, ["features"], [f"tokens_{name}" for name in inputs])
    # the tokeniser's names apart from the model's (merge_models refuses a name in both), its input kept: 'features'
    front = onnx.compose.add_prefix(onnx.load(str(path)), "raw_", rename_inputs=False)
    joined = onnx.compose.merge_models(front, onnx.load(str(model_path)),
                                       io_map=[(f"raw_tokens_{name}", name) for name in inputs])
    del joined.metadata_props[:]
    joined.doc_string = ""
    onnx.save(joined, str(path))


def write_onnx(pred: Predictor, path: Path) -> dict[str, Any]:
    """Export the model's forward pass (batch size free) and check it; returns what config.json records."""
    _onnx_modules()
    # On the CPU, without moving the predictor's own model off its device.
    model = (pred.model if pred.device.type == "cpu" else copy.deepcopy(pred.model).cpu()).eval()
    example = onnx_example(pred)
    names = ["x", "lengths"][: len(example)]
    metadata = onnx_metadata(pred)
    external = _export_graph(model, example, path, names, ["logits"], metadata)
    record: dict[str, Any] = {"file": path.name, "inputs": names, "outputs": ["logits"], "metadata": sorted(metadata),
                              **({"external_data": path.name + ".data"} if external else {}),
                              "shapes": {"x": ["batch", *list(example[0].shape[1:])], "logits":
                                         ["batch", pred.spec.num_outputs * pred.spec.per_token, pred.spec.num_classes]}}
    record.update(check_onnx(pred, path, model))
    return record


def onnx_metadata(pred: Predictor) -> dict[str, str]:
    """What an ONNX runtime user needs beside the graph, as the model's metadata_props (strings; JSON where
    structured): the fpt export format, the task and objective, the class names, and the tokeniser contract:
    the graph takes tokens, which fpt's saved tokeniser makes from raw rows (config.json beside the file
    holds it), not the raw rows themselves."""
    from fpt.version import __version__

    spec = pred.spec
    token = f"(batch, T <= {spec.seq_len}, {spec.token_dim}) float32 vectors" if spec.token_dim is not None else \
        f"(batch, T <= {spec.seq_len}) int64 token ids in 0..{spec.vocab_size - 1}"
    modality = pred.preprocessing.modality if pred.preprocessing is not None else None
    made_by = (f"fpt's saved {modality} tokeniser (preprocessing.tokeniser in config.json; fpt.load(DIR).tokens(rows) "
               "applies it)") if modality else f"the {pred.config.task} task's own encoding (its raw tokens)"
    contract = {
        "inputs": {"x": f"tokens {token}, made from raw inputs by {made_by}; not raw rows, images or series"},
        "logits": f"(batch, {spec.num_outputs * spec.per_token}, {spec.num_classes}) float32",
        "decode": ("per output, argmax over the last axis indexes class_names[output]" if pred.is_classifier else
                   "per output, logits[..., 0] * scale + mean (objective) is the value in the target's units"),
    }
    if pred.lengths:
        contract["inputs"]["lengths"] = "(batch,) int64: real tokens per example (the rest of x is padding)"
    meta = {
        "fpt_format": FORMAT,
        "fpt_version": __version__,
        "task": pred.config.task,
        "body": pred.config.body,
        "objective": json.dumps(pred.objective.to_json()),
        "modality": modality or "tokens",
        "output_names": json.dumps(pred.output_names),
        "class_names": json.dumps(pred.classes, default=str),  # null for regression and paper tasks
        "tokeniser_contract": json.dumps(contract),
    }
    return meta


def _onnx_doc_string(metadata: dict[str, str]) -> str:
    return (f"fpt {metadata['task']} model ({json.loads(metadata['objective'])['objective']}): takes tokens, not raw "
            "inputs; see metadata_props tokeniser_contract")


def check_onnx(pred: Predictor, path: Path, model: torch.nn.Module | None = None) -> dict[str, Any]:
    """Run the ONNX file on fresh inputs with onnxruntime (if installed) and compare with PyTorch (``model``:
    the predictor's model on the CPU)."""
    try:
        import onnxruntime as ort
    except ImportError:
        import onnx

        onnx.checker.check_model(str(path))
        return {"checked_with": f"onnx.checker {onnx.__version__} (onnxruntime not installed: not run)"}
    example = onnx_example(pred, n=3, seed=1)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {i.name: t.numpy() for i, t in zip(session.get_inputs(), example, strict=True)}
    got = torch.from_numpy(session.run(None, feeds)[0])
    model = model if model is not None else copy.deepcopy(pred.model).cpu().eval()
    with torch.inference_mode():
        want = model(*example).float()
    diff = float((got - want).abs().max())
    if not diff <= ONNX_TOLERANCE:
        raise CheckpointError(f"{path}: ONNX Runtime's logits differ from PyTorch's by {diff:.3g} (more than "
                              f"{ONNX_TOLERANCE}); export without {option('onnx')}")
    return {"checked_with": f"onnxruntime {ort.__version__}", "max_abs_diff": diff}


# ---------------------------------------------------------------------------------------------- model card


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return "–" if value is None else str(value)


def _what_was_fitted(doc: dict[str, Any]) -> str:
    """The model card's account of what the run fitted around the frozen body: a closed-form fit trains nothing by
    gradient (its input layers stay as drawn), gradient training the groups its freeze policy names."""
    cfg, weights = doc["run_config"], doc["weights"]
    counts = f"{weights['trained_parameters']:,} of {weights['parameters']:,} parameters"
    if cfg.get("fit") == CLOSED_FORM:
        return (f"read as a feature map through {cfg.get('cf_members')} seeded input layers left as drawn, with an "
                f"output head fitted in closed form (`{cfg.get('cf_head')}`; no gradient step; {counts} saved with "
                "the run)")
    groups = weights.get("trained_groups")  # exports written before recorded only the tensors' names
    trained = f"its {', '.join(groups)} groups trained" if groups else "trained groups"
    return f"with {trained} (freeze policy `{cfg['freeze']}`: {counts} trained)"


def model_card(doc: dict[str, Any], out: Path) -> str:
    """README.md: what the model is, its inputs and outputs, metrics from summary.json, the command."""
    cfg, body, inp = doc["run_config"], doc["body"], doc["input"]
    schema = inp.get("schema")
    body_name = Path(body["id"]).name if Path(body["id"]).is_absolute() else body["id"]
    what = schema["modality"] if schema else cfg["task"]
    objective = doc["objective"]["objective"]
    tags = ["fpt", "frozen-pretrained-transformer", what, objective]
    lines = ["---", "library_name: fpt", "tags:", *[f"- {t}" for t in tags], "---", "",
             f"# FPT: {what} {objective} on a frozen `{body_name}`", "",
             f"A frozen pretrained transformer (Lu et al., 2021, *Pretrained Transformers As Universal Computation "
             f"Engines*): the body `{body['id']}` (init `{body['init']}`, frozen weights fingerprint "
             f"`{body['fingerprint']}`) {_what_was_fitted(doc)}. Exported by fpt {doc['fpt_version']} from "
             f"`{doc['source_run']}`, checkpoint `{doc['checkpoint'].get('slot')}` "
             f"(step {_fmt(doc['checkpoint'].get('step'))}).", "",
             "## Use", "", "```bash", f"fpt predict {out.name} inputs.csv --out predictions.csv", "```", "",
             "```python", "import fpt", "", f"model = fpt.load({out.name!r})  # offline: every weight is in "
             f"{WEIGHTS}", "model.predict(inputs)        # labels (values for regression)",
             *(["model.predict_proba(inputs)  # class probabilities"] if objective == "classification"
               and not scores_only(cfg.get("fit"), cfg.get("cf_head")) else []),
             "```", "", "## Inputs", ""]
    lines += _schema_lines(doc)
    lines += ["", "## Outputs", ""]
    classes = doc["outputs"]["classes"]
    if objective == "regression":
        pre = doc.get("preprocessing") or {}
        lines.append(f"Values of {', '.join(f'`{n}`' for n in doc['outputs']['names'])} in their own units (trained "
                     f"on targets standardised with the training mean {doc['objective']['mean']} and standard "
                     f"deviation {doc['objective']['scale']}, inverted on output)." if pre else "Values.")
    elif classes:
        for name, labels in zip(doc["outputs"]["names"], classes, strict=True):
            shown = ", ".join(f"`{c}`" for c in labels[:30]) + (" ..." if len(labels) > 30 else "")
            lines.append(f"- `{name}`: {len(labels)} classes: {shown}")
    else:
        spec = inp["spec"]
        lines.append(f"{spec['num_outputs'] * spec['per_token']} prediction(s) per example, each one of "
                     f"{spec['num_classes']} classes (class indices).")
    metrics = doc["metrics"]
    lines += ["", "## Metrics", ""]
    scores = {k: v for k, v in metrics.items() if k.startswith(("val_", "test_")) and k not in ("val_set", "test_set")}
    if scores:
        if cfg.get("fit") == CLOSED_FORM:  # no step was selected: the head was fitted once, in closed form
            lines += [f"From the run's `summary.json`: the closed-form fit's validation figure (its own estimate: "
                      f"`closed_form.val_figure` there says which), the test set (`{metrics.get('test_set', 'test')}`) "
                      "evaluated once.", "", "| metric | value |", "|---|---|"]
        else:
            lines += [f"From the run's `summary.json`: the checkpoint selected on the validation set "
                      f"(`{metrics.get('val_set', 'val')}`), the test set (`{metrics.get('test_set', 'test')}`) "
                      "evaluated once, at that step.", "", "| metric | value |", "|---|---|"]
        lines += [f"| `{key}` | {_fmt(value)} |" for key, value in scores.items()]
    else:
        lines.append("None: the run had not finished (no `summary.json`).")
    lines += ["", "## Training", "", "```bash", doc["command"], "```", ""]
    facts = [f"{name} {_fmt(metrics[key])}" for key, name in (("selected_step", "selected step"), ("steps", "steps"),
                                                              ("stopped", "stopped by"), ("wall_seconds", "seconds"),
                                                              ("device", "device")) if key in metrics]
    if facts:
        lines += [f"Training: {', '.join(facts)}.", ""]
    lines += ["The full configuration is `run_config` in `config.json`.", "", "## Files", "",
              f"- `{CONFIG_FILE}`: configuration, body, input spec and schema, preprocessing (tokeniser, class map, "
              "target scaler), metrics",
              f"- `{WEIGHTS}`: every tensor of the model, the frozen body's included (sha256 in `{CONFIG_FILE}`)"]
    hf = doc["body"].get("hf_layout") or {}
    if hf.get("written"):
        lines.append(f"- `{BODY_DIR}/`: the body in the Hugging Face layout it came from "
                     f"(`transformers.AutoModel.from_pretrained(\"{out.name}/{BODY_DIR}\")`: a {hf['class']})")
    if "onnx" in doc:
        o = doc["onnx"]
        lines.append(f"- `{ONNX_FILE}`: inputs {', '.join(o['inputs'])} (shapes {o['shapes']['x']}), output logits "
                     f"{o['shapes']['logits']}; checked with {o['checked_with']}")
        raw = o.get("raw") or {}
        if raw.get("written"):
            lines.append(f"- `{ONNX_RAW_FILE}`: raw features in (`features`: {raw['takes']}), logits out")
    return "\n".join(lines) + "\n"


def _schema_lines(doc: dict[str, Any]) -> list[str]:
    schema, spec = doc["input"].get("schema"), doc["input"]["spec"]
    if schema is None:
        shape = f"(n, T <= {spec['seq_len']}, {spec['token_dim']}) floats" if spec.get("token_dim") else \
            f"(n, T <= {spec['seq_len']}) token ids < {spec['vocab_size']}"
        return [f"The raw tokens of task `{doc['input']['task']}` (options {doc['input']['task_options'] or 'default'}): "
                f"{shape}" + (", with per-example lengths" if doc["input"]["lengths"] else "") + "."]
    from fpt.data.modalities import modality

    return modality(schema["modality"]).card(schema)


# ---------------------------------------------------------------------------------------------- loading

FIX_EXPORT = "; export the run again with fpt export"
_LAYER_FIELDS = ("num_hidden_layers", "n_layer", "num_layers", "num_decoder_layers", "n_layers")
# Hugging Face config fields that size what is allocated (widths, heads, positions): none can exceed the weights' count
_SIZE_FIELDS = (*_LAYER_FIELDS, "hidden_size", "n_embd", "d_model", "intermediate_size", "n_inner", "d_ff", "d_kv",
                "num_attention_heads", "n_head", "num_heads", "max_position_embeddings", "n_positions")


def _check_doc(doc: Any, file: Path) -> None:
    """config.json's parts that loading reads, of the types ``fpt export`` writes (one line naming the field)."""
    from transformers import CONFIG_MAPPING

    from fpt.rundir import stored

    body, given = doc.get("body"), doc.get("input")
    if not isinstance(body, dict) or not isinstance(body.get("fingerprint"), str):
        raise CheckpointError(f"{file}: field 'body.fingerprint' is missing or not text (the frozen body's check); "
                              "export the run again with fpt export")
    configs = body.get("hf_configs") or {}
    if not isinstance(configs, dict) or not all(isinstance(c, dict) for c in configs.values()):
        raise CheckpointError(f"{file}: field 'body.hf_configs' is not a mapping of Hugging Face configs{FIX_EXPORT}")
    for source, hf in configs.items():
        kind = hf.get("model_type")
        if kind is not None and kind not in CONFIG_MAPPING:
            raise CheckpointError(f"{file}: field 'body.hf_configs[{source!r}].model_type' is {str(kind)[:40]!r}, which "
                                  f"this transformers does not know{FIX_EXPORT}")
    if not isinstance(given, dict) or not isinstance(given.get("spec"), dict):
        raise CheckpointError(f"{file}: field 'input.spec' is missing or not a mapping{FIX_EXPORT}")
    stored.task_info(given.get("info"), file, "input.info")
    if not isinstance(given.get("lengths", False), bool):
        raise CheckpointError(f"{file}: field 'input.lengths' is not true/false{FIX_EXPORT}")


def _check_sizes(doc: dict[str, Any], file: Path, weights: Path) -> None:
    """The recorded sizes (input.spec, the body's layer counts and widths) against the weights file's own shapes, read
    from its header: a token_dim of 10^9 or 10^6 layers would otherwise be allocated before any check could fail."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(weights), "pt") as f:
            shapes = {k: f.get_slice(k).get_shape() for k in f.keys()}
    except (SafetensorError, OSError) as exc:
        raise CheckpointError(f"{weights} is not a readable safetensors file ({exc}); export the run again") from None
    total = sum(math.prod(s) for s in shapes.values())
    blocks = {int(m.group(1)) for k in shapes if (m := re.match(r"body\.blocks\.(\d+)\.", k))}
    sizes = [(f"input.spec.{k}", v) for k, v in doc["input"]["spec"].items()]
    for source, hf in (doc["body"].get("hf_configs") or {}).items():
        sizes += [(f"body.hf_configs[{source!r}].{k}", v) for k, v in hf.items() if k in _SIZE_FIELDS]
        for k in _LAYER_FIELDS:
            v = hf.get(k)
            if isinstance(v, int) and not isinstance(v, bool) and blocks and v > len(blocks):
                raise CheckpointError(f"{file}: field 'body.hf_configs[{source!r}].{k}' is {v}, but {WEIGHTS} holds "
                                      f"{len(blocks)} block(s); restore the file or export the run again")
    for name, v in sizes:
        if v is None or isinstance(v, bool):
            continue
        if not isinstance(v, int) or v < 0 or v > max(total, 1):
            raise CheckpointError(f"{file}: field {name!r} is {str(v)[:40]}, which {WEIGHTS} ({total:,} values) cannot "
                                  "hold; restore the file or export the run again")


def load_export(path: str | Path, device: str | None = None) -> Predictor:
    """The model of an export directory, rebuilt offline and checked (weights' sha256, body fingerprint)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from fpt.bodies.hub import replayed_configs
    from fpt.checkpoint import fingerprint
    from fpt.config import given_device, loaded
    from fpt.model import InputSpec
    from fpt.objectives import from_json as objective_from_json
    from fpt.predictor import rebuild
    from fpt.tasks.user_data import Preprocessing

    path = Path(path)
    file = path / CONFIG_FILE
    # the caller's device, refused as the caller's (below, the export's config.json would take the blame)
    device = "auto" if device is None else given_device(device)
    try:
        doc = json.loads(file.read_text())
        if doc.get("fpt_format") != FORMAT:
            raise ValueError(f"fpt_format {doc.get('fpt_format')!r}, expected {FORMAT!r}")
        _check_doc(doc, file)
        # an export moves between machines: it loads where it is (auto) unless told, not where it trained
        config = loaded(doc["run_config"], str(file), device)
        spec = InputSpec(**doc["input"]["spec"])
        prep = Preprocessing.from_json(doc["preprocessing"]) if doc.get("preprocessing") else None
        # a --data model's objective as its preprocessing has it (targets of different class counts: each one's)
        objective = prep.objective if prep is not None else objective_from_json(doc["objective"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{file}: not a readable fpt export config ({type(exc).__name__}: {exc}); export the "
                              "run again with fpt export") from None
    weights = weights_file(path)
    expected = (doc.get("weights") or {}).get("sha256") if isinstance(doc.get("weights"), dict) else None
    if not isinstance(expected, str) or not expected:  # without it nothing checks the weights: never skip silently
        raise CheckpointError(f"{file}: no weights.sha256 to check {WEIGHTS} against; export the run again with "
                              "fpt export")
    if _sha256(weights) != expected:
        raise CheckpointError(f"{weights} does not match its sha256 in {CONFIG_FILE}: truncated or corrupt; export "
                              "the run again")
    _check_sizes(doc, file, weights)  # before anything is allocated from the recorded sizes

    def load(model: torch.nn.Module) -> tuple[str, dict[str, Any]]:
        try:
            state = load_file(str(weights))
        except (SafetensorError, OSError) as exc:
            raise CheckpointError(f"{weights} is not a readable safetensors file ({exc}); export the run again") from None
        try:
            model.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            raise CheckpointError(f"{weights}: its tensors do not fit the rebuilt {config.body!r} model "
                                  f"({str(exc).splitlines()[1].strip() if len(str(exc).splitlines()) > 1 else exc}); "
                                  "export it again with this fpt version") from None
        body_fp = fingerprint(model)
        if body_fp != doc["body"]["fingerprint"]:
            raise CheckpointError(f"{weights}: the frozen body rebuilt from it has fingerprint {body_fp!r}, but the "
                                  f"export records {doc['body']['fingerprint']!r}: the file or this fpt's body code "
                                  "differs")
        return body_fp, dict(doc.get("checkpoint") or {})

    # The architecture only: init=random builds every named body offline, the recorded Hugging Face configs
    # stand in for the hub, cache or local directory of any other; every tensor is then loaded from the file.
    with replayed_configs(doc["body"].get("hf_configs") or {}):
        return rebuild(config, spec, load, objective=objective, preprocessing=prep, lengths=bool(doc["input"]["lengths"]),
                       info=dict(doc["input"].get("info") or {}), source=str(path), init="random")

__all__ = ["BODY_DIR", "CARD", "CONFIG_FILE", "FORMAT", "LEGACY_WEIGHTS", "ONNX_FILE", "ONNX_RAW_FILE", "WEIGHTS", "check_onnx",
           "export_run", "is_export", "load_export", "local_paths", "model_card", "onnx_metadata", "portable",
           "weights_file", "write_hf_body", "write_onnx", "write_raw_onnx"]
