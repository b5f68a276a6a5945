"""Math codegen: (1) a NumPy reference that mirrors mathlib's algorithms step
by step (same constants and coefficients, read from the Rust sources) to
measure ulp error against float64/libm; (2) kernels using every math op
compiled to PTX and checked by ptxas for sm_80 and sm_90a."""
from __future__ import annotations

import math
import pathlib
import re
import struct
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

import tritium
import tritium.language as tl
from test_codegen_ptx import ARCHS, compile_ptx, ptxas

MATHLIB = pathlib.Path(__file__).resolve().parents[1] / "crates/tritium-codegen/src/mathlib"


def _consts() -> dict:
    text = (MATHLIB / "constants.rs").read_text() + (MATHLIB / "erfc_coeffs.rs").read_text()
    out = {m[1]: float(m[2]) for m in re.finditer(r"pub const (\w+): f64 = ([^;]+);", text)}
    for m in re.finditer(r"pub const (\w+): \[f64; \d+\] = \[([^\]]*)\];", text):
        out[m[1]] = [float(v) for v in m[2].split(",") if v.strip()]
    for m in re.finditer(r"pub const (\w+_RANGE): \(f64, f64\) = \(([^,]+), ([^)]+)\);", text):
        out[m[1]] = (float(m[2]), float(m[3]))
    return out


K = _consts()
K["TWO_OVER_PI_BITS"] = [int(w, 16) for w in re.search(
    r"TWO_OVER_PI_BITS: \[u64; \d+\] = \[([^\]]*)\]", (MATHLIB / "constants.rs").read_text())[1].split(",") if w.strip()]
M64 = 2 ** 64 - 1
HUGE = 2.0 ** 20  # trig_reduce.rs's HUGE: the Payne-Hanek path from here up


def _fma_exact(a: float, b: float, c: float) -> float:
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def rem_pio2_large(x: float) -> tuple[float, int]:
    """Mirror of trig_reduce.rs: x = (4n + q) pi/2 + r, for |x| >= 2^20."""
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    biased = (bits >> 52) & 0x7FF
    m = (bits & ((1 << 52) - 1)) | (1 << 52)
    t0 = biased - 1075 + 62
    w, sh = t0 >> 6, t0 & 63
    tw = K["TWO_OVER_PI_BITS"][w:w + 4]

    def fshl(a, b, s):
        return ((a << s) | (b >> (64 - s))) & M64 if s else a
    p = fshl(tw[0], tw[1], sh) << 128 | fshl(tw[1], tw[2], sh) << 64 | fshl(tw[2], tw[3], sh)
    q = (m * p) & (2 ** 192 - 1)
    q2 = q >> 128
    quad = (q2 >> 62) + ((q2 >> 61) & 1)
    h = ((q << 2) & (2 ** 192 - 1)) >> 64
    f_neg = h >= 2 ** 127
    a = 2 ** 128 - h if f_neg else h
    lz = min(128 - a.bit_length(), 127)
    a = (a << lz) & (2 ** 128 - 1)
    hi_i, lo_i = a >> 75, (a >> 22) & ((1 << 53) - 1)
    fhi = float(hi_i) * 2.0 ** (-53 - lz)
    flo = float(lo_i) * 2.0 ** (-106 - lz)
    c1, c2 = K["PIO2_D_HI"], K["PIO2_D_LO"]
    rh = fhi * c1
    err = _fma_exact(fhi, c1, -rh)
    tail = _fma_exact(flo, c1, fhi * c2)
    r = rh + (err + tail)
    r = -r if f_neg else r
    if bits >> 63:
        r, quad = -r, -quad
    return r, quad & 3


