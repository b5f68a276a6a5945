"""How the interpreter stores each kernel dtype in NumPy, and the rounding and
bit-pattern conversions for the float formats NumPy lacks (bf16, fp8).

Representation (every handle obeys it; `storage_dtype` is the single source):
  int1 → bool; iN/uN → the NumPy int of that width; f16/f32/f64 → NumPy's;
  bf16, f8e4m3, f8e5m2 → float32 holding a value *exactly representable* in the
  format (so arithmetic on them is float32 arithmetic followed by `round_to`);
  pointers → int64 byte addresses.
fp8 casts follow PTX `cvt.rn.satfinite`: finite overflow and ±inf saturate to
±max finite, NaN stays NaN (e4m3 has no infinity at all). Triton's other
three fp8 formats (crates/tritium-codegen/src/lower/fp8.rs has the same rules):
  fp8e4b15: e4m3 with bias 15 and every code finite; casts round to nearest
    with ties away from zero whatever the rounding mode asked, and saturate
    at ±1.75 (its 0x7f, 1.875, is never produced), ±inf becoming ±1.75: what
    Triton's NVIDIA conversion (f16 magnitude + half an ulp, clamped; f32
    truncated to f16 first) computes. NaN becomes 1.75 with the sign bit of
    an f16 NaN, +1.75 from wider formats (`arith.cast` clears the sign: the
    f32 → f16 step gives the canonical NaN);
  fp8e4b8, fp8e5b16 (e4m3fnuz, e5m2fnuz): biases 8 and 16, 0x80 the only
    NaN, no -0 (zero results are +0), no infinity: ±inf and NaN encode as
    NaN, finite overflow saturates to ±240 / ±57344, as Triton's AMD ones.
"""
from __future__ import annotations

import numpy as np

from ..language.dtypes import dtype

# (exponent bits, mantissa bits, bias, saturating) of the formats rounded by hand
_FORMATS = {
    "bf16": (8, 7, 127, False),
    "fp16": (5, 10, 15, False),
    "fp32": (8, 23, 127, False),
    "fp8e4nv": (4, 3, 7, True),
    "fp8e5": (5, 2, 15, True),
    "fp8e4b15": (4, 3, 15, True),
    "fp8e4b8": (4, 3, 8, True),
    "fp8e5b16": (5, 2, 16, True),
}
_FNUZ = ("fp8e4b8", "fp8e5b16")
# casts (saturate_inf) clamp lower than the format's top value: Triton's e4b15
# conversion never produces 1.875, though arithmetic and memory keep it
_CAST_MAX = {"fp8e4b15": 1.75}
_TIES_AWAY = ("fp8e4b15",)
# largest finite value per format; e4m3 ("fn" variant) reuses the all-ones exponent
_MAX = {
    "bf16": (2 - 2.0 ** -7) * 2.0 ** 127,
    "fp16": 65504.0,
    "fp32": float(np.finfo(np.float32).max),
    "fp8e4nv": 448.0,
    "fp8e5": 57344.0,
    "fp8e4b15": 1.875,
    "fp8e4b8": 240.0,
    "fp8e5b16": 57344.0,
}

_NP = {
    "int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "fp16": np.float16, "bf16": np.float32, "fp32": np.float32, "fp64": np.float64,
    "fp8e4nv": np.float32, "fp8e5": np.float32, "fp8e4b15": np.float32, "fp8e4b8": np.float32,
    "fp8e5b16": np.float32,
}
_UINT_OF_BITS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def storage_dtype(ty: dtype) -> np.dtype:
    """The NumPy dtype that holds values of kernel dtype `ty` (scalar or block)."""
    sca = ty.scalar
    if sca.is_ptr():
        return np.dtype(np.int64)
    return np.dtype(_NP[sca.name])


def needs_rounding(ty: dtype) -> bool:
    """True for formats stored in a wider NumPy type (results must be re-rounded)."""
    return ty.scalar.name == "bf16" or ty.scalar.is_fp8()


def round_to(x: np.ndarray, name: str, mode: str = "rtne", saturate_inf: bool = False) -> np.ndarray:
    """Round float values to format `name` (`rtne` or `rtz`), vectorised.

    `saturate_inf` (casts into fp8, PTX satfinite) also maps ±inf to ±max;
    re-rounding an already representable value leaves infinities alone. Works
    in float64, where scaling by powers of two is exact for every format here,
    so each value is rounded once (no double rounding)."""
    e_bits, m_bits, bias, saturating = _FORMATS[name]
    x = np.asarray(x, dtype=np.float64)
    emin = 1 - bias
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)  # x = f * 2**e with 0.5 <= |f| < 1
        ulp_exp = np.maximum(e - 1, emin) - m_bits
        scaled = np.ldexp(x, -ulp_exp)
        if name in _TIES_AWAY:   # e4b15 has one rounding (Triton ignores the mode)
            r = np.copysign(np.floor(np.abs(scaled) + 0.5), scaled)
        elif mode != "rtne":
            r = np.trunc(scaled)
        else:
            r = np.rint(scaled)
        out = np.ldexp(r, ulp_exp)
        big = _CAST_MAX.get(name, _MAX[name]) if saturate_inf else _MAX[name]
        over = np.abs(out) > big
        if saturating:
            out = np.where(over, np.copysign(big, x), out)
        elif mode == "rtne":
            out = np.where(over, np.copysign(np.inf, x), out)
        else:  # round toward zero never produces an infinity from a finite input
            out = np.where(over & np.isfinite(x), np.copysign(big, x), out)
        inf_to_max = saturating and saturate_inf
        if inf_to_max:
            out = np.where(np.isinf(x), np.copysign(big, x), out)
        out = np.where(np.isnan(x) | (np.isinf(x) & (not inf_to_max)), x, out)
        out = np.where(x == 0, x, out)  # keeps the sign of zero
        if name in _FNUZ:   # one NaN for NaN and ±inf; no -0
            out = np.where(np.isinf(x), np.nan, out)
            out = np.where(out == 0, 0.0, out)
        elif name in _TIES_AWAY:   # no NaN or inf: saturated, by the sign bit
            out = np.where(np.isnan(x) | np.isinf(x), np.where(np.signbit(x), -big, big), out)
    return out


