"""libdevice's special functions in extended precision (Python's decimal
module), rounded once to float64, for the interpreter.

NVIDIA documents erfcinv, erfcx, normcdf, normcdfinv, lgamma, the Bessel
functions J/Y near their zeros and I1 within a few ulps of the correctly
rounded answer; float64 formulas (erfc(x) - y under Newton, exp(x*x) *
erfc(x), a trapezoid sum for J0) lose those digits to cancellation, which made
the interpreter, not the GPU, the side that was thousands of ulps off. Here
each function is a series or continued fraction evaluated with 20+ more
digits than the cancellation costs, so the float64 result is correctly
rounded (Decimal -> float conversion rounds to nearest).

Every entry point takes and returns Python floats.
"""
from __future__ import annotations

import math
from decimal import Decimal, getcontext, localcontext
from fractions import Fraction
from functools import lru_cache

D = Decimal
# digits kept beyond what a function's cancellation costs
GUARD = 25
# mathematical constants to 64 digits (pi, Euler-Mascheroni gamma)
PI = D("3.141592653589793238462643383279502884197169399375105820974944592")
EULER = D("0.5772156649015328606065120900824024310421593359399235988057672348")


class _Digits:
    """`with _Digits(n):` evaluates Decimal arithmetic with n significant digits."""

    def __init__(self, digits: int):
        self.digits = digits

    def __enter__(self):
        self.ctx = localcontext()
        self.ctx.__enter__().prec = self.digits
        return self

    def __exit__(self, *exc):
        return self.ctx.__exit__(*exc)


def _sqrt_pi() -> Decimal:
    return PI.sqrt()


# -- the error function family ---------------------------------------------------

def _erf_series(x: Decimal) -> Decimal:
    """erf(x) = 2/sqrt(pi) exp(-x^2) sum_k (2x^2)^k x / (1*3*...*(2k+1)):
    positive terms only, so no cancellation (used for |x| < 5)."""
    x2 = 2 * x * x
    term, total, k = x, x, 0
    eps = D(10) ** (-(getcontext().prec + 2))
    while True:
        k += 1
        term = term * x2 / (2 * k + 1)
        total += term
        if term <= total * eps:
            break
    return 2 / _sqrt_pi() * (-x * x).exp() * total


def _erfcx_fraction(x: Decimal) -> Decimal:
    """exp(x^2) erfc(x) for x >= 5 from the continued fraction
    erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
    evaluated forward (modified Lentz) until a step changes nothing."""
    digits = getcontext().prec
    tiny, eps = D(10) ** (-2 * digits), D(10) ** (-(digits + 2))
    f = c = x
    d = D(0)
    for k in range(1, 100000):
        a = D(k) / 2
        d = x + a * d
        d = tiny if d == 0 else d
        c = x + a / c
        c = tiny if c == 0 else c
        d = 1 / d
        step = c * d
        f *= step
        if abs(step - 1) < eps:
            break
    return 1 / (_sqrt_pi() * f)


def erfc_dec(x: Decimal) -> Decimal:
    """erfc(x) to the context's precision (relative)."""
    if x < 0:
        return 2 - erfc_dec(-x)
    if x < 5:
        with _Digits(getcontext().prec + 15):   # erfc(5) ~ 1.5e-12: 12 digits cancel
            return +(1 - _erf_series(x))
    return (-x * x).exp() * _erfcx_fraction(x)


def erfcx_dec(x: Decimal) -> Decimal:
    if x < 5:
        return (x * x).exp() * erfc_dec(x)
    return _erfcx_fraction(x)


def erfcx(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x):
        return 0.0 if x > 0 else math.inf
    if x < -27:     # exp(x^2) * 2 overflows float64
        return math.inf
    with _Digits(30 + GUARD):
        return float(erfcx_dec(D(x)))


def normcdf(x: float) -> float:
    """Phi(x) = erfc(-x/sqrt(2)) / 2."""
    if math.isnan(x):
        return x
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    if x > 40:
        return 1.0
    with _Digits(30 + GUARD):
        return float(erfc_dec(-D(x) / D(2).sqrt()) / 2)


