"""The README's Python example runs as written and does what it says."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_names_install_and_test_commands():
    text = README.read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    assert blocks[0].strip() == 'pip install -e ".[test]" && fpt train'
    assert blocks[1].strip() == "python -m pytest"
    ci = (README.parent / ".ci" / "run").read_text()
    assert 'pip install --quiet -e ".[test]"' in ci and "python -m pytest" in ci  # CI runs what the README says


@pytest.mark.slow
def test_readme_python_example(capsys):
    (code,) = _python_blocks()
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    summary = namespace["summary"]
    assert summary["test_accuracy"] == 1.0 and summary["steps_to_target"] <= 400
    assert namespace["fpt"].predict(namespace["exp"], namespace["x"]).shape == (4, 5)
