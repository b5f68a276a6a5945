"""Codegen D, compile-only (no GPU): scans (cumsum, cumprod, associative_scan
with a @jit combine over (value, index) pairs, reverse, 1-D and 2-D along
either axis) and 16-byte vectors for 2-D accesses `base + rows[:, None] *
stride + cols[None, :]`. Each kernel goes frontend → compile_ptx → ptxas for
sm_80 and sm_90a. tests/gpu/test_scans_gpu.py runs the same kernels."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from tritium import _core

from test_codegen_ptx import ARCHS, ptxas

ALIGNED = {"divisibility": 16}


# --- kernels (shared with tests/gpu/test_scans_gpu.py) ---------------------------

@tritium.jit
def cumsum_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, tl.cumsum(x, 0, reverse=REVERSE), mask=offs < n)


@tritium.jit
def cumprod_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(y_ptr + offs, tl.cumprod(x, 0, reverse=REVERSE), mask=offs < n)


@tritium.jit
def int_cumsum_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), 0))


@tritium.jit
def running_argmax_combine(v1, i1, v2, i2):
    # ties keep the earlier index; not commutative, so operand order matters
    take = v2 > v1
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@tritium.jit
def running_argmax_kernel(x_ptr, v_ptr, i_ptr, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    v, i = tl.associative_scan((x, offs), 0, running_argmax_combine, reverse=REVERSE)
    tl.store(v_ptr + offs, v)
    tl.store(i_ptr + offs, i)


@tritium.jit
def affine_combine(a1, b1, a2, b2):
    # associative but not commutative: (a2, b2) after (a1, b1) is x -> a2 * (a1 * x + b1) + b2
    return a1 * a2, b1 * a2 + b2


@tritium.jit
def affine_scan_kernel(a_ptr, b_ptr, outa_ptr, outb_ptr, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    ra, rb = tl.associative_scan((a, b), 0, affine_combine, reverse=REVERSE)
    tl.store(outa_ptr + offs, ra)
    tl.store(outb_ptr + offs, rb)


@tritium.jit
def cumsum_2d_kernel(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr,
                     AXIS: tl.constexpr, REVERSE: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    offs = rows[:, None] * stride + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.cumsum(x, AXIS, reverse=REVERSE), mask=mask)


@tritium.jit
def copy_2d_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask)
    tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :], x * 2.0, mask=mask)


SCAN_CASES = [
    ("cumsum_1024", cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=1024, REVERSE=False), 4),
    ("cumsum_8192_w8_rev", cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=8192, REVERSE=True), 8),
    ("cumsum_8192_w1", cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=8192, REVERSE=False), 1),
    ("cumsum_32_w8", cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=32, REVERSE=True), 8),
    ("cumprod_512_rev", cumprod_kernel, "*fp32, *fp32, i32", dict(BLOCK=512, REVERSE=True), 2),
    ("cumsum_i32", int_cumsum_kernel, "*i32, *i32", dict(BLOCK=2048), 4),
    ("cumsum_f16", cumsum_kernel, "*fp16, *fp16, i32", dict(BLOCK=1024, REVERSE=False), 4),
    ("running_argmax", running_argmax_kernel, "*fp32, *fp32, *i32", dict(BLOCK=1024, REVERSE=False), 4),
    ("running_argmax_rev", running_argmax_kernel, "*fp32, *fp32, *i32", dict(BLOCK=256, REVERSE=True), 8),
    ("affine_f64", affine_scan_kernel, "*fp64, *fp64, *fp64, *fp64", dict(BLOCK=512, REVERSE=False), 4),
    ("cumsum_2d_axis1", cumsum_2d_kernel, "*fp32, *fp32, i32, i32, i32",
     dict(BM=16, BN=128, AXIS=1, REVERSE=False), 4),
    ("cumsum_2d_axis0_rev", cumsum_2d_kernel, "*fp32, *fp32, i32, i32, i32",
     dict(BM=64, BN=32, AXIS=0, REVERSE=True), 4),
    ("cumsum_2d_axis0_w8", cumsum_2d_kernel, "*fp32, *fp32, i32, i32, i32",
     dict(BM=128, BN=16, AXIS=0, REVERSE=False), 8),
]


def compile_case(k, sig: str, consts: dict, warps: int, arch: str = "sm_90a", attrs: dict | None = None) -> dict:
    return _core.compile_ptx(k.compile_ir(signature=sig, constexprs=consts, arg_attrs=attrs), arch, warps)


def all_aligned(k) -> dict:
    """16-byte facts on every runtime argument: the layout then gives each
    thread 16-byte chunks, as for tensors launched from PyTorch."""
    return {p.name: ALIGNED for p in k.params if not p.is_constexpr}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name,k,sig,consts,warps", SCAN_CASES, ids=[c[0] for c in SCAN_CASES])
def test_scans_compile_and_pass_ptxas(name, k, sig, consts, warps, arch, tmp_path):
    # aligned: every case has several lanes along the scanned axis, so the warp step runs
    out = compile_case(k, sig, consts, warps, arch, attrs=all_aligned(k))
    assert "shfl.sync.idx.b32" in out["ptx"] or warps == 1 and consts.get("BLOCK", 0) <= 32
    ptxas(out["ptx"], arch, tmp_path)
    # without facts each thread owns one element per stripe (coalesced scalar
    # accesses); the scan must compile for that layout too
    ptxas(compile_case(k, sig, consts, warps, arch)["ptx"], arch, tmp_path)


def test_scan_shared_memory_follows_warps():
    # 1024 f32 on 4 warps, aligned: 4 per thread, 2 reps of 512: 2 × 4 warp totals
    out = compile_case(cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=1024, REVERSE=False), 4,
                       attrs=all_aligned(cumsum_kernel))
    assert out["shared"] == 32 and "bar.sync" in out["ptx"]
    # unaligned: 1 per thread per stripe, 8 reps of 128: 8 × 4 warp totals
    out = compile_case(cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=1024, REVERSE=False), 4)
    assert out["shared"] == 128
    # one warp: shuffles only
    out = compile_case(cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=1024, REVERSE=False), 1)
    assert out["shared"] == 0 and "bar.sync" not in out["ptx"]
    # (value, index) pairs: each operand's totals in its own 16-byte aligned region
    out = compile_case(running_argmax_kernel, "*fp32, *fp32, *i32", dict(BLOCK=1024, REVERSE=False), 4,
                       attrs=all_aligned(running_argmax_kernel))
    assert out["shared"] == 64


def test_reverse_takes_warp_totals_from_lane_zero():
    fwd = compile_case(cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=256, REVERSE=False), 2)["ptx"]
    rev = compile_case(cumsum_kernel, "*fp32, *fp32, i32", dict(BLOCK=256, REVERSE=True), 2)["ptx"]
    assert ", 31, 31, -1;" in fwd and ", 0, 31, -1;" in rev


COPY_SIG = "*fp32, *fp32, i32, i32, i32, i32"


@pytest.mark.parametrize("arch", ARCHS)
def test_2d_access_with_aligned_strides_is_16_bytes(arch, tmp_path):
    attrs = {"x_ptr": ALIGNED, "y_ptr": ALIGNED, "M": ALIGNED, "N": ALIGNED, "stride_x": ALIGNED, "stride_y": ALIGNED}
    out = compile_case(copy_2d_kernel, COPY_SIG, dict(BM=32, BN=64), 4, arch, attrs)
    assert "ld.global.v4.f32" in out["ptx"] and "st.global.v4.f32" in out["ptx"]
    assert "ld.global.f32" not in out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


def test_2d_access_width_follows_divisibility():
    base = {"x_ptr": ALIGNED, "y_ptr": ALIGNED, "M": ALIGNED, "N": ALIGNED}
    # unknown strides: one element per access
    out = compile_case(copy_2d_kernel, COPY_SIG, dict(BM=32, BN=64), 4, attrs=base)["ptx"]
    assert "ld.global.v" not in out and "ld.global.f32" in out
    # x's stride 16-divisible, y's only 2: 16-byte loads, 8-byte stores
    out = compile_case(copy_2d_kernel, COPY_SIG, dict(BM=32, BN=64), 4,
                       attrs={**base, "stride_x": ALIGNED, "stride_y": {"divisibility": 2}})["ptx"]
    assert "ld.global.v4.f32" in out and "st.global.v2.f32" in out and "st.global.v4" not in out
    # N unknown: the mask changes every element, so no vectors
    out = compile_case(copy_2d_kernel, COPY_SIG, dict(BM=32, BN=64), 4,
                       attrs={"x_ptr": ALIGNED, "y_ptr": ALIGNED, "stride_x": ALIGNED, "stride_y": ALIGNED})["ptx"]
    assert "ld.global.v" not in out


def test_bad_scan_axis_is_a_compile_error():
    @tritium.jit
    def bad(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), 1))

    with pytest.raises(Exception, match="axis"):
        bad.compile_ir(signature="*fp32", constexprs={"BLOCK": 64})
