"""The grouped GEMM (tests/kernels/grouped_gemm.py; Triton's tutorial 08 has
this shape) without a GPU: compiled for sm_90a through ptxas at the
tutorial's tile configurations, and interpreted against NumPy.

What the PTX must show: the dot runs on wgmma; A and B tiles are loaded
once (not once per accumulator column block); `acc += tl.dot(a, b)`
accumulates in place exactly like `acc = tl.dot(a, b, acc)` (the same PTX:
one accumulator, no f32 adds, the tensor cores chaining K in order as
cuBLAS does, which tutorial 08's atol=1e-2, rtol=0 check on fp16 outputs
near 256 needs); and the K loop is not software-pipelined, since matrices
addressed through a table have no alignment facts and their 2-byte loads
could not be asynchronous copies, unless `tl.multiple_of` statements say
they are aligned (tutorial 08 does): then it is, as with Triton."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium
from kernels.grouped_gemm import grouped_gemm_kernel
from tritium.compile import compile as compile_kernel
from tritium.runtime import driver

SIG = {"a_table": "*i64", "b_table": "*i64", "c_table": "*i64", "a_all": "*fp16", "b_all": "*fp16",
       "c_all": "*fp16", "shapes": "*i32", "strides": "*i32", "count": "i32"}
# what a launch specializes on: every pointer 16-byte aligned, 16 problems
ALIGNED = {"divisibility": ["a_table", "b_table", "c_table", "a_all", "b_all", "c_all", "shapes", "strides", "count"]}
# tutorial 08's autotune configurations (4 warps, 3 stages: the defaults) and dot_bench's
CONFIGS = [(128, 128, 32), (64, 64, 32), (128, 128, 64), (64, 128, 64)]

needs_ptxas = pytest.mark.skipif(driver.ptxas_path() is None, reason="ptxas not found (pip install nvidia-cuda-nvcc-cu12)")


def _compile(tile, plus_equals=True, by_offset=False, hint=False):
    bm, bn, bk = tile
    consts = {"PROGRAMS": 132, "BM": bm, "BN": bn, "BK": bk, "BY_OFFSET": by_offset, "PLUS_EQUALS": plus_equals,
              "HINT": hint}
    return compile_kernel(grouped_gemm_kernel, signature=SIG, constexprs=consts, target="cuda:90a", num_warps=4,
                          num_stages=3, attrs=ALIGNED)


def _code(ptx: str) -> str:
    # the instructions only: source locations differ between the two spellings
    return "\n".join(line for line in ptx.splitlines() if not line.lstrip().startswith((".loc", ".file", "//")))


@needs_ptxas
@pytest.mark.parametrize("tile", CONFIGS, ids=lambda t: "x".join(map(str, t)))
def test_plus_equals_accumulates_in_place_on_wgmma(tile):
    k = _compile(tile)
    ptx = k.asm["ptx"]
    assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx
    # one accumulator, chained through the wgmmas: no tile-wide f32 add
    assert not re.search(r"\badd(\.rn)?(\.ftz)?\.f32\b", ptx)
    assert _code(ptx) == _code(_compile(tile, plus_equals=False).asm["ptx"])


@needs_ptxas
@pytest.mark.parametrize("tile", CONFIGS, ids=lambda t: "x".join(map(str, t)))
def test_tiles_are_loaded_once(tile):
    # each element of the A and B tiles loaded by one thread: their layouts
    # are sized for the tiles, not for the accumulator
    bm, bn, bk = tile
    loads = len(re.findall(r"ld\.global\.b16", _compile(tile).asm["ptx"]))
    assert loads == (bm * bk + bk * bn) // 128


@needs_ptxas
@pytest.mark.parametrize("tile", CONFIGS, ids=lambda t: "x".join(map(str, t)))
def test_hinted_tiles_are_pipelined_like_triton(tile):
    # tutorial 08's `tl.multiple_of(a_ptrs, [16, 16])` statements: 16-byte
    # cp.async copies in three stages, as many as Triton 3.6 emits
    bm, bn, bk = tile
    ptx = _compile(tile, hint=True).asm["ptx"]
    copies = ptx.count("cp.async.cg.shared.global")
    assert copies == 3 * (bm * bk + bk * bn) * 2 // 16 // 128
    assert ptx.count("cp.async.commit_group") == 3 and "wgmma.mma_async" in ptx


@needs_ptxas
@pytest.mark.parametrize("by_offset", [False, True])
def test_unaligned_tiles_are_not_staged(by_offset):
    ptx = _compile((128, 128, 32), by_offset=by_offset).asm["ptx"]
    # 2-byte loads straight to shared memory for the dot, no cp.async stages
    assert "ld.global.b16" in ptx
    assert "cp.async" not in ptx


def _problems(sizes, seed=0):
    rng = np.random.default_rng(seed)
    a = [rng.random((m, k), dtype=np.float32).astype(np.float16) for m, n, k in sizes]
    b = [rng.random((k, n), dtype=np.float32).astype(np.float16) for m, n, k in sizes]
    c = [np.zeros((m, n), np.float16) for m, n, k in sizes]
    return a, b, c


def _flat(mats):
    offsets = np.cumsum([0] + [x.size for x in mats])[:-1].astype(np.int64)
    return np.concatenate([x.ravel() for x in mats]), offsets


@pytest.mark.parametrize("plus_equals", [True, False])
def test_interpreter_computes_every_problem(plus_equals):
    sizes = [(64, 64, 64), (32, 32, 32), (64, 32, 96), (32, 64, 16)]
    a, b, c = _problems(sizes)
    (a_all, a_off), (b_all, b_off), (c_all, c_off) = _flat(a), _flat(b), _flat(c)
    shapes = np.array([v for s in sizes for v in s], dtype=np.int32)
    strides = np.array([v for m, n, k in sizes for v in (k, n, n)], dtype=np.int32)
    programs = 3   # fewer programs than tiles: each walks several, across problems
    run = tritium.jit(interpret=True)(grouped_gemm_kernel.fn)
    run[(programs,)](a_off, b_off, c_off, a_all, b_all, c_all, shapes, strides, len(sizes),
                     PROGRAMS=programs, BM=32, BN=32, BK=16, BY_OFFSET=True, PLUS_EQUALS=plus_equals)
    for x, y, o, (m, n, _) in zip(a, b, c_off, sizes):
        out = c_all[o:o + m * n].reshape(m, n).astype(np.float32)
        ref = x.astype(np.float32) @ y.astype(np.float32)
        # fp32 sums in another order, rounded to fp16: one fp16 ulp apart at most
        np.testing.assert_allclose(out, ref, rtol=2 ** -10, atol=0)
