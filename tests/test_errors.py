"""fpt's error contract: every error fpt raises on purpose is an FptError, which the command line prints as
one line (exit 2); anything else is a bug and keeps its traceback (exit 1). A bare ValueError left in src is
an internal invariant named in ALLOWED_VALUE_ERRORS below."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import fpt
import fpt.errors as errors
from fpt.cli import main

SRC = Path(fpt.__file__).parent

# A piece of the message's literal text (not the file: code moves between modules) -> why a plain ValueError
# is right there: each fires only on a bug in fpt (a caller broke a contract), never on something a user gave.
ALLOWED_VALUE_ERRORS = {
    "a task needs distinct validation and test sets": "a task implementation's own TaskData",
    "augmentation needs a torch.Generator": "TensorSource always passes a generator",
    "pretokenize would freeze one random augmentation": "only augmentation-free tasks pretokenize",
    "iter_outputs: a model needs a device and a batch size": "a caller's contract",
    "fpt_format": "caught at once and reported as a CheckpointError",
    "no integer step": "caught at once and reported as a CheckpointError",
    "is not a multiple of the token dimension": "task options are checked before tokenising",
    "is not a multiple of the patch size": "RunConfig and task options check patch sizes",
    "cannot pad a": "task options check image_size first",
    "grayscale_lra expects uint8": "cifar10-lra reads the images it passes",
    "normalize:  channels but": "mean and std are fitted per channel by fpt",
    "test_size= must be between 1 and": "split sizes are checked by the callers",
    "remote homology: unknown split": "split names come from fpt's own SPLITS",
    "unknown operator": "the parser passes known operators only",
    "nothing can be cached": "train checks cache_eligible first (ConfigError for cache_features=on)",
    "an example's target equals none of its stored strings": "bit-memory's generator",
    "(fpt.presentation.relations.RELATIONS)": "a claims Check declared in fpt's own tables (fpt.presentation.claims)",
    "predefined categories contain duplicate elements": "TabularTokens.check_json refuses repeated categories in a "
                                                        "data.json, and fit makes them distinct",
    "penalty rule": "ClosedForm.penalty_rule is set by fpt's own defaults and studies, not a user field",
}


def _error_classes() -> list[type[BaseException]]:
    return [obj for name in errors.__all__ if inspect.isclass(obj := getattr(errors, name))
            and issubclass(obj, BaseException) and not issubclass(obj, Warning)]  # FptWarning is no error


def test_fpt_warning_is_a_user_warning_not_an_error():
    assert issubclass(errors.FptWarning, UserWarning) and not issubclass(errors.FptWarning, errors.FptError)


def test_every_error_class_is_an_fpt_error():
    classes = _error_classes()
    assert len(classes) >= 10
    for cls in classes:
        assert issubclass(cls, errors.FptError), cls
        assert errors.FptError in errors.USER_ERRORS and issubclass(cls, errors.USER_ERRORS), cls


def test_fpt_errors_keep_the_builtin_type_callers_caught():
    assert issubclass(errors.ConfigError, ValueError) and issubclass(errors.DataError, ValueError)
    assert issubclass(errors.SchemaError, errors.DataError)
    assert issubclass(errors.CheckpointError, errors.RunError) and issubclass(errors.CheckpointError, RuntimeError)
    assert issubclass(errors.RunDirBusyError, FileExistsError)
    assert issubclass(errors.RegistryError, KeyError) and str(errors.RegistryError("no task 'x'")) == "no task 'x'"


def test_cli_prints_an_fpt_error_as_one_line(capsys):
    # num_outputs > seq_len: the model's own check, once a plain ValueError
    code = main(["params", "--seq-len", "3", "--classes", "2", "--token-dim", "1", "--outputs", "5"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("fpt params: error: ") and "num_outputs=5" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_prints_a_flag_mistake_as_one_line(tmp_path, capsys):
    assert main(["runs", str(tmp_path), "--filter", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fpt runs: error: --filter 'nonsense'") and err.count("\n") == 1


@pytest.mark.parametrize("exc", [ZeroDivisionError("division by zero"), ValueError("an internal invariant broke")])
def test_an_unexpected_exception_keeps_its_traceback_and_asks_for_a_report(monkeypatch, capsys, exc):
    import fpt.cli.list as list_command

    def broken(args):
        raise exc

    monkeypatch.setattr(list_command, "run", broken)
    monkeypatch.delenv("FPT_DEBUG", raising=False)
    assert main(["list"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and type(exc).__name__ in err and str(exc) in err
    assert "fpt list: this is a bug in fpt" in err and "please report it" in err


def _literal_text(node: ast.expr) -> str:
    """The constant text of a message: a str, an f-string's literal parts, or concatenated pieces."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp):
        return _literal_text(node.left) + _literal_text(node.right)
    return ""


def _bare_value_errors() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            exc = node.exc
            func = exc.func if isinstance(exc, ast.Call) else exc
            if isinstance(func, ast.Name) and func.id == "ValueError":
                message = _literal_text(exc.args[0]) if isinstance(exc, ast.Call) and exc.args else ""
                found.append((rel, node.lineno, message))
    return found


def test_every_bare_value_error_in_src_is_an_allowed_internal_invariant():
    unexplained, used = [], set()
    for rel, line, message in _bare_value_errors():
        keys = [key for key in ALLOWED_VALUE_ERRORS if key in message]
        if keys:
            used.update(keys)
        else:
            unexplained.append(f"src/fpt/{rel}:{line}: raise ValueError({message[:70]!r}...)")
    assert not unexplained, (
        "a bare ValueError is printed as a bug in fpt (traceback, exit 1): raise the fpt.errors class for a user's "
        "mistake (ConfigError for config/flags/API arguments, DataError for data, SchemaError for predict inputs, "
        "RunError/CheckpointError for run directories), or add an internal invariant to ALLOWED_VALUE_ERRORS with "
        "its reason:\n" + "\n".join(unexplained))
    stale = sorted(set(ALLOWED_VALUE_ERRORS) - used)
    assert not stale, f"ALLOWED_VALUE_ERRORS entries no longer in src (remove them): {stale}"


def test_option_names_a_setting_as_the_surface_in_force_does():
    """An error raised deep in fpt.data names a setting through fpt.errors.option: the command line's option by
    default, a Python surface's argument (or its own name for it) inside that surface's ``wording`` block."""
    assert errors.option("target") == "--target" and errors.option("val_fraction") == "--val-fraction"
    assert errors.option("objective", "regression") == "--objective regression"
    sklearn = errors.Wording(flags=False, names={"target": "y", "objective=regression": "FPTRegressor"})
    with errors.wording(errors.PYTHON):
        assert errors.option("objective", "regression") == "objective='regression'"
        assert errors.option("target", "NAME", placeholder=True) == "target=NAME"  # a placeholder, not a value
        assert errors.option("target") == "target column (target=NAME)"
        with errors.wording(sklearn):
            assert (errors.option("target"), errors.option("objective", "regression")) == ("y", "FPTRegressor")
            assert errors.option("objective", "classification") == "objective='classification'"
            assert errors.option("val_fraction") == "val_fraction"
        assert errors.option("target") == "target column (target=NAME)"
    assert errors.option("target") == "--target"  # the command line's wording once the block ends
