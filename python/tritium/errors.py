"""Triton's `triton.errors`: the base class of every kernel error."""
from .language.errors import TritonError

__all__ = ["TritonError"]
