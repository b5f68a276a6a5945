"""Backends: each target family's specialization properties. `get(name)`
returns the rules for "cuda" (NVIDIA) or "hip" (AMD); a target string such as
"cuda:90" selects by its prefix."""
from __future__ import annotations

from . import amd, nvidia
from .base import FLOAT, INTEGER, KINDS, POINTER, Backend, Property, divisibility, equal_to_1, shared_properties

_FACTORIES = {"cuda": nvidia.backend, "hip": amd.backend}
_CACHE: dict[str, Backend] = {}


def get(target: str = "cuda") -> Backend:
    family = target.split(":", 1)[0].lower()
    family = {"nvidia": "cuda", "amd": "hip", "rocm": "hip"}.get(family, family)
    if family not in _FACTORIES:
        raise ValueError(f"unknown backend {target!r} (known: {', '.join(sorted(_FACTORIES))})")
    b = _CACHE.get(family)
    if b is None:
        b = _CACHE[family] = _FACTORIES[family]()
    return b


__all__ = ["Backend", "FLOAT", "INTEGER", "KINDS", "POINTER", "Property", "divisibility", "equal_to_1", "get",
           "shared_properties"]
