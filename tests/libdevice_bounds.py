"""The error NVIDIA documents for each libdevice float function, as a check
of the GPU's answer against the interpreter's (tests/gpu/test_libdevice_gpu.py).

The figures are the CUDA C++ Programming Guide's (appendix "Mathematical
Functions", the tables of single- and double-precision standard functions):
the largest difference, in ulps, from the correctly rounded result, except
where the guide states another measure:
- the Bessel functions J0, J1, Y0, Y1 are bounded in ulps only for |x| < 8;
  beyond, the bound is an absolute error (2.2e-6 in single, 5e-12 in double
  precision), since near the zeros of an oscillating function no algorithm
  keeps a relative error;
- Jn has only the absolute bound; Yn has it for |x| > 1.5n (double) or
  |x| >= n (single), and ceil(2 + 2.5n) ulps below n in single precision.
  For Yn in double precision below 1.5n the guide gives nothing, so the
  bound is derived from libdevice's algorithm (`yn_f64_small_x_ulps`);
- lgamma's bound holds outside (-23.0001, -2.2637) (double) and
  (-10.001, -2.264) (single), where it has zeros;
- add/sub/mul/div/rcp/sqrt/fma in a rounding mode, rsqrt_rn and the
  rounding conversions into floats are correctly rounded: the answer must be
  the exact result rounded in the function's mode (`correctly_rounded`);
- rcp64h is PTX's `rcp.approx.ftz.f64`, which the PTX ISA defines as an
  approximation with 20 mantissa bits and the low 32 bits of the result
  zero: it is compared in units of that format.

The interpreter's f64 answers are correctly rounded for the functions the
guide bounds tightly (libdevice_numpy.py, libdevice_precise.py); its f32
answers are those rounded again, so one more ulp is allowed in single
precision. Functions the tables below leave out keep a bound of 4 ulps.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import libdevice_cases as C

# ulps from the correctly rounded result, (single, double) precision, for the
# functions whose interpreter answer is correctly rounded in f64
DOCUMENTED_ULPS = {
    "erfinv": (2, 5), "erfcinv": (4, 6), "erfcx": (4, 4), "normcdf": (5, 5), "normcdfinv": (5, 8),
    "lgamma": (6, 4), "cyl_bessel_i0": (6, 6), "cyl_bessel_i1": (6, 6),
}
# the others: libdevice's documented bound with room for the interpreter's
# own error (NumPy's and Python's functions, within an ulp or two)
OTHER_ULPS = {"pow": 8, "tgamma": 64, "sinpi": 4, "cospi": 4}
# the Bessel functions' absolute bound, (single, double)
BESSEL_ABS = (2.2e-6, 5e-12)
BESSEL_ULPS_BELOW_8 = (9, 7)


def yn_f64_small_x_ulps(n: int) -> int:
    """The error of libdevice's double `__nv_yn` below x = n, in ulps.

    `__nv_yn` takes its own y0 and y1 (each within BESSEL_ULPS_BELOW_8 = 7
    ulps below 8) and runs the forward recurrence
    Y_{k+1} = fma(k * (2/x), Y_k, -Y_{k-1}), which is stable there (Y_n
    grows with n and has no zero below n): the two starting errors add, and
    each step rounds once more, so 2 * 7 + n ulps. Between n and 1.5n Y_n
    crosses zero, where no ulp bound can hold; the absolute bound applies
    there as beyond. tests/test_libdevice_precise.py replays the recurrence
    exactly with the worst starting errors to keep this figure honest."""
    return 2 * BESSEL_ULPS_BELOW_8[1] + n
LGAMMA_ZEROS = ((-10.001, -2.264), (-23.0001, -2.2637))
# the rounding-mode arithmetic and conversions, the bit casts and the
# functions that are exact by definition
EXACT = ("floor", "ceil", "trunc", "rint", "round", "nearbyint", "abs", "copysign", "fmod", "remainder", "ldexp",
         "scalbn", "saturatef", "nextafter", "int_as_float", "uint_as_float", "longlong_as_double", "hiloint2double")
FAST_RTOL = 1e-3
RCP64H_UNITS = 4        # ulps of the 1.11.20 format (one is 2^32 f64 ulps)


def _ulps(got, want, ret):
    return C.ulps(got, want, C.NP[ret])


# --- "correctly rounded": the functions whose documented error is none -------
#
# For add/sub/mul/div/rcp/sqrt/fma and rsqrt_rn in a rounding mode and the
# rounding conversions (int2float_rz, double2float_rd, ...) NVIDIA's bound is
# the exact result rounded in the function's mode, so an answer is inside
# when it *is* that rounding, decided against the exact real value, not
# "0 ulps from a reference": a reference rounded to nearest is one ulp off
# every directed rounding, and an f64 product or quotient rounded to
# np.longdouble first and then to f64 is double rounded. Each element is
# decided in np.longdouble where its error bound leaves no doubt and with
# Fractions (sqrt and rsqrt by comparing squares) where it does.

ROUNDING_MODES = ("rn", "rz", "rd", "ru")
_ARITH = ("add", "sub", "mul", "div", "rcp", "sqrt", "fma", "rsqrt")
_LD_EPS = np.finfo(np.longdouble).eps * 4   # a few roundings of np.longdouble (2^-61 on x86)


def _sign(x) -> int:
    return (x > 0) - (x < 0)


def _exact_spec(name: str):
    """(mode, approximate value and error bound from the arguments as
    np.longdouble (0: exact), sign(t - exact value) for a Fraction t and the
    arguments as Fractions, the exact value as a Fraction where it is
    rational) of a correctly rounded function, or None."""
    base, _, mode = name.rpartition("_")
    if mode not in ROUNDING_MODES:
        return None
    if base == "rsqrt" and mode != "rn":
        return None
    if base in _ARITH:
        def value(q):
            return {"add": lambda: q[0] + q[1], "sub": lambda: q[0] - q[1], "mul": lambda: q[0] * q[1],
                    "div": lambda: q[0] / q[1], "rcp": lambda: 1 / q[0], "fma": lambda: q[0] * q[1] + q[2]}[base]()

        def cmp(t, q):
            if base == "sqrt":
                return -1 if t < 0 else _sign(t * t - q[0])
            if base == "rsqrt":
                return -1 if t <= 0 else _sign(t * t * q[0] - 1)
            return _sign(t - value(q))

        def approx(a):
            v = {"add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "mul": lambda: a[0] * a[1],
                 "div": lambda: a[0] / a[1], "rcp": lambda: 1 / a[0], "sqrt": lambda: np.sqrt(a[0]),
                 "rsqrt": lambda: 1 / np.sqrt(a[0]), "fma": lambda: a[0] * a[1] + a[2]}[base]()
            scale = np.abs(a[0] * a[1]) + np.abs(a[2]) if base == "fma" else np.abs(v)
            err = scale * _LD_EPS
            if base in ("add", "sub"):   # exact when TwoSum's error term is 0 (often: then no Fractions)
                b = a[1] if base == "add" else -a[1]
                bb = v - a[0]
                err = np.where((a[0] - (v - bb)) + (b - bb) == 0, 0, err)
            return v, err
        return mode, approx, cmp, None if base in ("sqrt", "rsqrt") else value
    src, two, dst = base.partition("2")
    if two and src in ("int", "uint", "ll", "ull", "double") and dst in ("float", "double"):
        # the argument's value itself, exact in np.longdouble (64-bit significand)
        return mode, lambda a: (a[0], np.zeros_like(a[0])), lambda t, q: _sign(t - q[0]), lambda q: q[0]
    return None


def has_exact_rounding(name: str) -> bool:
    return _exact_spec(name) is not None


def _fraction(x) -> Fraction:
    return Fraction(int(x)) if isinstance(x, np.integer) else Fraction(float(x))


def correctly_rounded(name: str, ret: str, args: list[np.ndarray], got: np.ndarray) -> np.ndarray:
    """A mask of the elements where `got` is the exact result of `name` on
    `args` rounded in the function's mode (`has_exact_rounding(name)`):
    rn to nearest with ties to even, rz toward zero, rd down, ru up. The sign
    of a zero is not judged; non-finite answers are outside (the inputs of
    libdevice_cases keep every exact result finite)."""
    mode, approx_fn, cmp, _ = _exact_spec(name)
    dt = C.NP[ret]
    got = np.asarray(got, dt)
    with np.errstate(all="ignore"):
        ld = [np.asarray(a).astype(np.longdouble) for a in args]
        approx, err = approx_fn(ld)
        lo = np.nextafter(got, dt(-np.inf))
        hi = np.nextafter(got, dt(np.inf))
        G, LO, HI = (v.astype(np.longdouble) for v in (got, lo, hi))

    def signs(bound_ld, bound_exact):
        """sign(bound - exact value) per element: from np.longdouble where
        the error bound decides it, else exactly."""
        with np.errstate(all="ignore"):
            d = bound_ld - approx
            out = np.sign(d).astype(np.int64)
            unsure = ~(np.abs(d) > err) & ~(err == 0)
        for i in np.flatnonzero(unsure & np.isfinite(bound_ld)):
            out[i] = cmp(bound_exact(i), [_fraction(a[i]) for a in args])
        return out

    F = lambda v: (lambda i: Fraction(float(v[i])))   # noqa: E731
    if mode == "rn":   # between the midpoints to both neighbours; on one, got's last bit is even
        even = (got.view(np.uint64 if dt == np.float64 else np.uint32) & 1) == 0
        below = signs((LO + G) / 2, lambda i: (Fraction(float(lo[i])) + Fraction(float(got[i]))) / 2)
        above = signs((G + HI) / 2, lambda i: (Fraction(float(got[i])) + Fraction(float(hi[i]))) / 2)
        ok = ((below < 0) | ((below == 0) & even)) & ((above > 0) | ((above == 0) & even))
    else:
        at, up, down = signs(G, F(got)), signs(HI, F(hi)), signs(LO, F(lo))
        rd = (at <= 0) & (up > 0)       # got <= v < next up
        ru = (down < 0) & (at >= 0)     # next down < v <= got
        if mode == "rd":
            ok = rd
        elif mode == "ru":
            ok = ru
        else:   # toward zero: down for a positive result, up for a negative one, 0 for 0
            zero = signs(np.zeros_like(G), lambda i: Fraction(0))
            ok = np.where(zero < 0, rd, np.where(zero > 0, ru, got == 0))
    return ok & np.isfinite(got)


def rounded_exactly(name: str, ret: str, args: list[np.ndarray]) -> np.ndarray:
    """The correctly rounded answers themselves (for tests): of the np.longdouble
    approximation rounded to nearest and its two neighbours, the one
    `correctly_rounded` accepts; where cancellation (fma) left the
    approximation further off, the exact value's neighbours."""
    _, approx_fn, _, value = _exact_spec(name)
    dt = C.NP[ret]
    with np.errstate(all="ignore"):
        near = approx_fn([np.asarray(a).astype(np.longdouble) for a in args])[0].astype(dt)
    out = near.copy()
    found = np.zeros(near.shape, bool)
    for cand in (near, np.nextafter(near, dt(-np.inf)), np.nextafter(near, dt(np.inf))):
        ok = correctly_rounded(name, ret, args, cand) & ~found
        out[ok] = cand[ok]
        found |= ok
    for i in np.flatnonzero(~found):
        near = dt(float(value([_fraction(a[i]) for a in args])))
        for cand in (near, np.nextafter(near, dt(-np.inf)), np.nextafter(near, dt(np.inf))):
            if correctly_rounded(name, ret, [a[i:i + 1] for a in args], np.array([cand], dt))[0]:
                out[i], found[i] = cand, True
                break
    assert found.all(), name
    return out


