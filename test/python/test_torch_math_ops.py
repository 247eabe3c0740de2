"""Elementwise math ops that the card has no single instruction for, built in
the generic body from ones it has (body.py, special.py), against eager:
sign family, remainder, atan2, hypot, the gamma family, the inverse error
function and friends, Bessel functions. fp32 and fp16, zero CPU fallbacks."""

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir import simulator as sim
from spyre_mlir.inductor import counters, state

torch.manual_seed(0)

DTYPES = [torch.float32, torch.float16]


def compiled(fn, *args, fallbacks=0):
    torch._dynamo.reset()
    counters.reset()
    result = torch.compile(fn, backend="spyre")(*args)
    assert sum(counters.fallbacks.values()) == fallbacks, dict(counters.fallbacks)
    assert counters.kernels_run > 0 or fallbacks
    return result


def on_card(x: torch.Tensor) -> torch.Tensor:
    """x with 16-bit values as the card holds them (DLFloat16 has one fraction
    bit fewer than fp16), so that eager sees the card's inputs."""
    if x.dtype != torch.float16:
        return x
    return torch.from_numpy(sim.dl16().round(x.float().numpy())).to(x.dtype)


def check(fn, *args, dtype=torch.float32, rtol=2e-5, atol=2e-5):
    """fn on the card against eager fn in float64 on the same inputs. The
    approximations are good to a few f32 roundings; 16-bit results are also
    rounded to DLFloat16 on the way out."""
    args = [on_card(a.to(dtype)) if a.is_floating_point() else a for a in args]
    try:
        eager = fn(*args)
    except NotImplementedError:  # PyTorch has no fp16 kernel for it either
        pytest.skip(f"eager PyTorch has no {dtype} kernel")
    actual = compiled(fn, *args)
    expected = fn(*[a.double() if a.is_floating_point() else a for a in args])
    assert actual.dtype == eager.dtype
    if dtype == torch.float16:
        rtol, atol = 4 * 2.0 ** -9, 4 * 2.0 ** -9
    torch.testing.assert_close(actual.double(), expected.to(actual.dtype).double(),
                               rtol=rtol, atol=atol, equal_nan=True)


def grid(low, high, n=257):
    """Points from low to high that miss the integers (poles, roots)."""
    return torch.linspace(low, high, n) + 0.0137


# ---------------------------------------------------------------------------
# Signs, remainders, angles