class Ref:
    """One float width; every op rounds to it like the generated LLVM IR."""

    def __init__(self, dt):
        self.dt, self.is64 = dt, dt == np.float64

    def c(self, v):
        return self.dt(v)

    def fma(self, a, b, c):
        if self.is64:  # no exact f64 fma in NumPy: one extra rounding (documented bound slack)
            return a * b + c
        return (np.float64(a) * np.float64(b) + np.float64(c)).astype(np.float32)

    def horner(self, z, coeffs):
        acc = np.full_like(z, self.c(coeffs[-1]))
        for cf in reversed(coeffs[:-1]):
            acc = self.fma(acc, z, self.c(cf))
        return acc

    def log(self, x, base2=False):
        it, mb = (np.int64, 52) if self.is64 else (np.int32, 23)
        shift = 54 if self.is64 else 24
        tiny = np.finfo(self.dt).tiny
        sub = x < tiny
        xn = np.where(sub, x * self.c(2.0 ** shift), x)
        kadj = np.where(sub, self.c(-shift), self.c(0))
        sh = np.array(K["SQRT_HALF"], dtype=self.dt).view(it)
        t = xn.view(it) - sh
        k = (t >> mb).astype(self.dt) + kadj
        m = ((t & it((1 << mb) - 1)) + sh).view(self.dt)
        f = m - self.c(1)
        s = f / (f + self.c(2))
        z = s * s
        n = 11 if self.is64 else 5
        logm = (s + s) * self.horner(z, [1.0 / (2 * j + 1) for j in range(n + 1)])
        if base2:
            y = self.fma(logm, self.c(K["LOG2E"]), k)
        else:
            y = self.fma(k, self.c(K["LN2_HI"]), self.fma(k, self.c(K["LN2_MID"]), logm))
        return y

    def exp(self, x, base2=False):
        lim = (1100.0 if self.is64 else 150.0) * (1.5 if base2 else 1.0)
        xc = np.clip(x, -lim, lim)
        if base2:
            k = np.rint(xc)
            r = (xc - k) * self.c(K["LN2"])
        else:
            k = np.rint(xc * self.c(K["LOG2E"]))
            r = self.fma(-k, self.c(K["LN2_HI"]), xc)
            r = self.fma(-k, self.c(K["LN2_MID"]), r)
        p = self.horner(r, [1.0 / math.factorial(n) for n in range(14)])
        k1 = np.trunc(k * self.c(0.5))
        return p * np.ldexp(self.c(1), k1.astype(np.int64)) * np.ldexp(self.c(1), (k - k1).astype(np.int64))

    def sincos(self, x, cos=False):
        xd = np.float64(x)
        k = np.rint(xd * K["TWO_OVER_PI"])
        r = xd + (-k) * K["PIO2_HI"]  # exact product: k < 2^20, 33-bit constant
        r = r + (-k) * K["PIO2_MID"]
        r = r + (-k) * K["PIO2_LO"]
        q = (k - np.floor(k * 0.25) * 4).astype(np.int64)
        huge = np.isfinite(xd) & (np.abs(xd) >= HUGE)
        if np.any(huge):
            r, q = np.array(r, np.float64), np.array(q, np.int64)
            for i in np.flatnonzero(huge):
                r.flat[i], q.flat[i] = rem_pio2_large(float(xd.flat[i]))
        q = q + (1 if cos else 0)
        r = r.astype(self.dt)
        z = r * r
        ns, nc = (9, 10) if self.is64 else (5, 6)
        sin_r = r * self.horner(z, [(-1) ** j / math.factorial(2 * j + 1) for j in range(ns + 1)])
        cos_r = self.horner(z, [(-1) ** j / math.factorial(2 * j) for j in range(nc + 1)])
        v = np.where(q & 1, cos_r, sin_r)
        v = np.where(q & 2, -v, v)
        return v if cos else np.where(x == 0, x, v)

    def erf(self, x):
        ax = np.abs(x)
        n = 18 if self.is64 else 10
        small = x * self.horner(x * x, [K["TWO_OVER_SQRT_PI"] * (-1) ** i / (math.factorial(i) * (2 * i + 1))
                                        for i in range(n + 1)])
        name = "F64" if self.is64 else "F32"
        lo, hi = K[f"ERFC_{name}_RANGE"]
        cheb = K[f"ERFC_{name}"]
        axc = np.clip(ax, lo, hi)
        t = self.c(1) / axc
        tl_, th = 1 / hi, 1 / lo
        u = self.fma(t, self.c(2 / (th - tl_)), self.c(-2 * tl_ / (th - tl_) - 1))
        u2 = u + u
        b1 = b2 = np.zeros_like(u)
        for ck in reversed(cheb[1:]):
            b1, b2 = self.fma(u2, b1, self.c(ck)) - b2, b1
        h = self.fma(u, b1, self.c(cheb[0])) - b2
        p = axc * axc
        err = self.fma(axc, axc, -p)
        ep = self.exp(-p) if self.is64 else np.exp2(np.float64(p * self.c(-K["LOG2E"]))).astype(np.float32)
        ep = ep * (self.c(1) - err)
        big = np.where(ax >= hi, self.c(1), self.c(1) - ep * (h * t))
        return np.where(ax < 1, small, np.copysign(big, x))


