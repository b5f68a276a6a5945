"""What "inside NVIDIA's bound" means for the functions whose bound is the
correctly rounded result (tests/libdevice_bounds.py; benches/libdevice_accuracy.py's
"outside it" column and the GPU libdevice test use it): the exact result
rounded in the function's own mode, decided exactly, never "0 ulps from a
reference rounded to nearest"; and the references the table is measured
against (sinpi/cospi reduced exactly, nextafter in its own format)."""
from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

import libdevice_bounds as B
import libdevice_cases as C

f32, f64 = np.float32, np.float64


def inside(name, ret, args, got):
    args = [np.asarray(a) for a in args]
    return B.correctly_rounded(name, ret, args, np.asarray(got, C.NP[ret])).tolist()


def test_round_to_nearest_accepts_the_nearest_and_ties_to_even():
    one, half_ulp = f32(1), f32(2.0 ** -24)
    up = np.nextafter(one, f32(2))
    # 1 + 2^-24 is a tie between 1 and its successor: even (1) wins
    assert inside("add_rn", "fp32", [[one, one], [half_ulp, half_ulp]], [one, up]) == [True, False]
    # (1 + 2^-23) + 2^-24: a tie again, now the even neighbour is the upper one
    up2 = np.nextafter(up, f32(2))
    assert inside("add_rn", "fp32", [[up, up], [half_ulp, half_ulp]], [up2, up]) == [True, False]
    # not a tie: 1 + 2^-30 rounds to 1, and its successor is one ulp off
    assert inside("add_rn", "fp32", [[one, one], [f32(2.0 ** -30)] * 2], [one, up]) == [True, False]


def test_round_toward_zero_is_inside_both_signs():
    one, tiny = f32(1), f32(2.0 ** -30)
    up, down = np.nextafter(one, f32(2)), np.nextafter(one, f32(0))
    # 1 + 2^-30 toward zero is 1 (0.0000001 ulp from exact: "not 0 ulps", yet the right answer)
    assert inside("add_rz", "fp32", [[one] * 3, [tiny] * 3], [one, up, down]) == [True, False, False]
    # -1 - 2^-30 toward zero is -1; -(1 + 2^-23) is toward minus infinity
    assert inside("sub_rz", "fp32", [[-one] * 2, [tiny] * 2], [-one, -up]) == [True, False]
    assert inside("sub_rd", "fp32", [[-one] * 2, [tiny] * 2], [-up, -one]) == [True, False]
    assert inside("add_ru", "fp32", [[one] * 2, [tiny] * 2], [up, one]) == [True, False]
    # 1 - 2^-30 toward zero is the number below 1, as rounding down; rounding up gives 1
    assert inside("sub_rz", "fp32", [[one] * 2, [tiny] * 2], [down, one]) == [True, False]
    # exact results are themselves in every mode
    for mode in B.ROUNDING_MODES:
        assert inside(f"mul_{mode}", "fp64", [[f64(1.5)], [f64(2.0)]], [3.0]) == [True]


def test_conversions_round_in_their_mode():
    big = np.array([2**24 + 1, -(2**24 + 1)], np.int64)
    lo, hi = f32(2.0 ** 24), f32(2.0 ** 24 + 2)
    assert inside("ll2float_rz", "fp32", [big], [lo, -lo]) == [True, True]
    assert inside("ll2float_rz", "fp32", [big], [hi, -hi]) == [False, False]
    assert inside("ll2float_ru", "fp32", [big], [hi, -lo]) == [True, True]
    assert inside("ll2float_rd", "fp32", [big], [lo, -hi]) == [True, True]
    assert inside("ll2float_rn", "fp32", [big], [lo, -lo]) == [True, True]   # a tie: even
    d = np.array([1 + 2.0 ** -30], f64)
    assert inside("double2float_rz", "fp32", [d], [1.0]) == [True]
    assert inside("double2float_ru", "fp32", [d], [1.0]) == [False]


def test_sqrt_and_rsqrt_are_decided_by_squares():
    x = np.array([2.0, 4.0], f64)
    r = np.sqrt(x)   # rounded to nearest: sqrt(2)'s is above the exact value (its square is > 2)
    assert Fraction(float(r[0])) ** 2 > 2
    assert inside("sqrt_rn", "fp64", [x], r) == [True, True]
    assert inside("sqrt_ru", "fp64", [x], r) == [True, True]   # 2 is exact: every mode
    assert inside("sqrt_rd", "fp64", [x], r) == [False, True]
    assert inside("sqrt_rz", "fp64", [x], np.nextafter(r, -np.inf)) == [True, False]
    y = np.array([4.0, 3.0], f32)
    assert inside("rsqrt_rn", "fp32", [y], [0.5, 0.57735026]) == [True, True]
    assert inside("rsqrt_rn", "fp32", [y], [np.nextafter(f32(0.5), f32(1)), 0.5773502]) == [False, False]


