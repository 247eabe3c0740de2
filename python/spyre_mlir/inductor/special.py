"""Special functions (gamma family, inverse error function, Bessel functions)
as arith/math ops of a generic body, that is through instructions the card's
vector unit has.

Each is the textbook formula: a recurrence that shifts the argument to where
an asymptotic series converges fast, a reflection for negative arguments, a
Newton (Halley) refinement of a rough inverse, or the polynomial
approximations of Abramowitz & Stegun, chapter 9. The card has no branches
per element, so every piece is computed and `where` picks one; the pieces a
point does not use may be infinite or NaN there. Everything is computed in
f32 (16-bit inputs too: a series rounded to DLFloat16 at every step would
drift) and the caller rounds the result to the op's type.
"""

from __future__ import annotations

import math as pymath

from ..dialects import arith, math
from ..ir import F32Type, Value


class F:
    """An f32 value of a generic body with Python's operators, so that the
    functions below read as the formulas they are."""

    __slots__ = ("v",)

    def __init__(self, v: Value):
        self.v = v

    def __add__(self, o): return F(arith.addf(self.v, lift(o).v))
    def __radd__(self, o): return F(arith.addf(self.v, lift(o).v))
    def __sub__(self, o): return F(arith.subf(self.v, lift(o).v))
    def __rsub__(self, o): return F(arith.subf(lift(o).v, self.v))
    def __mul__(self, o): return F(arith.mulf(self.v, lift(o).v))
    def __rmul__(self, o): return F(arith.mulf(self.v, lift(o).v))
    def __truediv__(self, o): return F(arith.divf(self.v, lift(o).v))
    def __rtruediv__(self, o): return F(arith.divf(lift(o).v, self.v))
    def __neg__(self): return F(arith.negf(self.v))

    def _cmp(self, p, o): return Mask(arith.cmpf(p, self.v, lift(o).v))
    def __lt__(self, o): return self._cmp(arith.CmpFPredicate.OLT, o)
    def __le__(self, o): return self._cmp(arith.CmpFPredicate.OLE, o)
    def __gt__(self, o): return self._cmp(arith.CmpFPredicate.OGT, o)
    def __ge__(self, o): return self._cmp(arith.CmpFPredicate.OGE, o)
    def eq(self, o): return self._cmp(arith.CmpFPredicate.OEQ, o)


class Mask:
    """A boolean of the body."""

    __slots__ = ("v",)

    def __init__(self, v: Value):
        self.v = v

    def __and__(self, o): return Mask(arith.andi(self.v, o.v))
    def __or__(self, o): return Mask(arith.ori(self.v, o.v))

    def __invert__(self):
        return Mask(arith.xori(self.v, arith.constant(self.v.type, 1)))


def lift(x) -> F:
    return x if isinstance(x, F) else F(arith.constant(F32Type.get(), float(x)))


def where(m: Mask, a, b) -> F:
    return F(arith.select(m.v, lift(a).v, lift(b).v))


def _unary(fn):
    return lambda x: F(fn(x.v))


exp, log, log1p, sqrt, sin, cos, tan = (_unary(f) for f in (
    math.exp, math.log, math.log1p, math.sqrt, math.sin, math.cos, math.tan))
erf, erfc, floor, fabs, rint = (_unary(f) for f in (
    math.erf, math.erfc, math.floor, math.absf, math.roundeven))


def isinf(x: F) -> Mask: return Mask(math.isinf(x.v))
def copysign(a, b: F) -> F: return F(math.copysign(lift(a).v, b.v))
def pow_(a: F, b: F) -> F: return F(math.powf(a.v, b.v))


