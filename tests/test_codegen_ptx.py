"""NVPTX code generation, compile-only (no GPU): kernels go through the Python
frontend, `tritium._core.compile_ptx`, then NVIDIA's `ptxas` for sm_80 and
sm_90a, which must accept every PTX we emit."""
from __future__ import annotations

import subprocess

import pytest

import tritium
import tritium.language as tl
from tritium import _core
from tritium.runtime import driver

ARCHS = ["sm_80", "sm_90a"]
ALIGNED = {"divisibility": 16}


# the runtime's own finder: TRITIUM_PTXAS, then PATH, then the nvidia wheels
PTXAS = driver.ptxas_path()


def ptxas(ptx: str, arch: str, tmp_path) -> None:
    if PTXAS is None:
        pytest.skip("ptxas not found (set TRITIUM_PTXAS, put it on PATH, or pip install nvidia-cuda-nvcc-cu12)")
    src = tmp_path / f"k_{arch}.ptx"
    src.write_text(ptx)
    r = subprocess.run([PTXAS, "--gpu-name", arch, str(src), "-o", str(tmp_path / f"k_{arch}.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"ptxas {arch} failed:\n{r.stderr}\n--- PTX ---\n{ptx}"


def compile_ptx(kernel, arch: str, num_warps: int = 4, **kw) -> dict:
    ir = kernel.compile_ir(**kw)
    return _core.compile_ptx(ir, arch, num_warps)


# --- kernels -------------------------------------------------------------------

@tritium.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@tritium.jit
def masked_other_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1.5)
    tl.store(out_ptr + offs, tl.where(x > 0, x * 2.0, -x), mask=offs < n)


@tritium.jit
def int_arith_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    r = a * b + a // b - a % b
    r = tl.minimum(r, a) + tl.maximum(r, b)
    r = (r ^ (a << 2)) >> 1
    r = r & 0x7F | (a - b)
    tl.store(out_ptr + offs, -r, mask=m)


@tritium.jit
def cast_kernel(x_ptr, h_ptr, i_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)          # fp32
    h = tl.load(h_ptr + offs, mask=m)          # fp16
    i = tl.load(i_ptr + offs, mask=m)          # int8
    tl.store(h_ptr + offs, x.to(tl.float16), mask=m)
    tl.store(b_ptr + offs, (x + h.to(tl.float32)).to(tl.bfloat16), mask=m)
    y = x.to(tl.int32) + i.to(tl.int32) + h.to(tl.int64).to(tl.int32)
    z = y.to(tl.float32) + i.to(tl.float64).to(tl.float32) + x.to(tl.float16, fp_downcast_rounding="rtz").to(tl.float32)
    tl.store(out_ptr + offs, z, mask=m)


@tritium.jit
def scalar_kernel(x_ptr, out_ptr, alpha):
    v = tl.load(x_ptr + tl.program_id(0))
    tl.store(out_ptr + tl.program_id(0) + tl.num_programs(0), v * alpha)


@tritium.jit
def float_ops_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.load(y_ptr + offs, mask=m, other=2.0)
    r = tl.minimum(x, y) + tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
    r = r + tl.abs(x) + tl.fma(x, y, r) + x / y + x % y
    if WIDE:  # these take only fp32/fp64, as in Triton
        r = r + tl.floor(y) + tl.ceil(x) + tl.math.div_rn(x, y) + tl.sqrt_rn(tl.abs(y))
    r = tl.clamp(r, -x, tl.abs(x) + 1.0)
    tl.store(out_ptr + offs, r, mask=m & (r != y))


@tritium.jit
def bits_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    u = x.to(tl.uint32, bitcast=True)
    h = tl.umulhi(u, u)
    tl.store(out_ptr + offs, (h >> 3).to(tl.float32, bitcast=True))


@tritium.jit
def dot_kernel(x_ptr, BLOCK: tl.constexpr):
    # a small dot: mma.sync on every arch (m16n8k16 tiles over a 16x16 fp32 tile: tf32)
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(x_ptr + offs[:, None] * BLOCK + offs[None, :], tl.dot(a, a))


# --- tests ---------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHS)
def test_vector_add_fp32_uses_16_byte_vectors(arch, tmp_path):
    out = compile_ptx(add_kernel, arch, signature="*fp32, *fp32, *fp32, i32", constexprs={"BLOCK": 1024},
                      arg_attrs={"x_ptr": ALIGNED, "y_ptr": ALIGNED, "out_ptr": ALIGNED, "n": ALIGNED})
    ptx = out["ptx"]
    assert f".target {arch}" in ptx
    assert ".entry add_kernel(" in ptx and ".maxntid 128" in ptx
    # 1024 elements, 128 threads, 4 contiguous per chunk: 2 chunks of one v4 each
    assert ptx.count("ld.global.v4.f32") == 4, ptx
    assert ptx.count("st.global.v4.f32") == 2, ptx
    assert "llvm.nvvm.read.ptx.sreg.ctaid.x" in out["llir"]
    ptxas(ptx, arch, tmp_path)


def test_vector_add_without_alignment_is_scalar(tmp_path):
    out = compile_ptx(add_kernel, "sm_90a", signature="*fp32, *fp32, *fp32, i32", constexprs={"BLOCK": 1024})
    assert "ld.global.v4" not in out["ptx"] and "ld.global.f32" in out["ptx"]
    ptxas(out["ptx"], "sm_90a", tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_vector_add_fp16(arch, tmp_path):
    out = compile_ptx(add_kernel, arch, signature="*fp16, *fp16, *fp16, i32", constexprs={"BLOCK": 1024},
                      arg_attrs={"x_ptr": ALIGNED, "y_ptr": ALIGNED, "out_ptr": ALIGNED, "n": ALIGNED})
    # 8 halves per thread = one 16-byte access per operand
    assert out["ptx"].count("ld.global.v4.b32") == 2, out["ptx"]
    assert out["ptx"].count("st.global.v4.b32") == 1, out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_masked_load_with_other(arch, num_warps, tmp_path):
    out = compile_ptx(masked_other_kernel, arch, num_warps, signature="*fp32, *fp32, i32",
                      constexprs={"BLOCK": 256})
    ptx = out["ptx"]
    assert f".maxntid {32 * num_warps}" in ptx
    # other = -1.5 is moved into the destination before the predicated load
    assert "0fBFC00000" in ptx, ptx
    assert "@%p" in ptx
    ptxas(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("sig", ["*i32, *i32, *i32, i32", "*i64, *i64, *i64, i32",
                                 "*u32, *u32, *u32, i32", "*i16, *i16, *i16, i32", "*i8, *i8, *i8, i32"])
def test_int_arithmetic(arch, sig, tmp_path):
    out = compile_ptx(int_arith_kernel, arch, signature=sig, constexprs={"BLOCK": 512})
    ptx = out["ptx"]
    assert "div." in ptx or "rem." in ptx or "mul.hi" in ptx, ptx
    ptxas(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_casts(arch, tmp_path):
    out = compile_ptx(cast_kernel, arch, signature="*fp32, *fp16, *i8, *bf16, *fp32, i32",
                      constexprs={"BLOCK": 256})
    ptx = out["ptx"]
    # to nearest even: two registers per cvt (neighbouring elements); rtz one by one
    assert "cvt.rn.f16x2.f32" in ptx and "cvt.rz.f16.f32" in ptx and "cvt.rzi.s32.f32" in ptx, ptx
    assert "cvt.rn.bf16x2.f32" in ptx and "cvt.rn.f16.f32" not in ptx, ptx
    ptxas(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16", "fp64"])
def test_float_ops(arch, dtype, tmp_path):
    out = compile_ptx(float_ops_kernel, arch, signature=f"*{dtype}, *{dtype}, *{dtype}, i32",
                      constexprs={"BLOCK": 512, "WIDE": dtype in ("fp32", "fp64")})
    ptx = out["ptx"]
    if dtype == "fp32":
        assert "div.full.f32" in ptx and "div.rn.f32" in ptx and "sqrt.rn.f32" in ptx, ptx
        assert "max.NaN.f32" in ptx, ptx
    ptxas(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_bitcast_and_umulhi(arch, tmp_path):
    out = compile_ptx(bits_kernel, arch, signature="*fp32, *fp32", constexprs={"BLOCK": 128})
    # the high half of the 64-bit product: PTX mul.hi or mul.wide + shift
    assert "mul.hi.u32" in out["ptx"] or "shr.u64" in out["ptx"], out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_scalar_kernel(arch, tmp_path):
    out = compile_ptx(scalar_kernel, arch, signature="*fp32, *fp32, fp32")
    assert "%nctaid.x" in out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_dot_lowers_to_tensor_cores(arch, tmp_path):
    out = compile_ptx(dot_kernel, arch, signature="*fp32", constexprs={"BLOCK": 16})
    assert "mma.sync.aligned" in out["ptx"], out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


def test_bad_options_and_bytes():
    ir = add_kernel.compile_ir(signature="*fp32, *fp32, *fp32, i32", constexprs={"BLOCK": 128})
    with pytest.raises(_core.CodegenError, match="sm_80, sm_89, sm_90, sm_90a"):
        _core.compile_ptx(ir, "sm_70")
    with pytest.raises(_core.CodegenError, match="num_warps"):
        _core.compile_ptx(ir, "sm_90", 3)
    with pytest.raises(_core.IRDecodeError):
        _core.compile_ptx(b"not ir", "sm_90")
    assert ".target sm_89" in _core.compile_ptx(ir, "sm_89")["ptx"]
