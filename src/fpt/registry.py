"""A string-keyed registry filled by decorators (timm's ``register_model`` habit).

A registry may also take entries from other installed distributions: ``Registry(kind,
plugins="fpt.tasks")`` reads the entry points of that group (``[project.entry-points."fpt.tasks"]``
in a plugin's ``pyproject.toml``, ``NAME = "module:object"``) the first time a name is listed or
not found among its own, never before. A plugin that cannot be loaded costs one line on stderr
naming its entry point and distribution, and the registry goes on without it.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from fpt.errors import RegistryError  # noqa: F401  (re-exported: raised here)

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, plugins: str | None = None, check: Callable[[Any], str | None] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self.plugins = plugins  # entry point group read lazily, or None
        self._check = check  # a loaded plugin object -> why it is not usable, or None
        self._plugins_loaded = plugins is None
        self.plugin_errors: dict[str, str] = {}  # entry point name -> why it was skipped
        self.plugin_sources: dict[str, str] = {}  # name -> "entry point NAME = VALUE (distribution D V)"

    def register(self, *names: str) -> Callable[[T], T]:
        def wrap(obj: T) -> T:
            for name in names:
                if name in self._items:
                    raise RegistryError(f"{self.kind} {name!r} is registered twice")
                self._items[name] = obj
            return obj

        return wrap

    def get(self, name: str) -> T:
        if name not in self._items:
            self.load_plugins()
        if name not in self._items:
            if name in self.plugin_errors:
                raise RegistryError(f"{self.kind} {name!r} is a plugin that could not be loaded: {self.plugin_errors[name]}")
            close = difflib.get_close_matches(name, list(self._items), n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise RegistryError(
                f"unknown {self.kind} {name!r}.{hint} Available: {', '.join(sorted(self._items))}"
            )
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        if name not in self._items:
            self.load_plugins()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def names(self) -> list[str]:
        self.load_plugins()
        return sorted(self._items)

    def load_plugins(self) -> None:
        """Register the entry points of ``self.plugins`` (once); a broken one is one warning line and skipped."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points

        try:
            found = list(entry_points(group=self.plugins))
        except Exception as exc:  # a damaged dist-info elsewhere on sys.path must not stop fpt
            _warn(f"cannot list {self.kind} plugins (entry point group {self.plugins!r}): {_one_line(exc)}")
            return
        seen = set()
        for ep in sorted(found, key=lambda e: e.name):
            if (ep.name, ep.value) in seen:  # one distribution found twice on sys.path
                continue
            seen.add((ep.name, ep.value))
            dist = getattr(ep, "dist", None)
            where = f"entry point {ep.name} = {ep.value}" + (f" (distribution {dist.name} {dist.version})" if dist else "")
            if ep.name in self._items and ep.name not in self.plugin_sources:
                self._skip(ep.name, where, f"{self.kind} {ep.name!r} is already built in; rename the entry point")
                continue
            try:
                obj = ep.load()
            except BaseException as exc:  # noqa: BLE001 (any failure of foreign code, SystemExit included)
                if isinstance(exc, KeyboardInterrupt):
                    raise
                self._skip(ep.name, where, f"it failed to import: {_one_line(exc)}")
                continue
            why = self._check(obj) if self._check else None
            if why:
                self._skip(ep.name, where, why)
                continue
            if self._items.get(ep.name, obj) is not obj:  # importing it registered another object under the name
                self._skip(ep.name, where, f"{self.kind} {ep.name!r} is registered twice")
                continue
            self._items[ep.name] = obj
            self.plugin_sources[ep.name] = where

    def _skip(self, name: str, where: str, why: str) -> None:
        self.plugin_errors.setdefault(name, f"{where}: {why}")
        _warn(f"{self.kind} plugin skipped, {where}: {why}")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _warn(message: str) -> None:
    print(f"fpt: warning: {message}", file=sys.stderr)


def import_submodules(package_name: str) -> None:
    """Import every module of a package so its decorators register themselves."""
    import importlib
    import pkgutil

    package = importlib.import_module(package_name)
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package_name}.{info.name}")
