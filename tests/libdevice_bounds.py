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
