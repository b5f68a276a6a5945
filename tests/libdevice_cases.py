"""Inputs and reference answers for every libdevice function variant, shared
by tests/test_libdevice.py (interpreter, ptxas), tests/gpu/test_libdevice_gpu.py
and benches/libdevice_accuracy.py (ulp table on the GPU).

`variants()` lists (name, argument dtypes, symbol, result dtype) for all of
extra/libdevice_table.py. `inputs(name, types, n, rng)` draws arguments from
the function's domain; `reference(name, args)` computes the answer in
extended precision (np.longdouble where NumPy has the function, Python's
math module otherwise) without the interpreter's code.
"""
from __future__ import annotations

import math
import zlib
from fractions import Fraction

import numpy as np

from tritium.language.extra.libdevice_table import TABLE

NP = {"fp32": np.float32, "fp64": np.float64, "int32": np.int32, "int64": np.int64, "uint32": np.uint32,
      "uint64": np.uint64}
SIG = {"fp32": "fp32", "fp64": "fp64", "int32": "i32", "int64": "i64", "uint32": "u32", "uint64": "u64"}


def tname(t) -> str:
    return str(t).split(".")[-1].replace("float32", "fp32").replace("float64", "fp64")


def variants() -> list[tuple[str, tuple[str, ...], str, str]]:
    out = []
    for name, table in TABLE.items():
        for args, (symbol, ret) in table.items():
            out.append((name, tuple(tname(a) for a in args), symbol, tname(ret)))
    return out


def seed(name: str, types: tuple[str, ...]) -> int:
    """The RNG seed of a variant's inputs: a digest of its name, the same in
    every process (`hash()` of a string is salted per process, so inputs,
    and a test's verdict, changed from run to run)."""
    return zlib.crc32("-".join((name,) + tuple(types)).encode())


# the interval each function's float arguments are drawn from (default -10..10)
DOMAIN = {
    "log": (1e-3, 1e3), "log2": (1e-3, 1e3), "log10": (1e-3, 1e3), "sqrt": (0, 1e3), "rsqrt": (1e-3, 1e3),
    "logb": (1e-3, 1e3), "ilogb": (1e-3, 1e3), "log1p": (-0.99, 100), "acosh": (1, 100), "atanh": (-0.99, 0.99),
    "asin": (-1, 1), "acos": (-1, 1), "erfinv": (-0.99, 0.99), "erfcinv": (0.01, 1.99), "normcdfinv": (0.01, 0.99),
    "lgamma": (0.1, 30), "tgamma": (0.1, 20), "exp": (-60, 60), "exp2": (-100, 100), "exp10": (-30, 30),
    "expm1": (-60, 60), "sinh": (-60, 60), "cosh": (-60, 60), "y0": (0.1, 40), "y1": (0.1, 40), "yn": (0.5, 40),
    "j0": (-40, 40), "j1": (-40, 40), "jn": (-40, 40), "erfcx": (-3, 30), "pow": (0.1, 10),
    "cyl_bessel_i0": (-30, 30), "cyl_bessel_i1": (-30, 30), "fast_logf": (1e-3, 1e3), "fast_log2f": (1e-3, 1e3),
    "fast_log10f": (1e-3, 1e3), "fast_expf": (-60, 60), "fast_exp10f": (-30, 30), "fast_powf": (0.1, 10),
    "fast_sinf": (-3.14, 3.14), "fast_cosf": (-3.14, 3.14), "fast_tanf": (-1.5, 1.5), "rcp64h": (0.1, 10),
    "sqrt_rn": (0, 1e3), "sqrt_rz": (0, 1e3), "sqrt_rd": (0, 1e3), "sqrt_ru": (0, 1e3), "rsqrt_rn": (1e-3, 1e3),
}
# integer operands: (low, high) per function and position
INT_DOMAIN = {"jn": (0, 6), "yn": (0, 6), "ldexp": (-30, 30), "scalbn": (-30, 30), "pow": (-6, 6)}


def inputs(name: str, types: tuple[str, ...], n: int, rng: np.random.Generator) -> list[np.ndarray]:
    out = []
    lo, hi = DOMAIN.get(name, (-10.0, 10.0))
    for t in types:
        dt = NP[t]
        if np.issubdtype(dt, np.floating):
            out.append(rng.uniform(lo, hi, n).astype(dt))
        elif name in INT_DOMAIN:
            ilo, ihi = INT_DOMAIN[name]
            out.append(rng.integers(ilo, ihi, n).astype(dt))
        elif name in ("int_as_float", "uint_as_float"):
            info = np.iinfo(dt)
            out.append(rng.integers(max(info.min, -2**40), min(info.max, 2**40), n, dtype=dt))
        else:
            info = np.iinfo(dt)
            out.append(rng.integers(info.min, info.max, n, dtype=dt, endpoint=True))
    if name in ("fmod", "remainder", "div_rn", "div_rz", "div_rd", "div_ru", "fast_dividef"):
        out[1] = np.where(out[1] == 0, 1, out[1]).astype(out[1].dtype)
    if name.startswith(("float2", "double2")) and "_" in name and not name.startswith("double2float"):
        out[0] = (out[0] * 1e3).astype(out[0].dtype)   # past the range of small ints, not past int64's
        if "u" in name.split("2")[1].split("_")[0]:
            out[0] = np.abs(out[0])
    return out


