"""Random ops with torch.compile(backend="spyre"): generated on the card from
a hash of (seed, element index), so values differ from eager's; checked
statistically instead (range, mean, variance, independence of elements,
of calls and of ops), reproducible under torch.manual_seed, zero CPU
fallbacks."""

import math

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import counters

N = 1 << 14


def compiled(fn):
    torch._dynamo.reset()
    counters.reset()
    return torch.compile(fn, backend="spyre")


def no_fallbacks():
    assert dict(counters.fallbacks) == {}
    assert counters.kernels_run > 0


def correlation(a, b):
    a, b = a.double().flatten(), b.double().flatten()
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / (a.norm() * b.norm()))


# Tolerances: the mean of N uniforms has a standard deviation of
# 0.29 / sqrt(N) = 0.0023; six of them, and the same for the others.
SIGMA = 1 / math.sqrt(N)


def test_rand_uniform_and_independent():
    f = compiled(lambda x: torch.rand_like(x))
    x = torch.empty(N)
    torch.manual_seed(0)
    u = f(x)
    no_fallbacks()
    assert u.shape == x.shape and u.dtype == torch.float32
    assert float(u.min()) >= 0 and float(u.max()) < 1
    assert abs(float(u.mean()) - 0.5) < 6 * 0.29 * SIGMA
    assert abs(float(u.var()) - 1 / 12) < 6 * 0.075 * SIGMA
    # Every tenth of [0, 1) gets its share.
    counts = torch.histc(u, 10, 0, 1)
    assert float((counts - N / 10).abs().max()) < 6 * math.sqrt(N / 10)
    # Neighbours are not correlated, nor are two calls.
    assert abs(correlation(u[1:], u[:-1])) < 6 * SIGMA
    v = f(x)
    assert abs(correlation(u, v)) < 6 * SIGMA
    assert not torch.equal(u, v)


def test_seeds_reproduce():
    f = compiled(lambda x: torch.rand_like(x) + torch.randn_like(x))
    x = torch.empty(1000)
    torch.manual_seed(7)
    a = f(x)
    torch.manual_seed(7)
    b = f(x)
    torch.manual_seed(8)
    c = f(x)
    no_fallbacks()
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_randn_normal():
    f = compiled(lambda x: (torch.randn_like(x), torch.randn_like(x)))
    torch.manual_seed(1)
    z, w = f(torch.empty(N))
    no_fallbacks()
    assert abs(float(z.mean())) < 6 * SIGMA
    assert abs(float(z.var()) - 1) < 6 * math.sqrt(2) * SIGMA
    # The fourth moment of a normal is 3; within the sample's spread.
    assert abs(float((z ** 4).mean()) - 3) < 6 * math.sqrt(96) * SIGMA
    tail = 0.1336  # P(|z| > 1.5)
    spread = math.sqrt(tail * (1 - tail)) * SIGMA
    assert abs(float((z.abs() > 1.5).float().mean()) - tail) < 6 * spread
    assert abs(correlation(z, w)) < 6 * SIGMA  # two ops of one graph


def test_randint_and_bernoulli():
    torch.manual_seed(2)
    r = compiled(lambda: torch.randint(-3, 7, (N,)))()
    no_fallbacks()
    assert r.dtype == torch.int64 and int(r.min()) == -3 and int(r.max()) == 6
    counts = torch.bincount(r + 3, minlength=10)
    assert float((counts - N / 10).abs().max()) < 6 * math.sqrt(N / 10)

    p = torch.linspace(0, 1, N)
    b = compiled(lambda p: torch.bernoulli(p))(p)
    no_fallbacks()
    assert set(b.unique().tolist()) <= {0.0, 1.0}
    assert float(b[p == 0].sum()) == 0 and float(b[p == 1].min()) == 1
    assert abs(float(b.mean()) - 0.5) < 6 * 0.5 * SIGMA


def test_dropout_in_training():
    x = torch.ones(N)
    torch.manual_seed(3)
    y = compiled(lambda x: F.dropout(x, 0.25, training=True))(x)
    no_fallbacks()
    kept = y != 0
    assert torch.allclose(y[kept], torch.full_like(y[kept], 1 / 0.75))
    assert abs(float(kept.float().mean()) - 0.75) < 6 * 0.44 * SIGMA


@pytest.mark.parametrize("op", ["uniform", "normal", "exponential"])
def test_distributions(op):
    x = torch.empty(N)
    fn = {"uniform": lambda x: x.uniform_(-2.0, 4.0),
          "normal": lambda x: torch.normal(3.0, 2.0, x.shape),
          "exponential": lambda x: x.exponential_(2.0)}[op]
    mean, std = {"uniform": (1.0, 6 / math.sqrt(12)), "normal": (3.0, 2.0),
                 "exponential": (0.5, 0.5)}[op]
    torch.manual_seed(4)
    y = compiled(fn)(x)
    no_fallbacks()
    assert abs(float(y.mean()) - mean) < 6 * std * SIGMA
    assert abs(float(y.std()) - std) < 0.05 * std
    if op == "uniform":
        assert float(y.min()) >= -2 and float(y.max()) < 4
