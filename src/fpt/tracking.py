"""Live tracking of a run: TensorBoard, MLflow, and a plain progress line for logs.

``fit(exp, out, trackers=[...])`` calls each tracker as the run goes (rank 0 only):

    start(exp, out, step)   once, first, after a resumed run's state is restored (``step``: where it continues;
                            ``continues(out, step)`` says whether the run was logged before)
    step(state, loss)       after every optimizer step (``state``: fpt.rundir.TrainState)
    evaluated(row)          after every evaluation, with the row written to metrics.jsonl
    finish(summary)         once, with summary.json's content
    close(error)            always, last (``error``: what stopped the run, or None)

A name stands for a tracker: ``tensorboard`` (``TensorBoard``: events under ``RUN/tensorboard``,
flushed at every evaluation, so they can be watched while the run goes) and ``mlflow``
(``MLflow``: params, metrics and artifacts to ``MLFLOW_TRACKING_URI``, or else MLflow's own default,
``sqlite:///mlflow.db`` in the working directory, which ``mlflow ui`` opens). Both are optional extras
(``pip install 'fpt[tensorboard]'`` / ``'fpt[mlflow]'``); a missing one is a one-line ConfigError naming the
extra. A tracker that fails while the run goes prints one warning and is dropped; training carries on.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import math
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from fpt.errors import ConfigError, option
from fpt.rundir import CONFIG, DATA, METRICS, SUMMARY, TrainState, read_metrics

NAMES = ("tensorboard", "mlflow")
_EXTRA_MODULE = {"tensorboard": "tensorboard", "mlflow": "mlflow"}


class Tracker:
    """Does nothing at every hook; trackers override the ones they need."""

    name = "tracker"

    def start(self, exp: Any, out: Path | None, step: int) -> None: ...

    def step(self, state: TrainState, loss: float) -> None: ...

    def evaluated(self, row: dict[str, Any]) -> None: ...

    def finish(self, summary: dict[str, Any]) -> None: ...

    def close(self, error: BaseException | None) -> None: ...


def check(names: Sequence[str]) -> list[str]:
    """The tracker names, validated (comma-separated allowed), each one's extra installed."""
    out = []
    for item in names:
        for name in filter(None, (part.strip().lower() for part in str(item).split(","))):
            if name not in NAMES:
                raise ConfigError(f"{option('log')} {name!r}: known trackers are {', '.join(NAMES)}")
            if name not in out:
                out.append(name)
    for name in out:  # names first: a typo is reported before a missing extra
        if not _installed(_EXTRA_MODULE[name]):
            raise ConfigError(f"{option('log')} {name} needs the optional {name} package: pip install 'fpt[{name}]'")
    if "mlflow" in out:
        mlflow_store_uri()  # a store MLflow cannot open is refused here, before a run directory is written
    return out


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # a module whose spec is None (a test's stand-in for a missing package)
        return False


# The database stores MLflow opens with SQLAlchemy (and migrates with alembic).
_SQL_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")


def mlflow_store_uri(tracking_uri: str | None = None) -> str:
    """The MLflow tracking store fpt logs to: ``tracking_uri``, else ``MLFLOW_TRACKING_URI``, else MLflow's own
    default (``sqlite:///mlflow.db`` in the working directory, or ``./mlruns`` where that already holds a file
    store), so that ``mlflow ui`` started in the same directory shows the runs. Without SQLAlchemy, the default
    is the ``./mlruns`` file store, which MLflow 3 opens only with ``MLFLOW_ALLOW_FILE_STORE`` (set here).

    A store this MLflow cannot open (a database URI without SQLAlchemy, an unknown scheme) is a ConfigError.
    """
    given = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    has_sql = _installed("sqlalchemy") and _installed("alembic")
    if given:
        uri, where = given, f"MLFLOW_TRACKING_URI={given}" if not tracking_uri else f"tracking_uri {given!r}"
    else:
        # MLflow 3's own choice: an existing ./mlruns file store (experiments with meta.yaml) is kept, else
        # ./mlflow.db (whose artifacts go to ./mlruns, without meta.yaml).
        mlruns = Path.cwd() / "mlruns"
        if has_sql and not any(p.parent.name.isdigit() for p in mlruns.glob("*/meta.yaml")):
            uri = "sqlite:///" + str(Path.cwd() / "mlflow.db")
        else:
            uri = mlruns.as_uri()
        where = f"the default MLflow store {uri}"
    scheme = uri.split(":", 1)[0].split("+", 1)[0].lower() if "://" in uri else ""
    if scheme in _SQL_SCHEMES and not has_sql:
        raise ConfigError(f"{where}: MLflow's database stores need sqlalchemy and alembic: pip install 'fpt[mlflow]'")
    if scheme in ("", "file"):
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 refuses a file store without it
    _check_store(uri, scheme, where, given is not None)
    try:
        from mlflow.tracking._tracking_service.utils import _tracking_store_registry
    except ImportError:  # a different MLflow layout: MLflow's own error comes when the run starts
        return uri
    try:
        _tracking_store_registry.get_store_builder(uri)
    except Exception as exc:  # noqa: BLE001 - MLflow's unsupported-URI errors have no common class
        raise ConfigError(f"{where}: this MLflow cannot open that store ({type(exc).__name__}); give a file:, "
                          "sqlite: or http(s): tracking URI") from None
    return uri


