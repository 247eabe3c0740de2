"""Scans and sorts with torch.compile(backend="spyre") against eager, with
zero CPU fallbacks: cumsum, cumprod, cummax/cummin (NaN and tie indices as
eager's kernel), logcumsumexp (infinities), sort/argsort/msort (stable, NaN
last ascending and first descending), topk, kthvalue, median/nanmedian (NaN
rows), quantile; fp32 and fp16 (compared with eager on the DLFloat16-rounded
input, which is what the card holds)."""

import math

import pytest
import torch

from spyre_mlir import simulator as sim
from spyre_mlir.inductor import counters
from test_torch_ops import tolerance

NAN, INF = math.nan, math.inf


def compiled(fn, *args):
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        out = torch.compile(fn, backend="spyre")(*args)
    assert dict(counters.fallbacks) == {}
    assert counters.kernels_run > 0
    return out


def as_card_holds(x):
    """fp16 values as DLFloat16 holds them (the card's 16-bit type)."""
    if x.dtype != torch.float16:
        return x
    return torch.from_numpy(sim.dl16().round(x.float().numpy())).to(x.dtype)


def check(fn, x, depth=1, exact=False):
    actual = compiled(fn, x)
    with torch.no_grad():
        expected = fn(as_card_holds(x))
    if isinstance(expected, torch.Tensor):
        actual, expected = (actual,), (expected,)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        if exact or not e.is_floating_point():
            torch.testing.assert_close(a, e, rtol=0, atol=0, equal_nan=True)
        else:
            torch.testing.assert_close(a, e, equal_nan=True, **tolerance(x.dtype, depth))


def data(dtype, shape=(6, 13), seed=0):
    torch.manual_seed(seed)
    return torch.randn(*shape).to(dtype)


