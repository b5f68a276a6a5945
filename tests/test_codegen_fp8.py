"""fp8 codegen without a GPU, for all five formats (e4m3fn, e5m2, and
Triton's e4b15, e4b8 = e4m3fnuz, e5b16 = e5m2fnuz): (1) a NumPy mirror of the
integer algorithms in crates/tritium-codegen/src/lower/fp8.rs (the sm_80
path; sm_90 uses PTX `cvt.rn.satfinite`, gfx942 its fnuz converts, with the
same semantics) checked bit for bit against the interpreter
(interpreter/floats.py) on every fp8 code, every f16 code and random/edge
f32 and f64 values; (2) fp8 kernels compiled to PTX and accepted by ptxas
for sm_80 and sm_90a, and to gfx942/gfx90a code objects."""
from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from test_codegen_ptx import ARCHS, compile_ptx, ptxas
from tritium.interpreter import arith, floats
from tritium.language import float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16, float16, float32, float64

# (mantissa bits, bias, saturation code, specials, ties away), as fp8.rs's `Fp8`
FORMATS = {"fp8e4nv": (3, 7, 0x7E, "fn", False), "fp8e5": (2, 15, 0x7B, "ieee", False),
           "fp8e4b15": (3, 15, 0x7E, "all_finite", True), "fp8e4b8": (3, 8, 0x7F, "fnuz", False),
           "fp8e5b16": (2, 16, 0x7F, "fnuz", False)}
DTYPES = {"fp8e4nv": float8e4nv, "fp8e5": float8e5, "fp8e4b15": float8e4b15, "fp8e4b8": float8e4b8,
          "fp8e5b16": float8e5b16}
PTX_FORMATS = ("fp8e4nv", "fp8e5")


def ref_decode(codes: np.ndarray, name: str) -> np.ndarray:
    """`Lowering::fp8_decode`: fp8 bits to f32."""
    mant, bias, max_code, specials, _ = FORMATS[name]
    w = codes.astype(np.uint32)
    mag = w & 0x7F
    normal = ((mag << (23 - mant)) + np.uint32((127 - bias) << 23)).view(np.float32)
    sub = mag.astype(np.float32) * np.float32(2.0 ** (1 - bias - mant))
    v = np.where(mag < (1 << mant), sub, normal)
    if specials == "ieee":
        v = np.where(mag == max_code + 1, np.float32(np.inf), v)
        v = np.where(mag > max_code + 1, np.float32(np.nan), v)
    elif specials == "fn":
        v = np.where(mag == 0x7F, np.float32(np.nan), v)
    v = np.where(w >= 0x80, -v, v)
    if specials == "fnuz":
        v = np.where(w == 0x80, np.float32(np.nan), v)
    return v.astype(np.float32)


def ref_encode(x: np.ndarray, name: str, rtz: bool = False, sat_inf: bool = True) -> np.ndarray:
    """`Lowering::fp8_encode` on f32 or f64 `x`: integer rounding of the bits."""
    mant, bias, max_code, specials, ties_away = FORMATS[name]
    rtz = rtz and specials != "all_finite"   # e4b15 casts ignore the mode, as Triton's
    is64 = x.dtype == np.float64
    ut, mb, sbias, width = (np.uint64, 52, 1023, 64) if is64 else (np.uint32, 23, 127, 32)
    a = np.abs(x)
    u = a.view(ut)
    drop = ut(mb - mant)
    if rtz:
        r = u
    elif ties_away:
        r = u + ut(1 << (mb - mant - 1))
    else:
        r = u + ut((1 << (mb - mant - 1)) - 1) + ((u >> drop) & ut(1))
    normal = (r >> drop) - ut((sbias - bias) << mant)  # wraps for small values, as in LLVM (unused there)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = a * x.dtype.type(2.0 ** (bias - 1 + mant))
        # llvm.round: ties away (floor(s + 0.5) would round 0.5 - 2^-25 up in f32)
        away = np.floor(scaled) + (scaled - np.floor(scaled) >= 0.5)
        rounded = np.trunc(scaled) if rtz else away if ties_away else np.rint(scaled)
        sub = np.where(np.isfinite(rounded), rounded, 0).astype(ut)
    small = a < 2.0 ** (1 - bias)
    code = np.where(small, sub, normal)
    if specials == "all_finite" and not sat_inf:
        max_code = 0x7F   # arithmetic keeps e4b15's top code; casts clamp at 1.75
    code = np.where(code > max_code, ut(max_code), code)
    if specials == "ieee" and not sat_inf:
        code = np.where(a == np.inf, ut(max_code + 1), code)
    code = code.astype(np.uint8)
    sign = (x.view(ut) >> ut(width - 1)).astype(np.uint8) << np.uint8(7)
    signed = code | sign
    if specials == "fnuz":
        signed = np.where(code == 0, np.uint8(0), signed)
        return np.where(~(a < np.inf), np.uint8(0x80), signed).astype(np.uint8)
    if specials == "all_finite":   # NaN: +1.75 in casts, signed 1.875 in arithmetic
        return np.where(np.isnan(x), np.uint8(max_code) | (np.uint8(0) if sat_inf else sign), signed).astype(np.uint8)
    return np.where(np.isnan(x), np.uint8(0x7F), signed).astype(np.uint8)