def ulp_error(got, exact: np.ndarray, dt) -> float:
    """Max |got - exact| in units of the last place of `exact` rounded to dt."""
    e = exact.astype(dt)
    ulp = np.spacing(np.abs(e)).astype(np.float64)
    ulp = np.maximum(ulp, np.finfo(dt).smallest_subnormal)
    return float(np.max(np.abs(np.float64(got) - exact) / ulp))


RNG = np.random.default_rng(7)


def _inputs(dt, lo, hi, n=200_000, log_scale=False, signed=False):
    if log_scale:
        v = np.exp(RNG.uniform(np.log(lo), np.log(hi), n))
    else:
        v = RNG.uniform(lo, hi, n)
    if signed:
        v = v * RNG.choice([-1.0, 1.0], n)
    return v.astype(dt)


np_erf = np.vectorize(math.erf, otypes=[np.float64])
# (reference, exact, input range, f32 ulp bound, f64 ulp bound); measured maxima:
# log 2.6/2.0, log2 2.9/3.0, sin 1.9/2.0, cos 1.8/2.0, erf 2.3/5.0 (f32/f64)
CASES = {
    "log": (lambda r, x: r.log(x), np.log, dict(lo=1e-37, hi=3e38, log_scale=True), 3.0, 3.0),
    "log2": (lambda r, x: r.log(x, True), np.log2, dict(lo=1e-37, hi=3e38, log_scale=True), 3.0, 4.0),
    "sin": (lambda r, x: r.sincos(x), np.sin, dict(lo=0, hi=1e5, signed=True), 2.0, 3.0),
    "cos": (lambda r, x: r.sincos(x, True), np.cos, dict(lo=0, hi=1e5, signed=True), 2.0, 3.0),
    "erf": (lambda r, x: r.erf(x), np_erf, dict(lo=0, hi=7, signed=True), 3.0, 6.0),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_reference_accuracy(name, dt):
    fn, exact_fn, rng, b32, b64 = CASES[name]
    x = _inputs(dt, n=20_000 if name == "erf" else 200_000, **rng)
    with np.errstate(all="ignore"):
        got = fn(Ref(dt), x)
    exact = exact_fn(np.float64(x))
    err = ulp_error(got, exact, dt)
    print(f"{name} {dt.__name__}: max {err:.2f} ulp")
    assert err <= (b32 if dt == np.float32 else b64), f"{name} {dt.__name__}: {err:.2f} ulp"


def _pi_decimal(digits: int) -> Decimal:
    getcontext().prec = digits + 10

    def atan_inv(n: int) -> Decimal:
        x, n2, total, k, sign = Decimal(1) / n, n * n, Decimal(0), 1, 1
        term = x
        while term > Decimal(10) ** -(digits + 5):
            total += sign * term / k
            term /= n2
            k += 2
            sign = -sign
        return total
    return 16 * atan_inv(5) - 4 * atan_inv(239)


def _huge_inputs(dt, n):
    """Log-uniform magnitudes from 2^20 to the format's max, both signs, plus
    doubles famous for landing very close to a multiple of pi/2."""
    top = 127.9 if dt == np.float32 else 1023.9
    v = np.exp2(RNG.uniform(20, top, n)) * RNG.choice([-1.0, 1.0], n)
    v = v.astype(dt)
    if dt == np.float64:
        v = np.concatenate([v, [6381956970095103.0 * 2.0 ** 797, 5261692873635770.0 * 2.0 ** 499,
                                8.98846567431158e307, 2.0 ** 1023 * (2 - 2.0 ** -52)]])
    else:
        v = np.concatenate([v, np.array([3.4028235e38, 16777216.0, 1048576.0, 1.0e30], np.float32)])
    return v


_PI_OVER_2 = None


def exact_sincos(x: np.ndarray, cos: bool = False) -> np.ndarray:
    """sin/cos of doubles through an exact remainder (pi to 400 digits): NumPy's
    own float64 sin/cos is off by several ulp near multiples of pi/2 for huge x."""
    global _PI_OVER_2
    if _PI_OVER_2 is None:
        _PI_OVER_2 = _pi_decimal(400) / 2
    out = np.empty(x.shape, np.float64)
    for i, v in enumerate(x.ravel()):
        k = (Decimal(float(v)) / _PI_OVER_2).to_integral_value()
        r = float(Decimal(float(v)) - k * _PI_OVER_2)
        q = (int(k) + (1 if cos else 0)) % 4
        y = math.cos(r) if q & 1 else math.sin(r)
        out.flat[i] = -y if q & 2 else y
    return out


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_payne_hanek_reduction_is_within_one_ulp_of_exact(dt):
    pi2 = _pi_decimal(400) / 2
    for x in _huge_inputs(dt, 300):
        x = float(x)
        r, q = rem_pio2_large(x)
        k = (Decimal(x) / pi2).to_integral_value()
        exact = Decimal(x) - k * pi2
        assert int(k) % 4 == q, (x, q, int(k) % 4)
        # r is one double: the exact remainder rounded, give or take the last bit
        err = abs(Decimal(r) - exact) / Decimal(float(np.spacing(abs(r))))
        assert err <= 1, (x, r, float(exact), float(err))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("cos", [False, True])
def test_reference_sincos_huge_arguments(dt, cos):
    x = _huge_inputs(dt, 3000)
    got = Ref(dt).sincos(x, cos)
    exact = exact_sincos(np.float64(x), cos)
    err = ulp_error(got, exact, dt)
    print(f"{'cos' if cos else 'sin'} {dt.__name__} huge: max {err:.2f} ulp")
    assert err <= (2.0 if dt == np.float32 else 3.0), err


@pytest.mark.parametrize("base2", [False, True])
def test_reference_exp_f64(base2):
    x = _inputs(np.float64, lo=0, hi=700, signed=True)
    got = Ref(np.float64).exp(x, base2)
    exact = np.exp2(x) if base2 else np.exp(x)
    assert ulp_error(got, exact, np.float64) <= 3.0


# --- compile-only -----------------------------------------------------------------

@tritium.jit
def math_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.exp(x) + tl.exp2(x) + tl.log(x) + tl.log2(x) + tl.sqrt(x) + tl.rsqrt(x)
    y += tl.sin(x) + tl.cos(x) + tl.erf(x) + tl.math.sqrt_rn(x) + tl.math.div_rn(x, y)
    tl.store(out_ptr + offs, y, mask=m)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["fp32", "fp64"])  # the language rejects f16 math, as Triton