def _ld(fn):
    return lambda *xs: fn(*[np.asarray(x, np.longdouble) for x in xs])


def _scalar(fn):
    def run(*xs):
        def safe(*v):
            try:
                return fn(*v)
            except (ValueError, OverflowError):
                return math.nan
        return np.vectorize(safe, otypes=[np.float64])(*[np.asarray(x, np.float64) for x in xs])
    return run


def _exact_fma(a, b, c):
    """a * b + c exactly (Fractions), rounded once to float64: np.longdouble's
    64-bit significand cannot hold a * b, so it was no reference for fma."""
    def one(x, y, z):
        if not all(map(math.isfinite, (x, y, z))):
            return x * y + z
        return float(Fraction(x) * Fraction(y) + Fraction(z))
    return np.vectorize(one, otypes=[np.float64])(*[np.asarray(v, np.float64) for v in (a, b, c)])


def _normcdf(x):
    """erfc(-x/sqrt(2))/2 with the argument in np.longdouble and math.erfc's
    float64 argument corrected to first order: rounding x/sqrt(2) to float64
    would cost 2 t^2 ulps (t = x/sqrt(2), ~100 ulps at x = -10)."""
    t = -np.asarray(x, np.longdouble) / np.sqrt(np.longdouble(2))
    t64 = t.astype(np.float64)
    base = np.vectorize(math.erfc, otypes=[np.float64])(t64).astype(np.longdouble)
    slope = 2 / np.sqrt(np.longdouble(math.pi)) * np.exp(-np.asarray(t64, np.longdouble) ** 2)
    return (base - (t - t64) * slope) / 2