def _erfcinv_dec(y: float) -> Decimal:
    """x with erfc(x) = y (0 < y < 2, y != 1), by Newton's method in Decimal
    from a float64 start: x += (erfc(x) - y) sqrt(pi)/2 exp(x^2)."""
    if y > 1:
        return -_erfcinv_dec(2 - y)      # exact: y in (1, 2)
    if y > 0.5:
        x = (1 - y) * math.sqrt(math.pi) / 2   # erfinv near 0; 1 - y is exact here
    else:
        t = math.sqrt(-math.log(y / 2))        # erfc(x) ~ exp(-x^2)/(x sqrt(pi)) for large x
        x = t - math.log(t * math.sqrt(math.pi)) / (2 * t) if t > 1 else 0.5
    digits = getcontext().prec
    xd, yd = D(x), D(y)
    half_sqrt_pi = _sqrt_pi() / 2
    for _ in range(200):
        step = (erfc_dec(xd) - yd) * half_sqrt_pi * (xd * xd).exp()
        xd += step
        if step == 0 or abs(step) <= abs(xd) * D(10) ** (-(digits - 5)):
            break
    return xd


def erfcinv(y: float) -> float:
    if math.isnan(y) or y < 0 or y > 2:
        return math.nan
    if y == 0:
        return math.inf
    if y == 2:
        return -math.inf
    if y == 1:
        return 0.0
    with _Digits(30 + GUARD):
        return float(_erfcinv_dec(y))


def normcdfinv(p: float) -> float:
    """Phi^-1(p) = -sqrt(2) erfcinv(2p) (2p is exact)."""
    if math.isnan(p) or p < 0 or p > 1:
        return math.nan
    if p == 0:
        return -math.inf
    if p == 1:
        return math.inf
    if p == 0.5:
        return 0.0
    with _Digits(30 + GUARD):
        return float(-D(2).sqrt() * _erfcinv_dec(2 * p))


# -- log-gamma ---------------------------------------------------------------------

@lru_cache(maxsize=None)
def _bernoulli(n: int) -> tuple[Fraction, ...]:
    """B_0..B_n (B_1 = -1/2), from sum_{k<m+1} C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return tuple(b)


def _lgamma_positive(x: Decimal) -> Decimal:
    """ln Gamma(x), x > 0: shift to z >= 40 (Gamma(x) = Gamma(z) / (x (x+1) ... (z-1))),
    then Stirling's series (its terms shrink past 1e-70 long before they diverge)."""
    shift = D(1)
    z = x
    while z < 40:
        shift *= z
        z += 1
    b = _bernoulli(60)
    digits = getcontext().prec
    eps = D(10) ** (-(digits + 2))
    s = (z - D("0.5")) * z.ln() - z + (2 * PI).ln() / 2
    zpow, z2 = z, z * z
    for k in range(1, 31):
        term = D(b[2 * k].numerator) / D(b[2 * k].denominator * 2 * k * (2 * k - 1)) / zpow
        s += term
        if abs(term) < eps:
            break
        zpow *= z2
    return s - shift.ln()


def _sin_pi(x: float) -> Decimal:
    """sin(pi x), with x reduced exactly (Fraction) to [0, 1/2] first."""
    r = Fraction(x) % 2
    sign = 1
    if r >= 1:
        r, sign = r - 1, -1
    if r > Fraction(1, 2):
        r = 1 - r
    t = PI * D(r.numerator) / D(r.denominator)
    term, total, k = t, t, 1
    eps = D(10) ** (-(getcontext().prec + 2))
    while abs(term) > eps * abs(total):
        term = -term * t * t / ((2 * k) * (2 * k + 1))
        total += term
        k += 1
    return sign * total


