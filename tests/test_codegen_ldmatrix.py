"""mma.sync's operand fragments read from swizzled shared memory with
`ldmatrix`, without a GPU: kernels compiled for sm_80, sm_89 and sm_90a
(dots wgmma cannot take) through ptxas, counting each variant (x4/x2,
.trans) against the dot's tiling, the operands that must stay on
`ld.shared`, and the tutorial matmul's loop beside Triton 3.6's."""
from __future__ import annotations

import re

import pytest

import tritium
import tritium.language as tl
from kernels.matmul import matmul_kernel
from ptx_loops import instructions, loop_bodies
from tritium.compile import compile as compile_kernel
from tritium.runtime import driver

if driver.ptxas_path() is None:
    pytest.skip("ptxas not found (pip install nvidia-cuda-nvcc-cu12)", allow_module_level=True)


@tritium.jit
def tile_dot(a_ptr, b_ptr, c_ptr, BATCH: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
             PREC: tl.constexpr, OUT: tl.constexpr, TRANS_B: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    if BATCH > 1:
        rb = tl.arange(0, BATCH)
        a = tl.load(a_ptr + rb[:, None, None] * M * K + rm[None, :, None] * K + rk[None, None, :])
        b = tl.load(b_ptr + rb[:, None, None] * K * N + rk[None, :, None] * N + rn[None, None, :])
        c = tl.dot(a, b, input_precision=PREC, out_dtype=OUT)
        tl.store(c_ptr + rb[:, None, None] * M * N + rm[None, :, None] * N + rn[None, None, :], c)
    else:
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        if TRANS_B:
            b = tl.trans(tl.load(b_ptr + rn[:, None] * K + rk[None, :]))
        else:
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        c = tl.dot(a, b, input_precision=PREC, out_dtype=OUT)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


def _tile_ptx(arch, dtype, shape, trans_b=False, prec="tf32", batch=1, warps=4):
    m, n, k = shape
    out = {"i8": tl.int32}.get(dtype, tl.float32)
    sig = {"a_ptr": "*" + dtype, "b_ptr": "*" + dtype, "c_ptr": "*i32" if dtype == "i8" else "*fp32"}
    consts = {"BATCH": batch, "M": m, "N": n, "K": k, "PREC": prec, "OUT": out, "TRANS_B": trans_b}
    return compile_kernel(tile_dot, signature=sig, constexprs=consts, target=arch, num_warps=warps,
                          attrs={"divisibility": ["a_ptr", "b_ptr", "c_ptr"]}).asm["ptx"]


def _ldmatrix(ptx):
    """Counts of each ldmatrix variant, as 'x4', 'x4.trans', 'x2', ..."""
    found = re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.(x\d)(\.trans)?\.shared\.b16", ptx)
    counts = {}
    for x, t in found:
        counts[x + t] = counts.get(x + t, 0) + 1
    return counts


# dtype, [M, N, K], B transposed (K-contiguous), precision, batch: the
# ldmatrix variants per warp (4 warps spread as `spread_warps` does, the
# instruction tiles per warp rm x rn x rk), and whether B stays on ld.shared
CASES = [
    # warps 1x4: rm 2, rn 2, rk 2: A one x4 per (m, k) tile, B one x4.trans per k (two n tiles)
    ("fp16", [32, 64, 32], False, "tf32", 1, {"x4": 4, "x4.trans": 2}, False),
    ("bf16", [32, 64, 32], False, "tf32", 1, {"x4": 4, "x4.trans": 2}, False),
    # B staged K-major: rows of K, no .trans
    ("fp16", [32, 64, 32], True, "tf32", 1, {"x4": 6}, False),
    # warps 2x2: one n tile per warp, so B reads two matrices (x2) per k
    ("fp16", [32, 16, 32], False, "tf32", 1, {"x4": 2, "x2.trans": 2}, False),
    # 8-bit: 32 K per instruction, 4 elements a word; N-contiguous B has no 8-bit .trans
    ("i8", [32, 64, 64], False, "tf32", 1, {"x4": 4}, True),
    ("i8", [32, 64, 64], True, "tf32", 1, {"x4": 6}, False),
    # tf32: one element a word, 8 K per instruction (rk 4); tf32x3 splits the same words
    ("fp32", [32, 64, 32], False, "tf32", 1, {"x4": 8}, True),
    ("fp32", [32, 64, 32], True, "tf32", 1, {"x4": 12}, False),
    ("fp32", [32, 64, 32], True, "tf32x3", 1, {"x4": 12}, False),
    # batched [2, 16, 32, 32]: warps 2 (batch) x 1 x 2, rn 2, rk 2
    ("fp16", [16, 32, 32], False, "tf32", 2, {"x4": 2, "x4.trans": 2}, False),
]


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:89", "cuda:90a"])
@pytest.mark.parametrize("dtype,shape,trans_b,prec,batch,want,b_scalar", CASES,
                         ids=lambda x: "-".join(map(str, x)) if isinstance(x, list) else str(x))
def test_fragments_come_from_ldmatrix(arch, dtype, shape, trans_b, prec, batch, want, b_scalar):
    ptx = _tile_ptx(arch, dtype, shape, trans_b, prec, batch)
    assert "mma.sync.aligned" in ptx and "wgmma" not in ptx
    assert _ldmatrix(ptx) == want
    # the shared loads before the last MMA (after it: the accumulator's
    # conversion for the store) are B's scalar fragments where it has no ldmatrix
    loads = ptx[:ptx.rindex("mma.sync")].count("ld.shared")
    assert (loads > 0) == b_scalar, loads


def test_fp8_operands_on_sm_89():
    # fp8 is 8-bit like int8: A (K-contiguous) through ldmatrix, B too when K-contiguous
    assert _ldmatrix(_tile_ptx("cuda:89", "fp8e4nv", [32, 64, 64], trans_b=True)) == {"x4": 6}
    assert _ldmatrix(_tile_ptx("cuda:89", "fp8e4nv", [32, 64, 64])) == {"x4": 4}


MATMUL_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32",
              "stride_cn": "i32"}


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:89"])
def test_tutorial_matmul_loop_matches_triton(arch):
    # 128x128x32, 4 warps (2x2, 64x64 each: rm 4, rn 8, rk 2), 3 stages.
    # Triton 3.6 for cuda:80: 154 PTX instructions in the loop, 16 ldmatrix
    # (8 x4 for A, 8 x4.trans for B, each group's offsets immediates of the
    # address), no ld.shared, no spills. Before ldmatrix tritium's loop was
    # 355 instructions with 96 ld.shared and 24 spilled words (SASS loop 412
    # instructions; Triton's 161, ours now 167)
    consts = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "ACTIVATION": "",
              "stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
    k = compile_kernel(matmul_kernel, signature=MATMUL_SIG, constexprs=consts, target=arch, num_warps=4, num_stages=3,
                       attrs={"divisibility": ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk",
                                               "stride_cm"]})
    (loop,) = [b for b in loop_bodies(k.asm["ptx"]) if "mma.sync" in b]
    assert _ldmatrix(loop) == {"x4": 8, "x4.trans": 8}
    assert "ld.shared" not in loop
    assert loop.count("mma.sync") == 64
    assert len(instructions(loop)) <= 154, len(instructions(loop))
    assert k.n_spills == 0


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90a"])
def test_unpipelined_loop_reads_each_iterations_stores(arch):
    # K and its strides without 16-byte facts (K = 77, 200, 500 on the GPU):
    # the loop is not pipelined, so every iteration stores its A and B tiles
    # into the same convert_layout buffers and reads them back at the same
    # addresses. The ldmatrix asm must be a memory read: as a pure function
    # of its (loop-invariant) address LLVM hoisted it above the loop, so every
    # iteration multiplied whatever the buffers held before the first store
    # (tests/gpu/test_dot_gpu.py's 32x32x32 w4 and test_pipeline_gpu.py's
    # K=200 failed on the H200)
    consts = {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "ACTIVATION": "",
              "stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
    k = compile_kernel(matmul_kernel, signature=MATMUL_SIG, constexprs=consts, target=arch, num_warps=4,
                       num_stages=3, attrs={"divisibility": ["a_ptr", "b_ptr", "c_ptr"]})
    ptx = k.asm["ptx"]
    (loop,) = [b for b in loop_bodies(ptx) if "mma.sync" in b]
    assert "cp.async" not in loop
    # 2 warps x 2 along M and N: per K step one x4 for A and one x4.trans for B
    assert _ldmatrix(loop) == {"x4": 2, "x4.trans": 2}
    assert _ldmatrix(ptx) == _ldmatrix(loop)
    # each read follows this iteration's stores and the barrier after them
    first_read = loop.index("ldmatrix")
    last_store = loop.rindex("st.shared", 0, first_read)
    assert "bar.sync" in loop[last_store:first_read]
    assert "st.shared" not in loop[first_read:]


def test_debug_switch_keeps_the_scalar_reads(monkeypatch):
    # TRITIUM_DEBUG_NO_LDMATRIX=1: the same fragments element by element
    monkeypatch.setenv("TRITIUM_DEBUG_NO_LDMATRIX", "1")
    ptx = _tile_ptx("cuda:80", "fp16", [64, 64, 32])
    assert "ldmatrix" not in ptx
    assert "ld.shared" in ptx
