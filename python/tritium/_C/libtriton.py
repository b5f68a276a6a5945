"""`triton._C.libtriton` under the switch (as_triton.py): the one part
programs use directly, `nvidia.cublas.CublasLt` (runtime/cublas.py, a real
cuBLASLt call), e.g. tutorial 09's cuBLAS baseline. The rest of Triton's
extension binds its MLIR compiler (ir, passes, llvm, ...), which tritium
does not have; those names are absent rather than imitated."""
from __future__ import annotations

import types

from ..runtime import cublas

nvidia = types.ModuleType("triton._C.libtriton.nvidia", "NVIDIA-specific bindings: `cublas.CublasLt`.")
nvidia.cublas = cublas

__all__ = ["nvidia"]
