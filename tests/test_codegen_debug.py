"""device_print and device_assert through the frontend, compile_ptx and ptxas
(sm_80, sm_90a), no GPU: vprintf lines in Triton's format for every scalar
type, hex, several operands; __assertfail with the user's file and line,
present only in debug builds."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from test_codegen_ptx import ARCHS, ptxas, compile_ptx

SIGS = {"i8": "*i8", "i16": "*i16", "i32": "*i32", "u32": "*u32", "i64": "*i64", "u64": "*u64",
        "f16": "*fp16", "bf16": "*bf16", "f32": "*fp32", "f64": "*fp64", "i1": "*i1"}
SPEC = {"i8": "%d", "i16": "%d", "i32": "%d", "u32": "%u", "i64": "%lld", "u64": "%llu",
        "f16": "%f", "bf16": "%f", "f32": "%f", "f64": "%f", "i1": "%u"}


@tritium.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr, HEX: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x, hex=HEX)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("elem", list(SIGS))
def test_print_every_type(elem, arch, tmp_path):
    out = compile_ptx(print_kernel, arch, signature=SIGS[elem], constexprs={"BLOCK": 64, "HEX": False})
    assert f"pid (%u, %u, %u) idx (%u) x: {SPEC[elem]}\\0A" in out["llir"], out["llir"]
    assert "vprintf" in out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("elem,spec", [("f32", "0x%x"), ("f64", "0x%llx"), ("f16", "0x%x"), ("i64", "0x%llx")])
def test_print_hex(elem, spec, tmp_path):
    out = compile_ptx(print_kernel, "sm_90a", signature=SIGS[elem], constexprs={"BLOCK": 64, "HEX": True})
    assert f"idx (%u) x: {spec}\\0A" in out["llir"], out["llir"]
    ptxas(out["ptx"], "sm_90a", tmp_path)


@tritium.jit
def print_many_kernel(x_ptr, n):
    r = tl.arange(0, 8)[:, None] + tl.zeros((8, 4), dtype=tl.int32)
    pid = tl.program_id(0)
    tl.device_print("pid and r", pid, r)
    tl.device_print("n", n)
    tl.device_print("no values")
    print("python print", r)


@pytest.mark.parametrize("arch", ARCHS)
def test_print_scalars_tensors_and_2d(arch, tmp_path):
    out = compile_ptx(print_many_kernel, arch, signature="*fp32, i32")
    llir = out["llir"]
    assert "pid (%u, %u, %u) pid and r: (operand 0) %d" in llir, llir
    assert "pid (%u, %u, %u) idx (%u, %u) pid and r: (operand 1) %d" in llir, llir
    assert "pid (%u, %u, %u) n: %d" in llir, llir
    assert "no values" in llir, llir
    ptxas(out["ptx"], arch, tmp_path)


@tritium.jit
def assert_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x < n, "x must stay below n")
    tl.device_assert(n > 0, "n is positive")
    tl.store(x_ptr + offs, x + 1)


@pytest.mark.parametrize("arch", ARCHS)
def test_assert_in_debug_builds(arch, tmp_path):
    out = compile_ptx(assert_kernel, arch, signature="*i32, i32", constexprs={"BLOCK": 256}, debug=True)
    llir = out["llir"]
    assert "@__assertfail" in llir and "llvm.trap" in llir, llir
    assert "x must stay below n" in llir and "n is positive" in llir, llir
    assert "test_codegen_debug.py" in llir, llir
    line = assert_kernel.fn.__code__.co_firstlineno + 4  # the decorator line comes first
    assert f"i32 {line}, ptr" in llir, llir
    assert "trap;" in out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


def test_assert_absent_without_debug():
    out = compile_ptx(assert_kernel, "sm_90a", signature="*i32, i32", constexprs={"BLOCK": 256}, debug=False)
    assert "__assertfail" not in out["llir"]
