"""Commands that build no model start without torch's or transformers' imports (seconds of CPU each): the help, a
usage error, a train command whose data is refused, and fpt data's description of a table. Checked in a fresh
interpreter, where sys.modules shows what the command itself imported."""

import subprocess
import sys

CODE = """
import sys
from fpt.cli import main

heavy = ("torch", "transformers")
for argv in (["--help"], ["train", "--stpes", "3"], ["predict"]):
    try:
        main(argv)
    except SystemExit as stop:
        print("checked:", argv[0], "exit", stop.code, "imports", [m for m in heavy if m in sys.modules])
print("checked: train --target", "exit", main(["train", "--data", sys.argv[1], "--target", "lable"]), "imports",
      [m for m in heavy if m in sys.modules])
print("checked: data", "exit", main(["data", "--data", sys.argv[1], "--target", "label"]), "imports",
      [m for m in heavy if m in sys.modules])
"""


def test_help_usage_errors_and_fpt_data_skip_the_heavy_imports(tiny_tables):
    table = tiny_tables.classification("t.csv")
    done = subprocess.run([sys.executable, "-c", CODE, str(table)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line.removeprefix("checked: ") for line in done.stdout.splitlines() if line.startswith("checked: ")]
    # fpt data tokenises the table into tensors, so torch is its own; transformers (a body) it never needs
    # a mistyped --target: was refused after torch's import (3 CPU-s more), the data read in the run's build
    assert lines == ["--help exit 0 imports []", "train exit 2 imports []", "predict exit 2 imports []",
                     "train --target exit 2 imports []", "data exit 0 imports ['torch']"]
    assert f"fpt train: error: {table}: no column 'lable' (did you mean 'label'?)" in done.stderr
    assert "(did you mean --steps?)" in done.stderr