def prepare_mlflow_store(tracking_uri: str | None = None) -> str:
    """Open the MLflow store fpt logs to (``mlflow_store_uri``) once, creating and migrating a new database's tables,
    and return its URI. For callers that start several runs at once on one store (``fpt sweep --log mlflow
    --parallel N``): two processes creating a new sqlite store together race in MLflow's alembic migration, and the
    loser's run failed ("Online migration expected to match one row ...")."""
    from mlflow.tracking import MlflowClient

    uri = mlflow_store_uri(tracking_uri)
    MlflowClient(tracking_uri=uri).search_experiments(max_results=1)  # the store is built on first use
    return uri


def _check_store(uri: str, scheme: str, where: str, given: bool) -> None:
    """A server that does not answer, or a sqlite store that is another kind of file: one line now (the caller holds
    no lock yet), not MLflow's retries for minutes or its traceback from deep in SQLAlchemy."""
    from fpt.connect import HTTP_HELLO, check_reachable

    fix = ("start the server, or unset MLFLOW_TRACKING_URI to log to ./mlflow.db" if given else
           "start the server, or give another tracking URI")
    if scheme in ("http", "https"):
        check_reachable(uri, where, fix, hello=HTTP_HELLO if scheme == "http" else None)
    elif uri.startswith("file:") or not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", uri):
        # a file store (a folder; a plain path is one too): one that is a file was '[Errno 20] Not a directory:
        # 'FILE/.trash'', naming neither MLFLOW_TRACKING_URI nor a fix
        from urllib.parse import unquote, urlparse

        folder = Path(unquote(urlparse(uri).path) if uri.startswith("file:") else uri)
        blocked = _file_in_the_way(folder)
        if blocked is not None:
            file, how = blocked
            raise ConfigError(f"{where}: {how}, not a folder, and an MLflow file store is a folder; give another "
                              f"folder, or a database (sqlite:///{file.absolute()}.db)")
    elif scheme == "sqlite" and uri.startswith("sqlite:///"):
        file = Path(uri[len("sqlite:///"):])
        try:
            with open(file, "rb") as f:
                head = f.read(16)
        except FileNotFoundError:
            if not file.parent.is_dir():
                raise ConfigError(f"{where}: the folder {file.parent} does not exist; create it, or give a sqlite:/// "
                                  "file in an existing folder") from None
            return  # MLflow creates it
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read {file} ({exc.strerror}); give another sqlite:/// file") from None
        if head and head != b"SQLite format 3\x00":
            raise ConfigError(f"{where}: {file} is not an SQLite database (it holds other data); give a new file name "
                              "(MLflow creates it) or an existing MLflow database")


def make(trackers: Sequence[str | Tracker]) -> list[Tracker]:
    """Trackers from names (``"tensorboard"``, ``"mlflow"``, comma-separated allowed) and tracker objects."""
    out: list[Tracker] = []
    for tracker in trackers:
        if isinstance(tracker, str):
            out += [{"tensorboard": TensorBoard, "mlflow": MLflow}[name]() for name in check([tracker])]
        else:
            out.append(tracker)
    return out


class Trackers(Tracker):
    """Several trackers as one; one that raises is reported once and dropped."""

    def __init__(self, trackers: Sequence[Tracker]) -> None:
        self.trackers = list(trackers)

    def _call(self, hook: str, *args: Any) -> None:
        for tracker in list(self.trackers):
            try:
                getattr(tracker, hook)(*args)
            except Exception as exc:  # noqa: BLE001 - tracking must not stop training
                if hook == "start":
                    raise
                print(f"fpt: warning: {tracker.name} tracking failed ({type(exc).__name__}: {exc}); "
                      "continuing without it", file=sys.stderr)
                self.trackers.remove(tracker)
                with contextlib.suppress(Exception):
                    tracker.close(exc)

    def start(self, exp, out, step):
        self._call("start", exp, out, step)

    def step(self, state, loss):
        self._call("step", state, loss)

    def evaluated(self, row):
        self._call("evaluated", row)

    def finish(self, summary):
        self._call("finish", summary)

    def close(self, error):
        for tracker in self.trackers:
            try:
                tracker.close(error)
            except Exception as exc:  # noqa: BLE001
                print(f"fpt: warning: closing {tracker.name} tracking failed ({exc})", file=sys.stderr)


