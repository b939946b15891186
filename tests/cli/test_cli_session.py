"""``fpt.cli.main`` called from a Python session speaks its own way only while it runs: afterwards the session's
warnings display, environment and transformers' log level are its own again. Checked in a fresh interpreter, since
pytest installs a warnings display of its own around every test."""

import os
import subprocess
import sys

CODE = """
import logging, os, sys, warnings
from fpt.cli import main
from fpt.errors import FptWarning

before = warnings.showwarning
print("exit", main(["data", "--data", sys.argv[1], "--target", "price"]))
print("display kept:", warnings.showwarning is before)
print("verbosity:", os.environ.get("TRANSFORMERS_VERBOSITY"))
warnings.warn("the session's own", FptWarning)
"""


def test_main_in_a_python_session_puts_back_its_warnings_display_and_environment(tiny_tables):
    table = tiny_tables.regression("r.csv")
    env = {k: v for k, v in os.environ.items() if k != "TRANSFORMERS_VERBOSITY"}
    done = subprocess.run([sys.executable, "-c", CODE, str(table)], capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-3:] == ["exit 0", "display kept: True", "verbosity: None"], done.stdout
    # the command's note, as one line of the command's, and after it the session's warning as Python shows it
    assert "fpt data: note: " in done.stderr and "objective regression, inferred from the values" in done.stderr
    assert "FptWarning: the session's own" in done.stderr and "note: the session's own" not in done.stderr


def test_a_command_s_environment_ends_with_it(monkeypatch):
    import logging

    from fpt.cli import _own_session

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "info")  # the user's own: kept, and transformers' level with it
    monkeypatch.setattr(logging.getLogger("transformers"), "level", logging.INFO)  # put back after the test
    with _own_session():  # as fpt sweep --log mlflow sets one store for its trials
        os.environ["MLFLOW_TRACKING_URI"] = "sqlite:////somewhere/mlflow.db"
        assert os.environ["TRANSFORMERS_VERBOSITY"] == "info"
    assert "MLFLOW_TRACKING_URI" not in os.environ and os.environ["TRANSFORMERS_VERBOSITY"] == "info"
    assert logging.getLogger("transformers").level == logging.INFO
    monkeypatch.delenv("TRANSFORMERS_VERBOSITY")
    with _own_session():  # main's own verbosity, and the level transformers read from it, end with the command
        assert os.environ["TRANSFORMERS_VERBOSITY"] == "error"
        logging.getLogger("transformers").setLevel(logging.ERROR)
    assert "TRANSFORMERS_VERBOSITY" not in os.environ
    assert logging.getLogger("transformers").level == logging.INFO