@pytest.mark.parametrize("dtype", DTYPES)
def test_sign_family(dtype):
    x = torch.tensor([-3.5, -0.0, 0.0, 2.25, float("nan"), -float("inf"), float("inf"), -1e-3])
    for fn in (torch.sign, torch.sgn, torch.signbit):
        x = x.to(dtype)
        torch.testing.assert_close(compiled(fn, x), fn(x), equal_nan=True)
    torch.testing.assert_close(compiled(torch.sign, torch.tensor([-7, 0, 5])),
                               torch.tensor([-1, 0, 1]))
    check(lambda t: F.softshrink(t, 0.5), grid(-3, 3), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_copysign_atan2(dtype):
    a = torch.tensor([1.5, -2.0, 0.0, -0.0, 3.0, -4.0, 0.0, 5.0])
    b = torch.tensor([-1.0, 2.0, -0.0, 1.0, 0.0, -0.0, -2.0, -3.0])
    check(torch.copysign, a, b, dtype=dtype)
    check(torch.atan2, a, b, dtype=dtype)
    check(torch.atan2, torch.randn(64, 32), torch.randn(64, 32), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hypot(dtype):
    # Squares of the large ones overflow f32 (DLFloat16 for fp16): the
    # result does not.
    big = 1e30 if dtype == torch.float32 else 6e4
    a = torch.tensor([3.0, 0.0, -big, big, float("inf"), float("nan"), 1e-3, -5.0])
    b = torch.tensor([4.0, 0.0, big, 1.0, float("nan"), 2.0, 1e-3, 0.0])
    check(torch.hypot, a, b, dtype=dtype)
    check(torch.hypot, torch.randn(50, 40), torch.randn(50, 40), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_remainder_and_floor_division(dtype):
    a = torch.tensor([5.0, -5.0, 5.0, -5.0, 0.0, 7.5, -7.5, 6.0])
    b = torch.tensor([3.0, 3.0, -3.0, -3.0, -2.0, 2.0, 2.0, -3.0])
    check(torch.remainder, a, b, dtype=dtype)
    check(lambda x, y: x % y, torch.randn(30, 20) * 8, torch.randn(30, 20) + 3, dtype=dtype)
    check(lambda x, y: torch.div(x, y, rounding_mode="floor"), a, b, dtype=dtype)
    check(torch.floor_divide, torch.randn(30, 20) * 8, torch.randn(30, 20) + 3, dtype=dtype)


def test_16bit_floor_division_does_not_round_the_quotient_first():
    # 27.28125 / 1.60546875 = 16.99..., which is 17 once rounded to f16 or
    # DLFloat16: eager floors the f32 quotient.
    a = torch.tensor([27.28125, -6.4375, -27.4375, 15.1875], dtype=torch.float16)
    b = torch.tensor([1.60546875, 1.287109375, 4.5703125, 3.0390625], dtype=torch.float16)
    for fn in (torch.floor_divide, lambda x, y: torch.div(x, y, rounding_mode="floor")):
        torch.testing.assert_close(compiled(fn, a, b), fn(a, b), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_floor_division_at_infinities_and_zero_quotients_is_eagers(dtype):
    # Eager's floor division works from fmod (Python's semantics): 1 // -inf
    # is -1, -1e-30 // 1e30 is -1, inf // 2 is nan, where Inductor's
    # floor(a / b) gives -0, -0 and inf.
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 7.25, 1e-30, -1e30, float("inf"),
              float("-inf"), float("nan")]
    values = torch.tensor(values).to(dtype)
    a = values.repeat_interleave(len(values))
    b = values.repeat(len(values))
    for fn in (torch.floor_divide, lambda x, y: torch.div(x, y, rounding_mode="floor"),
               lambda x, y: x // -2.5):
        actual, expected = compiled(fn, a, b), fn(a, b)
        torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
        numbers = ~expected.isnan()  # (a NaN's sign is not an answer)
        assert torch.equal(actual[numbers].float().signbit(),
                           expected[numbers].float().signbit())


def test_integer_remainder():
    a = torch.tensor([5, -5, 5, -5, 0, 9, -9, 6])
    b = torch.tensor([3, 3, -3, -3, -2, 4, 4, -3])
    torch.testing.assert_close(compiled(torch.remainder, a, b), torch.remainder(a, b))
    # Indices wrapped by a size stay small: take_along_dim's int64 stays int32.
    x, i = torch.randn(6, 5), torch.randint(-5, 5, (6, 3))
    torch.testing.assert_close(compiled(lambda x, i: torch.take_along_dim(x, i % 5, 1), x, i),
                               torch.take_along_dim(x, i % 5, 1))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_integer_division_toward_zero(dtype):
    # JetMoE routes tokens with div(..., rounding_mode="trunc"), which ran on
    # the CPU: truncdiv had no vector-unit form, and its int64 range was
    # unknown.
    a = torch.tensor([7, -7, 7, -7, 0, 2 ** 23 + 5, -(2 ** 23) - 5, 9], dtype=dtype)
    b = torch.tensor([2, 2, -2, -2, 3, 7, 7, -4], dtype=dtype)
    check(lambda x, y: torch.div(x, y, rounding_mode="trunc"), a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_backward_fma(dtype):
    y = torch.softmax(torch.randn(8, 16), -1)
    g = torch.randn(8, 16)
    check(lambda g, y: torch._softmax_backward_data(g, y, -1, y.dtype), g, y, dtype=dtype,
          rtol=1e-4, atol=1e-5)


def test_nextafter_runs_on_the_cpu_with_a_reason():
    a, b = torch.randn(8), torch.randn(8)
    torch.testing.assert_close(compiled(torch.nextafter, a, b, fallbacks=1),
                               torch.nextafter(a, b), rtol=0, atol=0)
    torch._dynamo.reset()
    previous, state.strict = state.strict, True
    try:
        with pytest.raises(Exception, match="nextafter steps through the bits"):
            torch.compile(torch.nextafter, backend="spyre")(a, b)
    finally:
        state.strict = previous


# ---------------------------------------------------------------------------
# Gamma family


@pytest.mark.parametrize("dtype", DTYPES)
def test_lgamma_digamma(dtype):
    x = grid(-12, 30, 401)
    check(torch.lgamma, x, dtype=dtype, rtol=2e-5, atol=5e-5)
    check(torch.digamma, x, dtype=dtype, rtol=2e-5, atol=5e-5)
    check(lambda t: torch.mvlgamma(t, 3), grid(1.1, 20, 64), dtype=dtype, rtol=2e-5, atol=1e-4)


def test_gamma_edges():
    x = torch.tensor([0.0, -0.0, -1.0, -4.0, 1.0, 2.0, float("inf"), -float("inf"),
                      float("nan"), 1e-30])
    for fn in (torch.lgamma, torch.digamma):
        torch.testing.assert_close(compiled(fn, x), fn(x), equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_polygamma(n, dtype):
    # Negative arguments go through the reflection formula's n-th derivative.
    check(lambda t: torch.polygamma(n, t), grid(-9.3, 9, 127), dtype=dtype, rtol=2e-5,
          atol=1e-4)


def test_zeta():
    s = torch.rand(500) * 8 + 1.01
    q = torch.rand(500) * 18 - 9
    check(torch.special.zeta, s, q, rtol=2e-5, atol=1e-4)
    edges = (torch.tensor([0.5, 1.0, 2.0, 2.0, 2.0, 3.5]),
             torch.tensor([1.0, 1.0, 0.0, -1.0, -1.5, -1.5]))
    torch.testing.assert_close(compiled(torch.special.zeta, *edges), torch.special.zeta(*edges),
                               equal_nan=True)


# ---------------------------------------------------------------------------
# Error function family


@pytest.mark.parametrize("dtype", DTYPES)
def test_erfinv_ndtri(dtype):
    y = torch.cat([torch.rand(400) * 2 - 1, torch.tensor([0.0, 0.5, -0.75, 0.999, 1.0, -1.0])])
    check(torch.erfinv, y, dtype=dtype)
    p = torch.cat([torch.rand(400), torch.tensor([1e-6, 0.5, 0.25, 0.999, 0.0, 1.0])])
    check(torch.special.ndtri, p, dtype=dtype)


def test_erfinv_tails():
    y = torch.tensor([1e-7, -1e-5, 0.9999999, -0.99999, 1.5])
    check(torch.erfinv, y)
    check(torch.special.ndtri, torch.tensor([1e-30, 1e-10, 1 - 1e-7]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_erfcx_log_ndtr(dtype):
    x = torch.cat([grid(-9, 30, 301), torch.tensor([1e4, -30.0, float("inf")])])
    check(torch.special.erfcx, x, dtype=dtype)
    check(torch.special.log_ndtr, grid(-20, 8, 201), dtype=dtype)


# ---------------------------------------------------------------------------
# Bessel functions

BESSEL = {
    "i0": torch.i0, "i0e": torch.special.i0e, "i1": torch.special.i1,
    "i1e": torch.special.i1e, "modified_bessel_i0": torch.special.modified_bessel_i0,
    "modified_bessel_i1": torch.special.modified_bessel_i1,
    "bessel_j0": torch.special.bessel_j0, "bessel_j1": torch.special.bessel_j1,
    "spherical_bessel_j0": torch.special.spherical_bessel_j0,
}
BESSEL_POSITIVE = {
    "modified_bessel_k0": torch.special.modified_bessel_k0,
    "modified_bessel_k1": torch.special.modified_bessel_k1,
    "scaled_modified_bessel_k0": torch.special.scaled_modified_bessel_k0,
    "scaled_modified_bessel_k1": torch.special.scaled_modified_bessel_k1,
    "bessel_y0": torch.special.bessel_y0, "bessel_y1": torch.special.bessel_y1,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BESSEL))
def test_bessel(name, dtype):
    check(BESSEL[name], grid(-20, 20, 401), dtype=dtype, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BESSEL_POSITIVE))
def test_bessel_positive(name, dtype):
    x = torch.cat([grid(0, 30, 301), torch.tensor([1e-3, 2.0, 3.0, 0.0, -1.5])])
    check(BESSEL_POSITIVE[name], x, dtype=dtype, rtol=1e-5, atol=1e-6)


def test_bessel_in_a_fused_kernel():
    # Special functions are long bodies: they fuse with their neighbours.
    x = torch.rand(64, 128) * 10 + 0.1
    check(lambda t: torch.special.i0e(t).sum(-1) + torch.lgamma(t).mean(-1), x,
          rtol=1e-4, atol=1e-4)