def poly(t: F, coeffs) -> F:
    """coeffs[0] + coeffs[1] t + coeffs[2] t^2 + ..., by Horner's rule."""
    p = lift(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        p = p * t + c
    return p


INF, NAN = float("inf"), float("nan")

# ---------------------------------------------------------------------------
# Gamma family

#: Arguments below this are shifted up by the recurrence before an asymptotic
#: series is used: its terms then shrink fast enough for f32.
SHIFT = 7


def _reflected(x: F) -> tuple[Mask, F, F]:
    """Below 1/2 the reflection formulas map x to 1 - x: (x < 1/2, y, d)
    with d = x - round(x), exact: sin(pi x) and tan(pi x) are sin(pi d) and
    tan(pi d) up to sign, with an argument that keeps its digits near the
    poles at the integers."""
    low = x < 0.5
    return low, where(low, 1 - x, x), x - rint(x)


def _cot_pi(d: F) -> F:
    """cot(pi d) for |d| <= 1/2. Near +-1/2, where cot crosses 0, as
    tan(pi (1/2 - |d|)): 1/2 - |d| is exact there, pi d is not."""
    ad = fabs(d)
    return where(ad <= 0.25, 1 / tan(pymath.pi * d), copysign(tan(pymath.pi * (0.5 - ad)), d))


def lgamma(x: F) -> F:
    low, y, d = _reflected(x)
    # lgamma(y) = lgamma(y + SHIFT) - log(y (y + 1) ... (y + SHIFT - 1))
    small = y < SHIFT
    z = where(small, y + SHIFT, y)
    product = y
    for k in range(1, SHIFT):
        product = product * (y + k)
    # Stirling's series with the Bernoulli terms 1/12, -1/360, 1/1260, -1/1680.
    r = 1 / z
    r2 = r * r
    series = r * poly(r2, [1 / 12, -1 / 360, 1 / 1260, -1 / 1680])
    stirling = (z - 0.5) * log(z) - z + 0.5 * pymath.log(2 * pymath.pi) + series
    positive = stirling - where(small, log(product), 0.0)
    # lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    reflected = log(pymath.pi / fabs(sin(pymath.pi * d))) - positive
    return where(isinf(x), INF, where(low, reflected, positive))


def digamma(x: F) -> F:
    low, y, d = _reflected(x)
    small = y < SHIFT
    z = where(small, y + SHIFT, y)
    shift = 1 / y
    for k in range(1, SHIFT):
        shift = shift + 1 / (y + k)
    # psi(z) ~ log z - 1/(2z) - sum B_2k / (2k z^2k)
    r2 = 1 / (z * z)
    series = r2 * poly(r2, [1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132])
    positive = log(z) - 0.5 / z - series - where(small, shift, 0.0)
    # psi(x) = psi(1 - x) - pi / tan(pi x)
    reflected = positive - pymath.pi * _cot_pi(d)
    result = where(low, reflected, positive)
    # PyTorch: -inf at +0, +inf at -0, NaN at the negative integers.
    result = where(x.eq(0), -copysign(INF, x), result)
    return where((x < 0) & d.eq(0), NAN, result)


#: Terms summed directly before the Euler-Maclaurin tail of the Hurwitz zeta
#: function; exact for q > -ZETA_TERMS + 1 (the tail needs q + ZETA_TERMS > 1).
ZETA_TERMS = 12

#: B_2j / (2j)! for j = 1..6.
_BERNOULLI = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
              -691 / 1307674368000]


def zeta(s: F, q: F) -> F:
    """Hurwitz zeta sum_k (q + k)^-s, by Euler-Maclaurin summation."""
    minus_s = -s
    total = pow_(q, minus_s)
    for k in range(1, ZETA_TERMS):
        total = total + pow_(q + k, minus_s)
    a = q + ZETA_TERMS
    a_s = pow_(a, minus_s)
    total = total + a * a_s / (s - 1) + 0.5 * a_s
    # sum_j B_2j/(2j)! s (s+1) ... (s+2j-2) a^(-s-2j+1)
    term = s * a_s / a
    inv_a2 = 1 / (a * a)
    for j, b in enumerate(_BERNOULLI):
        total = total + b * term
        term = term * (s + 2 * j + 1) * (s + 2 * j + 2) * inv_a2
    # Cephes' conventions, as PyTorch's: s = 1 is a pole, s < 1 is outside
    # the domain; at q a non-positive integer a term is infinite, and for
    # other negative q, (q + k)^-s needs an integer s.
    total = where((q < 0) & ~s.eq(floor(s)), NAN, total)
    total = where((q <= 0) & q.eq(floor(q)), INF, total)
    total = where(s.eq(1), INF, total)
    return where(s < 1, NAN, total)


def _cot_derivative(n: int) -> list[int]:
    """Coefficients (in c = cot(pi x)) of the polynomial P_n with
    d^n/dx^n cot(pi x) = pi^n P_n(c): P_0 = c, P_k+1 = -(1 + c^2) P_k'(c)."""
    p = [0, 1]
    for _ in range(n):
        dp = [k * p[k] for k in range(1, len(p))] + [0, 0]
        p = [-(dp[k] + (dp[k - 2] if k >= 2 else 0)) for k in range(len(dp))]
    return p


