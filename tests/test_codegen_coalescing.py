"""Coalescing of global accesses that cannot be vectorised (compile-only, no
GPU): when no load/store of a kernel can move more than one element per
instruction, each thread must own one element per 32-lane stripe, so a warp's
access is one contiguous 128-byte line (Triton's choice), not four strided ones."""
from __future__ import annotations

import re

import pytest

import tritium
import tritium.language as tl
from tritium import _core

from test_codegen_ptx import ARCHS, ptxas
from kernels.tiles import softmax as softmax_kernel


@tritium.jit
def copy_2d(x_ptr, y_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * stride + tl.arange(0, BN)[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


SIG = "*fp32, *fp32, i32, i32"
ALIGNED = {"divisibility": ["out_ptr", "in_ptr", "stride", "n_cols"]}


def compile_softmax(arch: str, attrs: dict | None) -> dict:
    ir = softmax_kernel.compile_ir(signature=SIG, constexprs={"BLOCK": 2048}, arg_attrs=_arg_attrs(attrs))
    return _core.compile_ptx(ir, arch, 8)


def _arg_attrs(attrs: dict | None) -> dict | None:
    if attrs is None:
        return None
    return {name: {"divisibility": 16} for name in attrs["divisibility"]}


def _offsets(ptx: str, op: str) -> list[int]:
    """Byte offsets, relative to the first, of the pointers `op` uses (in order)."""
    regs = re.findall(rf"{op}[\w.]* [^\[\n]*\[ (%rd\d+) \+ 0 \]", ptx)
    base, out = None, []
    for r in regs:
        m = re.search(rf"add\.s64\s+{re.escape(r)}, (%rd\d+), (\d+);", ptx)
        if m is None:
            base = r
            out.append(0)
        else:
            assert m.group(1) == base, f"{r} is not an offset of the first pointer {base}"
            out.append(int(m.group(2)))
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_unaligned_softmax_is_coalesced(arch, tmp_path):
    ptx = compile_softmax(arch, None)["ptx"]
    assert "ld.global.v" not in ptx and "st.global.v" not in ptx
    # 2048 f32 on 256 threads: 8 scalar accesses, each a 1 KiB stripe of the row
    # (thread t owns elements t + 256k), not 4 consecutive floats per thread
    assert _offsets(ptx, "ld.global") == [1024 * k for k in range(8)]
    assert _offsets(ptx, "st.global") == [1024 * k for k in range(8)]
    ptxas(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_aligned_softmax_keeps_16_byte_accesses(arch, tmp_path):
    ptx = compile_softmax(arch, ALIGNED)["ptx"]
    assert ptx.count("ld.global.v4.f32") == 2 and ptx.count("st.global.v4.f32") == 2
    assert "ld.global.f32" not in ptx and "st.global.f32" not in ptx
    ptxas(ptx, arch, tmp_path)


def test_2d_copy_spreads_lanes_along_rows():
    # aligned rows: 16-byte accesses stay
    ptx = _core.compile_ptx(copy_2d.compile_ir(signature="*fp32, *fp32, i32", constexprs={"BM": 16, "BN": 128},
                                               arg_attrs={n: {"divisibility": 16} for n in ("x_ptr", "y_ptr", "stride")}),
                            "sm_90a", 4)["ptx"]
    assert ptx.count("ld.global.v4.f32") == 4
    # unaligned base pointers: scalar accesses, one 128-element row per warp access
    ptx = _core.compile_ptx(copy_2d.compile_ir(signature="*fp32, *fp32, i32", constexprs={"BM": 16, "BN": 128}),
                            "sm_90a", 4)["ptx"]
    # unaligned base pointers: scalar accesses, 16 of them (one per row: the
    # 128 threads span a row, thread t holding column t), not 4 per row
    assert "ld.global.v" not in ptx and ptx.count("ld.global.f32") == 16