def ref_encode_f16(h: np.ndarray, name: str, rtz: bool = False) -> np.ndarray:
    """`Lowering::fp8_encode_f16` without PTX's cvt: e4b15 on the f16 bits
    (`e4b15_from_f16_bits`), the others through an exact f32 widening."""
    if name != "fp8e4b15":
        return ref_encode(h.astype(np.float32), name, rtz=rtz)
    bits = h.view(np.uint16).astype(np.uint32)
    mag = np.minimum(bits & 0x7FFF, 0x7E << 7)
    return (((mag + 0x40) >> 7) | ((bits >> 8) & 0x80)).astype(np.uint8)


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
    # f16 -> fp8 goes through an exact f32 widening (or one sm_90 cvt of the same value), e4b15 on the bits
    ours = ref_encode_f16(h, name, rtz=rounding == "rtz")
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


@pytest.mark.parametrize("src,dst", [(a, b) for a in FORMATS for b in FORMATS if a != b])
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


FP8_PAIRS = [("fp8e4nv", "fp8e5"), ("fp8e5", "fp8e4nv"), ("fp8e4b15", "fp8e4nv"), ("fp8e4b8", "fp8e5b16"),
             ("fp8e5b16", "fp8e4b15"), ("fp8e4b15", "fp8e4b8")]


@pytest.mark.parametrize("arch", sorted(set(ARCHS) | {"sm_89", "sm_90"}))
@pytest.mark.parametrize("src,dst", FP8_PAIRS)
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_fp8_kernel_compiles(arch, src, dst, rounding, tmp_path):
    sig = f"*{src}, *fp32, *fp16, *bf16, *fp64, *{dst}, *{src}, i32"
    out = compile_ptx(fp8_roundtrip_kernel, arch, signature=sig, constexprs={"BLOCK": 256, "ROUNDING": rounding})
    ptx = out["ptx"]
    hw = "cvt.rn.satfinite." in ptx
    # hardware fp8 conversion where the arch has it (sm_89+, PTX 8.1+), only for round-to-nearest and only
    # into the formats PTX has (e4b15 and the fnuz pair are the integer algorithm everywhere)
    uses_hw = src in PTX_FORMATS or (dst in PTX_FORMATS and rounding == "rtne")
    assert hw == (arch in ("sm_89", "sm_90", "sm_90a") and uses_hw), ptx
    ptxas(ptx, arch, tmp_path)


@tritium.jit
def _f16_cast_kernel(x_ptr, y_ptr, ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(y_ptr.dtype.element_ty, fp_downcast_rounding=ROUNDING))