def test_math_kernel_ptxas(arch, dtype, tmp_path):
    out = compile_ptx(math_kernel, arch, signature=f"*{dtype}, *{dtype}, i32", constexprs={"BLOCK": 256},
                      arg_attrs={0: {"divisibility": 16}, 1: {"divisibility": 16}})
    if dtype == "fp32":
        # tl.exp keeps subnormals (ex2.approx.f32), tl.exp2 flushes them as Triton's does
        for ins in ["ex2.approx.f32", "ex2.approx.ftz.f32", "sqrt.approx.f32", "rsqrt.approx.f32", "sqrt.rn.f32", "div.rn.f32"]:
            assert ins in out["ptx"], ins
    ptxas(out["ptx"], arch, tmp_path)


@tritium.jit
def sin_cos_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.sin(x) * tl.cos(x))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_huge_argument_path_is_out_of_line(arch, dtype, tmp_path):
    ptx = compile_ptx(sin_cos_kernel, arch, signature=f"*{dtype}, *{dtype}", constexprs={"BLOCK": 128})["ptx"]
    # one shared slow-path function (called, not inlined) reading 2/pi from constant memory
    assert ".func" in ptx and ptx.count("__tritium_rem_pio2_large(") == 1, ptx
    assert "call.uni" in ptx or "call " in ptx, ptx
    assert ".const .align 8 .b8 __tritium_two_over_pi" in ptx and "ld.const.u64" in ptx, ptx
    ptxas(ptx, arch, tmp_path)
