"""Orthogonal polynomials of torch.special (Chebyshev T, U, V, W and their
shifted forms, Hermite H and He, Laguerre L, Legendre P) as f32 generic-body
code, matching PyTorch's CPU kernels (ATen's Math.h) branch for branch.

PyTorch runs the three-term recurrence n times, with n a tensor. The card has
no per-element loop, so:
- Chebyshev: PyTorch itself switches to a closed form cos(n acos y) above a
  small n when |y| < 1; below that n the recurrence is unrolled here, and for
  |y| > 1 its closed hyperbolic form stands in for the unbounded recurrence,
  including what the recurrence does once it overflows (inf, then NaN two
  steps later, when inf - inf appears).
- Hermite: PyTorch returns NaN above n = 128 for f32, so the recurrence is
  unrolled to 128 (to n when n is a constant) and the step where k == n kept.
- Laguerre, Legendre: unbounded loops with no closed form, so only a constant
  n is accepted; the caller falls back otherwise.

n arrives as a float and is truncated like C++'s int64 conversion on x86:
NaN, infinities and values beyond int64 become INT64_MIN, a negative order,
for which every polynomial is 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .special import F, INF, NAN, Mask, cos, exp, fabs, floor, lift, log, sin, where
from ..dialects import math

#: The largest order PyTorch computes Hermite polynomials for in f32.
HERMITE_LIMIT = 128

#: Above this the hyperbolic closed forms are computed as one exponential,
#: so that an intermediate cosh or sinh does not overflow before the quotient.
_EXP_FORM = 20.0


def _acos(x: F) -> F: return F(math.acos(x.v))
def _acosh(x: F) -> F: return F(math.acosh(x.v))
def _trunc(x: F) -> F: return F(math.trunc(x.v))
def _sinh(x: F) -> F: return F(math.sinh(x.v))
def _cosh(x: F) -> F: return F(math.cosh(x.v))


def _order(n: F) -> tuple[F, Mask]:
    """(trunc(n), whether the order is usable): int64's range, NaN excluded."""
    t = _trunc(n)
    return t, (t >= 0) & (t < 2.0 ** 63)


def _odd(n: F) -> Mask:
    return (n - 2 * floor(n * 0.5)).eq(1)


def _signed(odd: Mask, v: F) -> F:
    return where(odd, -v, v)


def _hyperbolic(t: F, c: F, sinh: bool) -> F:
    """cosh(t) / c or sinh(t) / c for t >= 0, c > 0, without overflowing
    before the division."""
    direct = (_sinh(t) if sinh else _cosh(t)) / c
    return where(t < _EXP_FORM, direct, exp(t - log(2 * c)))


@dataclass(frozen=True)
class Chebyshev:
    """One of the eight: the recurrence r = 2y q - p from (1, first(y)), the
    order above which PyTorch uses the trigonometric form, its values at
    y = +-1, and the form itself."""
    name: str
    shifted: bool
    threshold: int
    first: Callable[[F], F]
    kind: str  # "t", "u", "v" or "w"

    def at_plus_one(self, n: F, odd: Mask) -> F:
        return {"t": lift(1.0), "u": n + 1, "v": lift(1.0), "w": 2 * n + 1}[self.kind]

    def at_minus_one(self, n: F, odd: Mask) -> F:
        return _signed(odd, {"t": lift(1.0), "u": n + 1, "v": 2 * n + 1, "w": lift(1.0)}[self.kind])

    def trigonometric(self, y: F, n: F, odd: Mask) -> F:
        theta = _acos(y)
        if self.kind == "t":
            return cos(n * theta)
        if self.kind == "u":
            s = sin(theta)
            return where(s.eq(0), (n + 1) * cos((n + 1) * theta) / y, sin((n + 1) * theta) / s)
        half = theta / 2
        if self.kind == "v":
            return where(sin(half).eq(1), _signed(odd, 2 * n + 1),
                         cos((n + 0.5) * theta) / cos(half))
        # PyTorch's value for W where cos(theta / 2) rounds to 1 (y just
        # below 1) differs between the plain and the shifted polynomial.
        rounded = _signed(odd, 1.0)
        if not self.shifted:
            rounded = where(y > 0, 2 * n + 1, rounded)
        return where(cos(half).eq(1), rounded, sin((n + 0.5) * theta) / sin(half))

    def hyperbolic(self, y: F, n: F, odd: Mask) -> F:
        """For |y| > 1: the closed form of the recurrence, NaN where the
        recurrence would have met inf - inf (its value two orders earlier is
        already infinite)."""
        a = _acosh(fabs(y))
        negative = y < 0
        # For y < -1, V and W swap (V_n(-z) = (-1)^n W_n(z)).
        kind = self.kind
        def at(order: F) -> F:
            if kind == "t":
                return _hyperbolic(order * a, lift(1.0), False)
            if kind == "u":
                return _hyperbolic((order + 1) * a, _sinh(a), True)
            v = _hyperbolic((order + 0.5) * a, _cosh(a * 0.5), False)
            w = _hyperbolic((order + 0.5) * a, _sinh(a * 0.5), True)
            return where(negative, w, v) if kind == "v" else where(negative, v, w)
        value = at(n)
        value = where(at(n - 2).eq(INF), NAN, value)
        return where(negative, _signed(odd, value), value)

    def recurrence(self, y: F, n: F) -> F:
        """Orders 0..threshold by PyTorch's own steps (same roundings)."""
        return _unrolled(n, self.threshold, self.first(y), lambda k, p, q: (y + y) * q - p)

    def __call__(self, x: F, n: F) -> F:
        n, usable = _order(n)
        odd = _odd(n)
        y = (x + x - 1) if self.shifted else x
        # PyTorch tests x (x == 1, x == 0 when shifted); for a shifted x
        # so small that y rounds to -1 its recurrence gives the same values.
        at_one = where(y > 0, self.at_plus_one(n, odd), self.at_minus_one(n, odd))
        ay = fabs(y)
        inside = ay < 1
        big = n > self.threshold
        value = where(big & inside, self.trigonometric(y, n, odd),
                      where(big, self.hyperbolic(y, n, odd), self.recurrence(y, n)))
        return where(usable, where(ay.eq(1), at_one, value), 0.0)


