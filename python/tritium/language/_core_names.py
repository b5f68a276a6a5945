"""`tl.core.<name>`: Triton keeps every language name in its `core` module
and libraries spell them that way (`core.dtype("fp32")`, `core.extern`,
`core.extern_elementwise`, `core.tensor`). tritium's core.py holds only the
tensor and constexpr machinery, so the package's public names are added to
it here, once everything is imported (core cannot import what imports core).
"""
from __future__ import annotations

import builtins
import sys

from . import core as _core


def _fill() -> None:
    package = sys.modules[__name__.rpartition(".")[0]]
    for name, value in vars(package).items():
        # a name of Python's builtins (min, max, range, ...) would shadow it in core.py's own code
        if not name.startswith("_") and not hasattr(_core, name) and not hasattr(builtins, name):
            setattr(_core, name, value)


_fill()