def with_ties_and_nans(dtype):
    x = torch.tensor([[3.0, NAN, 1.0, NAN, 2.0, 1.0, -INF, 0.0, -0.0],
                      [2.0, 2.0, 2.0, 1.0, INF, 1.0, 5.0, NAN, 0.5],
                      [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                      [NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN]])
    return x.to(dtype)


DTYPES = [torch.float32, torch.float16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod(dtype, dim):
    x = data(dtype)
    check(lambda x: torch.cumsum(x, dim), x, depth=x.shape[dim])
    check(lambda x: torch.cumprod(x * 0.5 + 1, dim), x, depth=x.shape[dim])


def test_cumsum_dtype_and_scalar():
    x = data(torch.float16)
    check(lambda x: torch.cumsum(x, 1, dtype=torch.float32), x, depth=13)
    check(lambda x: torch.cumsum(x, 0), torch.tensor(2.5))


def test_integer_scans_keep_the_dtype_asked_for():
    # Without a dtype an integer scan is int64, as eager's; with one it is
    # that one (MoE routing's offsets: cumsum(counts, dtype=int32), which
    # torch._grouped_mm refuses as int64).
    x = data(torch.float32)
    check(lambda x: torch.cumsum(x > 0, 1, dtype=torch.int32), x, exact=True)
    check(lambda x: torch.cumprod(x > -1, 0, dtype=torch.int32), x, exact=True)
    check(lambda x: torch.cumsum(x > 0, 1), x, exact=True)


def test_integer_scans_of_floats_keep_the_dtype_asked_for():
    # An integer sum of floats runs on the CPU (counted): the SFU sums in
    # f32. Its type is still the one asked for.
    x = (data(torch.float32) * 3).round()
    for fn in (lambda x: torch.cumsum(x, 1, dtype=torch.int32),
               lambda x: torch.cumprod(x.clamp(-2, 2), 0, dtype=torch.int32)):
        torch._dynamo.reset()
        actual = torch.compile(fn, backend="spyre")(x)
        assert actual.dtype == torch.int32
        assert torch.equal(actual, fn(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cummax_cummin(dtype):
    for x in (data(dtype), with_ties_and_nans(dtype)):
        check(lambda x: torch.cummax(x, 1), x, exact=True)
        check(lambda x: torch.cummin(x, 1), x, exact=True)
        check(lambda x: torch.cummax(x, 0), x, exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_logcumsumexp(dtype):
    check(lambda x: torch.logcumsumexp(x, 1), data(dtype) * 4, depth=13)
    x = torch.tensor([[-INF, -INF, 0.0, 1.0], [1.0, INF, 2.0, -INF], [200.0, 0.0, -200.0, 1.0]])
    check(lambda x: torch.logcumsumexp(x, 1), x.to(dtype), depth=4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dtype, descending):
    for x in (data(dtype), with_ties_and_nans(dtype)):
        check(lambda x: torch.sort(x, dim=1, descending=descending, stable=True), x, exact=True)
        check(lambda x: torch.sort(x, dim=0, descending=descending), x, exact=True)
        check(lambda x: torch.argsort(x, dim=-1, descending=descending, stable=True), x)
    check(torch.msort, data(dtype, (7, 3)), exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_topk_kthvalue(dtype):
    # Without ties: which of equal elements eager picks is not specified.
    x = data(dtype, (5, 10, 5))
    check(lambda x: torch.topk(x, 3, dim=1), x, exact=True)
    check(lambda x: torch.topk(x, 2, dim=-1, largest=False), x, exact=True)
    check(lambda x: torch.kthvalue(x, 2, 1), x, exact=True)
    check(lambda x: torch.kthvalue(x, 4, -1, True), x, exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_topk_unsorted_picks_eagers_elements(dtype):
    # sorted=False leaves the order unspecified: the card's is sorted, and
    # the elements and their positions are eager's in some order.
    x = data(dtype, (4, 12), seed=3)
    values, indices = compiled(lambda x: torch.topk(x, 5, dim=-1, sorted=False), x)
    expected = torch.topk(as_card_holds(x), 5, dim=-1, sorted=False)
    for got, want in ((values, expected.values), (indices, expected.indices)):
        torch.testing.assert_close(got.sort(-1).values, want.sort(-1).values, rtol=0, atol=0)
    assert torch.equal(torch.gather(as_card_holds(x), -1, indices), values)


@pytest.mark.parametrize("dtype", DTYPES)
def test_median(dtype):
    x = data(dtype, (5, 7))
    check(lambda x: torch.median(x, 1), x, exact=True)
    check(lambda x: torch.nanmedian(x, 0, keepdim=True), x, exact=True)
    check(torch.median, x, exact=True)
    # NaN rows: median is NaN at the first NaN, nanmedian skips NaNs. (Which
    # NaN of a row of NaNs eager's nanmedian names is left to nth_element.)
    x = torch.tensor([[3.0, NAN, 1.0, NAN, 2.0, 4.0], [NAN] * 6, [5.0, 1.0, 2.0, 8.0, 7.0, 0.0]])
    check(lambda x: torch.median(x, 1), x.to(dtype), exact=True)
    check(lambda x: torch.nanmedian(x, 1), x[[0, 2]].to(dtype), exact=True)
    check(torch.nanmedian, x.to(dtype), exact=True)


def test_long_rows_stay_on_the_cpu():
    """Beyond scans.MAX_SQUARE the n^2 work is not worth it: counted."""
    x = torch.randn(1 << 12)
    torch._dynamo.reset()
    counters.reset()
    out = torch.compile(lambda x: torch.sort(x), backend="spyre")(x)
    assert torch.equal(out[0], torch.sort(x)[0])
    assert "aten.sort.stable" in counters.fallbacks


def test_many_rows_of_a_few_hundred_run_in_blocks():
    # Mamba2's segment sums (Bamba's, Granite 4.0's hybrid layers): a cumsum
    # along the rows of [.., 256, 256] blocks, 4.5M elements of blocks'
    # squares here (268M as single squares), beyond MAX_SQUARE: it ran on
    # the CPU before blocked scans had a budget of their own.
    x = data(torch.float32, (4, 256, 256)).tril()
    torch._dynamo.reset()
    counters.reset()
    fn = torch.compile(lambda x: torch.cumsum(x, dim=-2), backend="spyre")
    torch.testing.assert_close(fn(x), torch.cumsum(x, dim=-2), atol=1e-4, rtol=1e-5)
    assert not counters.fallbacks, dict(counters.fallbacks)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape, dim", [((300, 40), -1), ((6, 48, 40), 1), ((40, 8, 6), 0)])
def test_cumsums_beyond_the_vector_units_budget_run_as_one_product(dtype, shape, dim,
                                                                   monkeypatch):
    # Granite 4.0's hybrid layers' segment sums (128 heads of 256 x 256 f32,
    # 13G vector operations even in blocks) ran on the CPU. As a product with
    # a triangle of ones, each element in three 8-bit parts, the sums are a
    # sequential f32 scan's up to the order of additions.
    from spyre_mlir.inductor import scans
    monkeypatch.setattr(scans, "MAX_SQUARE", 1 << 10)
    monkeypatch.setattr(scans, "MAX_BLOCKED_SCAN", 1 << 10)
    x = data(torch.float32, shape) * 10 ** torch.linspace(-3, 3, shape[-1])
    x = x.to(dtype)
    actual = compiled(lambda x: torch.cumsum(x, dim), x)
    assert any("aten.mm.dtype" in kernel.ops for kernel in counters.per_kernel)
    expected = torch.cumsum(as_card_holds(x).double(), dim)
    if dtype == torch.float32:
        # Within a sequential f32 scan's error bound: n roundings of the
        # running sum of magnitudes.
        bound = shape[dim] * 2.0 ** -24 * torch.cumsum(x.double().abs(), dim)
        assert ((actual.double() - expected).abs() <= bound).all()
    else:
        torch.testing.assert_close(actual, expected.to(dtype), **tolerance(dtype, 4))


@pytest.mark.parametrize("dim", [0, -1])
def test_a_cumsum_as_a_product_keeps_eagers_infinities_and_nans(dim, monkeypatch):
    # The triangle's zeros times an infinity would be NaN at every position
    # before it: the non-finite elements are scanned apart.
    from spyre_mlir.inductor import scans
    monkeypatch.setattr(scans, "MAX_SQUARE", 1 << 6)
    monkeypatch.setattr(scans, "MAX_BLOCKED_SCAN", 1 << 6)
    x = data(torch.float32, (12, 12))
    x[1, 3], x[2, 5], x[3, 2], x[3, 7], x[4, 0], x[5, 4], x[5, 9] = INF, -INF, INF, -INF, NAN, INF, INF
    x[6] = 0
    x[7, :2] = 3e38  # sums that overflow to inf, as eager's
    x = x if dim == -1 else x.T.contiguous()
    actual = compiled(lambda x: torch.cumsum(x, dim), x)
    expected = torch.cumsum(x, dim)
    assert torch.equal(actual.isnan(), expected.isnan())
    torch.testing.assert_close(actual, expected, equal_nan=True, rtol=1e-6, atol=1e-6)


def test_segment_sums_of_mamba2_chunks_run_on_the_card(monkeypatch):
    # transformers' segment_sum (Mamba2, Bamba, Granite 4.0 hybrid): the
    # chunk's decays expanded to a square, the upper triangle zeroed, summed
    # down the rows; exp of it weighs the chunk's states.
    from spyre_mlir.inductor import scans
    monkeypatch.setattr(scans, "MAX_SQUARE", 1 << 10)
    monkeypatch.setattr(scans, "MAX_BLOCKED_SCAN", 1 << 10)

    def decays(a):
        n = a.shape[-1]
        square = a[..., None].expand(*a.shape, n)
        square = square.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(-1), 0)
        sums = torch.cumsum(square, dim=-2)
        return torch.exp(sums.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), -math.inf))

    a = -torch.rand(1, 8, 2, 64, generator=torch.Generator().manual_seed(0))
    actual = compiled(decays, a)
    torch.testing.assert_close(actual, decays(a.double()).float(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scans_of_rows_beyond_one_square_run_in_blocks(dtype):
    # A row whose n x n square exceeds MAX_SQUARE (an attention mask's
    # cumsum at 5000 tokens, Falcon-H1's scans) is scanned in blocks of
    # about sqrt(n), then each block offset by the scan of the totals before it.
    from spyre_mlir.inductor import scans
    n = 2 * math.isqrt(scans.MAX_SQUARE) + 37
    x = data(dtype, (2, n))
    check(lambda x: torch.cumsum(x, -1), x, depth=n)
    check(lambda x: torch.cumsum(x, 0) * 2, x.T.contiguous(), depth=n)
    check(lambda x: torch.cumprod(1 + x * 1e-3, -1), x, depth=n)
    mask = data(torch.float32, (1, n), seed=1) > -1.5
    check(lambda m: m.long().cumsum(-1) - 1, mask)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("rows", [8, 300])
def test_an_in_place_scan_keeps_its_inputs_layout(dtype, rows):
    # The scan computed with its dimension last came back transposed; done
    # in place, x then looked transposed to functionalization, so that
    # x.t().contiguous() was a view of x and saw x's later update (300 rows:
    # the scan as a product, scans._cumsum_by_product).
    def fn(x):
        x.cumsum_(0)
        snapshot = x.t().contiguous()
        x.add_(1)
        return snapshot

    x = torch.randn(rows, 8, generator=torch.Generator().manual_seed(0)).to(dtype)
    expected_x = x.clone()
    expected = fn(expected_x)
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(x)
    assert counters.fallbacks == {}
    torch.testing.assert_close(actual, expected, **tolerance(dtype, rows))
    torch.testing.assert_close(x, expected_x, **tolerance(dtype, rows))


@pytest.mark.parametrize("scan", [torch.cumsum, torch.logcumsumexp], ids=["cumsum", "logcumsumexp"])
def test_a_scan_of_an_expanded_input_is_laid_out_as_eager(scan):
    # Eager lays out the result of an input that is not dense contiguously;
    # ours came back with the scanned dimension innermost, and a view of it
    # failed (ValueError: cannot view [7, 200] with strides (1, 7)). Found
    # by the differential fuzz.
    def fn(x):
        return scan(x, 0).view(20, -1)

    x = torch.randn(7, 1, generator=torch.Generator().manual_seed(0)).expand(7, 200)
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(x)
    assert counters.fallbacks == {}
    torch.testing.assert_close(actual, fn(x), **tolerance(torch.float32, 7))
