"""The paper's tables as runnable, resumable experiment grids (``fpt reproduce``)."""

from fpt.experiments.grid import SCALES, Cell, Table, expand, paper_results, table_names

__all__ = ["SCALES", "Cell", "Table", "expand", "paper_results", "table_names"]
