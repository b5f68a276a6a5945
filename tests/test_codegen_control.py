"""Control-flow codegen, compile-only: `for` with loop-carried tensors (signed,
unsigned and 64-bit bounds), `if` with results, `while`, nested; ptxas checks
the PTX for sm_80 and sm_90a."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from test_codegen_ptx import ARCHS, compile_ptx, ptxas


@tritium.jit
def loop_kernel(x_ptr, out_ptr, lb, ub, step, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    cnt = 0
    for i in range(lb, ub, step):
        x = tl.load(x_ptr + offs + i * BLOCK)
        if i % 2 == 0:
            acc += x
        else:
            acc -= x * 0.5
        cnt += 1
    while cnt > 1:
        cnt = cnt // 2
        acc = acc * 2.0
    tl.store(out_ptr + offs, acc + cnt)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("itype", ["i32", "i64", "u32"])
def test_loops_ptxas(arch, itype, tmp_path):
    out = compile_ptx(loop_kernel, arch, signature=f"*fp32, *fp32, {itype}, {itype}, {itype}",
                      constexprs={"BLOCK": 512})
    assert "phi float" in out["llir"]
    ptxas(out["ptx"], arch, tmp_path)