def _round_half_away(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


PI = np.longdouble("3.14159265358979323846264338327950288")


def _trig_pi(cos: bool):
    """sin(pi x) or cos(pi x) with the argument reduced exactly: x = k/2 + t
    with k = rint(2x) and |t| <= 1/4 (x - k/2 is exact in f64: Sterbenz),
    then one np.longdouble sin or cos of pi t by k mod 4. Multiplying pi
    into the unreduced x costs 2^-64 * pi * |x| absolutely, which near a zero
    of the result is tens of f64 ulps (the H100 table's 15.8 and 33 ulps for
    libdevice's own sinpi/cospi were this reference's error)."""
    def fn(x):
        x = np.asarray(x, np.float64)
        k = np.rint(2 * x)
        z = PI * (x - k / 2).astype(np.longdouble)
        s, c = np.sin(z), np.cos(z)
        q = np.mod(k, 4).astype(np.int64)
        return np.choose(q, [c, -s, -c, s] if cos else [s, c, -s, -c])
    return fn

# extended-precision answers (np.longdouble) of the float functions
REFERENCE = {
    "sin": _ld(np.sin), "cos": _ld(np.cos), "tan": _ld(np.tan), "asin": _ld(np.arcsin), "acos": _ld(np.arccos),
    "atan": _ld(np.arctan), "sinh": _ld(np.sinh), "cosh": _ld(np.cosh), "tanh": _ld(np.tanh),
    "asinh": _ld(np.arcsinh), "acosh": _ld(np.arccosh), "atanh": _ld(np.arctanh), "exp": _ld(np.exp),
    "exp2": _ld(np.exp2), "exp10": _ld(lambda x: np.power(np.longdouble(10), x)), "expm1": _ld(np.expm1),
    "log": _ld(np.log), "log2": _ld(np.log2), "log10": _ld(np.log10), "log1p": _ld(np.log1p),
    "sqrt": _ld(np.sqrt), "rsqrt": _ld(lambda x: 1 / np.sqrt(x)), "cbrt": _ld(np.cbrt),
    "rcbrt": _ld(lambda x: 1 / np.cbrt(x)), "sinpi": _trig_pi(False), "cospi": _trig_pi(True),
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint, "nearbyint": np.rint,
    "round": _round_half_away, "abs": np.abs, "atan2": _ld(np.arctan2), "hypot": _ld(np.hypot),
    "rhypot": _ld(lambda x, y: 1 / np.hypot(x, y)), "copysign": np.copysign, "fmod": np.fmod,
    "remainder": _scalar(math.remainder), "fdim": lambda x, y: np.where(x > y, x - y, 0 * x),
    "norm3d": _ld(lambda a, b, c: np.sqrt(a * a + b * b + c * c)),
    "rnorm3d": _ld(lambda a, b, c: 1 / np.sqrt(a * a + b * b + c * c)),
    "norm4d": _ld(lambda a, b, c, d: np.sqrt(a * a + b * b + c * c + d * d)),
    "rnorm4d": _ld(lambda a, b, c, d: 1 / np.sqrt(a * a + b * b + c * c + d * d)),
    "fma": _exact_fma, "pow": _ld(lambda x, y: np.power(x, y)),
    "ldexp": lambda x, n: np.ldexp(x, n), "scalbn": lambda x, n: np.ldexp(x, n),
    "erf": _scalar(math.erf), "erfc": _scalar(math.erfc), "lgamma": _scalar(math.lgamma),
    "tgamma": _scalar(math.gamma), "normcdf": _normcdf,
    "cyl_bessel_i0": lambda x: np.i0(np.asarray(x, np.float64)),
    "fast_sinf": _ld(np.sin), "fast_cosf": _ld(np.cos), "fast_tanf": _ld(np.tan), "fast_logf": _ld(np.log),
    "fast_log2f": _ld(np.log2), "fast_log10f": _ld(np.log10), "fast_expf": _ld(np.exp),
    "fast_exp10f": _ld(lambda x: np.power(np.longdouble(10), x)), "fast_powf": _ld(np.power),
    "fast_dividef": _ld(lambda x, y: x / y), "saturatef": lambda x: np.clip(x, 0, 1),
}
for _m in ("rn", "rz", "rd", "ru"):
    REFERENCE[f"add_{_m}"] = _ld(lambda a, b: a + b)
    REFERENCE[f"sub_{_m}"] = _ld(lambda a, b: a - b)
    REFERENCE[f"mul_{_m}"] = _ld(lambda a, b: a * b)
    REFERENCE[f"div_{_m}"] = _ld(lambda a, b: a / b)
    REFERENCE[f"rcp_{_m}"] = _ld(lambda a: 1 / a)
    REFERENCE[f"sqrt_{_m}"] = _ld(np.sqrt)
    REFERENCE[f"fma_{_m}"] = _exact_fma
REFERENCE["rsqrt_rn"] = _ld(lambda x: 1 / np.sqrt(x))
# nextafter is exact in the arguments' own format (in f64 an f32 step is no step)
REFERENCE["nextafter"] = np.nextafter
# the rounding conversions into floats: the argument's value (exact in np.longdouble)
for _name in TABLE:
    _src, _two, _dst = _name.rpartition("_")[0].partition("2")
    if _name.rpartition("_")[2] in ("rn", "rz", "rd", "ru") and _src in ("int", "uint", "ll", "ull", "double") \
            and _dst in ("float", "double"):
        REFERENCE[_name] = _ld(lambda x: x)


def reference(name: str, args: list[np.ndarray]) -> np.ndarray | None:
    """The extended-precision answer, or None for functions without one here
    (Bessel functions, erfinv/erfcinv/erfcx/normcdfinv: checked at known points)."""
    fn = REFERENCE.get(name)
    if fn is None:
        return None
    if name == "lgamma" and args[0].dtype == np.float64:
        # math.lgamma is tens of ulps off near its zeros (1 and 2): no f64
        # reference; tests/test_libdevice_precise.py checks it at closed forms
        return None
    with np.errstate(all="ignore"):
        return np.asarray(fn(*args))


def ulps(got: np.ndarray, want: np.ndarray, dtype) -> np.ndarray:
    """|got - want| in units of the last place of `dtype` at `want`; equal
    infinities and NaNs count 0, a NaN or infinity against a finite value inf."""
    got = np.asarray(got, np.longdouble)
    want = np.asarray(want, np.longdouble)
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):
        w = np.abs(want).astype(np.float64)
        exp = np.floor(np.log2(np.maximum(w, info.smallest_normal)))
        unit = np.ldexp(np.longdouble(1), (exp - info.nmant).astype(np.int64))
        err = np.abs(got - want) / unit
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    err = np.where(same, 0, err)
    return np.where(np.isfinite(err), err, np.inf).astype(np.float64)


# known values (to 1e-15) of the functions without a reference above
KNOWN = {
    "j0": [(1.0, 0.7651976865579666), (5.0, -0.17759677131433830), (-2.5, -0.048383776468197996)],
    "j1": [(1.0, 0.44005058574493355), (5.0, -0.32757913759146523), (-2.5, -0.4970941024642741)],
    "y0": [(1.0, 0.08825696421567696), (5.0, -0.3085176252490338), (0.5, -0.44451873350670656)],
    "y1": [(1.0, -0.7812128213002887), (5.0, 0.1478631433912268), (0.5, -1.4714723926702430)],
    "cyl_bessel_i1": [(1.0, 0.5651591039924851), (5.0, 24.33564214245052), (-2.0, -1.590636854637329)],
    "erfinv": [(0.5, 0.4769362762044699), (-0.9, -1.1630871536766743), (0.999, 2.326753765513525)],
    "erfcinv": [(0.5, 0.4769362762044699), (1.9, -1.1630871536766743), (0.001, 2.326753765513525)],
    "erfcx": [(1.0, 0.42758357615580705), (10.0, 0.056140992743822585), (-1.0, 5.00898008076228)],
    "normcdfinv": [(0.975, 1.959963984540054), (0.5, 0.0), (0.1, -1.2815515655446004)],
}
