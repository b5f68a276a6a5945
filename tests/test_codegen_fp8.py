"""fp8 (e4m3fn, e5m2) codegen without a GPU: (1) a NumPy mirror of the
integer algorithms in crates/tritium-codegen/src/lower/fp8.rs (the sm_80
path; sm_90 uses PTX `cvt.rn.satfinite`, whose semantics they copy) checked
bit for bit against the interpreter (interpreter/floats.py) on every fp8 code,
every f16 code and random/edge f32 and f64 values; (2) fp8 kernels compiled to
PTX and accepted by ptxas for sm_80 and sm_90a."""
from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from test_codegen_ptx import ARCHS, compile_ptx, ptxas
from tritium.interpreter import arith, floats
from tritium.language import float8e4nv, float8e5, float16, float32, float64

# (mantissa bits, bias, max finite code, has infinity), as fp8.rs's `Fp8`
FORMATS = {"fp8e4nv": (3, 7, 0x7E, False), "fp8e5": (2, 15, 0x7B, True)}
DTYPES = {"fp8e4nv": float8e4nv, "fp8e5": float8e5}


def ref_decode(codes: np.ndarray, name: str) -> np.ndarray:
    """`Lowering::fp8_decode`: fp8 bits to f32."""
    mant, bias, max_code, has_inf = FORMATS[name]
    w = codes.astype(np.uint32)
    mag = w & 0x7F
    normal = ((mag << (23 - mant)) + np.uint32((127 - bias) << 23)).view(np.float32)
    sub = mag.astype(np.float32) * np.float32(2.0 ** (1 - bias - mant))
    v = np.where(mag < (1 << mant), sub, normal)
    if has_inf:
        v = np.where(mag == max_code + 1, np.float32(np.inf), v)
        v = np.where(mag > max_code + 1, np.float32(np.nan), v)
    else:
        v = np.where(mag == 0x7F, np.float32(np.nan), v)
    return np.where(w >= 0x80, -v, v).astype(np.float32)


def ref_encode(x: np.ndarray, name: str, rtz: bool = False, sat_inf: bool = True) -> np.ndarray:
    """`Lowering::fp8_encode` on f32 or f64 `x`: integer rounding of the bits."""
    mant, bias, max_code, has_inf = FORMATS[name]
    is64 = x.dtype == np.float64
    ut, mb, sbias, width = (np.uint64, 52, 1023, 64) if is64 else (np.uint32, 23, 127, 32)
    a = np.abs(x)
    u = a.view(ut)
    drop = ut(mb - mant)
    if rtz:
        r = u
    else:
        r = u + ut((1 << (mb - mant - 1)) - 1) + ((u >> drop) & ut(1))
    normal = (r >> drop) - ut((sbias - bias) << mant)  # wraps for small values, as in LLVM (unused there)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = a * x.dtype.type(2.0 ** (bias - 1 + mant))
        rounded = np.trunc(scaled) if rtz else np.rint(scaled)
        sub = np.where(np.isfinite(rounded), rounded, 0).astype(ut)
    small = a < 2.0 ** (1 - bias)
    code = np.where(small, sub, normal)
    code = np.where(code > max_code, ut(max_code), code)
    if has_inf and not sat_inf:
        code = np.where(a == np.inf, ut(max_code + 1), code)
    code = code.astype(np.uint8) | ((x.view(ut) >> ut(width - 1)).astype(np.uint8) << np.uint8(7))
    return np.where(np.isnan(x), np.uint8(0x7F), code).astype(np.uint8)


def interp_cast_bits(x: np.ndarray, src, name: str, rounding: str = "rtne") -> np.ndarray:
    return floats.to_bits(arith.cast(x, src, DTYPES[name], rounding), DTYPES[name])


