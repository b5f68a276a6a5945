"""`triton.language.extra.cuda`: NVIDIA's libdevice."""
from . import libdevice  # noqa: F401

__all__ = ["libdevice"]