@pytest.mark.parametrize("arch", sorted(set(ARCHS) | {"sm_90"}))
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_e4b15_from_f16_reads_the_f16_bits(arch, rounding, tmp_path):
    """No widening to f32 (NVIDIA's cvt.f32.f16 drops a NaN's sign, the
    H100's 0x7e for -NaN): the integer recipe on the bits, the same for
    either rounding mode (ref_encode_f16 mirrors it)."""
    ptx = compile_ptx(_f16_cast_kernel, arch, signature="*fp16, *fp8e4b15",
                      constexprs={"ROUNDING": rounding, "BLOCK": 128})["ptx"]
    assert "cvt.f32.f16" not in ptx and "min.u16" in ptx, ptx
    ptxas(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", FORMATS)
def test_fp8_constant_compiles(arch, name, tmp_path):
    out = compile_ptx(fp8_const_kernel, arch, signature=f"*{name}", constexprs={"BLOCK": 128})
    code = {"fp8e4nv": 0x3C, "fp8e5": 0x3E, "fp8e4b15": 0x7C, "fp8e4b8": 0x44, "fp8e5b16": 0x42}[name]  # 1.5
    assert f"{code}" in out["ptx"] or hex(code) in out["ptx"].lower(), out["ptx"]
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("name", ["fp8e4b15", "fp8e4b8", "fp8e5b16"])
def test_new_formats_decode_to_their_documented_values(name):
    """The values themselves, not only agreement of two mirrors: bias, top
    code, NaN and the absent -0."""
    v = floats.fp8_decode(np.arange(256, dtype=np.uint8), name).astype(np.float64)
    top, bias = {"fp8e4b15": (1.875, 15), "fp8e4b8": (240.0, 8), "fp8e5b16": (57344.0, 16)}[name]
    mant = 2 if name == "fp8e5b16" else 3
    assert v[0x7F] == top and v[0x01] == 2.0 ** (1 - bias - mant) and v[0x00] == 0.0
    assert v[1 << mant] == 2.0 ** (1 - bias)   # smallest normal
    if name == "fp8e4b15":
        assert np.isfinite(v).all() and v[0xFF] == -1.875 and np.signbit(v[0x80])
    else:
        assert np.isnan(v[0x80]) and np.isfinite(np.delete(v, 0x80)).all() and v[0xFF] == -top


def tritons_e4b15_from_f16_bits(h: np.ndarray) -> np.ndarray:
    """Triton 3.6's NVIDIA conversion (inline PTX in its
    language/extra/cuda/utils.py), replayed on f16 bits: |h| clamped to 1.75
    (NaN and inf too: min.f16x2 returns the number), plus 0x40, the top
    byte, with h's sign bit. Triton passes no rounding mode to it."""
    h = h.astype(np.uint32)
    mag = h & 0x7FFF
    clamped = np.where(mag > 0x3F00, 0x3F00, mag)
    return (((clamped + 0x40) >> 7) | ((h >> 8) & 0x80)).astype(np.uint8)


def f32_to_f16_rz_bits(x: np.ndarray) -> np.ndarray:
    """PTX `cvt.rz.f16.f32`, Triton's first step from f32 to e4b15: toward
    zero (finite overflow to ±65504), NaN the canonical 0x7fff (NVIDIA's
    conversions drop a NaN's sign: the H100 gives +1.75 for -NaN through
    `cvt.f32.f16`, tests/gpu/test_fp8.py runs this very instruction)."""
    with np.errstate(all="ignore"):
        v = x.astype(np.float16)   # NumPy rounds once, to nearest even
        away = np.abs(v.astype(np.float32)) > np.abs(x)
        v = np.where(away, np.nextafter(v, np.float16(0)), v)
    return np.where(np.isnan(x), np.uint16(0x7FFF), v.view(np.uint16))


def _f32_e4b15_edges() -> np.ndarray:
    """Every f32 sign/exponent/top-10-mantissa-bit pattern (f16's precision)
    with the 13 bits below at their edges: exact, one ulp above, half way
    and around it, one ulp below the next; every tie of e4b15 is there."""
    hi = np.arange(1 << 19, dtype=np.uint32) << np.uint32(13)
    lows = np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF], np.uint32)
    return (hi[:, None] | lows[None, :]).ravel().view(np.float32)


