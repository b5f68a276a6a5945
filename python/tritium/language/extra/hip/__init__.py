"""`triton.language.extra.hip`: AMD's device library under Triton's name."""
from . import libdevice  # noqa: F401

__all__ = ["libdevice"]
