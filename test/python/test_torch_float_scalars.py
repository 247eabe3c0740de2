"""Python floats that change between calls (inductor/float_scalars.py):
Dynamo passes them as 0-d f64 tensors, which the card does not hold. Where
eager computes with them in f32 they reach the card as f32; elsewhere they
keep f64 and their kernels run on the CPU, counted."""

import math

import pytest
import torch

from spyre_mlir.inductor import counters


def _calls(fn, x, values):
    """(compiled, eager, fallbacks) for each value, compiled once by
    torch.compile; the second value makes the float a graph input."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="spyre")
    results = []
    for s in values:
        counters.reset()
        results.append((compiled(x, s), fn(x, s), sum(counters.fallbacks.values())))
    return results


def scaled(x, s):
    return ((x * s + s) / s - s).clamp(min=s)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_a_changing_float_runs_on_the_card(dtype):
    x = torch.randn(64, generator=torch.Generator().manual_seed(0)).to(dtype)
    values = (2.0, 3.3, -1.7, 0.1)
    for s, (actual, expected, fallbacks) in zip(values, _calls(scaled, x, values)):
        assert fallbacks == 0, s
        assert actual.dtype == dtype
        if dtype == torch.float32:
            assert torch.equal(actual, expected), s
        else:  # one rounding of the fused ops, as for a constant
            torch.testing.assert_close(actual, expected, rtol=1e-2, atol=1e-2)
            torch._dynamo.reset()
            assert torch.equal(torch.compile(scaled, backend="spyre")(x, s), actual)


@pytest.mark.parametrize("fn", [
    lambda x, s: x * (s * s),          # Python arithmetic on the float: f64 in eager
    lambda x, s: x * math.sqrt(s),
    lambda x, s: x.long() * s,          # an integer tensor
    lambda x, s: x.double() + s,        # an f64 result
], ids=["squared", "sqrt", "integer_tensor", "f64_tensor"])
def test_other_uses_keep_f64(fn):
    x = torch.rand(16, generator=torch.Generator().manual_seed(0)) * 10
    values = (2.0, 3.3, 1.7)
    results = _calls(fn, x, values)
    for s, (actual, expected, fallbacks) in zip(values, results):
        assert actual.dtype == expected.dtype
        torch.testing.assert_close(actual, expected, rtol=1e-6, atol=1e-6)
    assert results[1][2] > 0  # the first value is a constant; the later ones an f64 input
