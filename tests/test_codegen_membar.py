"""Shared-memory barriers as membar leaves them, compile-only (no GPU):
kernels through the frontend and `tritium._core.compile_ptx`, ptxas for
sm_80 and sm_90a, and `bar.sync` counted in the PTX. Each scratch op keeps
its write→read barrier; the barrier before its writes stays only when an
earlier access may conflict (same offset, a loop's next iteration, a branch)."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from tritium import _core

from test_codegen_ptx import ARCHS, ptxas


@tritium.jit
def one_sum(x_ptr, y_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr, tl.sum(x, axis=0))


@tritium.jit
def sum_then_max(x_ptr, y_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    s = tl.sum(x, axis=0)
    m = tl.max(x * s, axis=0)
    tl.store(y_ptr, m)


@tritium.jit
def sum_in_loop(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    acc = 0.0
    for i in range(n):
        acc += tl.sum(x + i, axis=0)
    tl.store(y_ptr, acc)


@tritium.jit
def sum_in_branch_then_after(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    a = 0.0
    if n > 0:
        a = tl.sum(x, axis=0)
    b = tl.max(x, axis=0)
    tl.store(y_ptr, a + b)


@tritium.jit
def sum_only_in_branch(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    a = 0.0
    if n > 0:
        a = tl.sum(x, axis=0)
    tl.store(y_ptr, a)


@tritium.jit
def cumsum_then_sum(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    c = tl.cumsum(x, axis=0)
    tl.store(y_ptr + offs, c + tl.sum(c, axis=0))


def compile_ptx(k, signature: str, warps: int, arch: str = "sm_90a", **constexprs) -> str:
    ir = k.compile_ir(signature=signature, constexprs=constexprs)
    return _core.compile_ptx(ir, arch, warps)["ptx"]


CASES = [
    # (name, kernel, signature, warps, expected bar.sync count, why)
    ("one_sum", one_sum, "*fp32, *fp32", 4, 1, "write→read only: no leading or trailing barrier"),
    ("one_sum_w1", one_sum, "*fp32, *fp32", 1, 0, "one warp reduces with shuffles alone"),
    ("sum_then_max", sum_then_max, "*fp32, *fp32", 4, 3, "WAR at offset 0 between the two reductions"),
    ("sum_then_max_w8", sum_then_max, "*fp32, *fp32", 8, 3, "same with 8 warps"),
    ("sum_in_loop", sum_in_loop, "*fp32, *fp32, i32", 4, 2, "iteration i+1's writes vs iteration i's reads"),
    ("branch_then_after", sum_in_branch_then_after, "*fp32, *fp32, i32", 4, 3, "the then-path's reads reach the max"),
    ("only_in_branch", sum_only_in_branch, "*fp32, *fp32, i32", 4, 1, "nothing before it to wait for"),
    ("cumsum_then_sum", cumsum_then_sum, "*fp32, *fp32", 4, 3, "the scan's totals vs the sum's partials"),
]


@pytest.mark.parametrize("name,k,sig,warps,bars,why", CASES, ids=[c[0] for c in CASES])
def test_barrier_count(name, k, sig, warps, bars, why):
    ptx = compile_ptx(k, sig, warps, BLOCK=1024)
    assert ptx.count("bar.sync") == bars, f"{why}\n{ptx}"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name,k,sig,warps,bars,why", CASES, ids=[c[0] for c in CASES])
def test_ptxas_accepts(name, k, sig, warps, bars, why, arch, tmp_path):
    ptxas(compile_ptx(k, sig, warps, arch, BLOCK=1024), arch, tmp_path)


def test_barriers_inside_control_flow_are_not_unconditional():
    # before membar every scratch op inside a loop or branch got a leading
    # barrier; a branch whose reduction is the kernel's only one needs none
    with_branch = compile_ptx(sum_only_in_branch, "*fp32, *fp32, i32", 4, BLOCK=1024)
    straight = compile_ptx(one_sum, "*fp32, *fp32", 4, BLOCK=1024)
    assert with_branch.count("bar.sync") == straight.count("bar.sync") == 1
