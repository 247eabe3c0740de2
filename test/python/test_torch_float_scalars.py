"""Python floats that change between calls (inductor/float_scalars.py):
Dynamo passes them as 0-d f64 tensors, which the card does not hold. Where
eager computes with them in f32 (Python arithmetic on them in f64 first)
they reach the card as f32, computed on the host; elsewhere they keep f64
and their kernels run on the CPU, counted."""

import copy
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
    lambda x, s: x * (s * s),
    lambda x, s: x * math.sqrt(s),
    lambda x, s: x.mul(1 - s * 0.01),
    lambda x, s: x / (2.0 * s) + s,
], ids=["squared", "sqrt", "decay", "two_scalars"])
def test_python_arithmetic_on_it_is_computed_on_the_host(fn):
    """In f64, as eager computes it, then converted as the op converts it."""
    x = torch.rand(16, generator=torch.Generator().manual_seed(0)) * 10
    values = (2.0, 3.3, 1.7)
    for s, (actual, expected, fallbacks) in zip(values, _calls(fn, x, values)):
        assert fallbacks == 0, s
        assert torch.equal(actual, expected), s


@pytest.mark.parametrize("fn", [
    lambda p, s: (p.cumsum(-1) <= s).float() * p,           # a top-p cut
    lambda p, s: torch.where(p > 0.05, p, s),               # a boolean condition
], ids=["comparison", "where"])
def test_comparisons_and_selections_with_f32(fn):
    probs = torch.rand(4, 16, generator=torch.Generator().manual_seed(0)).softmax(-1)
    values = (0.5, 0.7, 0.25)
    for s, (actual, expected, fallbacks) in zip(values, _calls(fn, probs, values)):
        assert fallbacks == 0, s
        assert torch.equal(actual, expected), s


def test_a_comparison_with_f16_keeps_f64():
    """An f16 tensor compares with the scalar rounded to f16, which the card
    (comparing in f32) would not: kept on the CPU, counted."""
    probs = torch.rand(4, 16, generator=torch.Generator().manual_seed(0)).softmax(-1).half()
    fn = lambda p, s: (p <= s).float()  # noqa: E731
    results = _calls(fn, probs, (0.5, 0.3, 0.1))
    for actual, expected, _ in results:
        assert torch.equal(actual, expected)
    assert results[1][2] > 0


@pytest.mark.parametrize("fn", [
    lambda x, s: x.long() * s,          # an integer tensor
    lambda x, s: x.double() + s,        # an f64 result
    lambda x, s: x * s + x.double().sum() * s,
], ids=["integer_tensor", "f64_tensor", "one_use_of_several"])
def test_other_uses_keep_f64(fn):
    x = torch.rand(16, generator=torch.Generator().manual_seed(0)) * 10
    values = (2.0, 3.3, 1.7)
    results = _calls(fn, x, values)
    for s, (actual, expected, fallbacks) in zip(values, results):
        assert actual.dtype == expected.dtype
        torch.testing.assert_close(actual, expected, rtol=1e-6, atol=1e-6)
    assert results[1][2] > 0  # the first value is a constant; the later ones an f64 input


def test_adamw_with_a_learning_rate_schedule_runs_on_the_card():
    """A compiled AdamW step with a Python float learning rate that a
    scheduler changes: Dynamo makes the rate an f64 input read through
    `1 - lr * weight_decay` and `lr / bias_correction`."""
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 8)
    twin = copy.deepcopy(model)
    optimizers = [torch.optim.AdamW(m.parameters(), lr=0.1) for m in (model, twin)]
    schedules = [torch.optim.lr_scheduler.StepLR(o, 1, 0.5) for o in optimizers]
    torch._dynamo.reset()
    step = torch.compile(optimizers[1].step, backend="spyre")
    x = torch.randn(4, 16)
    for i in range(4):
        for m, o, run, schedule in zip((model, twin), optimizers, (optimizers[0].step, step),
                                       schedules):
            o.zero_grad()
            m(x).pow(2).sum().backward()
            counters.reset()
            run()
            schedule.step()
        if i > 0:
            assert dict(counters.fallbacks) == {}, (i, dict(counters.fallbacks))
    for a, b in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_a_dynamic_graph_keeps_its_own_inputs():
    """With dynamic=True each shape compiles the traced graph again: the
    scalars' inputs go to a copy of it, never to the graph itself."""
    torch._dynamo.reset()
    compiled = torch.compile(scaled, backend="spyre", dynamic=True)
    for rows, s in ((4, 2.0), (6, 3.3), (8, -1.7), (6, 0.1)):
        x = torch.randn(rows, 16, generator=torch.Generator().manual_seed(rows))
        counters.reset()
        assert torch.equal(compiled(x, s), scaled(x, s)), (rows, s)


class NormedEmbedding(torch.nn.Module):
    """An embedding's `norm_type` and a norm's `eps`: module floats that
    Dynamo passes as inputs with dynamic=True, read through `.item()` by ops
    that do not take a scalar as an elementwise operand."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, 16)
        self.eps = 1e-5

    def forward(self, ids):
        x = self.embed(ids)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def test_a_dynamic_graph_reads_module_floats_as_their_values():
    # Each version was compiled outside Dynamo's trace, where `.item()` of an
    # input has no value (DataDependentOutputException, a crash before).
    torch.manual_seed(0)
    model = NormedEmbedding()
    torch._dynamo.reset()
    counters.reset()
    compiled = torch.compile(model, backend="spyre", dynamic=True)
    with torch.no_grad():
        for length in (7, 12, 5):
            ids = torch.randint(0, 50, (2, length))
            torch.testing.assert_close(compiled(ids), model(ids), rtol=1e-5, atol=1e-5)
    assert dict(counters.fallbacks) == {}
