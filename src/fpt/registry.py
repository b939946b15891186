"""A string-keyed registry filled by decorators (timm's ``register_model`` habit)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class RegistryError(KeyError):
    """An unknown or duplicate registry key; the message lists what is available."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

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
            close = difflib.get_close_matches(name, list(self._items), n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise RegistryError(
                f"unknown {self.kind} {name!r}.{hint} Available: {', '.join(sorted(self._items))}"
            )
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def names(self) -> list[str]:
        return sorted(self._items)


def import_submodules(package_name: str) -> None:
    """Import every module of a package so its decorators register themselves."""
    import importlib
    import pkgutil

    package = importlib.import_module(package_name)
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package_name}.{info.name}")
