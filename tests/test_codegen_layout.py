"""Layouts, shape ops and reductions, compile-only (no GPU): N-D kernels go
through the frontend, `tritium._core.compile_ptx`, then ptxas for sm_80 and
sm_90a; the dynamic shared memory size the compile result reports is checked."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from tritium import _core

from test_codegen_ptx import ARCHS, ptxas
from kernels.softmax import softmax_kernel
from kernels.tiles import layer_norm_2d as layer_norm_2d_kernel, row_sum_2d as row_sum_2d_kernel


@tritium.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@tritium.jit
def col_max_kernel(x_ptr, out_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :])
    tl.store(out_ptr + cols, tl.max(x, axis=0))


@tritium.jit
def argmax_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.argmax(x, axis=0))


@tritium.jit
def shape_ops_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    t = tl.trans(x)                                   # N x M
    r = tl.reshape(x, (N, M))
    tl.store(out_ptr + cols[:, None] * M + rows[None, :], t + r)


@tritium.jit
def join_split_cat_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    j = tl.join(a, b)                                 # N x 2
    lo, hi = tl.split(j * 2.0)
    c = tl.cat(lo, hi, can_reorder=True)              # 2N
    tl.store(out_ptr + tl.arange(0, 2 * N), c)


CASES = [
    ("softmax_8192", softmax_kernel, dict(signature="*fp32, *fp32, i32, i32, i32", constexprs={"BLOCK_SIZE": 8192}), 4),
    ("softmax_1024_w8", softmax_kernel, dict(signature="*fp32, *fp32, i32, i32, i32", constexprs={"BLOCK_SIZE": 1024}), 8),
    ("softmax_32_w1", softmax_kernel, dict(signature="*fp32, *fp32, i32, i32, i32", constexprs={"BLOCK_SIZE": 32}), 1),
    ("layer_norm_f16", layer_norm_kernel,
     dict(signature="*fp16, *fp16, *fp16, *fp16, *fp32, *fp32, i32, i32, fp32", constexprs={"BLOCK": 8192}), 8),
    ("row_sum_2d", row_sum_2d_kernel, dict(signature="*fp32, *fp32, i32, i32, i32", constexprs={"BM": 16, "BN": 128}), 4),
    ("layer_norm_2d", layer_norm_2d_kernel, dict(signature="*fp32, *fp32, i32, i32, i32", constexprs={"BM": 8, "BN": 256}), 4),
    ("col_max", col_max_kernel, dict(signature="*fp32, *fp32, i32", constexprs={"BM": 64, "BN": 32}), 4),
    ("argmax", argmax_kernel, dict(signature="*fp32, *i32", constexprs={"BLOCK": 1024}), 4),
    ("shape_ops", shape_ops_kernel, dict(signature="*fp32, *fp32", constexprs={"M": 16, "N": 32}), 4),
    ("join_split_cat", join_split_cat_kernel, dict(signature="*fp32, *fp32, *fp32", constexprs={"N": 256}), 4),
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name,k,kw,warps", CASES, ids=[c[0] for c in CASES])
def test_compiles_and_passes_ptxas(name, k, kw, warps, arch, tmp_path):
    out = _core.compile_ptx(k.compile_ir(**kw), arch, warps)
    assert isinstance(out["shared"], int) and out["shared"] >= 0
    ptxas(out["ptx"], arch, tmp_path)


def shared_of(k, kw, warps):
    return _core.compile_ptx(k.compile_ir(**kw), "sm_90a", warps)["shared"]


def test_shared_sizes():
    # 1-D reductions to scalars: one f32 partial per warp
    assert shared_of(softmax_kernel, CASES[0][2], 4) == 16
    assert shared_of(softmax_kernel, CASES[1][2], 8) == 32
    # one warp: shuffles only, no shared memory and no barrier
    out = _core.compile_ptx(softmax_kernel.compile_ir(**CASES[2][2]), "sm_90a", 1)
    assert out["shared"] == 0 and "bar.sync" not in out["ptx"]
    assert "shfl.sync.bfly" in out["ptx"]
    # argmax: value and index partials, each region 16-byte aligned
    assert shared_of(argmax_kernel, CASES[7][2], 4) == 32
    # permute / reshape of 16x32 f32 go through 2 KiB of scratch
    assert shared_of(shape_ops_kernel, CASES[8][2], 4) == 16 * 32 * 4
    # join writes both halves (2 x 256 f32)
    assert shared_of(join_split_cat_kernel, CASES[9][2], 4) == 2 * 256 * 4


def test_scratch_is_reused_with_barriers():
    ptx = _core.compile_ptx(softmax_kernel.compile_ir(**CASES[0][2]), "sm_90a", 4)["ptx"]
    # max then sum: each cross-warp step is written, synchronised, read; the
    # second reuse of offset 0 waits for the first one's readers
    assert ptx.count("bar.sync") == 3
    assert "tritium_smem" in ptx


def test_row_sum_reduces_with_shuffles_inside_the_row():
    ptx = _core.compile_ptx(row_sum_2d_kernel.compile_ir(**CASES[4][2]), "sm_90a", 4)["ptx"]
    assert "shfl.sync.bfly" in ptx


@tritium.jit
def split_to_scalars(p, q, BLOCK: tl.constexpr):
    a, b = tl.split(tl.load(p + tl.arange(0, 2)))
    offs = tl.arange(0, BLOCK)
    tl.store(q + offs, offs * a + b)


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90a"])
def test_split_of_two_elements_into_scalars_compiles(arch):
    from tritium.compile import compile as compile_kernel
    k = compile_kernel(split_to_scalars, signature={"p": "*i64", "q": "*i64"}, constexprs={"BLOCK": 128}, target=arch)
    assert "ld.shared" in k.asm["ptx"]   # the two elements go through scratch to every thread
