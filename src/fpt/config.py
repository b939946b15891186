"""Reading a run's settings: YAML files, ``key=value`` overrides, and values coerced to each field's type.

Unknown keys and wrong types fail loudly, naming where the bad value came from. What a field defaults to is
decided in one place, ``fpt.settings.resolve``; ``from_dict`` hands it the fields a config gives.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import shlex
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from fpt import bounded
from fpt.errors import ConfigError, near, option, show  # noqa: F401  (re-exported: raised and used here)
from fpt.settings import (  # noqa: F401  (re-exported: the run's fields and their tables)
    BASELINE_LEVELS,
    CF_HEADS,
    DATA_FIELDS,
    DATA_RUN_FIELDS,
    DATA_TASK,
    DEFAULT_PRESET,
    DEVICES,
    DEVICES_SAID,
    FITS,
    PRESETS,
    READOUTS,
    SAVED_PRESET,
    TIE_BREAKS,
    RunConfig,
    device_name,
    plain,
    resolve,
)

# The fields that name columns, comma-separated: Python callers (and YAML files) give lists of names, as pandas and
# scikit-learn take them (df.drop(columns=[...])); a list was "expected a string" (target: "expected a number")
COLUMN_LISTS = ("target", "target_column", "drop_columns", "series_id")


def _joined(fields: dict[str, Any], data: bool) -> dict[str, Any]:
    """``fields`` with a list or tuple of column names in a ``COLUMN_LISTS`` field as the comma-separated text the
    field holds (``target`` only with ``data``: without it, target is the stopping accuracy)."""
    out = dict(fields)
    for name in COLUMN_LISTS:
        value = fields.get(name)
        if name == "target" and not data:
            continue
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            commas = [v for v in value if "," in v]
            if commas:
                raise ConfigError(f"{name}={show(list(value))}: column {commas[0]!r} has a comma in its name, which "
                                  f"{name} reads as a separator; rename the column")
            out[name] = ",".join(v.strip() for v in value)
    return out


def target_alias(fields: dict[str, Any], where: str = "config", data: bool | None = None,
                 name: Callable[[str, str], str] = option) -> dict[str, Any]:
    """``target=NAME`` with ``data``: NAME is the target column when it is not a number (a number in (0, 1] is
    still the target accuracy; any other number is ambiguous: an error naming both fixes). Returns the fields
    with a column moved to ``target_column``, and lists of column names (``COLUMN_LISTS``) comma-joined.

    ``data``: whether the run reads own data (None: whether ``fields`` name it; the command line's flags beside a
    config file that names it say True). Errors start with ``where`` (the file, the command line, build()) and name
    the settings as ``name`` does (default: the surface in force, fpt.errors.option; a YAML file's ``key: value``)."""
    data = fields.get("data") is not None if data is None else data
    fields = _joined(fields, data)
    target = fields.get("target")
    if not data or target is None or isinstance(target, bool):
        return fields
    try:
        number = float(target)
    except (TypeError, ValueError):
        number = None
    if number is not None:
        if 0 < number <= 1:
            return fields
        raise ConfigError(f"{where}: {name('target', str(target))} with data: a stopping accuracy is in (0, 1], so "
                          f"this is not one; for the target column {show(str(target))} give "
                          f"{name('target_column', str(target))}, for a stopping accuracy a number in (0, 1] (e.g. "
                          f"{name('target', '0.9')})")
    if not isinstance(target, str):
        return fields
    column = fields.get("target_column")
    if column not in (None, target):
        # two names of one setting that disagree: refused, not one of them kept in silence
        raise ConfigError(f"{where}: {name('target', target)} and {name('target_column', str(column))} both name the "
                          f"target column, as different columns; give one of them (or the same column to both)")
    out = {k: v for k, v in fields.items() if k != "target"}
    out["target_column"] = target
    return out


def field_help(cls: type) -> dict[str, str]:
    return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(cls)}