@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_e4b15_matches_tritons_f16_bit_recipe(rounding):
    """Every f16 code, either rounding mode, gives Triton's bits: the
    interpreter, the compiled algorithm's mirror; decoding puts the 7 low
    bits back at bit 7."""
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    theirs = tritons_e4b15_from_f16_bits(h)
    for ours in (interp_cast_bits(h.view(np.float16), float16, "fp8e4b15", rounding),
                 ref_encode_f16(h.view(np.float16), "fp8e4b15", rtz=rounding == "rtz")):
        bad = np.nonzero(ours != theirs)[0]
        assert bad.size == 0, [(hex(h[i]), hex(ours[i]), hex(theirs[i])) for i in bad[:8]]
    codes = np.arange(256, dtype=np.uint16)
    back = (((codes & 0x7F) << 7) | ((codes & 0x80) << 8)).astype(np.uint16).view(np.float16)
    assert np.array_equal(floats.fp8_decode(codes.astype(np.uint8), "fp8e4b15"), back.astype(np.float32))


@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_e4b15_from_f32_matches_tritons_rz_f16_then_recipe(rounding):
    """Triton truncates f32 to f16 and runs the f16 recipe: one rounding to
    nearest (ties away) after all, since truncating never crosses a tie,
    and NaN of either sign +1.75. ~3M edge patterns and the samples."""
    x = np.concatenate([_f32_e4b15_edges(), _f32_samples()])
    theirs = tritons_e4b15_from_f16_bits(f32_to_f16_rz_bits(x))
    for ours in (interp_cast_bits(x, float32, "fp8e4b15", rounding), ref_encode(x, "fp8e4b15", rtz=rounding == "rtz")):
        bad = np.nonzero(ours != theirs)[0]
        assert bad.size == 0, [(float(x[i]), hex(ours[i]), hex(theirs[i])) for i in bad[:8]]


def test_e4b15_nan_sign_by_source():
    """Where NaN's sign survives: an f16 NaN keeps it (Triton's recipe reads
    the f16 bits), every wider source (f32, and bf16, f64 and the other fp8
    formats, which Triton refuses and tritium reads as f32 would be) gives
    +1.75; infinities keep their sign everywhere. Interpreter and the
    compiled algorithm's mirror."""
    nan16 = np.arange(0x7C01, 0x8000, dtype=np.uint16)
    for sign, code in ((0, 0x7E), (0x8000, 0xFE)):
        h = (nan16 | np.uint16(sign)).view(np.float16)
        for rounding in ("rtne", "rtz"):
            assert (interp_cast_bits(h, float16, "fp8e4b15", rounding) == code).all()
            assert (ref_encode_f16(h, "fp8e4b15", rtz=rounding == "rtz") == code).all()
    neg_nan32 = np.array([0xFFC00000, 0xFF800001, 0xFFFFFFFF, 0x7FC00000, 0x7F800001], np.uint32).view(np.float32)
    with np.errstate(invalid="ignore"):
        neg_nan64 = neg_nan32.astype(np.float64)
    assert np.signbit(neg_nan64[:3]).all()
    for x, src in ((neg_nan32, float32), (neg_nan32, tl.bfloat16), (neg_nan64, float64)):
        assert (interp_cast_bits(x, src, "fp8e4b15") == 0x7E).all(), src
        assert (interp_cast_bits(x, src, "fp8e4b15", "rtz") == 0x7E).all(), src
    assert (ref_encode(neg_nan32, "fp8e4b15") == 0x7E).all() and (ref_encode(neg_nan64, "fp8e4b15") == 0x7E).all()
    for src in ("fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16"):   # NaN codes of either sign decode to NaN
        codes = np.arange(256, dtype=np.uint8)
        v = floats.fp8_decode(codes, src)
        assert (interp_cast_bits(v[np.isnan(v)], DTYPES[src], "fp8e4b15") == 0x7E).all(), src
    for x, src in ((np.array([-np.inf, np.inf], np.float32), float32), (np.array([-np.inf, np.inf]), float64),
                   (np.array([-np.inf, np.inf], np.float16), float16)):
        assert list(interp_cast_bits(x, src, "fp8e4b15")) == [0xFE, 0x7E], src
    # arithmetic results keep the sign and the top code (a NaN cannot arise from e4b15 sums and products)
    assert list(ref_encode(np.array([np.nan, -np.nan], np.float32), "fp8e4b15", sat_inf=False)) == [0x7F, 0xFF]


