"""What the GPU tests share: a @jit kernel run compiled on CUDA tensors and
interpreted by the NumPy interpreter on copies of the same inputs. Imported
by test files after their own check that torch and a CUDA device exist."""
from __future__ import annotations

from typing import Any, Callable

import torch

import tritium


def interpreted(jit_fn: Any) -> Any:
    """The same Python kernel run by the interpreter."""
    return tritium.jit(jit_fn.fn, interpret=True)


def run_both(jit_fn: Any, grid: Any, gpu_args: list | Callable[[str], list], num_warps: int = 4,
             **const: Any) -> tuple[list, list]:
    """Runs the kernel compiled on `gpu_args` (or on what `gpu_args("cuda")`
    makes) and interpreted on NumPy copies made before the launch; returns
    both argument lists."""
    if callable(gpu_args):
        gpu_args = gpu_args("cuda")
    cpu_args = [a.cpu().numpy() if torch.is_tensor(a) else a for a in gpu_args]
    jit_fn[grid](*gpu_args, num_warps=num_warps, **const)
    torch.cuda.synchronize()
    interpreted(jit_fn)[grid](*cpu_args, **const)
    return gpu_args, cpu_args


def run_interpreted(kernel: Any, grid: Any, *args: Any, **kw: Any) -> None:
    """Runs `kernel` itself in the NumPy interpreter (the `interpret` flag, as
    TRITIUM_INTERPRET=1 sets it)."""
    saved = kernel.interpret
    kernel.interpret = True
    try:
        kernel[grid](*args, **kw)
    finally:
        kernel.interpret = saved