def _coerce(value: Any, hint: Any, where: str) -> Any:
    """Convert a YAML/CLI value to the field's declared type, or fail naming ``where``."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None or (isinstance(value, str) and value.lower() in {"none", "null"}):
            if type(None) in args:
                return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, where)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{where}: cannot be {show(value)}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in {"true", "1", "yes", "false", "0", "no"}:
            return value.lower() in {"true", "1", "yes"}
        raise ConfigError(f"{where}: expected true/false, got {show(value)}")
    if hint is int:
        if isinstance(value, bool):
            raise ConfigError(f"{where}: expected an integer, got {show(value)}")
        if isinstance(value, numbers.Integral):  # a NumPy integer too (steps from np.arange was refused)
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                number = float(value)  # accepts 2e4 as well as 20000
            except ValueError:
                number = None
            if number is not None and number.is_integer():
                return int(number)
        raise ConfigError(f"{where}: expected an integer, got {show(value)}")
    if hint is float:
        number = None
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                pass
        if number is None:
            raise ConfigError(f"{where}: expected a number, got {show(value)}")
        if not math.isfinite(number):
            # inf passed every one-sided range check (lr > 0, lora_alpha > 0, clip >= 0): lr=inf trained a run that
            # diverged at its first step and exited 0
            raise ConfigError(f"{where}: expected a finite number, got {show(value)}")
        return number
    if hint is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, os.PathLike):  # data=Path("table.csv") was "expected a string"
            return os.fspath(value)
        raise ConfigError(f"{where}: expected a string, got {show(value)}")
    if hint is dict or origin is dict:
        if isinstance(value, dict):
            return plain(value)
        raise ConfigError(f"{where}: expected a mapping, got {show(value)}")
    return value


def same_setting(name: str, a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` set RunConfig field ``name`` to one value once read as its type (``--lr 0.001`` and
    ``lr=1e-3``; ``--compile`` and ``compile=yes``); as text where either is not a value of the field (its error is
    the config's to give, or ``name`` is no field: a command's own flag, fpt data's --target, --data-dir)."""
    hint = typing.get_type_hints(RunConfig).get(name)
    if hint is None:
        return str(a) == str(b)
    try:
        return _coerce(a, hint, name) == _coerce(b, hint, name)
    except ConfigError:
        return str(a) == str(b)


def from_saved(data: Any, where: str = "config") -> RunConfig:
    """A RunConfig that fpt itself saved (a run's config.yaml, an export's run_config). One saved before
    presets existed has no ``preset`` key and ran the paper's defaults (whatever fields it lacks, e.g.
    ``eval_subset`` in the oldest runs), so it is read as ``preset: paper``, never as today's default; a closed-form
    run saved before ``cf_gains`` existed drew its members' input layers at gain 1, and is read so (one before ``cf_hop``
    its merged windows side by side; one before ``cf_series_norm`` every member reading the tokens as normalised)."""
    _saved_settings(data, where)
    if isinstance(data, dict) and "preset" not in data:
        data = {**data, "preset": SAVED_PRESET}
    if isinstance(data, dict) and data.get("fit") == "closed-form" and "cf_gains" not in data:
        data = {**data, "cf_gains": "1"}  # saved before cf_gains existed: its members' input layers as drawn
    if isinstance(data, dict) and data.get("fit") == "closed-form" and "cf_hop" not in data:
        data = {**data, "cf_hop": "scale"}  # saved before cf_hop existed: its merged windows side by side
    if isinstance(data, dict) and data.get("fit") == "closed-form" and "cf_series_norm" not in data:
        data = {**data, "cf_series_norm": "global"}  # saved before cf_series_norm existed: the tokens as normalised
    return from_dict(RunConfig, data, where=where)


def loaded(saved: Any, where: str, device: str | None = None) -> RunConfig:
    """A saved config read to load its model (``fpt.load``, predict, eval, export): the resolution every config
    goes through (``from_saved``), with ``device``, where to load it, given over the saved one. Never the resume
    check (``fpt.train.resume_config``): loading a model changes nothing of its run."""
    _saved_settings(saved, where)  # before the device given is added to it
    if device is not None and isinstance(saved, dict):
        saved = {**saved, "device": given_device(device)}
    return from_saved(saved, where)