def _fp8_table(name: str) -> np.ndarray:
    """Decoded float32 value of each of the 256 bit patterns."""
    e_bits, m_bits, bias, _ = _FORMATS[name]
    codes = np.arange(256, dtype=np.int64)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp = (codes >> m_bits) & ((1 << e_bits) - 1)
    man = codes & ((1 << m_bits) - 1)
    normal = sign * np.ldexp(1.0 + man / (1 << m_bits), exp - bias)
    sub = sign * np.ldexp(man / (1 << m_bits), 1 - bias)
    vals = np.where(exp == 0, sub, normal)
    top = (1 << e_bits) - 1
    # NaN codes keep their sign bit, as the compiled decoding (a negation last) does
    if name == "fp8e4nv":
        vals = np.where((exp == top) & (man == (1 << m_bits) - 1), np.copysign(np.nan, sign), vals)
    elif name == "fp8e5":
        vals = np.where(exp == top, np.where(man == 0, sign * np.inf, np.copysign(np.nan, sign)), vals)
    elif name in _FNUZ:
        vals = np.where(codes == 0x80, np.nan, vals)
    return vals.astype(np.float32)


_FP8_NAMES = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16")
_FP8_TABLES = {n: _fp8_table(n) for n in _FP8_NAMES}
# positive codes sorted by value (0x00..0x7f rise monotonically up to the NaN/inf ones)
_FP8_NAN = {"fp8e4nv": 0x7F, "fp8e5": 0x7F, "fp8e4b8": 0x80, "fp8e5b16": 0x80}


def fp8_decode(bits: np.ndarray, name: str) -> np.ndarray:
    return _FP8_TABLES[name][np.asarray(bits).astype(np.uint8)]


def fp8_encode(values: np.ndarray, name: str) -> np.ndarray:
    """Bit patterns of values already representable in the format."""
    table = _FP8_TABLES[name]
    v = np.asarray(values, dtype=np.float32)
    pos = table[:0x80]
    finite = np.isfinite(pos)
    keys = pos[finite]  # strictly increasing
    mag = np.abs(v)
    idx = np.clip(np.searchsorted(keys, mag), 0, len(keys) - 1).astype(np.uint8)
    codes = np.nonzero(finite)[0].astype(np.uint8)[idx]
    if name == "fp8e5":
        codes = np.where(np.isinf(mag), np.uint8(0x7C), codes)
    sign = np.signbit(v) & ~np.isnan(v)
    if name in _FNUZ:
        sign &= codes != 0   # no -0
    codes = codes | np.where(sign, np.uint8(0x80), np.uint8(0))
    if name in _FP8_NAN:
        codes = np.where(np.isnan(v), np.uint8(_FP8_NAN[name]), codes)
    return codes.astype(np.uint8)


def to_bits(x: np.ndarray, ty: dtype) -> np.ndarray:
    """The raw bit pattern of values of scalar type `ty` as an unsigned array."""
    sca = ty.scalar
    x = np.asarray(x)
    if sca.is_ptr():
        return x.astype(np.int64).view(np.uint64)
    if sca.is_int1():
        return x.astype(np.uint8)
    if sca.name == "bf16":
        return (np.asarray(x, np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    if sca.is_fp8():
        return fp8_encode(x, sca.name)
    return np.array(x, order="C").view(_UINT_OF_BITS[sca.primitive_bitwidth])


def from_bits(bits: np.ndarray, ty: dtype) -> np.ndarray:
    """Inverse of `to_bits`: values of scalar type `ty` from their bit patterns."""
    sca = ty.scalar
    bits = np.asarray(bits)
    if sca.is_ptr():
        return bits.astype(np.uint64).view(np.int64)
    if sca.is_int1():
        return bits != 0
    if sca.name == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if sca.is_fp8():
        return fp8_decode(bits, sca.name)
    uint = _UINT_OF_BITS[sca.primitive_bitwidth]
    return np.array(bits.astype(uint), order="C").view(storage_dtype(sca))


def memory_itemsize(ty: dtype) -> int:
    """Bytes one element of `ty` takes in memory (i1 is stored as a byte)."""
    sca = ty.scalar
    return 8 if sca.is_ptr() else max(1, sca.primitive_bitwidth // 8)
