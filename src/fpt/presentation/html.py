"""``fpt report``: one self-contained HTML page (and a Markdown twin) for runs and reproduced tables.

Accepts a single run directory, a directory of runs, or the output of ``fpt reproduce``
(results.csv + report.md; the runs are those results.csv names, usually in a shared store
``runs/<key>/`` beside or inside the table's folder). Sections: the paper-vs-ours
table, a summary of every run, learning curves per task, attention maps (existing ones,
or computed for the bit tasks, where they are cheap), parameter counts per group, the
commands and configs that reproduce each run, and library versions.

``fpt reproduce`` already writes report.md; this module keeps that text and replaces only
the part between its own markers, so running ``fpt report`` twice changes nothing twice.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shlex
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fpt.config import train_command
from fpt.errors import FptWarning
from fpt.presentation import document as doc
from fpt.presentation.curves import run_label
from fpt.rundir import CONFIG, LATEST, METRICS, find_runs, read_config, read_summary

BEGIN, END = "<!-- fpt report: begin -->", "<!-- fpt report: end -->"
FILES_DIR = "report_files"
ATTENTION_DIR = "attention"


@dataclass
class Options:
    attention: str = "auto"  # auto: compute for bit tasks when missing; existing: only show saved maps; never
    attention_examples: int = 16
    max_attention_runs: int = 16  # building bodies is the slow part; beyond this, only saved maps are shown
    device: str | None = "cpu"
    notes: list[str] = field(default_factory=list)


# --- what is in the directory -------------------------------------------------------------------

def kind_of(root: Path) -> str:
    from fpt.experiments.sweep import read_doc

    if read_doc(root) is not None:
        return "sweep"
    if (root / "results.csv").is_file():
        return "reproduce"
    if (root / CONFIG).is_file():
        return "run"
    return "runs"


def read_results(root: Path) -> list[dict[str, str]]:
    with open(root / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def reproduce_header(root: Path, results: list[dict[str, str]]) -> tuple[str, str]:
    """Title and command of a reproduced table, from the report.md that fpt reproduce wrote."""
    first = results[0] if results else {}
    title = f"{first.get('table', 'table')} ({first.get('scale', '')})"
    command = f"fpt reproduce {first.get('table', 'TABLE')} --scale {first.get('scale', 'quick')} --out {root}"
    md = root / "report.md"
    if md.is_file():
        lines = md.read_text().split(BEGIN)[0].splitlines()
        title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), title)
        command = next((ln.strip() for ln in lines if ln.startswith("    fpt ")), command)
    return title, command


# --- sections -----------------------------------------------------------------------------------

def paper_table(results: list[dict[str, str]]) -> doc.Table:
    """Rows x columns of the reproduced table, as report.md shows it: ours / paper (difference)."""
    from fpt.presentation.tables import grid

    header, body = grid(results, bold=False)
    return doc.Table(["ours / paper (difference)", *header[1:]], body)


def reproduce_runs(root: Path, results: list[dict[str, str]]) -> list[Path]:
    """The run directories results.csv names (relative to the table's folder; ';' between seeds)."""
    from fpt.rundir import is_run_dir

    runs = []
    for r in results:
        for rel in filter(None, (r.get("run_dir") or "").split(";")):
            path = Path(rel) if Path(rel).is_absolute() else root / rel
            if is_run_dir(path):
                runs.append(path)
    return list(dict.fromkeys(runs))


def _rel(path: Path, root: Path) -> str:
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:  # a run in a store beside the table: ../runs/KEY
        return Path(os.path.relpath(path.absolute(), Path(root).absolute())).as_posix()
    return rel if rel != "." else path.name


def runs_table(runs: list[Path], root: Path) -> doc.Table:
    rows = []
    for run in runs:
        s = read_summary(run) or {}
        rows.append([f"`{_rel(run, root)}`", run_label(read_config(run)), _pct(s.get("val_accuracy")),
                     _pct(s.get("test_accuracy")), _pct(s.get("test_accuracy_last")),
                     str(s.get("selected_step", "–")), str(s.get("steps", "running")),
                     str(s.get("steps_to_converge", "–")), str(s.get("stopped", "–")),
                     str(s.get("wall_seconds", "–")), str(s.get("device", "–"))])
    header = ["run", "task / body / init / freeze", "val acc % (selected)", "test acc % (selected)",
              "test acc % (last step)", "selected step", "steps", "steps to converge", "stopped", "wall s", "device"]
    return doc.Table(header, rows)


def baseline_blocks(runs: list[Path], root: Path) -> list[doc.Block]:
    """Per --data run with classic models / controls beside it (fpt.baselines): their table and the plain line."""
    from fpt.baselines import table_rows

    blocks: list[doc.Block] = []
    for run in runs:
        s = read_summary(run) or {}
        compared = s.get("baselines_models")
        if not compared:
            continue
        metric = "R²" if compared.get("metric") == "r2" else "accuracy %"
        show = (lambda v: "–" if v is None else f"{v:.3f}") if compared.get("metric") == "r2" else _pct
        rows = [[r["name"], r["kind"], show(r["val"]), show(r["test"]),
                 "–" if r["seconds"] is None else f"{r['seconds']:.1f}", str(r["chosen"])] for r in table_rows(s)]
        refit = (" then each model (fpt's included) refitted on train + validation before test, as fpt train "
                 "--refit does" if compared.get("protocol") == "refit" else "")
        blocks += [doc.Para(f"`{_rel(run, root)}`: the same train/validation/test split; every choice (step, "
                            f"hyper-parameters) made on validation only{';' + refit if refit else ''}."),
                   doc.Table(["model", "kind", f"val {metric}", f"test {metric}", "wall s", "chosen on validation"], rows),
                   *(doc.Para(f"Note: {n}") for n in compared.get("notes", [])),
                   doc.Para(compared.get("line", ""))]
    return blocks


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def curve_blocks(runs: list[Path]) -> list[doc.Block]:
    """One learning-curve figure per task: runs of the same task overlaid (FPT vs random, ...)."""
    from fpt.errors import RunError
    from fpt.presentation.curves import plot_curves

    by_task: dict[str, list[Path]] = {}
    fitted = []  # closed-form runs: one row at step 0, no curve to draw
    for run in runs:
        if (run / METRICS).is_file():
            config = read_config(run)
            if config.get("fit") == "closed-form":
                fitted.append(run)
                continue
            by_task.setdefault(str(config.get("task", "?")), []).append(run)
    blocks: list[doc.Block] = []
    if fitted:
        blocks.append(doc.Para(f"{', '.join(f'`{run.name}`' for run in fitted[:5])}{' ...' if len(fitted) > 5 else ''}: "
                               "fitted in closed form (no gradient step), so no learning curve; its figures are in the "
                               "tables above."))
    for task, task_runs in by_task.items():
        buf = io.BytesIO()
        try:
            plot_curves(task_runs, buf, f"{task}: solid = training, dashed = held-out")
        except RunError:
            continue  # no evaluations logged yet
        blocks.append(doc.Image(buf.getvalue(), f"curves-{_slug(task)}.png", f"Learning curves, {task} "
                                f"({len(task_runs)} run(s))"))
    return blocks


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def attention_blocks(runs: list[Path], root: Path, options: Options) -> list[doc.Block]:
    from fpt.analysis.attention import VIEWS
    from fpt.checkpoint import has_checkpoint

    computed = 0
    for run in runs:
        has_saved = any((run / ATTENTION_DIR).glob("*/score.json"))
        wanted = options.attention == "auto" and not has_saved and read_config(run).get("task") in VIEWS
        if wanted and has_checkpoint(run):
            if computed >= options.max_attention_runs:
                options.notes.append(f"attention not computed for {_rel(run, root)}: more than "
                                     f"{options.max_attention_runs} runs (use fpt attention)")
                continue
            computed += 1
            _compute_attention(run, root, options)
    scores, images = [], []
    for run in runs:
        for score_file in sorted((run / ATTENTION_DIR).glob("*/score.json")):
            d = json.loads(score_file.read_text())
            h = d.get("headline") or {}
            where = f"{_rel(run, root)}, {d.get('which', 'checkpoint')}, block {d.get('layer')}"
            ent = d.get("scores", {}).get("entropy", {})
            scores.append([f"`{_rel(run, root)}`", run_label(d), str(d.get("layer")), h.get("name", "–"),
                           _score(h.get("mean")), _score(h.get("uniform_baseline")),
                           " ".join(_score(v) for v in h.get("per_head", [])) or "–",
                           f"{_score(ent.get('mean'))} ({_score(ent.get('uniform_baseline'))})"])
            for png, what in (("mean.png", "mean over heads and examples"), ("example0.png", "one example"),
                              ("heads.png", "each head")):
                if (score_file.parent / png).is_file():
                    path = score_file.parent / png
                    images.append(doc.Image(path.read_bytes(), png, f"Attention, {where}: {what}", path,
                                            half=png != "heads.png"))
    if not scores:
        return [doc.Para("No attention maps: none saved (write them with `fpt attention RUN_DIR`) and none "
                         "computed (only for bit-xor/bit-memory runs with a checkpoint).")]
    header = ["run", "task / body / init / freeze", "block", "score", "mass on positions that matter",
              "uniform attention", "per head", "entropy, nats (uniform)"]
    what = {json.loads(f.read_text()).get("what") for r in runs for f in (r / ATTENTION_DIR).glob("*/score.json")}
    return [doc.Para("Scores: " + "; ".join(sorted(w for w in what if w)) + "."), doc.Table(header, scores), *images]


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _compute_attention(run: Path, root: Path, options: Options) -> None:
    from fpt.analysis.attention import analyse_run, default_out, write
    from fpt.errors import USER_ERRORS

    try:
        write(analyse_run(run, 0, options.attention_examples, LATEST, options.device),
              default_out(run, LATEST, 0))
    except (*USER_ERRORS, RuntimeError, OSError) as exc:  # one run's missing body must not sink the report
        options.notes.append(f"attention not computed for {_rel(run, root)}: {str(exc).splitlines()[0][:200]}")


GROUP_ORDER = ("input", "positions", "layernorm", "attention", "feedforward", "recurrent", "output")


def parameter_counts(config: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per group (trainable, total), counted on the meta device: the architecture, no weights."""
    from fpt.config import from_saved
    from fpt.pipeline import architecture_counts

    counts = architecture_counts(from_saved(config, where=CONFIG))
    return {g: (c.trainable, c.total) for g, c in counts.items()}


def _checkpoint_trainable(run: Path) -> int | None:
    """The trained parameters a run's latest checkpoint holds (when its model cannot be rebuilt)."""
    from safetensors import safe_open

    from fpt import checkpoint

    if not checkpoint.has_checkpoint(run):
        return None
    try:
        file = checkpoint.find(run, checkpoint.LATEST) / checkpoint.TRAINABLE
    except checkpoint.CheckpointError:
        return None
    with safe_open(str(file), "pt") as f:  # safe_open is not a dict: keys() is its API
        return sum(math.prod(f.get_slice(key).get_shape()) for key in f.keys())


def counts_table(runs: list[Path], root: Path) -> doc.Table:
    cache: dict[str, dict[str, tuple[int, int]] | str] = {}
    rows = []
    for run in runs:
        config = read_config(run)
        key = json.dumps({k: config.get(k) for k in ("task", "task_options", "body", "layers", "freeze")},
                         sort_keys=True)
        if key not in cache:
            try:
                with warnings.catch_warnings():  # the run's data is read again to rebuild it: its notes were said
                    warnings.simplefilter("ignore", FptWarning)
                    cache[key] = parameter_counts(config)
            except Exception as exc:  # any failure (missing dataset, uncached hub config): fall back to the file
                cache[key] = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        counts = cache[key]
        if isinstance(counts, str):
            trained = _checkpoint_trainable(run)
            rows.append([f"`{_rel(run, root)}`", *["–"] * len(GROUP_ORDER),
                         f"{trained:,}" if trained is not None else "–", "–", f"not rebuilt: {counts}"])
            continue
        cells = [f"{t:,} / {n:,}" if n else "–" for t, n in (counts.get(g, (0, 0)) for g in GROUP_ORDER)]
        trainable, total = sum(t for t, _ in counts.values()), sum(n for _, n in counts.values())
        rows.append([f"`{_rel(run, root)}`", *cells, f"{trainable:,}", f"{total:,}", f"{100 * trainable / total:.3f}%"])
    return doc.Table(["run", *GROUP_ORDER, "trained", "total", "share"], rows)


def command_blocks(runs: list[Path], root: Path, reproduce_command: str | None) -> list[doc.Block]:
    blocks: list[doc.Block] = [doc.Para(f"This page: `fpt report {shlex.quote(str(root))}`.")]
    if reproduce_command:
        blocks.append(doc.Para(f"The table: `{reproduce_command}` (resumable; finished cells are reused)."))
    for run in runs:
        rel = _rel(run, root)
        text = (run / CONFIG).read_text()
        blocks.append(doc.Code(f"{train_command(read_config(run), str(run))}\n\n# {rel}/config.yaml\n{text}",
                               f"{rel}: command and config.yaml"))
    return blocks


def environment_blocks(runs: list[Path]) -> list[doc.Block]:
    from fpt.provenance import environment

    env = environment()
    rows = [[k, str(v)] for k, v in env.items()]
    # Runs record the versions they were trained with when fit() writes summary["environment"].
    trained = {json.dumps(s["environment"], indent=1, sort_keys=True)
               for s in map(read_summary, runs) if s and s.get("environment")}
    blocks: list[doc.Block] = [doc.Table(["component", "version (this report)"], rows)]
    if trained:
        blocks.append(doc.Code("\n".join(sorted(trained)), f"{len(trained)} environment(s) the runs were trained in"))
    return blocks


# --- assembling ---------------------------------------------------------------------------------

def build(root: Path, options: Options | None = None) -> tuple[str, list[doc.Block]]:
    """The report's title and blocks for ``root``."""
    options = options or Options()
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory: give a run directory, a folder of runs, or a "
                                "fpt reproduce output")
    kind = kind_of(root)
    results = read_results(root) if kind == "reproduce" else []
    sweep = None
    if kind == "sweep":
        from fpt.experiments.sweep import read_doc, report_table

        sweep = read_doc(root)
        results = [{"run_dir": t["run_dir"]} for t in sweep.get("trials", [])]  # only the runs it names
    found = find_runs(root) if sweep is None else []  # a sweep's store may hold other sweeps' runs
    runs = list(dict.fromkeys([*reproduce_runs(root, results), *found]))
    if not runs and not results:
        raise FileNotFoundError(f"{root} holds no run directory (config.yaml + metrics.jsonl) and no results.csv")
    title, command = reproduce_header(root, results) if kind in ("reproduce", "sweep") else (
        f"fpt run {root.name}" if kind == "run" else f"fpt runs in {root.name}", None)
    what = {"reproduce": "a reproduced paper table", "run": "one training run", "runs": f"{len(runs)} runs",
            "sweep": "a sweep"}[kind]
    blocks: list[doc.Block] = [doc.Para(f"Report on {what} in `{root}`, written {time.strftime('%Y-%m-%d %H:%M')}.")]
    if sweep is not None:
        header, body, why = report_table(sweep)
        blocks += [doc.Heading("Sweep results"), doc.Para(why), doc.Table(header, body)]
        results = []
    if results:
        metrics = sorted({r["metric"] for r in results})
        from fpt.presentation.tables import BELOW_MAJORITY, NOT_COMPARED, comparison_notes

        blocks += [doc.Heading("Paper vs ours"),
                   doc.Para(f"Each cell: ours / paper (ours − paper); metric {', '.join(metrics)} "
                            f"(accuracies in %); several seeds: mean ± std (n). {NOT_COMPARED}: not the paper's task, "
                            f"no difference printed. ⚠ {BELOW_MAJORITY}: not better than always answering the "
                            "most frequent class."), paper_table(results),
                   *(doc.Para(n) for n in comparison_notes(results))]
    if runs:
        blocks += [doc.Heading("Runs"), runs_table(runs, root)]
        compared = baseline_blocks(runs, root)
        if compared:
            blocks += [doc.Heading("Against what you would otherwise run"), *compared]
        blocks += [doc.Heading("Learning curves"), *curve_blocks(runs)]
        if options.attention != "never":
            blocks += [doc.Heading("Attention maps"), *attention_blocks(runs, root, options)]
        blocks += [doc.Heading("Parameters per group (trained / total)"),
                   doc.Para("Counted as the paper does: only the position rows a task uses; the body's word "
                            "embeddings are not part of an FPT."), counts_table(runs, root)]
    blocks += [doc.Heading("Commands and configs"), *command_blocks(runs, root, command),
               doc.Heading("Versions"), *environment_blocks(runs)]
    if options.notes:
        blocks += [doc.Heading("Notes"), *(doc.Para(n) for n in options.notes)]
    return title, blocks


def merge_markdown(existing: str | None, ours: str) -> str:
    """Our section replaces the previous one between the markers; everything else is kept."""
    section = f"{BEGIN}\n{ours.rstrip()}\n{END}\n"
    if not existing:
        return section
    if BEGIN in existing and END in existing:
        head, rest = existing.split(BEGIN, 1)
        return head + section + rest.split(END, 1)[1].lstrip("\n")
    return existing.rstrip("\n") + "\n\n" + section


def check_outputs(root: Path, force: bool = False) -> tuple[Path, Path]:
    """DIR/report.html and DIR/report.md, refused before any work where fpt would replace a file it did not write
    (report.md keeps a user's text: only a link out of DIR or a run's file is refused there)."""
    from fpt.outputs import check_file

    root = Path(root)
    html_path, md_path = root / "report.html", root / "report.md"
    check_file(html_path, force=force, flag="report", fpt_wrote=_our_html)
    check_file(md_path, force=True, flag="report")
    return html_path, md_path


def _our_html(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(600)
    except OSError:
        return False
    return doc.GENERATOR in head or head.startswith(doc.OLD_HTML_START)


def write(root: Path, options: Options | None = None, force: bool = False) -> tuple[Path, Path]:
    """DIR/report.html (self-contained) and DIR/report.md (fpt reproduce's text kept)."""
    from fpt import rundir

    root = Path(root)
    html_path, md_path = check_outputs(root, force)
    title, blocks = build(root, options)
    rundir.write_text(html_path, doc.to_html(title, blocks))
    ours = doc.to_markdown(title, blocks, root, root / FILES_DIR)
    existing = md_path.read_text() if md_path.is_file() else None
    if existing and merge_markdown(existing, "").replace(f"{BEGIN}\n\n{END}", "").strip():
        ours = ours.split("\n", 1)[1]  # the text we keep (fpt reproduce's) already has a title
    rundir.write_text(md_path, merge_markdown(existing, ours))
    return html_path, md_path


def write_sweep_pages(out: Path, spec: Any, rows: list[dict[str, Any]], cmd: str, html: bool = True) -> None:
    """A sweep's OUT/report.md (its title and command, above what ``fpt report`` adds) and report.html."""
    import sys

    from fpt import rundir

    title = f"Sweep {spec.name}: {len(rows)} config(s) x {len(spec.seeds)} seed(s), ranked by {spec.metric} ({spec.mode})"
    md = out / "report.md"
    kept = md.read_text().split(BEGIN, 1)[1] if md.is_file() and BEGIN in md.read_text() else ""
    rundir.write_text(md, f"# {title}\n\nProduced by (resumable; finished trials are reused):\n\n    {cmd}\n\n"
                          + (BEGIN + kept if kept else ""))
    if html:
        try:
            write(out, Options(attention="existing"))
        except Exception as exc:  # noqa: BLE001 - the results are written; the page can be made later
            print(f"fpt sweep: report.html not written ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                  f"results.csv and results.json are; try fpt report {out}", file=sys.stderr)
