"""NVIDIA specialization rules: the shared properties only (16-byte alignment
feeds vector width; equal_to_1 folds strides)."""
from __future__ import annotations

from .base import Backend, shared_properties


def backend() -> Backend:
    return Backend("cuda", shared_properties())
