"""searchsorted and bucketize (searches.py), and the small decompositions
of decompositions.py (eye, normal_, cdist, 0-d embedding lookups, masked
index) with torch.compile(backend="spyre") against eager, zero fallbacks."""

import math

import pytest
import torch
import torch.nn.functional as F

from eager_compare import compiled_and_eager
from spyre_mlir.inductor import counters, searches


def run(fn, *args, on_card=True, **close):
    actual, expected = compiled_and_eager(fn, *args, on_card=on_card)
    torch.testing.assert_close(actual, expected, equal_nan=True, **close)


SEQUENCE = torch.tensor([-math.inf, -2.0, 0.0, 0.0, 0.0, 1.5, 3.0, math.inf, math.nan])
VALUES = torch.tensor([[-3.0, 0.0, 0.1, 3.0], [math.nan, math.inf, -math.inf, 1.5]])


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_ties_infinities_and_nan_as_the_cpu(right):
    run(lambda s, v: torch.searchsorted(s, v, right=right), SEQUENCE, VALUES)
    run(lambda s, v: torch.bucketize(v, s, right=right, out_int32=True), SEQUENCE, VALUES)


def test_searchsorted_per_row_with_a_sorter_and_an_unsorted_row():
    torch.manual_seed(0)
    rows = torch.randn(3, 10)
    rows[2] = torch.randn(10)  # not sorted: the CPU's search, step by step
    rows[:2] = rows[:2].sort(-1).values
    values = torch.randn(3, 4)
    run(lambda s, v: torch.searchsorted(s, v), rows, values)
    unsorted = torch.randn(10)
    sorter = unsorted.argsort()
    run(lambda s, v, o: torch.searchsorted(s, v, sorter=o), unsorted, values[0], sorter)
    run(lambda s, v: torch.searchsorted(s, v, side="right"), torch.arange(7), torch.tensor(3))


def test_searchsorted_beyond_the_budget_runs_on_the_cpu_counted(monkeypatch):
    monkeypatch.setattr(searches, "MAX_COMPARISONS", 4)
    run(lambda s, v: torch.searchsorted(s, v), SEQUENCE, VALUES, on_card=False)


def test_eye_and_cdist():
    run(lambda x: x + torch.eye(5, 3), torch.ones(5, 3))
    torch.manual_seed(0)
    a, b = torch.randn(2, 5, 3), torch.randn(2, 4, 3)
    for p in (0.0, 1.0, 2.0, 3.0, math.inf):
        run(lambda a, b: torch.cdist(a, b, p=p), a, b, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist", "use_mm_for_euclid_dist_if_necessary"])
def test_cdist_matrix_product_mode_from_differences(mode):
    # Points near 6.5 half a unit apart: as a product (eager's mode for
    # more than 25 rows), |x|^2 + |y|^2 - 2 x.y cancels 42 - 42, and the
    # card's product rounds its inputs to DLFloat16 (0.528 came out 0.328).
    # Eager takes the product too past 25 rows, so the reference is the
    # distances computed from the differences in float64: eager's own f32
    # product was 8e-4 off for a distance of 3e-3 with some draws.
    torch.manual_seed(0)
    a = torch.tensor([[6.5], [6.6]]) + torch.linspace(0, 0.1, 2).unsqueeze(-1)
    b = torch.cat([a + 0.5, torch.randn(30, 1)]) if mode.endswith("necessary") else a + 0.5
    if mode.endswith("necessary"):
        a = torch.cat([a, 6.5 + torch.randn(28, 1)])
    actual, _ = compiled_and_eager(lambda a, b: torch.cdist(a, b, compute_mode=mode), a, b)
    exact = torch.cdist(a.double(), b.double(), compute_mode="donot_use_mm_for_euclid_dist")
    torch.testing.assert_close(actual, exact.float(), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("shape", [(6, 3), (5, 1), (2, 33), (4, 0)])
def test_pdist_every_p(shape):
    torch.manual_seed(0)
    x = torch.randn(shape)
    if x.numel():
        x[0, 0] = x[-1, 0]  # a zero difference: counted apart for p = 0
    for p in (0.0, 0.5, 1.0, 2.0, 3.5, math.inf):
        run(lambda x: F.pdist(x, p), x, atol=1e-5, rtol=1e-5)
    if x.numel():
        x[1, 0] = math.nan
        run(lambda x: F.pdist(x), x)


@pytest.mark.parametrize("shape", [(1, 4), (0, 3)])
def test_pdist_without_pairs(shape):
    torch._dynamo.reset()
    counters.reset()
    x = torch.randn(shape)
    torch.testing.assert_close(torch.compile(F.pdist, backend="spyre")(x), F.pdist(x))
    assert dict(counters.fallbacks) == {}


def test_pdist_negative_p_raises_as_in_eager():
    with pytest.raises(Exception):
        torch._dynamo.reset()
        torch.compile(lambda x: F.pdist(x, -1.0), backend="spyre")(torch.randn(4, 3))


def test_embedding_of_a_0d_index_and_masked_index():
    weight = torch.randn(10, 5)
    run(lambda w, i: F.embedding(i, w), weight, torch.tensor(7))
    x = torch.randn(5, 5)
    mask = torch.tensor([True, False, True, True]).unsqueeze(-1)  # per row
    rows = torch.tensor([4, 99, 0, 2])  # 99 is masked off
    run(lambda x, m, r: torch.ops.aten._unsafe_masked_index(x, m, [r], -1.0), x, mask, rows)


def test_embedding_of_one_index_from_a_table_beyond_the_pick_budget():
    # A decode step's token lookup in a language model's vocabulary: too
    # large a table to pick from, so the row is gathered (twice, which keeps
    # the gather's index a tensor; one copy kept), not left to the CPU.
    from spyre_mlir.inductor import decompositions
    rows = decompositions.MAX_PICK_COMPARISONS // 2048 + 1
    weight = torch.randn(rows, 2048).half()
    for index in (torch.tensor([[rows - 1]]), torch.tensor(3)):
        run(lambda w, i: F.embedding(i, w), weight, index)


def test_embedding_from_a_computed_or_transposed_table():
    # The table is copied to a dense buffer first: folded into the gather's
    # load it would be a computed or permuted row, which the gather cannot read.
    torch.manual_seed(0)
    weight, index = torch.randn(5, 12), torch.tensor([[3, 0, 11], [11, 2, 2]])
    run(lambda w, i: F.embedding(i, w.t()), weight, index)
    run(lambda w, i: F.embedding(i, w.t() * 2 + 1), weight, index)


def test_normal_in_place_draws_on_the_card():
    torch._dynamo.reset()
    counters.reset()
    out = torch.compile(lambda x: x.normal_(3.0, 0.5), backend="spyre")(torch.empty(64, 64))
    assert dict(counters.fallbacks) == {} and counters.kernels_run > 0
    assert abs(out.mean().item() - 3.0) < 0.05 and abs(out.std().item() - 0.5) < 0.05


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_histc_edges_as_eager(dtype):
    # Values on and beyond the edges, and NaN (not counted). 16-bit inputs
    # run on the CPU, counted (searches._histc_applies).
    on_card = dtype == torch.float32
    x = torch.tensor([0.0, 1.0, 2.5, 9.999, 10.0, 10.5, -0.5, 5.0, math.nan, 3.3333]).to(dtype)
    run(lambda x: torch.histc(x, bins=3, min=0, max=10), x, on_card=on_card, rtol=0, atol=0)
    torch.manual_seed(0)
    run(lambda x: torch.histc(x, bins=100, min=-2, max=2), torch.randn(1000).to(dtype),
        on_card=on_card, rtol=0, atol=0)