@pytest.mark.parametrize("target,hw", [("hip:gfx942", True), ("hip:gfx90a", False)])
def test_fnuz_casts_use_gfx942_converts(target, hw, tmp_path):
    from test_codegen_amd import disassemble
    sig = "*fp8e4b8, *fp32, *fp16, *bf16, *fp64, *fp8e5b16, *fp8e4b8, i32"
    k = tritium.compile(fp8_roundtrip_kernel, signature=sig, constexprs={"BLOCK": 256, "ROUNDING": "rtne"},
                        target=target)
    text = disassemble(k.asm["hsaco"], target, tmp_path)
    for insn in ("v_cvt_f32_fp8", "v_cvt_pk_bf8_f32", "v_cvt_pk_fp8_f32"):
        assert (insn in text) == hw, insn


# --- the interpreter running kernels on fp8 memory (uint8 storage reinterpreted) ---

_interp = tritium.jit(interpret=True)


@_interp
def _interp_cast(x_ptr, y_ptr, ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(y_ptr.dtype.element_ty, fp_downcast_rounding=ROUNDING))


@pytest.mark.parametrize("name", FORMATS)
def test_interpreter_kernel_widens_every_code(name):
    codes = np.arange(256, dtype=np.uint8)
    out = np.zeros(256, np.float32)
    _interp_cast[(1,)](tritium.reinterpret(codes, DTYPES[name]), out, ROUNDING=None, BLOCK=256)
    assert same_float_bits(out, ref_decode(codes, name))


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_interpreter_kernel_narrows_every_f16_code(name, rounding):
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    out = np.zeros(65536, np.uint8)
    _interp_cast[(1,)](h, tritium.reinterpret(out, DTYPES[name]), ROUNDING=rounding, BLOCK=65536)
    ours = ref_encode_f16(h, name, rtz=rounding == "rtz")
    bad = np.nonzero(out != ours)[0]
    assert bad.size == 0, [(float(h[i]), hex(out[i]), hex(ours[i])) for i in bad[:8]]


@tritium.jit
def _fp8_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs[:, None] * N + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * N + offs[None, :])
    tl.store(c_ptr + offs[:, None] * N + offs[None, :], tl.dot(a, b))


@pytest.mark.parametrize("name", ["fp8e4b15", "fp8e4b8", "fp8e5b16"])
def test_dot_takes_the_triton_only_formats_as_f16(name, tmp_path):
    """No tensor core reads these: the operands become f16 (exact), the dot an f16 one."""
    for arch in ARCHS:
        ptx = compile_ptx(_fp8_dot, arch, signature=f"*{name}, *{name}, *fp32", constexprs={"N": 32})["ptx"]
        assert "e4m3" not in ptx and "e5m2" not in ptx
        assert ".f16" in ptx
        ptxas(ptx, arch, tmp_path)
    rng = np.random.default_rng(7)
    a, b = (rng.integers(0, 256, (32, 32)).astype(np.uint8) for _ in range(2))
    if name != "fp8e4b15":   # keep NaN (0x80) out, so the sums compare
        a[a == 0x80], b[b == 0x80] = 0, 0
    c = np.zeros((32, 32), np.float32)
    interp_dot = tritium.jit(interpret=True)(_fp8_dot.fn)
    interp_dot[(1,)](tritium.reinterpret(a, DTYPES[name]), tritium.reinterpret(b, DTYPES[name]), c, N=32)
    va, vb = (floats.fp8_decode(x, name).astype(np.float64) for x in (a, b))
    # f32 accumulation: within a few f32 ulps of the sum of magnitudes
    assert (np.abs(c - va @ vb) <= 1e-6 * (np.abs(va) @ np.abs(vb))).all()
