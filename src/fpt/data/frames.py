"""A pandas DataFrame whose columns are a MultiIndex (``df.groupby(k).agg(["mean", "std"])``, ``pd.concat(frames,
axis=1, keys=[...])``), read by flat names: its levels joined with '_', empty levels left out (``("x", "mean")`` is
``x_mean``, ``("y", "")`` is ``y``), as practitioners flatten them, so that a column can be named (``target="y"``,
``drop_columns="x_std"``); read as the text of each tuple, no target could be named but the default, the last."""

from __future__ import annotations

from typing import Any

import numpy as np

from fpt.data.base import is_missing

JOIN = "_"


def has_multiindex_columns(frame: Any) -> bool:
    return getattr(getattr(frame, "columns", None), "nlevels", 1) >= 2


def _levels(column: tuple[Any, ...]) -> tuple[str, ...]:
    """A MultiIndex column's non-empty levels (not None, NaN or blank) as text."""
    levels = np.empty(len(column), dtype=object)
    levels[:] = list(column)
    return tuple(str(v).strip() for v, gap in zip(levels, is_missing(levels), strict=True) if not gap)


def flat_name(column: tuple[Any, ...]) -> str:
    """One MultiIndex column's name: its non-empty levels joined with '_'."""
    return JOIN.join(_levels(column))


def flattened(frame: Any, where: str, error: type[Exception]) -> Any:
    """``frame`` with MultiIndex columns named by ``flat_name`` (a shallow copy: the values are not copied); any other
    frame as given. Two columns that flatten to one name are an ``error`` naming both and the fix."""
    if not has_multiindex_columns(frame):
        return frame
    names = [flat_name(c) for c in frame.columns]
    clash = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if clash is not None:
        both = [c for c, n in zip(frame.columns, names, strict=True) if n == clash][:2]
        raise error(f"{where}: MultiIndex columns {both[0]!r} and {both[1]!r} both read as {clash!r} (levels joined "
                    f"with '{JOIN}'); give every column its own name (df.columns = [...])")
    out = frame.copy(deep=False)
    out.columns = names
    return out


def tuple_target(frame: Any, target: str | None, where: str, error: type[Exception]) -> str | None:
    """A target given as the tuple of one MultiIndex column (``target=("x", "mean")``, which the config joins as
    ``"x,mean"``, the comma-separated names of several targets) as that column's flat name, ``x_mean``; any other
    target as given (``("y", "")`` is ``"y,"``: the flat name ``y`` already). Where the parts also name columns of
    their own, which is meant cannot be told: an ``error`` naming both readings."""
    if target is None or not has_multiindex_columns(frame):
        return target
    parts = tuple(p.strip() for p in str(target).split(",") if p.strip())
    named = [c for c in frame.columns if len(parts) > 1 and _levels(c) == parts]
    if not named:
        return target
    flat = flat_name(named[0])
    if all(p in {flat_name(c) for c in frame.columns} for p in parts):
        raise error(f"{where}: target {target!r} names the column {named[0]!r} and also the columns "
                    f"{', '.join(map(repr, parts))}; give the one column as {flat!r} or the several by their names")
    return flat


__all__ = ["JOIN", "flat_name", "flattened", "has_multiindex_columns", "tuple_target"]
