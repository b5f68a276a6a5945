"""`triton.language.extra`: the target libraries. `libdevice` works on every
target tritium compiles for (and in the interpreter); `cuda.libdevice` and
`hip.libdevice` are the same functions under Triton's per-target names."""
from . import cuda, hip, libdevice  # noqa: F401

__all__ = ["cuda", "hip", "libdevice"]
