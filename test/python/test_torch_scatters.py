"""Scatters with torch.compile(backend="spyre") against eager, with zero CPU
fallbacks (scatters.py): scatter (last write wins on repeated indices, as
eager's CPU loop), scatter_add, scatter_reduce with every reduction and
include_self both ways, index_put (negative indices, accumulate), index_add,
index_copy, index_fill, index_reduce, put, masked_scatter, max_unpool; fp32,
fp16 and int32. Scatters beyond the comparison budget run on the CPU,
counted."""

import pytest
import torch
import torch.nn.functional as F

from eager_compare import compiled_and_eager
from spyre_mlir.inductor import counters, scatters
from test_torch_ops import tolerance
from test_torch_scans_sorts import as_card_holds


def run(fn, *args, on_card=True):
    eager_args = [as_card_holds(a) if isinstance(a, torch.Tensor) else a for a in args]
    actual, expected = compiled_and_eager(fn, *args, on_card=on_card, eager_args=eager_args)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.is_floating_point():
        torch.testing.assert_close(actual, expected, equal_nan=True,
                                   **tolerance(expected.dtype, 16))
    else:
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)


def values(dtype, *shape, seed=0):
    torch.manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(*shape).to(dtype)
    return torch.randint(-50, 50, shape, dtype=dtype)