def lgamma(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x):
        return math.inf
    if x <= 0 and x == math.floor(x):
        return math.inf
    if x in (1.0, 2.0):
        return 0.0
    with _Digits(40 + GUARD):
        if x > 0:
            return float(_lgamma_positive(D(x)))
        # reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
        return float((PI / abs(_sin_pi(x))).ln() - _lgamma_positive(1 - D(x)))


# -- Bessel functions by their power series ------------------------------------------

def _lead(half: Decimal, n: int) -> Decimal:
    """(x/2)^n / n!, the first term of the J and I series (0^0 is 1 here;
    Decimal refuses it)."""
    return (half ** n if n else D(1)) / math.factorial(n)


def _series_digits(x: float) -> int:
    """Digits for a Bessel series at x: its terms reach about e^|x| before they
    cancel, and a result near a zero of the function needs 17 more digits."""
    return int(abs(x) * 0.4343) + 20 + GUARD


def _j_series(n: int, x: Decimal) -> Decimal:
    """J_n(x) = (x/2)^n sum_k (-x^2/4)^k / (k! (n+k)!), n >= 0."""
    q = -x * x / 4
    term = _lead(x / 2, n)
    total, k = term, 0
    eps = D(10) ** (-(getcontext().prec + 2))
    while True:
        k += 1
        term = term * q / (k * (n + k))
        total += term
        if k > abs(x) and abs(term) <= eps * abs(total):
            break
    return total


def bessel_j(n: int, x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x):
        return 0.0
    if n < 0:
        return (-1) ** n * bessel_j(-n, x)
    if x < 0:
        return (-1) ** n * bessel_j(n, -x)
    with _Digits(_series_digits(x)):
        return float(_j_series(n, D(x)))


def _y_series(n: int, x: Decimal) -> Decimal:
    """Y_n(x), n >= 0, x > 0 (Abramowitz & Stegun 9.1.11):
    -(1/pi)(x/2)^-n sum_{k<n} (n-k-1)!/k! (x^2/4)^k + (2/pi) ln(x/2) J_n(x)
    - (1/pi)(x/2)^n sum_k (psi(k+1) + psi(n+k+1)) (-x^2/4)^k / (k! (n+k)!),
    with psi(m+1) = -gamma + 1 + 1/2 + ... + 1/m."""
    half = x / 2
    q = half * half
    finite = sum((D(math.factorial(n - k - 1)) / math.factorial(k) * q ** k for k in range(n)), D(0))
    eps = D(10) ** (-(getcontext().prec + 2))
    h_k, h_nk = D(0), sum((D(1) / j for j in range(1, n + 1)), D(0))   # H_k, H_{n+k}
    term = D(1) / math.factorial(n)
    total = (2 * -EULER + h_k + h_nk) * term
    k = 0
    while True:
        k += 1
        h_k += D(1) / k
        h_nk += D(1) / (n + k)
        term = -term * q / (k * (n + k))
        part = (2 * -EULER + h_k + h_nk) * term
        total += part
        if abs(part) <= eps * abs(total) and k > abs(x):
            break
    return (-finite / half ** n + 2 * half.ln() * _j_series(n, x) - half ** n * total) / PI


def bessel_y(n: int, x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    if math.isinf(x):
        return 0.0
    if n < 0:
        return (-1) ** n * bessel_y(-n, x)
    with _Digits(_series_digits(x)):
        return float(_y_series(n, D(x)))


def bessel_i(n: int, x: float) -> float:
    """I_n(x) = (x/2)^n sum_k (x^2/4)^k / (k! (n+k)!): positive terms, so 30
    digits are plenty; beyond 714 the result overflows float64."""
    if math.isnan(x):
        return x
    if x < 0:
        return (-1) ** n * bessel_i(n, -x)
    if x > 714:
        return math.inf
    with _Digits(30 + GUARD):
        xd = D(x)
        q = xd * xd / 4
        term = _lead(xd / 2, n)
        total, k = term, 0
        eps = D(10) ** (-(30 + GUARD))
        while term > eps * total or k < 2:
            k += 1
            term = term * q / (k * (n + k))
            total += term
        return float(total)
