"""The run directory's one owner: every file name (``names``), every reader and writer of those files
(``files``), the typed training state (``state``), and the two safety rules every write keeps (``atomic``:
one writer at a time, no half-written files). ``fpt.checkpoint`` writes the inside of a checkpoint slot;
``fpt.run.Run`` is the object over a directory. ``fpt train --out DIR`` writes::

    DIR/config.yaml      the resolved RunConfig                        write_config / read_config
    DIR/metrics.jsonl    one row per evaluation                        append_metrics / read_metrics
    DIR/summary.json     the final scores, when training ends          write_summary / read_summary
    DIR/data.json        --data runs: tokeniser, class map, scaler     write_data / read_data
    DIR/data_fingerprint.json  --data runs: the data's content hash    write_data_fingerprint / read_data_fingerprint
    DIR/selection.json   --choose: what was compared and what won      write_selection / read_selection
    DIR/selection/       --refit: the run that chose the step count
    DIR/checkpoint/      the latest trained parameters (for --resume)  fpt.checkpoint
    DIR/best/            the validation-selected trained parameters    fpt.checkpoint
    DIR/body/            fpt pretrain / a Table 9 pretraining run: the whole trained body
    DIR/run.lock         the writer lock while a process writes it     lock

A seed ensemble's directory holds ``ensemble.json`` (write_ensemble / read_ensemble) and its members'
runs in ``members/seedS``. The training state a checkpoint saves for ``--resume`` is ``TrainState``.
"""

from __future__ import annotations

from pathlib import Path

from fpt.errors import CheckpointError, RunDirBusyError, option
from fpt.rundir.atomic import (
    append_line,
    clear_debris,
    fsync_dir,
    holder,
    holds_lock,
    io_error,
    lock,
    no_space,
    tmp_name,
    write_bytes,
    write_error,
    write_text,
    write_with,
)
from fpt.rundir.files import (
    append_metrics,
    checkpoint_paths,
    find_runs,
    has_body,
    is_ensemble,
    is_run_dir,
    is_started_run,
    not_a_run,
    read_config,
    read_data,
    read_data_fingerprint,
    read_ensemble,
    read_metrics,
    read_metrics_so_far,
    read_selection,
    read_summary,
    record_selection,
    start_clean,
    summary_json,
    truncate_metrics,
    write_config,
    write_data,
    write_data_fingerprint,
    write_ensemble,
    write_selection,
    write_summary,
    written_by_fpt,
)
from fpt.rundir.names import (
    BASELINES_PENDING,
    BEST,
    BODY_DIR,
    BODY_FILE,
    BODY_META,
    CONFIG,
    CONTROLS,
    DATA,
    DATA_FINGERPRINT,
    ENSEMBLE,
    LATEST,
    LOCK_FILE,
    MEMBERS,
    METRICS,
    OPTIMIZER,
    POINTER,
    RNG,
    SELECTION_FILE,
    SELECTION_RUN,
    SLOTS,
    STATE,
    SUMMARY,
    TRAINABLE,
)
from fpt.rundir.state import TrainState


def already_a_run(out: Path | str) -> str:
    """Why a new run may not start in ``out``, which holds one, and the two ways on, as the surface in force names them
    (fpt.errors.option): ``--resume DIR`` or another ``--out`` to the command line, ``resume=True`` or another ``out``
    to fpt.fit and fpt.train_run."""
    return f"{out} already holds a run; continue it with {option('resume', str(out))} or choose another {option('out')}"


__all__ = ["BASELINES_PENDING", "BEST", "already_a_run", "BODY_DIR", "BODY_FILE", "BODY_META", "CONFIG", "CONTROLS", "DATA",
           "DATA_FINGERPRINT", "ENSEMBLE", "LATEST", "LOCK_FILE", "MEMBERS", "METRICS", "OPTIMIZER", "POINTER", "RNG",
           "SELECTION_FILE", "SELECTION_RUN", "SLOTS", "STATE", "SUMMARY", "TRAINABLE", "CheckpointError", "RunDirBusyError",
           "TrainState", "append_line", "append_metrics", "checkpoint_paths", "clear_debris", "find_runs",
           "fsync_dir", "has_body", "holder", "holds_lock", "is_ensemble", "is_run_dir", "is_started_run", "lock",
           "io_error", "no_space", "not_a_run", "read_config", "read_data", "read_data_fingerprint", "read_ensemble",
           "read_metrics", "read_metrics_so_far", "read_selection", "read_summary", "record_selection",
           "start_clean", "summary_json", "tmp_name", "truncate_metrics", "write_bytes", "write_config",
           "write_data", "write_data_fingerprint", "write_ensemble", "write_error", "write_selection",
           "write_summary", "write_text", "write_with", "written_by_fpt"]
