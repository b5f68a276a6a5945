"""Control-flow codegen, compile-only: `for` with loop-carried tensors (signed,
unsigned and 64-bit bounds), `if` with results, `while`, nested; ptxas checks
the PTX for sm_80 and sm_90a."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from test_codegen_ptx import ARCHS, compile_ptx, ptxas
from kernels.tiles import loop_kernel


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("itype", ["i32", "i64", "u32"])
def test_loops_ptxas(arch, itype, tmp_path):
    out = compile_ptx(loop_kernel, arch, signature=f"*fp32, *fp32, {itype}, {itype}, {itype}",
                      constexprs={"BLOCK": 512})
    assert "phi float" in out["llir"]
    ptxas(out["ptx"], arch, tmp_path)
