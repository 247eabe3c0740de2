"""torch.special's orthogonal polynomials on the card against eager PyTorch:
every branch of PyTorch's kernels (negative and non-finite orders, y = +-1,
the trigonometric form, the unrolled recurrence, the hyperbolic form and its
overflow to inf and then NaN), and the refusal of an unbounded recurrence."""

import pytest
import torch

from eager_compare import compiled_and_eager

CHEBYSHEV = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
             "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
             "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
             "shifted_chebyshev_polynomial_w"]

#: Every x meets every order: inside (-1, 1), at and next to +-1 (and 0, 1/2
#: for the shifted forms), outside up to overflow, the infinities.
X = [-9.0, -3.5, -1.5, -1.0, -0.999, -0.7, -0.2, 0.0, 1e-9, 0.25, 0.5, 0.8, 0.9999999,
     1.0, 1.0000001, 1.3, 2.0, 7.25, 40.0, float("inf")]
ORDERS = [-3.0, -0.5, 0.0, 0.9, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.7, 12.0, 25.0,
          60.0, 127.0, 128.0, 129.0, 300.0, 1e6, float("nan"), float("inf"), -float("inf")]


def grid(orders=ORDERS):
    x, n = torch.meshgrid(torch.tensor(X), torch.tensor(orders), indexing="ij")
    return x.contiguous(), n.contiguous()


def check(actual, expected):
    # Closed forms and unrolled steps round differently from PyTorch's loop
    # by a few f32 ulps per step; growth near overflow may turn a finite
    # value at the limit into inf (compared as such).
    torch.testing.assert_close(actual, expected, rtol=2e-4, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("name", CHEBYSHEV + ["hermite_polynomial_h", "hermite_polynomial_he"])
def test_tensor_order_on_card(name):
    fn = getattr(torch.special, name)
    x, n = grid()
    if name.startswith("shifted"):
        x = (x + 1) / 2  # the same y = 2x - 1 as the plain forms see
    check(*compiled_and_eager(fn, x, n))


@pytest.mark.parametrize("name", ["laguerre_polynomial_l", "legendre_polynomial_p"])
@pytest.mark.parametrize("order", [0, 1, 2, 5, 17])
def test_constant_order_on_card(name, order):
    fn = getattr(torch.special, name)
    x = torch.tensor(X[:-1])
    check(*compiled_and_eager(lambda t: fn(t, order), x))


@pytest.mark.parametrize("name", ["laguerre_polynomial_l", "legendre_polynomial_p"])
def test_unbounded_recurrence_falls_back(name):
    fn = getattr(torch.special, name)
    # Not 1e6: PyTorch's CPU code for the fallback and its eager kernel
    # drift apart over a million steps.
    x, n = grid([o for o in ORDERS if o != 1e6])
    check(*compiled_and_eager(fn, x, n, on_card=False))


def test_hermite_above_its_limit_is_nan_as_pytorch():
    x = torch.linspace(-2, 2, 9)
    actual, expected = compiled_and_eager(lambda t: torch.special.hermite_polynomial_h(t, 129), x)
    assert torch.isnan(actual).all() and torch.isnan(expected).all()


def test_in_a_fused_kernel():
    x, n = grid()
    fn = lambda a, b: torch.special.chebyshev_polynomial_t(a.clamp(-2, 2), b) * 0.5 + 1
    check(*compiled_and_eager(fn, x, n))