def given_device(device: Any) -> str:
    """The device a caller gives to load a model on (fpt.load's device=, fpt predict's --device), checked as its own:
    merged into the saved config unchecked, a device='gpu' was refused as a fault of the run's config.yaml, or of an
    export's config.json with 'export the run again', and an export's device=0 was read as none given (auto)."""
    device = device_name(device)
    if isinstance(device, str) and DEVICES.fullmatch(device):
        return device
    index = isinstance(device, numbers.Integral) and not isinstance(device, bool) and int(device) >= 0
    hint = f" (GPU {int(device)} is {option('device', f'cuda:{int(device)}')})" if index else ""
    said = option("device", device) if isinstance(device, str) else f"device={device!r}"  # not text: Python's
    raise ConfigError(f"{said}, the device to load the model on, must be {DEVICES_SAID}{hint}")


def _saved_settings(saved: Any, where: str) -> None:
    """Refuse a saved config of no settings: fpt saves every field, so an empty config.yaml (``load_yaml`` reads it
    as {}) is a file emptied or cut short, and read, it rebuilt today's default run (bit-xor, the default body) in
    its place: predict then failed naming a checkpoint's body fingerprint, resume a config 'not written by fpt'."""
    if isinstance(saved, dict) and not saved:
        raise ConfigError(f"{where} holds no settings (it is empty or all comments), where fpt saved every field of "
                          "the run; restore it from a copy of the run, or train the run again")


