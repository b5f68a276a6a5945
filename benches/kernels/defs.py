"""The bench kernels, written as plain Triton source (`import triton`), so the
same file compiles with Triton itself (benches/vs_triton.py) and with tritium
under `import tritium as triton` (gen.py and vs_triton.py alias the names).
KERNELS says what each kernel is specialized for: the bench fixes one
specialization so every run compiles the same thing."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import triton
import triton.language as tl

# Steps of the unrolled chain in `big_elementwise`: about 5,000 ops in all.
BIG_STEPS = 620


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    # one program per row slice, striding over rows like the fused-softmax tutorial
    first_row = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row in tl.range(first_row, n_rows, row_step):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
        shifted = x - tl.max(x, axis=0)
        num = tl.exp(shifted)
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


@triton.jit
def layer_norm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, row_stride, n_cols, eps,
                   BLOCK_SIZE: tl.constexpr):
    # three passes over the row in BLOCK_SIZE chunks: mean, variance, normalize
    row = tl.program_id(0)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc_var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        centered = tl.where(cols < n_cols, x - mean, 0.0)
        acc_var += centered * centered
    var = tl.sum(acc_var, axis=0) / n_cols
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + cols, y, mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # grouped program order for L2 reuse, then a K loop of tl.dot on fp16 tiles
    pid = tl.program_id(axis=0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    group = pid // width
    first_m = group * GROUP_M
    group_rows = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % group_rows
    pid_n = (pid % width) // group_rows
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_tile, mask=rk[None, :] < k_left, other=0.0)
        b = tl.load(b_tile, mask=rk[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_tile = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c_tile, acc.to(tl.float16), mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def big_elementwise(x_ptr, out_ptr, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    # a long unrolled chain of block math: stresses every stage's per-op cost
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = x
    for i in tl.static_range(STEPS):
        acc = acc * 0.999 + tl.sin(acc) * 0.5
        if i % 4 == 0:
            acc = tl.maximum(acc, x)
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit(noinline=True)
def scaled_tanh(x, scale):
    e = tl.exp(-2.0 * x * scale)
    return (1.0 - e) / (1.0 + e)


@triton.jit
def noinline_call(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, scaled_tanh(x, scale), mask=mask)


@dataclass
class KernelSpec:
    """One bench kernel: the function and what it is specialized for."""
    fn: Any
    # types of the runtime (non-constexpr) parameters in order, in Triton's
    # spelling, which both compilers accept
    signature: str
    constexprs: dict[str, Any] = field(default_factory=dict)


KERNELS: dict[str, KernelSpec] = {
    "vector_add": KernelSpec(vector_add, "*fp32 *fp32 *fp32 i32", {"BLOCK_SIZE": 1024}),
    "softmax": KernelSpec(softmax, "*fp32 *fp32 i32 i32 i32 i32", {"BLOCK_SIZE": 1024}),
    "layer_norm_fwd": KernelSpec(layer_norm_fwd, "*fp16 *fp16 *fp16 *fp16 *fp32 *fp32 i32 i32 fp32",
                                 {"BLOCK_SIZE": 1024}),
    "matmul": KernelSpec(matmul, "*fp16 *fp16 *fp16 " + " ".join(["i32"] * 9),
                         {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}),
    "big_elementwise": KernelSpec(big_elementwise, "*fp32 *fp32 i32", {"STEPS": BIG_STEPS, "BLOCK": 256}),
    "noinline_call": KernelSpec(noinline_call, "*fp32 *fp32 i32 fp32", {"BLOCK": 1024}),
}
