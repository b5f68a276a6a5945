"""Kernels whose IR seeds the fuzzers: one per feature family of the tile IR
(memory, reductions, scans, dot, control flow, calls, shape ops, atomics,
debug ops), so mutation starts from every op kind the frontend emits. The
tutorial kernels (vector add, softmax, layer norm, matmul, a noinline call)
come from tests/kernels/, their one home; the rest are fuzz-only."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tritium as triton
import tritium.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from kernels.calls import noinline_call  # noqa: E402
from kernels.layer_norm import layer_norm_fwd_kernel  # noqa: E402
from kernels.matmul import matmul_kernel  # noqa: E402
from kernels.softmax import softmax_kernel  # noqa: E402
from kernels.vector_add import add_kernel  # noqa: E402


@triton.jit
def control_flow(x_ptr, out_ptr, n, limit, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    if pid % 2 == 0:
        x = x * 2
    else:
        x = x - 1
    i = 0
    while i < limit:
        x = x + i
        i += 1
    for j in range(3, n, 2):
        if j > limit:
            x = x ^ j
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def reductions(x_ptr, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows[:, None] * BLOCK_N + cols[None, :])
    tl.store(out_ptr + rows, tl.max(x, axis=1))
    tl.store(out_ptr + BLOCK_M + cols, tl.min(x, axis=0))
    tl.store(out_ptr + 2 * BLOCK_M + rows, tl.argmax(x, axis=1).to(x.dtype))
    tl.store(out_ptr + 3 * BLOCK_M, tl.sum(tl.sum(x, axis=1), axis=0))


@triton.jit
def scans(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=0))
    tl.store(out_ptr + BLOCK + offs, tl.cumprod(x, axis=0, reverse=True))


@triton.jit
def shapes(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    pair = tl.join(x, x + 1)
    a, b = tl.split(pair)
    grid = tl.reshape(a, (BLOCK // 2, 2))
    flipped = tl.permute(grid, (1, 0))
    both = tl.cat(b, b, can_reorder=True)
    tl.store(out_ptr + offs, tl.reshape(flipped, (BLOCK,)) + tl.broadcast_to(tl.max(both, axis=0), (BLOCK,)))
    tl.store(out_ptr + BLOCK + tl.arange(0, 2 * BLOCK), both)


@triton.jit
def atomics(ptr, val_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(val_ptr + offs, mask=mask, other=0)
    tl.atomic_add(ptr + offs, v, mask=mask)
    tl.atomic_max(ptr + offs, v, mask=mask, sem="relaxed", scope="cta")
    tl.atomic_cas(ptr, 0, 1)
    tl.atomic_xchg(ptr + 1, 7)


@triton.jit
def casts_and_math(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs).to(tl.float32)
    y = tl.sin(x) + tl.cos(x) * tl.exp2(x) - tl.log(tl.abs(x) + 1.0)
    y = tl.fma(y, x, tl.rsqrt(x * x + 1.0))
    y = tl.clamp(y, -4.0, 4.0)
    y = tl.floor(y) + tl.ceil(y) + tl.erf(y)
    z = (y.to(tl.int32) >> 1) << 2
    i = tl.multiple_of(z, 16)
    tl.store(out_ptr + offs, (i.to(tl.float32) / 3.0).to(out_ptr.dtype.element_ty))


@triton.jit
def debug_ops(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.device_print("x", x)
    tl.debug_barrier()


@dataclass
class Seed:
    """One kernel specialization: runtime argument types and constexprs."""
    name: str
    fn: Any
    signature: str
    constexprs: dict = field(default_factory=dict)


SEEDS = [
    Seed("vector_add_f32", add_kernel, "*fp32 *fp32 *fp32 i32", {"BLOCK_SIZE": 1024}),
    Seed("vector_add_f16", add_kernel, "*fp16 *fp16 *fp16 i64", {"BLOCK_SIZE": 128}),
    Seed("vector_add_i8", add_kernel, "*i8 *i8 *i8 i32", {"BLOCK_SIZE": 16}),
    Seed("softmax_f32", softmax_kernel, "*fp32 *fp32 i32 i32 i32", {"BLOCK_SIZE": 256}),
    Seed("softmax_bf16", softmax_kernel, "*bf16 *bf16 i32 i32 i32", {"BLOCK_SIZE": 64}),
    Seed("layer_norm_f32", layer_norm_fwd_kernel, "*fp32 *fp32 *fp32 *fp32 *fp32 *fp32 i32 i32 fp32",
         {"BLOCK_SIZE": 512}),
    Seed("matmul_f16", matmul_kernel, "*fp16 *fp16 *fp16 " + " ".join(["i32"] * 9),
         {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8,
          "ACTIVATION": "leaky_relu"}),
    Seed("matmul_f32", matmul_kernel, "*fp32 *fp32 *fp32 " + " ".join(["i32"] * 9),
         {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 1, "ACTIVATION": ""}),
    Seed("control_flow_i32", control_flow, "*i32 *i32 i32 i32", {"BLOCK": 32}),
    Seed("control_flow_i64", control_flow, "*i64 *i64 i32 i32", {"BLOCK": 8}),
    Seed("reductions_f32", reductions, "*fp32 *fp32", {"BLOCK_M": 16, "BLOCK_N": 32}),
    Seed("reductions_i64", reductions, "*i64 *i64", {"BLOCK_M": 4, "BLOCK_N": 8}),
    Seed("scans_f32", scans, "*fp32 *fp32", {"BLOCK": 128}),
    Seed("scans_i32", scans, "*i32 *i32", {"BLOCK": 32}),
    Seed("noinline_call_f32", noinline_call, "*fp32 *fp32 i32 fp32", {"BLOCK": 256}),
    Seed("shapes_f32", shapes, "*fp32 *fp32", {"BLOCK": 64}),
    Seed("atomics_i32", atomics, "*i32 *i32 i32", {"BLOCK": 64}),
    Seed("casts_and_math_f16", casts_and_math, "*fp16 *fp16", {"BLOCK": 32}),
    Seed("debug_ops_i32", debug_ops, "*i32 i32", {"BLOCK": 16}),
]
