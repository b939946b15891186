"""claims.md: the verdicts of fpt.presentation.claims written out, with the rules at the top and the critics'
controls at the end; written only where fpt may write (never through a symlink, never over a file fpt did not write
without --force)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fpt.errors import ConfigError
from fpt.presentation.claims import (
    ALPHA,
    CLAIMS,
    COMPUTED,
    CONTROLS,
    MIN_SEEDS,
    NOT_RUN,
    PROVENANCE,
    TUNED,
    Check,
    _not_evidence,
    cell_evidence,
    evaluate,
    greater,
    make_gate,
    read_table,
)
from fpt.presentation.verdict_provenance import Gate, describe

HEADER = "# The paper's claims against our results"
RULE = (f"**Rules.** (1) *Evidence.* A cell is evidence only with n >= {MIN_SEEDS} reported seeds, no seed collapsed "
        "(last validation losses at the uniform-output level ln C) or at chance (selected validation accuracy within "
        "the one-sided 95% Wilson bound of the majority class's accuracy), its test figure at the selected step above "
        "the majority class by that bound for the test set's size, and (steps to converge) a step count that neither "
        "hit the step cap (a lower bound) nor shows no learning; any other cell makes its column inconclusive. "
        f"(2) *Two cells.* Welch's t-test (unequal variances; the t distribution at the Welch-Satterthwaite degrees "
        f"of freedom, never a normal quantile) on the seeds' mean, std and n, two-sided at alpha {ALPHA}: a > b "
        "holds when the difference is significant and positive, does not hold when significant and negative. A "
        "relation of several pairs (a > b > c, a > each of b and c) holds in a column only when every pair does "
        "(its p: the largest pair's), and fails when a pair goes the other way (its p: the smallest such, times the "
        "number of pairs). 'Close' (within a tolerance T) is the two one-sided tests at Welch's df: it holds when "
        "|difference| + t(0.95, df) x standard error < T, and does not hold when the difference lies beyond T by "
        "the same test. 'Recovers half the gap' compares the cell with the midpoint of the other two. "
        f"(3) *Several columns.* The columns where the paper shows the relation are one family: each gets its p, and "
        f"Holm's step-down correction at family-wise alpha {ALPHA} decides which are significant (a column that is "
        "not evidence, or not run, counts with p = 1). A check holds when at least one column is significant for the relation "
        "and none against it, and names the columns that carry it; it does not hold in the mirror case; otherwise "
        "it is inconclusive. Checks without a test between cells (training fails: a count of seeds; a computed "
        "ratio within bounds; a task solved) hold only when they hold in every column read. A claim with several "
        "checks holds only when every check holds, and does not hold when any does not. "
        "(4) *Tuned lr.* The seed that chose a cell's lr on its validation figure (seed 0) is not a reported seed: a "
        "tuned cell reports seeds 1-3 (a store run with seeds 0-2 gives n = 2, said in the cell's line). "
        "(5) *Table 7.* FPT's train figure is an evaluation of the training set (a fixed seeded subset of up to "
        "2,000 examples, fpt.train.TRAIN_EVALUATION_EXAMPLES) at the validation-selected step, dropout off and no "
        "augmentation (summary.json's train_eval_accuracy); the last window's minibatch accuracy is not read. "
        "(6) *Table 13.* 'Training attention diverges' reads the paper's columns only: MNIST and CIFAR-10 "
        "(their quick stand-ins). (7) *Provenance.* A verdict reads only cells whose runs all come from the declared "
        "commit (the results folder's COMMIT file or `fpt claims --commit`) with a clean tree, or whose per-seed "
        "figures an exact rerun at that commit reproduced (REPRODUCED.csv); without a declared commit, only cells "
        "that all come from one commit with a clean tree. Any other cell makes the verdict 'inconclusive "
        "(provenance)' and the verdict names it.")



def controls(root: Path, gate: Gate | None = None) -> list[str]:
    """Per table and column: FPT against each control row, at fixed lr and tuned lr (Welch on the one column; the
    provenance gate as the verdicts)."""
    gate = gate or Gate()
    lines = []
    for table, control in CONTROLS:
        for suffix, label in (("", "fixed lr"), (TUNED, "tuned lr")):
            rows = read_table(root, table + suffix)
            by: dict[str, dict[str, dict[str, str]]] = {}
            for r in rows:
                if r.get("metric") not in COMPUTED:
                    by.setdefault(r["column"], {})[r["row"]] = r
            for column, cells in by.items():
                if "fpt" not in cells or control not in cells or cells[control].get("status") in ("skipped", "quoted"):
                    continue
                check = Check(table + suffix, ("fpt", control), "decreasing")
                evidence = {r: cell_evidence(cells[r], Path(root) / (table + suffix)) for r in check.rows}
                why = _not_evidence(check, cells, evidence)
                problems = gate.problems([((table + suffix, r, column), evidence[r], cells[r].get("values") or "")
                                          for r in check.rows])
                # as in check_column: a cell with no finished run of its own (a tuned cell whose grid run at the
                # paper's lr exists on disk) is not run, whatever runs it names
                not_run = [r for r in check.rows if cells[r].get("status") not in ("done", "partial")]
                if not_run:
                    text = f"{', '.join(not_run)} not run"
                elif evidence[control]["stat"] is None and not evidence[control]["bound"]:
                    text = f"{control} not run"
                elif why:
                    text = f"inconclusive ({why})"
                elif problems:
                    text = f"inconclusive (provenance: {'; '.join(problems)})"
                else:
                    result = greater(evidence["fpt"]["stat"], evidence[control]["stat"])
                    text = ("the language model helps: FPT above the control" if result else
                            "the control does better than FPT" if result is False else
                            "the control does as well (no significant difference)")
                figure = {r: _fmt([None if evidence[r]["stat"] is None else round(evidence[r]["stat"].mean, 2)],
                                  [(None if evidence[r]["stat"] is None else round(evidence[r]["stat"].std, 2),
                                    evidence[r]["n"])]) for r in check.rows}
                lines.append(f"- {table}{suffix} / {column} ({label}): FPT {figure['fpt']} vs {control} "
                             f"{figure[control]}: {text}")
    return lines


def _fmt(values: list, spread: list | None = None) -> str:
    """Figures joined by ' / '; with ``spread`` [(std, n)], a figure over several seeds gets '± std (n=N)'."""
    spread = spread or [(None, 0)] * len(values)
    return " / ".join("–" if v is None else f"{v:g}" + (f" ± {std:g} (n={n})" if n > 1 and std is not None else
                                                        f" (n={n})" if n == 1 else "")
                      for v, (std, n) in zip(values, spread, strict=True))


def claims_text(root: Path, commit: str | None = None) -> str:
    """claims.md's text from ROOT/tableN/results.csv (and ROOT/tableN-tuned/)."""
    root = Path(root)
    gate = make_gate(root, commit)
    scales = {r.get("scale") for t in {c.table for cl in CLAIMS for c in cl.checks} for r in read_table(root, t)}
    items = evaluate(root, commit)
    gated = sum(PROVENANCE in (item["verdict"], item["tuned_verdict"]) for item in items)
    lines = [HEADER, "",
             f"Computed by `fpt claims --results {root.as_posix()}`{f' --commit {commit}' if commit else ''} from the "
             f"tables' results.csv (scale: {', '.join(sorted(s for s in scales if s)) or 'no results'}). A column "
             "counts only where the paper's own figures show the relation. Each verdict is given under the paper's "
             "fixed learning rate (tableN/) and under a learning rate chosen per cell on seed 0's validation figure "
             "from the table's lr_grid (tableN-tuned/, `fpt reproduce --tuned-lr`; 'not run' where those runs do not "
             "exist). At the quick scale the columns are stand-in tasks: the verdicts are about the qualitative "
             "pattern only.", "",
             RULE, "",
             f"**Provenance.** {describe(gate)}. {gated} of {len(items)} claims have a verdict that is inconclusive "
             "(provenance): the verdict names the cells and says what it was before the gate.", ""]
    for item in items:
        claim = item["claim"]
        lines += [f"## {claim.text}", "",
                  f"**Verdict (paper's fixed lr): {item['verdict']}** ({item['why']}).", "",
                  f"**Verdict (lr tuned per cell): {item['tuned_verdict']}** ({item['tuned_why']}).", "",
                  f"Provenance: {item['provenance']}.", ""]
        if claim.note:
            lines += [f"Note: {claim.note}.", ""]
        for check in item["checks"]:
            tuned = check["tuned"]
            lines += [f"- {check['check'].describe()}: {check['verdict']} ({check['why']}); tuned lr: "
                      f"{tuned['verdict']}" + (f" ({tuned['why']})" if tuned["verdict"] != NOT_RUN else "")]
            rows = "/".join(check["check"].rows)
            for variant in (check, tuned):
                for c in variant["columns"]:
                    reason = f" ({c['reason']})" if c["reason"] else ""
                    lines.append(f"  - {variant['table']}/{c['column']}: paper {rows} = {_fmt(c['paper'])}; ours = "
                                 f"{_fmt(c['ours'], c.get('spread'))}: {c['outcome']}{reason}")
        lines.append("")
    lines += ["## The critics' controls: where the language model helps", "",
              "FPT against the whole pretrained model fine-tuned (Rothermel et al. 2021) and against no language "
              "model: the same input layer and head around one trained transformer block (Tan et al. 2024). Same "
              "rules as the verdicts, on one column at a time (no correction over columns).", ""]
    lines += controls(root, gate) or ["- not run: no control rows in the results yet"]
    lines.append("")
    return "\n".join(lines)


