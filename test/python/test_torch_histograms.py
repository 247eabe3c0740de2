"""torch.histogram and torch.histc (searches.py) with
torch.compile(backend="spyre") against eager: values on the bin edges,
outside them, NaN, weights, density, bounds from the data."""

import math

import pytest
import torch

from eager_compare import compiled_and_eager


def run(fn, *args, on_card=True):
    actual, expected = compiled_and_eager(fn, *args, on_card=on_card)
    # Counts and edges exactly; weighted sums up to their order.
    torch.testing.assert_close(actual, expected, equal_nan=True, atol=1e-5, rtol=1e-5)
    return actual, expected


def _on_the_edges(lo, hi, bins):
    """Random values, eager's edges themselves and their neighbours, values
    outside the range and NaN: where a bin's choice can go wrong."""
    torch.manual_seed(bins)
    edges = torch.linspace(lo, hi, bins + 1)
    near = torch.cat([edges, edges.nextafter(edges + 1), edges.nextafter(edges - 1)])
    return torch.cat([torch.rand(40) * (hi - lo) * 1.2 + lo - 0.1 * (hi - lo), near,
                      torch.tensor([math.nan, math.inf, -math.inf])])


@pytest.mark.parametrize("bins", [1, 3, 7, 100])
def test_histogram_with_a_range_on_and_beside_every_edge(bins):
    x = _on_the_edges(-1.7, 2.3, bins)
    run(lambda x: torch.histogram(x, bins, range=(-1.7, 2.3)), x)
    weight = torch.rand(x.shape)
    run(lambda x, w: torch.histogram(x, bins, range=(-1.7, 2.3), weight=w), x, weight)
    run(lambda x, w: torch.histogram(x, bins, range=(-1.7, 2.3), weight=w, density=True),
        x, weight)
    run(lambda x: torch.histogram(x, bins, range=(-1.7, 2.3), density=True), x)


def test_histogram_of_an_empty_range_and_no_elements():
    x = torch.tensor([[0.5, 1.0], [1.0, 1.5]])
    run(lambda x: torch.histogram(x, 4, range=(1.0, 1.0)), x)
    run(lambda x: torch.histogram(x, 3), torch.empty(0, 2))  # edges of [0, 1]


@pytest.mark.parametrize("bins", [1, 2, 5, 6])
def test_histogram_bounds_from_the_data(bins):
    torch.manual_seed(bins)
    data = torch.randn(5, 7) * 3
    _, edges = torch.histogram(data, bins)
    # Eager's edges inside the data's range leave its bounds as they are.
    x = torch.cat([data.reshape(-1), edges, edges.nextafter(edges + 1)[:-1],
                   edges.nextafter(edges - 1)[1:]])
    run(lambda x: torch.histogram(x, bins), x)
    run(lambda x, w: torch.histogram(x, bins, weight=w, density=True), x, torch.rand(x.shape))
    run(lambda x: torch.histogram(x, bins), torch.tensor(2.5))  # one value: +-0.5
    run(lambda x: torch.histogram(x, bins), torch.full((4, 3), -0.75))


def test_histogram_bounds_from_non_finite_data_raise_as_in_eager():
    fn = torch.compile(lambda x: torch.histogram(x, 3), backend="spyre")
    torch._dynamo.reset()
    for bad in (math.nan, math.inf, -math.inf):
        x = torch.tensor([1.0, bad, 2.0])
        with pytest.raises(RuntimeError):
            torch.histogram(x, 3)
        with pytest.raises(RuntimeError, match="not finite"):
            fn(x)
    x = torch.tensor([1.0, 2.0, 4.0, 3.5])
    torch.testing.assert_close(fn(x), torch.histogram(x, 3))


def test_histogram_many_bins_from_the_data_stay_on_the_cpu_counted():
    # Eager's linspace sums differently beyond a few edges (its vector path).
    run(lambda x: torch.histogram(x, 10), torch.randn(50), on_card=False)


def test_histc_on_and_beside_every_edge():
    x = _on_the_edges(-10.0, 10.0, 100)
    run(lambda x: torch.histc(x, 100, -10, 10), x)
