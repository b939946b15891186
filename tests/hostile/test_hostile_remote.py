"""Hangs (issue 39): a remote service that does not answer is one line in seconds naming the setting and the fix,
asked before any lock is taken (fpt.connect): Ray cluster addresses, MLflow servers and sqlite stores."""

from __future__ import annotations

import socket
import time
from types import SimpleNamespace

import pytest

from fpt import connect, tracking
from fpt.cli import main
from fpt.errors import ConfigError
from fpt.experiments.ray_executor import check_address


@pytest.fixture(autouse=True)
def _quick(monkeypatch):
    monkeypatch.setattr(connect, "TIMEOUT", 1.0)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1", "localhost:1"])
def test_a_ray_address_that_does_not_answer_is_one_line_in_seconds(address):
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=r"--address .*nothing answers.*ray start --head"):
        check_address(address)
    assert time.perf_counter() - started < 5


def test_ray_auto_without_a_cluster_says_so(monkeypatch):
    pytest.importorskip("ray")  # fpt[ray]
    import ray._private.utils as ray_utils

    monkeypatch.setattr(ray_utils, "read_ray_address", lambda temp_dir=None: None)
    with pytest.raises(ConfigError, match="no Ray cluster was started on this machine"):
        check_address("auto")


@pytest.fixture
def silent_port():
    """A port that accepts connections and never says a word (a black hole, or a process that hung)."""
    server = socket.create_server(("127.0.0.1", 0))
    yield server.getsockname()[1]
    server.close()


def test_a_ray_address_env_that_accepts_but_never_answers_is_named(silent_port, monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{silent_port}")
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=f"RAY_ADDRESS=127.0.0.1:{silent_port}: .*no answer within 1 s"):
        check_address(None)
    assert time.perf_counter() - started < 5


def test_an_unroutable_address_times_out(monkeypatch):
    def black_hole(address, timeout):
        raise TimeoutError  # what a SYN to an unroutable host gives after the timeout

    monkeypatch.setattr(connect.socket, "create_connection", black_hole)
    with pytest.raises(ConfigError, match="RAY_ADDRESS=10.255.255.1:6379: nothing answers .*no answer within"):
        monkeypatch.setenv("RAY_ADDRESS", "10.255.255.1:6379")
        check_address(None)


def test_an_mlflow_server_that_accepts_but_never_answers_is_one_line(silent_port, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{silent_port}")
    with pytest.raises(ConfigError, match="no answer within 1 s"):
        tracking.check(["mlflow"])


@pytest.mark.parametrize("address", ["ray://", "host:port", "::::"])
def test_a_ray_address_without_host_and_port_is_one_line(address):
    with pytest.raises(ConfigError, match="host:port"):
        check_address(address)


@pytest.mark.parametrize("address", [None, "local"])
def test_no_address_starts_a_local_ray_without_asking(address):
    check_address(address)


def test_reproduce_with_a_dead_ray_address_fails_before_any_run(tmp_path, capsys):
    pytest.importorskip("ray")  # fpt[ray]
    started = time.perf_counter()
    assert main(["reproduce", "table2", "--scale", "quick", "--out", str(tmp_path / "r"), "--executor", "ray",
                 "--address", "127.0.0.1:1", "--quiet"]) == 2
    # a cold `import ray` is most of it; the connection itself gives up within connect.TIMEOUT
    assert time.perf_counter() - started < 60
    from hostile_helpers import one_line

    one_line(capsys, "reproduce", "--address 127.0.0.1:1", "nothing answers")
    assert not list((tmp_path / "r").rglob("run.lock"))


@pytest.mark.parametrize("uri", ["http://127.0.0.1:1", "https://127.0.0.1:1/path", "http://localhost:1"])
def test_an_mlflow_server_that_does_not_answer_is_one_line_in_seconds(uri, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=r"MLFLOW_TRACKING_URI=.*nothing answers.*unset MLFLOW_TRACKING_URI"):
        tracking.check(["mlflow"])
    assert time.perf_counter() - started < 5


def test_train_with_a_dead_mlflow_server_holds_no_lock(tiny_bert_dir, tmp_path, monkeypatch, capsys):
    pytest.importorskip("mlflow")
    from hostile_helpers import one_line, table

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:1")
    out = tmp_path / "run"
    assert main(["train", "--data", str(table(tmp_path / "d.csv")), "--body", tiny_bert_dir, "--init", "random",
                 "--quiet", "--log", "mlflow", "--out", str(out)]) == 2
    one_line(capsys, "train", "MLFLOW_TRACKING_URI=http://127.0.0.1:1")
    assert not out.exists()


def test_a_text_file_as_the_sqlite_store_is_one_line(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a database\n")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{notes}")
    with pytest.raises(ConfigError, match="not an SQLite database"):
        tracking.check(["mlflow"])
    assert notes.read_text() == "my notes, not a database\n"


def test_a_new_sqlite_store_is_accepted(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'new.db'}")
    assert tracking.check(["mlflow"]) == ["mlflow"]


class _Client:
    """search_runs as MLflow's: a filter with an unbalanced quote is a parse error, never a match."""

    def __init__(self, tagged: dict[str, str]) -> None:
        self.tagged, self.filters = tagged, []

    def search_runs(self, experiments, filter_string, order_by, max_results):
        self.filters.append(filter_string)
        key, _, value = filter_string.partition(" = ")
        quote = value[0]
        assert value.count(quote) == 2, f"unparseable filter {filter_string!r}"
        tag = key.split("`")[1]
        return [SimpleNamespace(id="found")] if self.tagged.get(tag) == value[1:-1] else []


@pytest.mark.parametrize("where", ["/runs/it's mine", '/runs/say "hi"', "/runs/both ' and \""])
def test_resume_finds_the_mlflow_run_of_a_path_with_quotes(where):
    client = _Client({tracking._RUN_DIR_ID: tracking._run_dir_id(where)})
    assert tracking._previous_run(client, "0", where).id == "found"


def test_resume_still_finds_runs_tagged_by_older_fpt(tmp_path):
    where = str(tmp_path / "it's old")
    client = _Client({"fpt.run_dir": where})
    assert tracking._previous_run(client, "0", where).id == "found"