CHEBYSHEV = {c.name: c for c in (
    Chebyshev("chebyshev_polynomial_t", False, 6, lambda y: y, "t"),
    Chebyshev("chebyshev_polynomial_u", False, 8, lambda y: y + y, "u"),
    Chebyshev("chebyshev_polynomial_v", False, 8, lambda y: y + y - 1, "v"),
    Chebyshev("chebyshev_polynomial_w", False, 8, lambda y: y + y + 1, "w"),
    Chebyshev("shifted_chebyshev_polynomial_t", True, 6, lambda y: y, "t"),
    Chebyshev("shifted_chebyshev_polynomial_u", True, 6, lambda y: y + y, "u"),
    Chebyshev("shifted_chebyshev_polynomial_v", True, 6, lambda y: y + y - 1, "v"),
    Chebyshev("shifted_chebyshev_polynomial_w", True, 4, lambda y: y + y + 1, "w"),
)}


def _unrolled(n: F, last: int, first: F, step) -> F:
    """PyTorch's recurrence from (1, first), r_k = step(k, p, q), for orders
    up to `last`, keeping the order n."""
    p, q = lift(1.0), first
    result = where(n.eq(0), 1.0, where(n.eq(1), first, NAN))
    for k in range(2, last + 1):
        p, q = q, step(k, p, q)
        result = where(n.eq(k), q, result)
    return result


def hermite(x: F, n: F, physicists: bool, constant: float | None) -> F:
    n, usable = _order(n)
    last = HERMITE_LIMIT if constant is None else max(0, min(int(constant), HERMITE_LIMIT))
    if physicists:  # H: r = 2x q - 2(k - 1) p
        value = _unrolled(n, last, x + x, lambda k, p, q: (x + x) * q - (2 * (k - 1)) * p)
    else:  # He: r = x q - (k - 1) p
        value = _unrolled(n, last, x, lambda k, p, q: x * q - (k - 1) * p)
    return where(usable, where(n > HERMITE_LIMIT, NAN, value), 0.0)


def laguerre(x: F, n: F, order: int) -> F:
    n, usable = _order(n)
    value = _unrolled(n, order, 1 - x,
                      lambda k, p, q: ((2 * (k - 1) + (1 - x)) * q - (k - 1) * p) / k)
    return where(usable, where(fabs(x).eq(0), 1.0, value), 0.0)


def legendre(x: F, n: F, order: int) -> F:
    n, usable = _order(n)
    odd = _odd(n)
    value = _unrolled(n, order, x,
                      lambda k, p, q: ((2 * (k - 1) + 1) * x * q - (k - 1) * p) / k)
    at_one = where(x > 0, 1.0, _signed(odd, 1.0))
    return where(usable, where(fabs(x).eq(1), at_one, value), 0.0)


#: Orders above this are refused for Laguerre and Legendre: the unrolled
#: recurrence grows with the order.
UNROLL_LIMIT = 128