@contextlib.contextmanager
def session(trackers: Sequence[str | Tracker]) -> Iterator[Trackers]:
    """The trackers of one run, closed however it ends."""
    both = Trackers(make(trackers))
    try:
        yield both
    except BaseException as exc:
        both.close(exc)
        raise
    both.close(None)


def continues(out: str | Path | None, step: int) -> bool:
    """Whether ``start(exp, out, step)`` continues a run logged before: a resumed one (``step`` > 0), or a finished
    closed-form run given again (no step at all; its summary is there), which trackers log to the same place again
    rather than as a new run."""
    return step > 0 or (out is not None and (Path(out) / SUMMARY).is_file())


def summary_scalars(summary: dict[str, Any]) -> dict[str, float]:
    """The summary's top-level numbers (scores, steps, times), for trackers."""
    return {k: float(v) for k, v in summary.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _kept_rows(out: str | Path | None) -> list[dict[str, Any]]:
    """The evaluations a run directory keeps as ``start`` is called: metrics.jsonl's rows, up to the checkpoint a
    resumed run continues from (fit drops later ones before); [] for a new run or none."""
    return read_metrics(out) if out is not None else []


def _row_scalars(row: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in row.items()
            if k not in ("step", "wall_seconds") and isinstance(v, (int, float)) and not isinstance(v, bool)}


class TensorBoard(Tracker):
    """TensorBoard events in ``log_dir`` (default ``RUN/tensorboard``), flushed at every evaluation.

    Tags are METRIC/SET, as ``fpt plot --tensorboard`` writes them afterwards: ``loss/train``,
    ``accuracy/val``, ``r2/val``, ...; at the end ``summary/...`` (the selected step's scores,
    steps, times). Each start drops what earlier attempts of the run logged and logs the evaluations that
    metrics.jsonl keeps again, so a resumed run (or one restarted after a kill) shows as one run. In the run's own
    folder that is a TensorBoard purge. A ``log_dir`` given may be shared with other runs, whose events a purge would
    hide too: there the run's event files are named for its run directory (``own_events_suffix``), and a start
    deletes only the files that carry this run's name; other runs' events are never touched.
    """

    name = "tensorboard"

    def __init__(self, log_dir: str | Path | None = None) -> None:
        if log_dir is not None:
            check_log_dir(Path(log_dir), "TensorBoard(log_dir=...)")
        self.log_dir = log_dir
        self.writer = None

    def start(self, exp, out, step):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            raise ConfigError(f"{option('log')} tensorboard needs the optional tensorboard package: "
                              "pip install 'fpt[tensorboard]'") from None
        if self.log_dir is None and out is None:
            raise ConfigError("TensorBoard tracking writes under the run directory: give out= (or a log_dir)")
        log_dir = Path(self.log_dir) if self.log_dir is not None else Path(out) / "tensorboard"
        check_log_dir(log_dir, "TensorBoard(log_dir=...)" if self.log_dir is not None else "the run's tensorboard folder")
        self.sets = sorted({"train", exp.data.val, *exp.data.eval_sets}, key=len, reverse=True)
        # The evaluations are written afresh at every start, from metrics.jsonl: what earlier attempts of the run
        # logged is dropped (a resumed run's evaluations after its checkpoint, an attempt's killed before its first
        # checkpoint), and those the run keeps are logged again.
        if self.log_dir is None:
            # The run's own folder: TensorBoard purges from step 1 on. The config, at step 0, is logged once per run
            # directory (not every reader purges text).
            first = not after_earlier_events(log_dir)
            self.writer = SummaryWriter(str(log_dir), purge_step=1)
        else:
            # A log_dir given may hold other runs' events (one folder handed to several fits): a purge there hid theirs
            # too. Here the run's files carry its name and only those are deleted, the config with them.
            first = True
            points = {(self._tag(k), row["step"]): v for row in _kept_rows(out) for k, v in _row_scalars(row).items()}
            self.writer = SummaryWriter(str(log_dir), filename_suffix=drop_own_events(log_dir, out, points))
        if first:
            import yaml

            text = yaml.safe_dump(exp.config.to_dict(), sort_keys=False)
            self.writer.add_text("config", "".join("    " + line + "\n" for line in text.splitlines()), 0)
        for row in _kept_rows(out):
            self._scalars(row)
        self.writer.flush()

    def _tag(self, key: str) -> str:
        for name in self.sets:
            if key.startswith(name + "_"):
                return f"{key[len(name) + 1:]}/{name}"
        return key

    def _scalars(self, row: dict[str, Any]) -> None:
        for key, value in _row_scalars(row).items():
            self.writer.add_scalar(self._tag(key), value, row["step"])

    def evaluated(self, row):
        self._scalars(row)
        self.writer.flush()

    def finish(self, summary):
        for key, value in summary_scalars(summary).items():
            self.writer.add_scalar(f"summary/{key}", value, summary["steps"])
        self.writer.flush()

    def close(self, error):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _file_in_the_way(folder: Path) -> tuple[Path, str] | None:
    """The file that keeps ``folder`` from being a folder (itself, or one above it), and how ('X is a file', 'X lies
    under F, a file'); None where it is a folder or can be made."""
    for path in (folder, *folder.parents):
        if not os.path.lexists(path):
            continue
        if path.is_dir():
            return None
        return path, (f"{folder} is a file" if path == folder else f"{folder} lies under {path}, a file")
    return None


def check_log_dir(log_dir: Path, given: str) -> None:
    """Refuse a TensorBoard folder that is a file, or lies under one: SummaryWriter made it with os.makedirs, whose
    FileExistsError or NotADirectoryError came as a traceback (after fpt.fit had written the run's first files; fpt plot
    --tensorboard's '[Errno 20] Not a directory', after curves.png), naming no fix."""
    blocked = _file_in_the_way(log_dir)
    if blocked is not None:
        file, how = blocked
        raise ConfigError(f"{given}: {how}, not a folder, and TensorBoard writes a folder of event files; give "
                          f"another folder (e.g. {file.with_name(file.name + '-tb')})")


def own_events_suffix(out: str | Path | None) -> str:
    """The ending of the event files fpt writes for the run in ``out`` into a folder given (TensorBoard's
    ``filename_suffix``): ``.fpt-`` and a digest of the run directory's absolute path, so that a later start, or fpt
    plot, can tell this run's files from other runs' in a shared folder. "" without a run directory."""
    if out is None:
        return ""
    return ".fpt-" + hashlib.sha256(str(Path(out).resolve()).encode()).hexdigest()[:12]


def drop_own_events(log_dir: Path, out: str | Path | None, points: dict[tuple[str, int], float] | None = None) -> str:
    """Deletes the event files in ``log_dir`` that fpt wrote earlier for the run in ``out`` (their name ends with
    ``own_events_suffix(out)``), and returns that suffix for the files written now. Without a run directory nothing
    is deleted.

    ``points`` ((tag, step) -> value: what this start logs again) also finds the files an fpt before these names wrote
    for the run, which carry no name: left beside the named file, the first resume (or plot) after an upgrade showed
    every point twice, and every later one too. An unnamed file is the run's when it holds at least one of these
    points and every point it holds at their tags and steps has the same value (as float32, TensorBoard's); points
    elsewhere (a killed attempt's evaluations past the checkpoint, summary/...) do not count. Another run's file
    differs at some point (another seed, body, data) and stays; only a run identical to this one, number for number,
    could be taken for it. Another tool's file stays at its first value fpt does not write (a tag of no set of the
    run's, an image, a histogram), read no further."""
    suffix = own_events_suffix(out)
    if suffix:
        for path in log_dir.glob(f"events.out.tfevents.*{suffix}"):
            path.unlink(missing_ok=True)
        if points:
            for path in log_dir.glob("events.out.tfevents.*"):
                if ".fpt-" not in path.name and _holds_only(path, points):
                    path.unlink(missing_ok=True)
    return suffix


def _holds_only(path: Path, points: dict[tuple[str, int], float]) -> bool:
    """Whether the event file ``path`` holds some of ``points`` and disagrees with none (see ``drop_own_events``)."""
    import numpy as np
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util.tensor_util import make_ndarray

    # A shared folder also holds other tools' files, of thousands of points each; every resume read each through (50
    # foreign files of 300 steps: 2 s a start, of 3,000: 20 s). A value fpt never writes there (a scalar of a set the
    # run lacks, an image, a histogram, a text but the config) says the file is not the run's at once.
    sets = {tag.rpartition("/")[2] for tag, _ in points}
    matched = 0
    try:
        for event in EventFileLoader(str(path)).Load():
            for value in event.summary.value:
                plugin = value.metadata.plugin_data.plugin_name
                if plugin == "text" and value.tag.partition("/")[0] == "config":
                    continue
                if plugin != "scalars" or not (value.tag.startswith("summary/") or
                                               value.tag.rpartition("/")[2] in sets):
                    return False
                expected = points.get((value.tag, event.step))
                if expected is None:
                    continue
                got = value.simple_value if value.WhichOneof("value") == "simple_value" else \
                    make_ndarray(value.tensor).item()
                if np.float32(got) != np.float32(expected):
                    return False
                matched += 1
    except Exception:  # unreadable (another tool's format, a file cut short by a kill): never taken for the run's
        return False
    return matched > 0


def after_earlier_events(log_dir: Path) -> bool:
    """Whether ``log_dir`` holds event files already; if so, returns once a file made now sorts after theirs (the
    second after the newest's: a restart, or a rewrite, within the same second), so that a purge in it is read after
    what it purges (see ``_event_seconds``)."""
    earlier = _event_seconds(log_dir)
    if earlier and max(earlier) >= time.time() - 1:
        time.sleep(max(earlier) + 1 - time.time())
    return bool(earlier)


def _event_seconds(log_dir: Path) -> list[int]:
    """The seconds the events files in ``log_dir`` were made, as their names say. TensorBoard reads the files in name
    order, which begins with that second (then host and pid): a file made in the same second as the killed attempt's
    could be read before it, and that attempt's purge would hide all it holds."""
    seconds = []
    for path in log_dir.glob("events.out.tfevents.*"):
        with contextlib.suppress(IndexError, ValueError):
            seconds.append(int(path.name.split(".")[3]))
    return seconds


CONFIG_TAG = "fpt.config."  # MLflow tags of the fields a resumed run changed: its params keep their first values


class MLflow(Tracker):
    """An MLflow run: the config as params, every evaluation's metrics, the summary's numbers as
    ``summary.*`` metrics (``summary.steps``: the steps trained), and config.yaml, metrics.jsonl, summary.json (and
    data.json) as artifacts. MLflow params cannot change: a resumed run that trains under another value of a field
    (a larger ``steps``, another ``patience``, ``target`` or ``baselines``) keeps the first value as the param and sets
    the tag ``fpt.config.FIELD`` to the value it trains under now (a tag can change). Nor can MLflow delete a point:
    a finished run resumed keeps the ``summary.*`` points of its earlier end beside the new end's, whose values are
    the run's (the latest step), a number the new end lacks NaN; the run's description (``mlflow.note.content``)
    says which params and points are earlier ones.

    The tracking store is ``tracking_uri``, else ``MLFLOW_TRACKING_URI``, else MLflow's default in the
    working directory (see ``mlflow_store_uri``). Inside the caller's ``with mlflow.start_run():`` the run is that
    run's child, in its experiment, and so under ``mlflow run`` (the project's run, MLFLOW_RUN_ID); otherwise the
    experiment is ``experiment``, ``mlflow.set_experiment``'s, ``MLFLOW_EXPERIMENT_NAME``, ``MLFLOW_EXPERIMENT_ID``,
    or ``fpt``. A resumed run continues the MLflow run tagged
    with its run directory (as does a run restarted after one killed before its first checkpoint), and logs the
    evaluations of metrics.jsonl that it lacks; fit hands over an evaluation only once its checkpoint is
    committed, so none is logged twice.
    """

    name = "mlflow"

    def __init__(self, tracking_uri: str | None = None, experiment: str | None = None) -> None:
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self.client = None
        self.run_id = None

    def start(self, exp, out, step):
        try:
            from mlflow.tracking import MlflowClient
        except ImportError:
            raise ConfigError(f"{option('log')} mlflow needs the optional mlflow package: pip install 'fpt[mlflow]'") \
                from None
        uri = mlflow_store_uri(self.tracking_uri)
        self.out = Path(out) if out is not None else None
        self.client = client = MlflowClient(tracking_uri=uri)
        experiment_id, parent = self._experiment(client)
        where = str(self.out.resolve()) if self.out is not None else None
        flat = _flat_params(exp.config)
        previous = None
        if where is not None:
            previous = _previous_run(client, experiment_id, where)
            if previous is not None and not continues(self.out, step) and not _unused(previous, flat):
                previous = None  # a new run in a directory that held another: a new MLflow run
        now: dict[str, str] = {}  # the fields a continued run trains under that differ from its logged params
        self.summarised: set[str] = set()  # the summary.* metrics the MLflow run holds from an end reached before
        if previous is not None:
            self.run_id = previous.info.run_id
            client.update_run(self.run_id, status="RUNNING")
            logged = previous.data.params
            said = {k[len(CONFIG_TAG):] for k in previous.data.tags if k.startswith(CONFIG_TAG)}
            now = {k: v for k, v in flat.items() if k in logged and (logged[k] != v or k in said)}
            self.summarised = {k for k in previous.data.metrics if k.startswith("summary.")}
            ends = sorted({int(m.step) for m in client.get_metric_history(self.run_id, "summary.steps")}) \
                if "summary.steps" in self.summarised else []
            if now or ends:
                note = _resumed_note(step, {k: (logged[k], v) for k, v in now.items()}, ends)
                told = previous.data.tags.get(_NOTE, "")
                client.set_tag(self.run_id, _NOTE, _with_note(told, note))
        else:
            tags = {"fpt.task": exp.config.task, "fpt.body": exp.config.body}
            if parent is not None:  # MLflow's own tag for a child run: the UI shows it under the user's run
                tags["mlflow.parentRunId"] = parent
            if where is not None:
                tags["fpt.run_dir"] = where
                tags[_RUN_DIR_ID] = _run_dir_id(where)
            run = client.create_run(experiment_id, run_name=self.out.name if self.out else None, tags=tags)
            self.run_id, logged = run.info.run_id, {}
        from mlflow.entities import Param

        params = [Param(k, v) for k, v in flat.items() if k not in logged]
        for first in range(0, len(params), 100):  # MLflow takes at most 100 params per call
            client.log_batch(self.run_id, params=params[first:first + 100])
        if now:  # a param keeps its first value in MLflow: a resumed run's larger --steps (patience, ...) is a tag
            from mlflow.entities import RunTag

            client.log_batch(self.run_id, tags=[RunTag(f"{CONFIG_TAG}{k}", v) for k, v in now.items()])
        self._catch_up(_kept_rows(self.out), step, previous is not None)

    def _catch_up(self, rows: list[dict[str, Any]], step: int, continued: bool) -> None:
        """Log the evaluations the run directory keeps that the MLflow run lacks: the row of the checkpoint a run
        stopped at before handing it over (fit logs a row once it is checkpointed), and all of them for a run
        tracked from its resume on. MLflow cannot take a point back: points logged after ``step`` (the step it
        continues from) by an earlier fpt, or before a damaged checkpoint fell back, stay beside the replayed ones,
        and a warning says so."""
        from mlflow.entities import Metric

        keys = sorted({key for row in rows for key in _row_scalars(row)})
        have = {key: {m.step for m in self.client.get_metric_history(self.run_id, key)} for key in keys} \
            if continued else {}
        later = sorted({s for steps in have.values() for s in steps if s > step})
        if later:
            print(f"fpt: warning: MLflow run {self.run_id} already holds evaluations after step {step}, the checkpoint "
                  f"this run continues from (steps {', '.join(map(str, later[:5]))}{', ...' if len(later) > 5 else ''}"
                  "); the steps replayed are logged again beside them", file=sys.stderr)
        stamp = int(time.time() * 1000)
        missing = [Metric(key, value, stamp, row["step"]) for row in rows for key, value in _row_scalars(row).items()
                   if row["step"] not in have.get(key, ())]
        for first in range(0, len(missing), 1000):  # MLflow takes at most 1000 metrics per call
            self.client.log_batch(self.run_id, metrics=missing[first:first + 1000])

    def _experiment(self, client: Any) -> tuple[str, str | None]:
        """(experiment id, parent run id or None), as MLflow's own ``mlflow.start_run(nested=True)`` would choose them:
        the ``experiment`` given here; else the run active in this thread (``with mlflow.start_run():`` around
        ``fpt.fit``), whose experiment the fpt run joins as its child; else MLFLOW_RUN_ID's (``mlflow run``) alike;
        else ``mlflow.set_experiment``'s, then ``MLFLOW_EXPERIMENT_NAME``, then ``MLFLOW_EXPERIMENT_ID``; else
        ``fpt``."""
        if self.experiment:
            return _experiment_named(client, self.experiment), None
        active = _active_mlflow_run()
        if active is not None:
            try:
                client.get_run(active.info.run_id)
            except Exception:  # noqa: BLE001 - MLflow's not-found errors have no common class across stores
                print(f"fpt: warning: the active MLflow run {active.info.run_id} is not in the store fpt logs to "
                      f"({client.tracking_uri}); the fpt run is logged there, not under it", file=sys.stderr)
            else:
                return active.info.experiment_id, active.info.run_id
        # `mlflow run` (an MLproject) starts the command inside a run it names in MLFLOW_RUN_ID, where a script's
        # mlflow.start_run() would log; fpt's run was its sibling, the project's run left empty
        given_run = os.environ.get("MLFLOW_RUN_ID")
        if given_run:
            try:
                project = client.get_run(given_run)
            except Exception:  # noqa: BLE001 - MLflow's not-found errors have no common class across stores
                print(f"fpt: warning: MLFLOW_RUN_ID={given_run} is not a run in the store fpt logs to "
                      f"({client.tracking_uri}); the fpt run is logged there, not under it", file=sys.stderr)
            else:
                return project.info.experiment_id, given_run
        chosen = _active_mlflow_experiment()
        if chosen and _experiment_exists(client, chosen):  # chosen in another store: not this one's
            return chosen, None
        name = os.environ.get("MLFLOW_EXPERIMENT_NAME")
        if name:
            return _experiment_named(client, name), None
        given = os.environ.get("MLFLOW_EXPERIMENT_ID")
        if given:
            if not _experiment_exists(client, given):
                raise ConfigError(f"MLFLOW_EXPERIMENT_ID={given}: no such experiment in {client.tracking_uri}; give "
                                  "an existing experiment's id, or MLFLOW_EXPERIMENT_NAME (created if missing)")
            return given, None
        return _experiment_named(client, "fpt"), None

    def _metrics(self, values: dict[str, float], step: int) -> None:
        from mlflow.entities import Metric

        stamp = int(time.time() * 1000)
        client_metrics = [Metric(k, v, stamp, step) for k, v in values.items()]
        if client_metrics:
            self.client.log_batch(self.run_id, metrics=client_metrics)

    def evaluated(self, row):
        self._metrics(_row_scalars(row), row["step"])

    def finish(self, summary):
        values = {f"summary.{k}": v for k, v in summary_scalars(summary).items()}
        # A number an earlier end had that this one has not (a resumed run's steps_to_target once its new target is
        # not reached): NaN, or the run's value of it, the latest, would stay the earlier end's.
        values.update({k: math.nan for k in sorted(getattr(self, "summarised", set()) - values.keys())})
        self._metrics(values, summary["steps"])
        if self.out is not None:
            for name in (CONFIG, METRICS, SUMMARY, DATA):
                if (self.out / name).is_file():
                    self.client.log_artifact(self.run_id, str(self.out / name))

    def close(self, error):
        if self.client is None or self.run_id is None:
            return
        status = "FINISHED" if error is None else "KILLED" if isinstance(error, KeyboardInterrupt) else "FAILED"
        self.client.set_terminated(self.run_id, status=status)
        self.client = None


_NOTE = "mlflow.note.content"  # the run's description, shown at the top of its page in the MLflow UI
_NOTE_BEGIN, _NOTE_END = "<!-- fpt:resumed -->", "<!-- /fpt:resumed -->"  # fpt's part of it (Markdown hides them)


def _resumed_note(step: int, changed: dict[str, tuple[str, str]], ends: list[int]) -> str:
    """What the MLflow run of a resumed run holds that its params and metric charts do not say: params that keep
    their first values while the run trains under others (MLflow params cannot change), and ``summary.*`` points of
    the ends it reached before (MLflow cannot delete points), beside the new end's."""
    parts = [f"fpt: resumed at step {step}" + (" after it had finished" if ends else "") + "."]
    if changed:
        fields = ", ".join(f"{k} {was} -> {now}" for k, (was, now) in changed.items())
        parts.append(f"It trains under {fields}: MLflow keeps a param's first value, so the params show the first "
                     f"values and the tags {CONFIG_TAG}FIELD the ones it trains under now.")
    if ends:
        at = f"step{'s' if len(ends) > 1 else ''} {', '.join(map(str, ends))}"
        parts.append(f"The summary.* metrics keep the points of the ends it reached before ({at}) beside the "
                     "new end's; their values (what the runs table, comparisons and searches read: the latest step) "
                     "are the new end's, as in summary.json.")
    return " ".join(parts)


def _with_note(told: str, note: str) -> str:
    """The run's description with fpt's resume note in place of the one an earlier resume wrote; the rest (a user's
    own description) kept as it is."""
    if _NOTE_BEGIN in told and _NOTE_END in told:
        head, rest = told.split(_NOTE_BEGIN, 1)
        told = head + rest.split(_NOTE_END, 1)[1]
    told = told.strip()
    return f"{told}\n\n{_NOTE_BEGIN}\n{note}\n{_NOTE_END}" if told else f"{_NOTE_BEGIN}\n{note}\n{_NOTE_END}"


def _experiment_named(client: Any, name: str) -> str:
    """The id of MLflow experiment ``name``, created if missing."""
    found = client.get_experiment_by_name(name)
    if found is not None:
        return found.experiment_id
    try:
        return client.create_experiment(name)
    except Exception:  # noqa: BLE001 - created meanwhile by another run sharing the store
        return client.get_experiment_by_name(name).experiment_id


def _experiment_exists(client: Any, experiment_id: str) -> bool:
    """Whether the store holds the live (not deleted) experiment ``experiment_id``."""
    try:
        found = client.get_experiment(experiment_id)
    except Exception:  # noqa: BLE001 - MLflow's not-found errors have no common class across stores
        return False
    return found is not None and getattr(found, "lifecycle_stage", "active") == "active"


def _active_mlflow_run() -> Any:
    """The MLflow run the caller started in this thread (``mlflow.start_run()``), or None."""
    try:
        import mlflow

        return mlflow.active_run()
    except Exception:  # noqa: BLE001 - mlflow-skinny layouts without the fluent API: no active run to join
        return None


def _active_mlflow_experiment() -> str | None:
    """The experiment id the caller chose with ``mlflow.set_experiment`` in this process, or None. MLflow keeps it in
    a module global (it also sets MLFLOW_EXPERIMENT_ID, which the caller's MLFLOW_EXPERIMENT_NAME would outrank)."""
    try:
        from mlflow.tracking import fluent
    except ImportError:
        return None
    chosen = getattr(fluent, "_active_experiment_id", None)
    return str(chosen) if chosen else None


_RUN_DIR_ID = "fpt.run_dir_id"  # the run directory's hash: a filter matches it whatever quotes the path holds


def _run_dir_id(where: str) -> str:
    import hashlib

    return hashlib.sha256(where.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _previous_run(client: Any, experiment_id: str, where: str) -> Any:
    """The newest MLflow run of the run directory ``where`` (a resumed run continues it), or None. Searched by the
    directory's hash, then by its path as runs of older fpt versions were tagged, quoted with the quote it lacks."""
    filters = [f"tags.`{_RUN_DIR_ID}` = '{_run_dir_id(where)}'"]
    quote = "'" if "'" not in where else '"' if '"' not in where else None
    if quote is not None and "\\" not in where:
        filters.append(f"tags.`fpt.run_dir` = {quote}{where}{quote}")
    for text in filters:
        runs = client.search_runs([experiment_id], filter_string=text, order_by=["attributes.start_time DESC"],
                                  max_results=1)
        if runs:
            return runs[0]
    return None


def _unused(run: Any, params: dict[str, str]) -> bool:
    """Whether ``run``, found for a run directory that starts from step 0, is an attempt of the same config that
    logged nothing (killed or stopped before its first checkpoint): the restart continues it rather than leave it
    beside the new one, forever RUNNING."""
    return run.info.status != "FINISHED" and not run.data.metrics and dict(run.data.params) == params


def _flat_params(config: Any) -> dict[str, str]:
    """The (resolved) config's fields as MLflow params (task options as ``task.NAME``)."""
    out = {}
    for key, value in config.to_dict().items():
        if key == "task_options":
            out.update({f"task.{k}": json.dumps(v) if not isinstance(v, str) else v for k, v in value.items()})
        else:
            out[key] = str(value)
    return {k: v[:6000] for k, v in out.items()}  # MLflow's limit on a param value


class ProgressLine(Tracker):
    """A plain line every ``every_seconds`` for logs (stdout not a live terminal, see ``live_terminal``): step,
    mean training loss since the last line, the latest validation score, training samples/s and the time left
    to ``steps`` (an upper bound: the run may stop earlier, at the target or on patience)."""

    name = "progress"

    def __init__(self, every_seconds: float = 30.0, stream: TextIO | None = None, clock=time.monotonic) -> None:
        self.every = every_seconds
        self.stream = stream
        self.clock = clock

    def start(self, exp, out, step):
        self.total = exp.config.steps
        self.metric = f"{exp.data.val}_{exp.data.objective.metric}"
        self.started = self.last = self.clock()
        self.first_step = step
        self.val: float | None = None
        self.losses: list[float] = []

    def evaluated(self, row):
        self.val = row.get(self.metric, self.val)

    def step(self, state, loss):
        self.losses.append(loss)
        now = self.clock()
        if now - self.last < self.every:
            return
        self.last = now
        step = state.step
        done = max(step - self.first_step, 1)
        left = (now - self.started) / done * max(self.total - step, 0)
        rate = state.train_examples / max(state.train_seconds, 1e-9)
        val = "-" if self.val is None else f"{self.val:.4f}"
        loss_text = f"{sum(self.losses) / len(self.losses):.4f}"
        self.losses = []
        print(f"fpt: step {step}/{self.total}  loss {loss_text}  {self.metric} {val}  {rate:.1f} samples/s  "
              f"ETA {_clock(left)}", file=self.stream or sys.stdout, flush=True)


def live_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default stdout) is a terminal a progress bar can redraw in place: a tty at least one
    column wide. ``COLUMNS=0``, or a pty that reports 0 columns (some CI runners, a container before its first
    resize), counts as no terminal, so progress goes out as plain lines instead of a bar nobody sees."""
    stream = stream or sys.stdout
    try:
        if not stream.isatty():
            return False
    except (AttributeError, ValueError):  # closed or not a file
        return False
    columns = os.environ.get("COLUMNS", "").strip()
    if columns:
        try:
            return int(columns) > 0
        except ValueError:
            pass
    try:
        return os.get_terminal_size(stream.fileno()).columns > 0
    except (AttributeError, OSError, ValueError):
        return True  # a tty whose size cannot be read: trust it


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


__all__ = ["MLflow", "NAMES", "ProgressLine", "TensorBoard", "Tracker", "Trackers", "check", "continues", "live_terminal", "make",
           "mlflow_store_uri", "prepare_mlflow_store", "session"]
