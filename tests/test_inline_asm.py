"""`tl.inline_asm_elementwise` without a GPU: the frontend's typing rules and
errors, the `inline_asm` IR it emits (one op, verified by the Rust verifier),
the interpreter's refusal naming the kernel line, and PTX that contains the
user's asm and passes ptxas for sm_80 and sm_90a."""
from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import _core
from tritium.compiler.errors import CompilationError
from tritium.interpreter.builder import InterpreterError
from test_codegen_ptx import ARCHS, compile_ptx, ptxas

# --- kernels -------------------------------------------------------------------


@tritium.jit
def shl_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)


@tritium.jit
def two_results_kernel(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    # the Triton docs' example: four u8 share one register, each f32 has its own
    (c, d) = tl.inline_asm_elementwise(
        asm="""
        {
            .reg .b8 tmp<4>;
            mov.b32 {tmp0, tmp1, tmp2, tmp3}, $8;
            cvt.u32.u8 $0, tmp0;
            cvt.u32.u8 $1, tmp1;
            cvt.u32.u8 $2, tmp2;
            cvt.u32.u8 $3, tmp3;
        }
        cvt.rn.f32.s32 $4, $0;
        cvt.rn.f32.s32 $5, $1;
        cvt.rn.f32.s32 $6, $2;
        cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9;
        max.f32 $5, $5, $10;
        max.f32 $6, $6, $11;
        max.f32 $7, $7, $12;
        """,
        constraints="=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r",
        args=[a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


@tritium.jit
def byte_swap_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # pack=4 int8: one 32-bit register holds four bytes; prmt reverses them
    y = tl.inline_asm_elementwise("prmt.b32 $0, $1, 0, 0x0123;", "=r,r", [x], dtype=tl.int8, is_pure=True, pack=4)
    tl.store(y_ptr + offs, y)


@tritium.jit
def half_kernel(x_ptr, s, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # f16 in a 16-bit register; the scalar `s` broadcasts against the tensor
    y = tl.inline_asm_elementwise("{ .reg .f16 t; cvt.rn.f16.f32 t, $2; add.f16 $0, $1, t; }", "=h,h,f",
                                  [x, s], dtype=tl.float16, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)


@tritium.jit
def clock_kernel(y_ptr):
    t = tl.inline_asm_elementwise("mov.u32 $0, %clock;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(y_ptr, t)


# --- IR --------------------------------------------------------------------------

def test_emits_one_inline_asm_op_with_its_attributes():
    text = _core.to_text(shl_kernel.compile_ir(signature="*i32, *i32", constexprs={"BLOCK": 128}))
    line = next(line for line in text.splitlines() if '"inline_asm"' in line)
    assert 'asm = "shl.b32 $0, $1, 3;"' in line and 'constraints = "=r,r"' in line, line
    assert "pack = 1" in line and "pure = true" in line, line
    assert "(tensor<128xi32>) -> tensor<128xi32>" in line, line


def test_two_results_and_broadcast_scalar():
    text = _core.to_text(two_results_kernel.compile_ir(signature="*u8, *fp32, *i32, *fp32",
                                                       constexprs={"BLOCK": 256}))
    assert "-> (tensor<256xi32>, tensor<256xf32>)" in text, text
    text = _core.to_text(half_kernel.compile_ir(signature="*fp16, fp32, *fp16", constexprs={"BLOCK": 64}))
    line = next(line for line in text.splitlines() if '"inline_asm"' in line)
    assert "(tensor<64xf16>, tensor<64xf32>) -> tensor<64xf16>" in line, line


def test_impure_asm_is_marked():
    text = _core.to_text(clock_kernel.compile_ir(signature="*i32"))
    assert "pure = false" in text and "() -> i32" in text, text


def _bad(asm="mov.b32 $0, $1;", constraints="=r,r", args_kind="one", dtype=tl.int32, is_pure=True, pack=1):
    @tritium.jit
    def k(x_ptr, BLOCK: tl.constexpr, ASM: tl.constexpr, CONS: tl.constexpr, DT: tl.constexpr,
          PURE: tl.constexpr, PACK: tl.constexpr, ARGS: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        if ARGS == "one":
            y = tl.inline_asm_elementwise(ASM, CONS, [x], dtype=DT, is_pure=PURE, pack=PACK)
        elif ARGS == "mismatch":
            y = tl.inline_asm_elementwise(ASM, CONS, [x, tl.arange(0, BLOCK // 2)], dtype=DT, is_pure=PURE,
                                          pack=PACK)
        else:
            y = tl.inline_asm_elementwise(ASM, CONS, x, dtype=DT, is_pure=PURE, pack=PACK)
        tl.store(x_ptr + offs, y)

    consts = {"BLOCK": 64, "ASM": asm, "CONS": constraints, "DT": dtype, "PURE": is_pure, "PACK": pack,
              "ARGS": args_kind}
    with pytest.raises(CompilationError) as info:
        k.compile_ir(signature="*i32", constexprs=consts)
    return str(info.value)


@pytest.mark.parametrize("kw,needle", [
    (dict(pack=3), "pack must be a power of two"),
    (dict(pack=0), "pack must be a power of two"),
    (dict(dtype=()), "at least one tensor"),
    (dict(dtype=tl.pointer_type(tl.int32)), "cannot be an asm operand"),
    (dict(dtype=tl.int1), "cannot be an asm operand"),
    (dict(constraints="=r"), "name 1 output(s) and 0 input(s)"),
    (dict(constraints="=r,=r,r", dtype=(tl.int32,)), "needs 1 output and 1 input"),
    (dict(constraints="=r,r", pack=2), "needs 2 output and 2 input"),
    (dict(constraints="r,=r"), "output after an input"),
    (dict(is_pure=1), "is_pure must be a bool"),
    (dict(args_kind="mismatch"), "incompatible shapes"),
    (dict(args_kind="bare"), "args must be a list or tuple"),
])
def test_bad_calls_are_compilation_errors(kw, needle):
    msg = _bad(**kw)
    assert needle in msg, msg
    assert "inline_asm_elementwise" in msg, msg


def test_interpreter_refuses_with_the_kernel_line():
    interp = tritium.jit(interpret=True)(shl_kernel.fn)
    x = np.arange(128, dtype=np.int32)
    y = np.zeros_like(x)
    with pytest.raises(InterpreterError, match="inline_asm_elementwise cannot run in the interpreter") as info:
        interp[(1,)](x, y, BLOCK=128)
    assert "test_inline_asm.py" in str(info.value), str(info.value)


# --- PTX -------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHS)
def test_shl_ptx(arch, tmp_path):
    out = compile_ptx(shl_kernel, arch, signature="*i32, *i32", constexprs={"BLOCK": 512})
    assert out["ptx"].count("shl.b32") >= 4, out["ptx"]  # 512 / 128 threads: 4 per thread
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_two_results_ptx(arch, tmp_path):
    out = compile_ptx(two_results_kernel, arch, signature="*u8, *fp32, *i32, *fp32", constexprs={"BLOCK": 512})
    assert "max.f32" in out["ptx"] and "cvt.u32.u8" in out["ptx"], out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_packed_bytes_ptx(arch, tmp_path):
    out = compile_ptx(byte_swap_kernel, arch, signature="*i8, *i8", constexprs={"BLOCK": 512})
    # 4 bytes per thread, one asm invocation each
    assert out["ptx"].count("prmt.b32") >= 1, out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_half_and_scalar_ptx(arch, tmp_path):
    out = compile_ptx(half_kernel, arch, signature="*fp16, fp32, *fp16", constexprs={"BLOCK": 128})
    assert "add.f16" in out["ptx"], out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_impure_asm_survives(arch, tmp_path):
    out = compile_ptx(clock_kernel, arch, signature="*i32")
    assert "%clock" in out["ptx"], out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


def test_pack_larger_than_a_threads_share_is_a_clear_error():
    @tritium.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int8, is_pure=True, pack=4)
        tl.store(x_ptr + offs, y)

    with pytest.raises(Exception, match="pack=4"):
        compile_ptx(k, "sm_80", signature="*i8", constexprs={"BLOCK": 128})
