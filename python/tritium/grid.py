"""The launch grid, the same wherever a kernel runs (GPU, interpreter, a
CompiledKernel): an int, a tuple of 1 to 3 non-negative ints (constexprs
allowed), or a callable taking the launch's meta-parameters and returning
one of those; always (x, y, z) afterwards."""
from __future__ import annotations

import numbers
from typing import Any

from .language.core import _unwrap


def normalize_grid(grid: Any, meta: dict[str, Any] | None = None) -> tuple[int, int, int]:
    if callable(grid):
        if meta is None:
            raise TypeError("a callable grid needs the launch's meta-parameters")
        grid = grid(meta)
    grid = _unwrap(grid)
    if isinstance(grid, numbers.Integral):
        grid = (grid,)
    grid = tuple(int(_unwrap(g)) for g in grid)
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {len(grid)}")
    if any(g < 0 for g in grid):
        raise ValueError(f"grid dimensions must be non-negative, got {grid}")
    return grid + (1,) * (3 - len(grid))