def within_bounds(name: str, ret: str, args: list[np.ndarray], got: np.ndarray,
                  want: np.ndarray) -> tuple[np.ndarray, str]:
    """(a mask of the elements within the documented error, what the bound is)."""
    double = ret == "fp64"
    slack = 0 if double else 1        # the interpreter's f32 answer is rounded twice
    err = _ulps(got, want, ret)
    with np.errstate(all="ignore"):
        abs_err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    abs_err = np.where((got == want) | (np.isnan(got) & np.isnan(want)), 0.0, abs_err)
    if name.startswith("fast_"):
        with np.errstate(all="ignore"):
            close = np.abs(got - want) <= 1e-4 + FAST_RTOL * np.abs(want)
        return close | (got == want), f"rtol {FAST_RTOL}"
    if has_exact_rounding(name):
        mode = name.rpartition("_")[2]
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        return correctly_rounded(name, ret, args, got) | (~np.isfinite(got) & same), f"correctly rounded ({mode})"
    if name.endswith(("_rn", "_rz", "_rd", "_ru")) or name in EXACT:
        return err == 0, "0 ulps"
    if name in ("fma", "fdim"):
        return err <= 1, "1 ulp (the interpreter rounds fma and fdim through f64)"
    if name in ("j0", "j1", "y0", "y1"):
        x = args[0].astype(np.float64)
        near = np.abs(x) < 8
        ok = np.where(near, err <= BESSEL_ULPS_BELOW_8[double] + slack, abs_err <= BESSEL_ABS[double])
        return ok, f"{BESSEL_ULPS_BELOW_8[double]} ulps below |x| = 8, {BESSEL_ABS[double]} absolute beyond"
    if name == "jn":
        return abs_err <= BESSEL_ABS[double], f"{BESSEL_ABS[double]} absolute"
    if name == "yn":
        n, x = args[0].astype(np.int64), args[1].astype(np.float64)
        far = np.abs(x) >= n
        if double:
            ulps = np.array([yn_f64_small_x_ulps(abs(int(k))) for k in n])
            return np.where(far, abs_err <= BESSEL_ABS[1], err <= ulps), \
                f"{BESSEL_ABS[1]} absolute from x = n, 2 * 7 + n ulps below"
        ulps = np.array([math.ceil(2 + 2.5 * abs(k)) for k in n]) + slack
        return np.where(far, abs_err <= BESSEL_ABS[0], err <= ulps), \
            f"{BESSEL_ABS[0]} absolute, ceil(2 + 2.5n) ulps for small x"
    if name == "lgamma":
        lo, hi = LGAMMA_ZEROS[double]
        x = args[0].astype(np.float64)
        bound = DOCUMENTED_ULPS["lgamma"][double] + slack
        return (err <= bound) | ((x > lo) & (x < hi)), f"{bound} ulps outside ({lo}, {hi})"
    if name == "rcp64h":
        low = got.view(np.uint64) & np.uint64(0xFFFFFFFF)
        units = err / 2.0 ** 32
        return (low == 0) & (units <= RCP64H_UNITS), f"{RCP64H_UNITS} units of 2^-20 with the low 32 bits zero"
    if name in DOCUMENTED_ULPS:
        bound = DOCUMENTED_ULPS[name][double] + slack
    else:
        bound = OTHER_ULPS.get(name, 4)
    return err <= bound, f"{bound} ulps"