def from_dict(cls: type, data: dict[str, Any], where: str = "config", sources: Mapping[str, str] | None = None) -> Any:
    """Build dataclass ``cls`` from a mapping, rejecting unknown keys and wrong types. ``sources``: where each key's
    value came from, when ``data`` merges several (a config file and the command line): a field's own error names
    its source alone; an error of several fields, ``where``."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of fields, got {type(data).__name__}")
    source = {k: (sources or {}).get(k, where) for k in data}
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted((k for k in data if k not in names), key=str)
    if unknown:
        unknown = [k for k in unknown if source[k] == source[unknown[0]]]  # those of one source, named by it
        raise ConfigError(f"{source[unknown[0]]}: unknown field(s) {show(unknown)}{near(unknown[0], sorted(names))}; "
                          f"known fields: {', '.join(sorted(names))}")
    values = {k: _coerce(device_name(v) if k == "device" else v, hints[k], f"{source[k]}: field {k!r}")
              for k, v in data.items()}
    try:
        return resolve(values, where=where) if cls is RunConfig else cls(**values)
    except ConfigError as exc:  # a dataclass's own check: say where its values came from, once
        if str(exc).startswith(where):
            raise
        raise ConfigError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def parse_overrides(items: list[str], where: str = "command line") -> dict[str, Any]:
    """``key=value`` strings -> nested dict; ``task.n_bits=5`` goes to task_options. A key given twice with two
    values is refused (``steps=5 steps=9`` trained 9 steps in silence); twice with one value, as the field reads
    it (``lr=0.001 lr=1e-3``), is taken, as ``--lr 0.001 lr=1e-3`` is (``fpt.cli._args.given_fields``)."""
    out: dict[str, Any] = {}
    given: dict[str, str] = {}  # each key's item as written, to name both in the error
    for item in items:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not key=value (e.g. steps=500 or task.n_bits=5)")
        key, raw = item.split("=", 1)
        if not key or key == "task.":
            raise ConfigError(f"override {show(item)} has no key before '='; write key=value (e.g. steps=500)")
        try:
            value = yaml.load(raw, Loader=StrictLoader) if raw else ""  # noqa: S506 (a SafeLoader)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or type(exc).__name__
            raise ConfigError(f"override {show(item)}: the value is not valid YAML ({problem}); give a number, "
                              "true/false, a word, or \"quoted text\"") from None
        if key.startswith("task."):
            name, into = key, out.setdefault("task_options", {})
            field = key[len("task."):]
        else:
            name = field = key.replace("-", "_")
            into = out
        if field in into and not _same_override(name, into[field], value):
            raise ConfigError(f"{where}: {name} is given twice, as {given[name]} and {item}; give it once")
        given.setdefault(name, item)
        into[field] = value
    return out


def _same_override(name: str, a: Any, b: Any) -> bool:
    """Whether two ``key=value`` values set ``name`` (a RunConfig field, or ``task.OPTION``) to one value: a
    field's as its type reads them, a task option's (typed by its task, unknown here) as YAML read them."""
    if name in {f.name for f in dataclasses.fields(RunConfig)}:
        return same_setting(name, a, b)
    return a == b and type(a) is type(b)


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if key == "task_options" and isinstance(value, dict):
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


class StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (no tags that build objects) that refuses a key given twice in one mapping: the safe
    loader keeps the last of ``lr: 1e-3`` ... ``lr: 0.5`` in silence, so a run trained with the value read last.
    Its parser is libyaml's where PyYAML was built with it (the pure-Python scanner took ~40 ms of a config.yaml, so
    ``fpt runs`` over 300 runs spent 12 of its 14 s in it); the constructor, and this check, stay PyYAML's."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # '<<: *base' entries may be overridden by own keys
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node.start_mark)
                except TypeError:  # an unhashable key: the safe loader's own error names it
                    continue
                if first is not key_node.start_mark:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping", node.start_mark,
                        f"the key {key!r} is given twice (first on line {first.line + 1}); give each key once",
                        key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path, what: str = "config file") -> Any:
    """The YAML document of a file a user gives or fpt wrote (``what`` names it in errors): read within
    ``bounded.CONFIG_LIMIT``, as UTF-8, by ``StrictLoader`` (no tags that build objects, no key given twice), and
    checked for an alias bomb; every problem is one ``ConfigError`` naming the file and, where YAML knows it, the line."""
    path = Path(path)
    try:
        text = bounded.read_bytes(path, bounded.CONFIG_LIMIT, ConfigError).decode("utf-8")
        data = yaml.load(text, Loader=StrictLoader)  # noqa: S506 (StrictLoader is a SafeLoader)
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"{what} {path} is a directory; give the YAML file (e.g. {path / 'config.yaml'})") from None
    except OSError as exc:
        raise ConfigError(f"{what} {path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{what} {path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} on line {line}); "
                          "save it as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{what} {path} is not valid YAML{at}: {problem}") from None
    except RecursionError:
        raise ConfigError(f"{what} {path}: nested too deeply to read") from None
    bounded.expanded(data, f"{what} {path}", error=ConfigError)  # an alias bomb, before anyone walks it
    return data


def load_yaml(path: str | Path) -> dict[str, Any]:
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping of fields at the top level (key: value lines), "
                          f"got a {type(data).__name__}")
    return data


def save_yaml(config: RunConfig, path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))


def train_command(config: dict[str, Any], out: str) -> str:
    """The ``fpt train`` command line that reproduces a config (fields that differ from its preset's defaults)."""
    preset = config.get("preset", SAVED_PRESET)
    base = {k: config[k] for k in ("task", "data") if config.get(k) is not None}
    defaults = from_dict(RunConfig, {**base, "preset": preset}).to_dict()
    # the command line's preset and task (task options are all given)
    defaults.update(preset=DEFAULT_PRESET, task=RunConfig.task, data=None, task_options={})
    parts = ["fpt", "train"]
    for key, value in config.items():
        if key == "task_options" or (key in defaults and defaults[key] == value):
            continue
        parts += [f"--{key.replace('_', '-')}", shlex.quote(yaml_scalar(value))]
    parts += [shlex.quote(f"task.{k}={yaml_scalar(v)}") for k, v in (config.get("task_options") or {}).items()]
    return " ".join([*parts, "--out", shlex.quote(out)])


def yaml_scalar(value: Any) -> str:
    """A value as the command line reads it (YAML)."""
    # The CLI reads values as YAML, and JSON is YAML: lists and None survive the round trip.
    return value if isinstance(value, str) else json.dumps(value)
