"""Where NVIDIA's libdevice.10.bc is: the bitcode the NVPTX target links for
`libdevice` functions it does not lower itself (lower/extern_fn.rs).

TRITIUM_LIBDEVICE_PATH (or Triton's TRITON_LIBDEVICE_PATH) names a file;
otherwise the pip wheels (nvidia-cuda-nvcc-cu12 / cu13, an installed
Triton's copy) and a CUDA toolkit are searched."""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

_RELATIVE = ("nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc", "nvidia/cu13/nvvm/libdevice/libdevice.10.bc",
             "triton/backends/nvidia/lib/libdevice.10.bc")
_TOOLKITS = ("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc",)


def libdevice_path() -> str | None:
    """The libdevice.10.bc to link, or None when there is none."""
    env = os.environ.get("TRITIUM_LIBDEVICE_PATH") or os.environ.get("TRITON_LIBDEVICE_PATH")
    if env:
        return env
    return _search(tuple(sys.path))


@functools.lru_cache(maxsize=None)
def _search(paths: tuple[str, ...]) -> str | None:
    for entry in paths:
        for rel in _RELATIVE:
            p = Path(entry or ".") / rel
            if p.is_file():
                return str(p)
    return next((p for p in _TOOLKITS if Path(p).is_file()), None)