def polygamma(n: int, x: F) -> F:
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, for x < 1/2
    through the n-th derivative of the reflection formula:
    psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi^(n+1) P_n(cot(pi x))."""
    if n == 0:
        return digamma(x)
    low, y, d = _reflected(x)
    positive = (-1) ** (n + 1) * pymath.factorial(n) * zeta(lift(n + 1), y)
    cot = _cot_pi(d)
    reflected = (-1) ** n * positive - pymath.pi ** (n + 1) * poly(cot, _cot_derivative(n))
    result = where(low, reflected, positive)
    # At the poles (the non-positive integers) Cephes' zeta is +inf.
    return where((x <= 0) & d.eq(0), (-1) ** (n + 1) * INF, result)


# ---------------------------------------------------------------------------
# Error function family


def _inverse_erf(a: F, q: F) -> F:
    """x >= 0 with erf(x) = a, that is erfc(x) = q: both are given so that
    whichever is exact drives the refinement (a near 0, q near 0)."""
    # Start: erf's Taylor series near 0, Winitzki's closed form elsewhere
    # (log(1 - a^2) = log(q) + log(1 + a) keeps its precision as q -> 0).
    c = 0.147
    L = log(q) + log(1 + a)
    t = 2 / (pymath.pi * c) + 0.5 * L
    far = sqrt(F(arith.maximumf((sqrt(t * t - L / c) - t).v, lift(0).v)))
    near = pymath.sqrt(pymath.pi) / 2 * a * (1 + pymath.pi / 12 * a * a)
    centre = a <= 0.5
    x = where(centre, near, far)
    # Halley steps on erf(x) - a (erf''/erf' = -2x); the residual comes from
    # erf or erfc, whichever keeps its digits there.
    for _ in range(2):
        r = where(centre, erf(x) - a, q - erfc(x))
        dx = r * (pymath.sqrt(pymath.pi) / 2) * exp(x * x)
        x = x - dx / (1 + x * dx)
    return where(q.eq(0), INF, x)


def erfinv(y: F) -> F:
    a = fabs(y)
    return copysign(_inverse_erf(a, 1 - a), y)


def ndtri(p: F) -> F:
    """The standard normal quantile: -sqrt(2) erfcinv(2p)."""
    low = p < 0.5
    q = where(low, 2 * p, 2 - 2 * p)
    a = where(low, 1 - 2 * p, 2 * p - 1)
    x = _inverse_erf(a, q) * pymath.sqrt(2)
    return where(low, -x, x)


#: Above this exp(x^2) erfc(x) leaves f32's normal range; the asymptotic
#: series is then exact to f32.
ERFCX_ASYMPTOTIC = 9.0


def erfcx(x: F) -> F:
    direct = exp(x * x) * erfc(x)
    # erfcx(x) ~ 1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(2x^2)^2 - 15/(2x^2)^3 + ...)
    u = 1 / (2 * x * x)
    asymptotic = poly(u, [1, -1, 3, -15, 105]) / (x * pymath.sqrt(pymath.pi))
    return where(x < ERFCX_ASYMPTOTIC, direct, asymptotic)


# ---------------------------------------------------------------------------
# Bessel functions: Abramowitz & Stegun 9.4.1-9.4.6 (J, Y) and 9.8.1-9.8.8
# (I, K), polynomials below a break point and modulus/phase or exponentially
# scaled forms above it, each within about 2e-7 of the function.

_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
             0.02635537, -0.01647633, 0.00392377]
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
             -0.02895312, 0.01787654, -0.00420059]
_I_BREAK = 3.75


def _bessel_i(x: F, small_coeffs, large_coeffs, odd: bool, scaled: bool) -> F:
    ax = fabs(x)
    t = x / _I_BREAK
    small = poly(t * t, small_coeffs)
    if odd:
        small = small * x
    if scaled:
        small = small * exp(-ax)
    # e^|x| / sqrt(|x|) P(3.75/|x|), with e^|x| in two halves: it overflows
    # f32 before I0 and I1 do.
    large = poly(_I_BREAK / ax, large_coeffs) / sqrt(ax)
    if not scaled:
        half = exp(0.5 * ax)
        large = half * large * half
    if odd:
        large = copysign(large, x)
    return where(ax < _I_BREAK, small, large)


def i0(x: F) -> F: return _bessel_i(x, _I0_SMALL, _I0_LARGE, False, False)
def i0e(x: F) -> F: return _bessel_i(x, _I0_SMALL, _I0_LARGE, False, True)
def i1(x: F) -> F: return _bessel_i(x, _I1_SMALL, _I1_LARGE, True, False)
def i1e(x: F) -> F: return _bessel_i(x, _I1_SMALL, _I1_LARGE, True, True)


_K0_SMALL = [-0.57721566, 0.42278420, 0.23069756, 0.03488590, 0.00262698, 0.00010750,
             0.0000074]
_K0_LARGE = [1.25331414, -0.07832358, 0.02189568, -0.01062446, 0.00587872, -0.00251540,
             0.00053208]
_K1_SMALL = [1.0, 0.15443144, -0.67278579, -0.18156897, -0.01919402, -0.00110404,
             -0.00004686]
_K1_LARGE = [1.25331414, 0.23498619, -0.03655620, 0.01504268, -0.00780353, 0.00325614,
             -0.00068245]
_K_BREAK = 2.0


def _bessel_k(x: F, order: int, scaled: bool) -> F:
    h = 0.5 * x
    if order == 0:
        small = poly(h * h, _K0_SMALL) - log(h) * i0(x)
    else:
        small = poly(h * h, _K1_SMALL) / x + log(h) * i1(x)
    if scaled:
        small = small * exp(x)
    large = poly(_K_BREAK / x, _K0_LARGE if order == 0 else _K1_LARGE) / sqrt(x)
    if not scaled:
        large = large * exp(-x)
    result = where(x <= _K_BREAK, small, large)
    return where(x < 0, NAN, where(x.eq(0), INF, result))


def k0(x): return _bessel_k(x, 0, False)
def k1(x): return _bessel_k(x, 1, False)
def k0e(x): return _bessel_k(x, 0, True)
def k1e(x): return _bessel_k(x, 1, True)


_J0_SMALL = [1.0, -2.2499997, 1.2656208, -0.3163866, 0.0444479, -0.0039444, 0.00021]
_Y0_SMALL = [0.36746691, 0.60559366, -0.74350384, 0.25300117, -0.04261214, 0.00427916,
             -0.00024846]
_J1_SMALL = [0.5, -0.56249985, 0.21093573, -0.03954289, 0.00443319, -0.00031761, 0.00001109]
_Y1_SMALL = [-0.6366198, 0.2212091, 2.1682709, -1.3164827, 0.3123951, -0.0400976, 0.0027873]
_MODULUS = ([0.79788456, -0.00000077, -0.00552740, -0.00009512, 0.00137237, -0.00072805,
             0.00014476],
            [0.79788456, 0.00000156, 0.01659667, 0.00017105, -0.00249511, 0.00113653,
             -0.00020033])
_PHASE = ([-0.78539816, -0.04166397, -0.00003954, 0.00262573, -0.00054125, -0.00029333,
           0.00013558],
          [-2.35619449, 0.12499612, 0.00005650, -0.00637879, 0.00074348, 0.00079824,
           -0.00029166])
_J_BREAK = 3.0


def _bessel_jy(x: F, order: int, second_kind: bool) -> F:
    """J_order(x), or Y_order(x) with `second_kind`."""
    ax = fabs(x)
    t = x / _J_BREAK
    t2 = t * t
    j_small = poly(t2, _J0_SMALL) if order == 0 else x * poly(t2, _J1_SMALL)
    # Above the break: sqrt(2 / (pi x)) times a modulus and a phase near
    # x - pi/4 - order pi/2.
    v = _J_BREAK / ax
    modulus = poly(v, _MODULUS[order]) / sqrt(ax)
    theta = ax + poly(v, _PHASE[order])
    if not second_kind:
        large = modulus * cos(theta)
        if order == 1:
            large = where(x < 0, -large, large)
        return where(ax < _J_BREAK, j_small, large)
    log_term = 2 / pymath.pi * log(0.5 * x) * j_small
    small = log_term + (poly(t2, _Y0_SMALL) if order == 0 else poly(t2, _Y1_SMALL) / x)
    result = where(x < _J_BREAK, small, modulus * sin(theta))
    return where(x < 0, NAN, where(x.eq(0), -INF, result))


def j0(x): return _bessel_jy(x, 0, False)
def j1(x): return _bessel_jy(x, 1, False)
def y0(x): return _bessel_jy(x, 0, True)
def y1(x): return _bessel_jy(x, 1, True)


def spherical_j0(x: F) -> F:
    """sin(x) / x, 1 at 0 and 0 at the infinities, as PyTorch."""
    return where(isinf(x), 0.0, where(x.eq(0), 1.0, sin(x) / x))