def test_f64_products_double_rounded_through_longdouble_are_outside():
    """The old check compared with the np.longdouble result rounded again to
    f64: a few in 4096 products differ by an ulp from the correctly rounded
    one, which is what the GPU computes; those are inside, the double
    rounded ones not."""
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-10, 10, 8192), rng.uniform(-10, 10, 8192)
    twice = (a.astype(np.longdouble) * b).astype(f64)
    once = np.array([float(Fraction(x) * Fraction(y)) for x, y in zip(a, b)])   # Python rounds once
    differ = np.flatnonzero(twice != once)
    assert differ.size > 0
    assert all(inside("mul_rn", "fp64", [a[differ], b[differ]], once[differ]))
    assert not any(inside("mul_rn", "fp64", [a[differ], b[differ]], twice[differ]))


@pytest.mark.parametrize("name,types,symbol,ret", [v for v in C.variants() if B.has_exact_rounding(v[0])],
                         ids=lambda v: v if isinstance(v, str) else "-".join(v))
def test_every_correctly_rounded_variant(name, types, symbol, ret):
    """Its correctly rounded answers are inside, each one ulp up or down
    outside; within_bounds names the mode and ignores a nearest-rounded want."""
    rng = np.random.default_rng(C.seed(name, types))
    args = C.inputs(name, types, 512, rng)
    dt = C.NP[ret]
    want = B.rounded_exactly(name, ret, args)
    assert B.correctly_rounded(name, ret, args, want).all()
    for direction in (-np.inf, np.inf):
        assert not B.correctly_rounded(name, ret, args, np.nextafter(want, dt(direction))).any()
    with np.errstate(all="ignore"):
        nearest = np.asarray(C.reference(name, args)).astype(dt)
    ok, what = B.within_bounds(name, ret, args, want, nearest)
    assert ok.all() and what == f"correctly rounded ({name.rpartition('_')[2]})"


def _pi_trig_decimal(x: float, cos: bool) -> Decimal:
    """sin(pi x) / cos(pi x) to 40 digits: the exact reduction, then series."""
    with localcontext() as ctx:
        ctx.prec = 45
        k = round(2 * Fraction(x))
        t = Fraction(x) - Fraction(k, 2)
        z = Decimal("3.14159265358979323846264338327950288419716939937510") * t.numerator / t.denominator
        sin, cos_, term, n = Decimal(0), Decimal(0), Decimal(1), 0
        while n < 60:   # z^n / n!, split by parity
            if n % 2 == 0:
                cos_ += term * (-1) ** (n // 2)
            else:
                sin += term * (-1) ** (n // 2)
            n += 1
            term = term * z / n
        q = k % 4
        table = [cos_, -sin, -cos_, sin] if cos else [sin, cos_, -sin, -cos_]
        return +table[q]


@pytest.mark.parametrize("name", ["sinpi", "cospi"])
def test_sinpi_cospi_reference_near_their_zeros(name):
    """Multiplying pi into x before reducing cost tens of f64 ulps near the
    zeros (H100 table: 15.8 and 33 ulps for libdevice's own sinpi/cospi);
    the reference now stays within an ulp of a 40-digit answer there."""
    rng = np.random.default_rng(9)
    base = rng.integers(-20, 20, 200) / 2
    x = base + rng.choice([-1, 1], 200) * 10.0 ** rng.uniform(-12, -3, 200)
    x = np.concatenate([x, rng.uniform(-10, 10, 200), [0.5, 1.0, -2.5, 7.25]])
    ref = np.asarray(C.reference(name, [x]))
    exact = np.array([np.longdouble(str(_pi_trig_decimal(float(v), name == "cospi"))) for v in x])
    err = C.ulps(ref, exact, f64)
    assert err.max() <= 0.01, (err.max(), x[err.argmax()])
    old = np.sin(C.PI * np.fmod(x.astype(np.longdouble), 2)) if name == "sinpi" else \
        np.cos(C.PI * np.fmod(x.astype(np.longdouble), 2))
    assert C.ulps(old, exact, f64).max() > 4   # what the table measured before


def test_nextafter_reference_is_its_own_format():
    x = np.array([1.0, -3.0, 0.0], f32)
    y = np.array([2.0, -4.0, -1.0], f32)
    ref = C.reference("nextafter", [x, y])
    assert ref.dtype == f32 and ref.tolist() == np.nextafter(x, y).tolist()
    ok, _ = B.within_bounds("nextafter", "fp32", [x, y], np.nextafter(x, y), ref)
    assert ok.all()