DTYPES = [torch.float32, torch.float16, torch.int32]
# Repeated indices on purpose: every position is chosen 0, 1 or more times.
INDEX = torch.tensor([[0, 2, 2, 5], [1, 1, 1, 1], [5, 4, 0, 4]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_keeps_the_last_write(dtype):
    self, src = values(dtype, 3, 6), values(dtype, 3, 4, seed=1)
    run(lambda s, i, x: s.scatter(1, i, x), self, INDEX, src, on_card=picks_on_card(dtype))
    run(lambda s, i: s.scatter(1, i, 7), self, INDEX)  # a value, no pick


def sums_on_card(dtype):
    """Integer sums and products are refused (run on the CPU, counted): the
    card reduces in f32, exact only up to 2^24, and nothing bounds int32
    inputs (ranges.py)."""
    return dtype.is_floating_point


def picks_on_card(dtype):
    """So are the maxima over a row that pick the value a position ends up
    with (the last write, the largest): int32 values beyond 2^24 would round
    (ranges.py)."""
    return dtype.is_floating_point


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add_on_a_leading_dim_with_a_smaller_index(dtype):
    # The index spans part of self in the other dimension, and src is larger
    # than the index: only the index's extent of src is used.
    self, src = values(dtype, 7, 5), values(dtype, 4, 5, seed=1)
    index = INDEX.t()[:, :2].contiguous()  # (4, 2): rows of self chosen per column
    run(lambda s, i, x: s.scatter_add(0, i, x), self, index, src, on_card=sums_on_card(dtype))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_reduce(reduce, include_self, dtype):
    self, src = values(dtype, 3, 6), values(dtype, 3, 4, seed=1)
    if reduce == "prod" and not dtype.is_floating_point:  # products within int32
        self, src = self % 5, src % 5
    run(lambda s, i, x: s.scatter_reduce(1, i, x, reduce, include_self=include_self),
        self, INDEX, src, on_card=picks_on_card(dtype) if reduce in ("amax", "amin") else
        sums_on_card(dtype))


def test_scatter_reduce_amax_keeps_nan_and_infinities():
    self = torch.tensor([[0.0, 1.0, -float("inf"), 2.0]])
    src = torch.tensor([[float("nan"), 3.0, float("inf")]])
    index = torch.tensor([[0, 2, 2]])
    run(lambda s, i, x: s.scatter_reduce(1, i, x, "amax"), self, index, src)


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_index_put_with_negative_and_repeated_indices(accumulate, dtype):
    self, v = values(dtype, 4, 5, 3), values(dtype, 6, 3, seed=1)
    rows, cols = torch.tensor([0, -1, 3, 0, 2, 0]), torch.tensor([4, 1, 1, 4, -5, 4])
    run(lambda s, r, c, x: torch.index_put(s, (r, c), x, accumulate=accumulate),
        self, rows, cols, v, on_card=picks_on_card(dtype) if not accumulate else
        sums_on_card(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_put_of_whole_rows(dtype, monkeypatch):
    # Rows at one index tensor are scattered (the card writes them in index
    # order, so the last of repeated indices wins; negative ones wrap).
    # Rows at two index tensors, over the comparison budget once the rows'
    # length multiplies in (but not the indices by positions alone): each
    # position gathers its last source row.
    monkeypatch.setattr(scatters, "MAX_COMPARISONS", 64)
    self, v = values(dtype, 2, 6, 5, 3), values(dtype, 2, 4, 5, 3, seed=1)
    index = torch.tensor([4, -1, 0, 4])  # 4 is written twice: the last wins

    def put(s, i, x):
        s = s.clone()
        s[:, i] = x
        return s
    run(put, self, index, v)
    # Two index tensors: 3 indices x 12 positions fit, x rows of 2 do not.
    rows, cols = torch.tensor([0, 3, 0]), torch.tensor([1, -1, 1])
    run(lambda s, r, c, x: torch.index_put(s, (r, c), x), values(dtype, 4, 3, 2, seed=2),
        rows, cols, values(dtype, 3, 2, seed=3))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_kv_cache_write_of_a_prompt_runs_on_the_card(dtype):
    # A static KV cache written at a 512-token prompt's positions (HF's
    # index_copy_): 512 x 576 x 256 comparisons would exceed the budget.
    cache, keys = values(dtype, 1, 4, 576, 64), values(dtype, 1, 4, 512, 64, seed=1)
    run(lambda c, p, k: c.index_copy(2, p, k), cache, torch.arange(512), keys)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_kv_cache_write_of_computed_transposed_keys_runs_on_the_card(dtype):
    # As HF writes them: the keys a projection's output viewed as heads,
    # transposed and scaled (rotary), so the gathered table is a computed,
    # permuted view; Inductor would fold it into the gather's load.
    cache, x = values(dtype, 1, 4, 576, 64), values(dtype, 1, 512, 4, 64, seed=1)
    run(lambda c, p, x: c.index_copy(2, p, x.transpose(1, 2) * 2), cache, torch.arange(512), x)


@pytest.mark.parametrize("positions", [[65], [2, 3, 4, 5, 6, 7, 8, 9]])
def test_kv_cache_write_moves_only_the_rows_written(positions):
    # A static cache's update in place (HF's index_copy_) is a row scatter:
    # a decode step's one position (or a prompt's few) moves those rows
    # through device memory, not the whole cache (8 sequences' 4 heads of
    # 66 positions, 270 KB).
    def write(cache, position, keys):
        cache.index_copy_(2, position, keys)

    cache = values(torch.float16, 8, 4, 66, 64)
    keys = values(torch.float16, 8, 4, len(positions), 64, seed=1)
    expected = as_card_holds(cache.clone())
    write(expected, torch.tensor(positions), as_card_holds(keys))
    torch._dynamo.reset()
    counters.reset()
    torch.compile(write, backend="spyre")(cache, torch.tensor(positions), keys)
    assert counters.fallbacks == {}
    torch.testing.assert_close(cache, expected, atol=0, rtol=0)
    rows = 8 * 4 * len(positions) * 64 * 2  # each row one stick of 128 bytes
    assert rows <= counters.bus_write_bytes <= rows + 1024  # and the computed indices
    assert counters.bus_read_bytes <= rows + 1024


def test_index_put_on_middle_dimensions_broadcasts_values():
    self = values(torch.float32, 2, 4, 5, 3)
    rows, cols = torch.tensor([[1], [3]]), torch.tensor([0, 4, 2])
    run(lambda s, r, c: s.index_put((torch.arange(2)[:, None, None], r, c),
                                    torch.tensor(9.0)), self, rows, cols)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add_copy_fill(dtype):
    self, src = values(dtype, 6, 4), values(dtype, 3, 4, seed=1)
    index = torch.tensor([4, 0, 4])
    run(lambda s, i, x: s.index_add(0, i, x, alpha=2), self, index, src,
        on_card=sums_on_card(dtype))
    # Rows scattered: int32 values move as they are.
    run(lambda s, i, x: s.index_copy(0, torch.tensor([4, 0, 2]), x), self, index, src)
    run(lambda s, i: s.index_fill(1, torch.tensor([3, 1]), -2), self, index)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_index_reduce(reduce, dtype):
    self, src = values(dtype, 3, 6), values(dtype, 3, 4, seed=1)
    index = torch.tensor([5, 0, 5, 2])
    for include_self in (True, False):
        run(lambda s, i, x: s.index_reduce(1, i, x, reduce, include_self=include_self),
            self, index, src, on_card=picks_on_card(dtype) if reduce in ("amax", "amin") else
            sums_on_card(dtype))


def test_put_and_masked_scatter():
    self, src = values(torch.float32, 3, 4), values(torch.float32, 5, seed=1)
    run(lambda s, i, x: s.put(i, x, accumulate=True), self, torch.tensor([0, 11, -1, 5, 0]), src)
    mask = torch.tensor([[True, False, True, False], [False] * 4, [True, True, False, True]])
    run(lambda s, m, x: s.masked_scatter(m, x), self, mask, values(torch.float32, 7, seed=2))


def test_max_unpool_round_trip():
    x = values(torch.float32, 2, 3, 8, 8)
    pooled, indices = F.max_pool2d(x, 2, return_indices=True)
    run(lambda p, i: F.max_unpool2d(p, i, 2), pooled, indices)


def test_scatter_beyond_the_budget_runs_on_the_cpu_counted(monkeypatch):
    monkeypatch.setattr(scatters, "MAX_COMPARISONS", 8)
    self, src = values(torch.float32, 3, 6), values(torch.float32, 3, 4, seed=1)
    run(lambda s, i, x: s.scatter_add(1, i, x), self, INDEX, src, on_card=False)


def test_where_between_booleans_and_between_int64_constants():
    # ranges.py bounds where() by its two choices: booleans (which it must
    # not unite as integers) and int64 constants (which it must).
    a, b = values(torch.float32, 4, 5), values(torch.float32, 4, 5, seed=1)
    run(lambda a, b: torch.where(a > b, a > 0, ~(b > 0)), a, b)
    index = torch.tensor([[0, 3, 1], [2, 2, 0]])
    run(lambda i, a: torch.where(i > 0, i, 7) + a.shape[0], index, a)


@pytest.mark.parametrize("reduce", ["max", "min", "sum", "mean", "prod"])
@pytest.mark.parametrize("initial", [None, 2.0])
def test_segment_reduce_with_empty_segments(reduce, initial):
    data = values(torch.float32, 5, 3)
    lengths, offsets = torch.tensor([2, 0, 3, 0]), torch.tensor([0, 2, 2, 5, 5])
    run(lambda d, n: torch.segment_reduce(d, reduce, lengths=n, initial=initial), data, lengths)
    run(lambda d, o: torch.segment_reduce(d, reduce, offsets=o, initial=initial), data, offsets)


def test_bilinear_on_the_vector_unit():
    x1, x2 = values(torch.float32, 4, 3), values(torch.float32, 4, 6, seed=1)
    weight, bias = values(torch.float32, 5, 3, 6, seed=2), values(torch.float32, 5, seed=3)
    run(lambda a, b, w, c: torch.nn.functional.bilinear(a, b, w, c), x1, x2, weight, bias)


@pytest.mark.parametrize("position", [66, -67])
def test_a_row_scatter_index_outside_the_table_raises(position):
    # As eager raises: the card's scatter refuses the index rather than
    # writing into the next head's rows (or before the table).
    def write(cache, position, keys):
        cache.index_copy_(2, position, keys)

    cache, keys = values(torch.float16, 1, 4, 66, 64), values(torch.float16, 1, 4, 1, 64, seed=1)
    with pytest.raises(IndexError):
        write(cache.clone(), torch.tensor([position]), keys)
    with torch.compiler.config.patch(force_disable_caches=True):
        torch._dynamo.reset()
        with pytest.raises(Exception, match="outside"):
            torch.compile(write, backend="spyre")(cache, torch.tensor([position]), keys)


def _scatters_writing(write, kernels, cache, start, rows):
    """Runs `write(cache, start, rows)` compiled, checks the cache against
    eager's write of the values the card holds (no CPU fallback), and
    returns the kernels' spyre.scatter lines."""
    expected = as_card_holds(cache.clone())
    write(expected, start, as_card_holds(rows))
    torch._dynamo.reset()
    counters.reset()
    torch.compile(write, backend="spyre")(cache, start, rows)
    assert counters.fallbacks == {}
    torch.testing.assert_close(cache, expected, atol=0, rtol=0)
    return [line for k in kernels for line in k.splitlines() if "spyre.scatter" in line]


def test_an_index_copy_at_start_plus_arange_spreads_over_cores(kernels):
    # transformers 5's static cache writes a prompt with index_copy_ at
    # arange(n) + cumulative_length. Inductor sends a negative position past
    # the cache's end (where the card refuses it, as eager does), so the
    # positions written still cannot repeat: they are cut into chunks over
    # the cores (unique_indices), not written by one core per head.
    def write(cache, start, keys):
        cache.index_copy_(2, torch.arange(keys.shape[2]) + start, keys)

    cache = values(torch.float16, 1, 4, 66, 64)
    keys = values(torch.float16, 1, 4, 9, 64, seed=1)
    scatters_ = _scatters_writing(write, kernels, cache, torch.tensor(3), keys)
    assert len(scatters_) == 1 and "unique_indices" in scatters_[0], scatters_
    with pytest.raises(Exception, match="outside"):
        torch.compile(write, backend="spyre")(cache, torch.tensor(-2), keys)


@pytest.mark.parametrize("step", [1, 2, -1])
def test_a_prompt_write_reads_the_projection_and_spreads_over_cores(kernels, step):
    # As HF's static cache writes a prompt: the keys a projection's output
    # [positions, heads, dim] viewed as heads, at positions start + step *
    # arange. The scatter reads the keys where the projection put them
    # (source_axis), and positions that cannot repeat are written from as
    # many cores as there are chunks of them (unique_indices). A step of -1
    # from position 7 wraps below 0 to the cache's end, as eager's index_put.
    def write(cache, start, x):
        positions = start + step * torch.arange(x.shape[1])
        cache[:, :, positions] = x.transpose(1, 2)

    cache = values(torch.float16, 1, 4, 66, 64)
    x, start = values(torch.float16, 1, 9, 4, 64, seed=1), torch.tensor([7 if step < 0 else 3])
    scatters_ = _scatters_writing(write, kernels, cache, start, x)
    assert len(scatters_) == 1 and "source_axis = 0" in scatters_[0] and \
        "unique_indices" in scatters_[0], scatters_
