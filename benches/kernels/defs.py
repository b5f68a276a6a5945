"""The bench kernels and what each is specialized for (KERNELS): the bench
fixes one specialization so every run compiles the same thing.

The kernels themselves live in tests/kernels/ (the one home of sample kernels,
shared with the tests and fuzz seeds). This file runs under either compiler:
the runner binds `triton` first, to tritium (gen.py, vs_triton.py's tritium
worker) or to Triton itself (vs_triton.py's Triton worker). The kernel files
are written against `import tritium as triton`, so under Triton that name is
bound to Triton before they load; they use nothing Triton lacks."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import triton
import triton.language

if triton.__name__ != "tritium":
    sys.modules.setdefault("tritium", triton)
    sys.modules.setdefault("tritium.language", triton.language)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from kernels.calls import noinline_call  # noqa: E402
from kernels.elementwise import big_elementwise  # noqa: E402
from kernels.layer_norm import layer_norm_fwd_kernel  # noqa: E402
from kernels.matmul import wrapped_matmul_kernel  # noqa: E402
from kernels.softmax import strided_softmax_kernel  # noqa: E402
from kernels.vector_add import add_kernel  # noqa: E402

# Steps of the unrolled chain in `big_elementwise`: about 5,000 ops in all.
BIG_STEPS = 620


@dataclass
class KernelSpec:
    """One bench kernel: the function and what it is specialized for."""
    fn: Any
    # types of the runtime (non-constexpr) parameters in order, in Triton's
    # spelling, which both compilers accept
    signature: str
    constexprs: dict[str, Any] = field(default_factory=dict)


KERNELS: dict[str, KernelSpec] = {
    "vector_add": KernelSpec(add_kernel, "*fp32 *fp32 *fp32 i32", {"BLOCK_SIZE": 1024}),
    "softmax": KernelSpec(strided_softmax_kernel, "*fp32 *fp32 i32 i32 i32 i32", {"BLOCK_SIZE": 1024}),
    "layer_norm_fwd": KernelSpec(layer_norm_fwd_kernel, "*fp16 *fp16 *fp16 *fp16 *fp32 *fp32 i32 i32 fp32",
                                 {"BLOCK_SIZE": 1024}),
    "matmul": KernelSpec(wrapped_matmul_kernel, "*fp16 *fp16 *fp16 " + " ".join(["i32"] * 9),
                         {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}),
    "big_elementwise": KernelSpec(big_elementwise, "*fp32 *fp32 i32", {"STEPS": BIG_STEPS, "BLOCK": 256}),
    "noinline_call": KernelSpec(noinline_call, "*fp32 *fp32 i32 fp32", {"BLOCK": 1024}),
}