def written_by_fpt(path: Path) -> bool:
    """Whether ``path`` is a claims.md fpt wrote (its header and its 'Computed by `fpt claims' line)."""
    try:
        with open(path, encoding="utf-8") as f:
            head = [f.readline() for _ in range(3)]
    except (OSError, UnicodeDecodeError):
        return False
    return head[0].rstrip("\n") == HEADER and head[2].startswith("Computed by `fpt claims")


def check_out(path: Path, force: bool = False) -> None:
    """Refuse to write ``path`` through a symlink, or over a file fpt did not write unless ``force``: checked
    before any work (the guarded-writer check of issue 39, for claims.md)."""
    if path.is_symlink():
        raise ConfigError(f"{path} is a symbolic link: fpt claims does not write through it; remove the link or give "
                          "--out another path")
    if path.exists() and not path.is_file():
        raise ConfigError(f"{path} exists and is not a file; give --out a file path")
    if path.exists() and not force and not written_by_fpt(path):
        raise ConfigError(f"{path} exists and was not written by fpt claims; give --force to replace it, or choose "
                          "another --out")


def write_claims(root: Path, path: Path | None = None, commit: str | None = None, force: bool = False) -> Path:
    """Write claims.md (default ROOT/claims.md); never through a symlink, nor over a file fpt did not write without
    ``force``. The file is replaced in one step (a temporary file beside it, then os.replace)."""
    root = Path(root)
    path = Path(path) if path else root / "claims.md"
    check_out(path, force)
    text = claims_text(root, commit)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".claims.", suffix=".md", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        check_out(path, force)  # a link or a foreign file that appeared meanwhile is still not replaced
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