def same_float_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equal, except that any NaN equals any NaN."""
    nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(nan | (a.view(np.uint32) == b.view(np.uint32))))


def _f32_samples() -> np.ndarray:
    rng = np.random.default_rng(4)
    vals = [rng.standard_normal(20000).astype(np.float32) * np.float32(100),
            (rng.standard_normal(5000) * 1e-3).astype(np.float32),
            np.float32(2.0) ** rng.integers(-30, 20, 5000).astype(np.float32),
            rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    # exact ties between neighbouring codes of both formats, and one ulp either side
    for name in FORMATS:
        codes = np.arange(256, dtype=np.uint8)
        dec = floats.fp8_decode(codes, name).astype(np.float64)
        fin = np.sort(dec[np.isfinite(dec)])
        mids = ((fin[1:] + fin[:-1]) / 2).astype(np.float32)
        vals += [mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))]
    vals.append(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448.0, 464.0, 480.0, 57344.0, 61440.0, 1e30,
                          -1e30, 2.0 ** -9, 2.0 ** -10, 2.0 ** -16, 2.0 ** -17, 3e38], np.float32))
    return np.concatenate(vals).astype(np.float32)


@pytest.mark.parametrize("name", FORMATS)
def test_decode_all_codes_matches_interpreter(name):
    codes = np.arange(256, dtype=np.uint8)
    assert same_float_bits(ref_decode(codes, name), floats.fp8_decode(codes, name))


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_encode_every_f16_code_matches_interpreter(name, rounding):
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    # f16 -> fp8 goes through an exact f32 widening (or one sm_90 cvt of the same value)
    ours = ref_encode(h.astype(np.float32), name, rtz=rounding == "rtz")
    ref = interp_cast_bits(h, float16, name, rounding)
    bad = np.nonzero(ours != ref)[0]
    assert bad.size == 0, [(float(h[i]), hex(ours[i]), hex(ref[i])) for i in bad[:8]]


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_encode_f32_matches_interpreter(name, rounding):
    x = _f32_samples()
    ours = ref_encode(x, name, rtz=rounding == "rtz")
    ref = interp_cast_bits(x, float32, name, rounding)
    bad = np.nonzero(ours != ref)[0]
    assert bad.size == 0, [(float(x[i]), hex(ours[i]), hex(ref[i])) for i in bad[:8]]


@pytest.mark.parametrize("name", FORMATS)
def test_encode_f64_rounds_once(name):
    with np.errstate(invalid="ignore"):
        x32 = _f32_samples().astype(np.float64)
    rng = np.random.default_rng(5)
    # values just off an f32-representable tie: rounding through f32 first would be wrong
    x = np.concatenate([x32, x32 * (1 + 2.0 ** -40), x32 * (1 - 2.0 ** -40), rng.standard_normal(20000) * 300])
    ours = ref_encode(x, name)
    ref = interp_cast_bits(x, float64, name)
    bad = np.nonzero(ours != ref)[0]
    assert bad.size == 0, [(float(x[i]), hex(ours[i]), hex(ref[i])) for i in bad[:8]]


@pytest.mark.parametrize("src,dst", [("fp8e4nv", "fp8e5"), ("fp8e5", "fp8e4nv")])
def test_fp8_to_fp8_matches_interpreter(src, dst):
    codes = np.arange(256, dtype=np.uint8)
    ours = ref_encode(ref_decode(codes, src), dst)
    ref = interp_cast_bits(floats.fp8_decode(codes, src), DTYPES[src], dst)
    assert np.array_equal(ours, ref), np.nonzero(ours != ref)


@pytest.mark.parametrize("name", FORMATS)
def test_arithmetic_results_round_like_the_interpreter(name):
    """fp8 + fp8 etc.: f32 arithmetic, then the non-saturating-inf rounding."""
    codes = np.arange(256, dtype=np.uint8)
    v = floats.fp8_decode(codes, name)
    a, b = np.meshgrid(v, v)
    with np.errstate(all="ignore"):
        for r in (a + b, a * b, a - b):
            r = r.astype(np.float32).ravel()
            ours = ref_encode(r, name, sat_inf=False)
            ref = floats.fp8_encode(floats.round_to(r, name).astype(np.float32), name)
            assert np.array_equal(ours, ref), np.nonzero(ours != ref)


# --- compiled kernels ------------------------------------------------------------

@tritium.jit
def fp8_roundtrip_kernel(src_ptr, f32_ptr, f16_ptr, bf16_ptr, f64_ptr, dst_ptr, other_ptr, n,
                         BLOCK: tl.constexpr, ROUNDING: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(src_ptr + offs, mask=m)
    tl.store(f32_ptr + offs, x.to(tl.float32), mask=m)
    tl.store(f16_ptr + offs, x.to(tl.float16), mask=m)
    tl.store(bf16_ptr + offs, x.to(tl.bfloat16), mask=m)
    tl.store(f64_ptr + offs, x.to(tl.float64), mask=m)
    w = tl.load(f32_ptr + offs, mask=m)
    tl.store(dst_ptr + offs, w.to(dst_ptr.dtype.element_ty, fp_downcast_rounding=ROUNDING), mask=m)
    h = tl.load(f16_ptr + offs, mask=m)
    d = tl.load(f64_ptr + offs, mask=m)
    tl.store(other_ptr + offs, h.to(other_ptr.dtype.element_ty) + d.to(other_ptr.dtype.element_ty), mask=m)


@tritium.jit
def fp8_const_kernel(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.full((BLOCK,), 1.5, out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, tl.where(offs < 3, v, tl.load(out_ptr + offs)))


@pytest.mark.parametrize("arch", sorted(set(ARCHS) | {"sm_89", "sm_90"}))
@pytest.mark.parametrize("src,dst", [("fp8e4nv", "fp8e5"), ("fp8e5", "fp8e4nv")])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_fp8_kernel_compiles(arch, src, dst, rounding, tmp_path):
    sig = f"*{src}, *fp32, *fp16, *bf16, *fp64, *{dst}, *{src}, i32"
    out = compile_ptx(fp8_roundtrip_kernel, arch, signature=sig, constexprs={"BLOCK": 256, "ROUNDING": rounding})
    ptx = out["ptx"]
    hw = "cvt.rn.satfinite." in ptx
    # hardware fp8 conversion where the arch has it (sm_89+, PTX 8.1+), and only for round-to-nearest
    assert hw == (arch in ("sm_89", "sm_90", "sm_90a")), ptx
    ptxas(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", FORMATS)
def test_fp8_constant_compiles(arch, name, tmp_path):
    out = compile_ptx(fp8_const_kernel, arch, signature=f"*{name}", constexprs={"BLOCK": 128})
    code = {"fp8e4nv": 0x3C, "fp8e5": 0x3E}[name]  # 1.5
    assert f"{code}" in out["ptx"] or hex(code) in out["ptx"].lower(), out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)
