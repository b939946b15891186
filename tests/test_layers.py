"""The house rule: src/fpt is a stack of layers, each importing only from itself and below, with no
circle anywhere (docs/layout.md, "Layers"). Read from the source with ast, so a lazy import inside a
function counts as much as one at the top, and so does one under ``if TYPE_CHECKING:`` (an annotation's
import that would run up a layer or close a circle is as tangled as a real one)."""

from __future__ import annotations

import ast
from pathlib import Path

from fpt.layers import LAYERS, layer_of

SRC = Path(__file__).resolve().parents[1] / "src" / "fpt"


def _module(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The fpt modules ``path`` imports (``from fpt.x import y`` counts as fpt.x.y when that is a module)."""
    tree = ast.parse(path.read_text())
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "fpt"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "fpt":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if _exists(sub) else base)
    out.discard(me)
    return out


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def _graph() -> dict[str, set[str]]:
    return {_module(p): {m for m in _imports(p) if _exists(m)} for p in sorted(SRC.rglob("*.py"))}


def test_every_module_has_a_layer():
    assert [m for m in _graph() if m != "fpt" and layer_of(m) is None] == []


def test_no_import_runs_up_a_layer():
    up = [f"{a} ({layer_of(a)}) imports {b} ({layer_of(b)})" for a, deps in _graph().items() if a != "fpt"
          for b in deps if b != "fpt" and LAYERS.index(layer_of(b)) > LAYERS.index(layer_of(a))]
    assert up == []


def test_no_circle():
    graph = _graph()
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                circles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert circles == []


def test_the_package_face_is_lazy():
    """``import fpt`` imports nothing heavy: the names of ``fpt.__all__`` load on first use."""
    import subprocess
    import sys

    code = "import sys, fpt; print(sorted(m for m in sys.modules if m.startswith('fpt')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["fpt", "fpt.version"]


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    """The rule can fail: a data module importing the training loop is reported."""
    bad = tmp_path / "fpt" / "data"
    bad.mkdir(parents=True)
    (bad / "x.py").write_text("def f():\n    from fpt.train import fit\n")
    monkeypatch.setattr(__import__(__name__), "SRC", tmp_path / "fpt")
    (tmp_path / "fpt" / "train.py").write_text("")
    graph = _graph()
    assert graph["fpt.data.x"] == {"fpt.train"}
    assert LAYERS.index(layer_of("fpt.train")) > LAYERS.index(layer_of("fpt.data.x"))


def test_docs_layout_names_every_module_in_its_layer():
    """docs/layout.md's diagram is the stack: each top-level module of src/fpt (a file or a package) is named there,
    in the rows of the layer fpt.layers puts it in, so a module added or moved shows up as drift here."""
    import re

    from fpt.layers import STACK

    text = (SRC.parents[1] / "docs" / "layout.md").read_text().split("## Layers", 1)[1]
    diagram = re.search(r"```\n(.*?)```", text, flags=re.S).group(1)
    rows: dict[str, str] = {}
    layer = None
    for line in diagram.splitlines():
        first = line.split(" ", 1)[0]
        if first in LAYERS:
            layer = first
        rows[layer] = rows.get(layer, "") + line[len(first):] + "\n"
    assert set(rows) == set(LAYERS)
    for layer, modules in STACK:
        for module in modules:
            name = module.split(".")[-1]
            if module == "fpt.__main__":
                continue  # `python -m fpt`, the command line's other door
            is_package = (SRC / name).is_dir()
            pattern = rf"(?<![\w.]){re.escape(name)}{'/' if is_package else '[.]py'}"
            assert re.search(pattern, rows[layer]), f"docs/layout.md: {module} is not named in layer {layer}"
