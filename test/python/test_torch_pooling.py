"""Max pooling with indices with torch.compile(backend="spyre") against
eager, with zero CPU fallbacks (pooling.py: the window unrolled over strided
slices of the input padded with -inf): values and int64 indices exact,
padding, dilation, ceil_mode, ties (first position), NaN (last NaN), windows
of -inf (their first position inside the input); windows beyond
pooling.MAX_WINDOW stay on the CPU, counted."""

import math

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import counters, pooling
from test_torch_scans_sorts import check as check_against_eager, compiled

NAN, INF = math.nan, math.inf


def check(fn, x):
    # Values and indices exact: pooling picks elements, it computes none.
    check_against_eager(fn, x, exact=True)


def data(dtype, shape, seed=0):
    torch.manual_seed(seed)
    x = torch.randn(*shape)
    flat = x.view(-1)
    flat[3] = NAN
    flat[7] = NAN  # two NaNs may share a window: eager reports the last
    flat[10:14] = 1.5  # ties: the first position
    flat[20:26] = -INF
    return x.to(dtype)


DTYPES = [torch.float32, torch.float16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(2, 1), ceil_mode=True),
    dict(kernel_size=2),
    dict(kernel_size=3, stride=3, padding=1, dilation=2, ceil_mode=True),
])
def test_max_pool2d(dtype, args):
    x = data(dtype, (2, 3, 9, 11))
    check(lambda x: F.max_pool2d(x, return_indices=True, **args), x)
    check(lambda x: F.max_pool2d(x, **args), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_pool1d_3d(dtype):
    check(lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True), data(dtype, (2, 4, 17)))
    x = data(dtype, (1, 2, 5, 6, 7))
    check(lambda x: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), True, True), x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(3, 5), stride=(2, 3), padding=(1, 2), dilation=(1, 2), ceil_mode=True),
])
def test_padding_read_from_the_rows_beside(dtype, args):
    """A window's positions in the last dimension's padding read the row
    before or after it in a strided view of the input (pooling.py), replaced
    by -inf: a NaN or an infinity at the end of the row beside never leaks
    into the window, and a region whose view would leave the input (the
    first and the last rows) reads a padded copy of its rows."""
    torch.manual_seed(1)
    x = torch.randn(2, 3, 12, 10)
    x[0, 1, 3, -1] = NAN  # read by row 4's left padding
    x[1, 2, 6, 0] = NAN  # read by row 5's right padding
    x[0, 0, 7, -1] = INF
    x[1, 0, 8, 0] = INF
    x[0, 2, 5, 4:8] = 2.5  # ties
    x = x.to(dtype)
    check(lambda x: F.max_pool2d(x, return_indices=True, **args), x)
    check(lambda x: F.max_pool2d(x, **args), x)


def test_windows_of_minus_infinity():
    """No element beats the initial -inf: eager reports each window's first
    position inside the input (not in the padding)."""
    x = torch.full((1, 2, 5, 6), -INF)
    check(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), x)


def test_backward():
    x = data(torch.float32, (2, 3, 8, 8))
    _, indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    grad = torch.randn(indices.shape)

    def fn(grad, x):
        return torch.ops.aten.max_pool2d_with_indices_backward(grad, x, [3, 3], [2, 2], [1, 1],
                                                               [1, 1], False, indices)
    actual = compiled(fn, grad, x)
    torch.testing.assert_close(actual, fn(grad, x))


def test_large_windows_stay_on_the_cpu():
    """Beyond pooling.MAX_WINDOW the unrolled window is not worth it: counted."""
    side = math.isqrt(pooling.MAX_WINDOW) + 1
    x = torch.randn(1, 1, 2 * side, 2 * side)
    torch._dynamo.reset()
    counters.reset()
    fn = lambda x: F.max_pool2d(x, side, return_indices=True)  # noqa: E731
    out = torch.compile(fn, backend="spyre")(x)
    assert all(torch.equal(a, e) for a, e in zip(out, fn(x)))
    assert counters.fallbacks


@pytest.mark.parametrize("output_size", [(5, 7, 4), (1, 1, 1), (3, 2, 8)])
def test_adaptive_avg_pool3d_windows_overlap_as_eager(output_size):
    from eager_compare import compiled_and_eager
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, 6, 7)
    actual, expected = compiled_and_eager(lambda x: F.adaptive_avg_pool3d(x, output_size), x)
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


def test_strided_windows_load_rows_not_elements():
    """A stride-2 window's slices read every other element: each row of a
    tile moves as one run over the gaps, not element by element (a stick or
    two per element: 145.3k cycles for this pool, now 29.6k)."""
    x = torch.randn(2, 16, 32, 32)
    check(lambda x: F.max_pool2d(x, 3, 2, 1), x)
    assert counters.simulated_cycles < 60_000


def test_a_stem_pool_reads_its_input_in_place():
    """ResNet's stem pool (3 x 3, stride 2, padding 1): the first output
    row's windows skip the row above the input (a region of its own), the
    others read the input itself, their left padding the row before, as
    -inf; only the first output row's two input rows are copied, padded.
    The value is one running maximum (nn.MaxPool2d needs no indices), so the
    window is one kernel phase, and its taps load one run per tile row of a
    channel (GenericPlan::shareRuns). Padding both dimensions took 82.9k
    cycles, the last one 52.0k; in place 28.3k; now 17.8k."""
    x = torch.randn(1, 32, 112, 112, dtype=torch.float16)
    check(lambda x: F.max_pool2d(x, 3, 2, 1), x)
    assert counters.simulated_cycles < 25_000


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape,kwargs", [
    ((2, 320, 2, 2), dict(kernel_size=320, ceil_mode=True)),  # EfficientNet's pooler
    ((2, 8, 7, 5), dict(kernel_size=(7, 5))),
    ((1, 4, 7, 7), dict(kernel_size=9, ceil_mode=True, divisor_override=3)),
    ((4, 7, 7), dict(kernel_size=16, ceil_mode=True, count_include_pad=False)),
])
def test_avg_pool_over_the_whole_plane_is_its_mean(dtype, shape, kwargs):
    # One window covering the plane (no padding): the mean of each plane, or
    # its sum over divisor_override, accumulated in f32 as eager does.
    # (test_torch_hf.py's EfficientNet: in that model its pooler ran on the
    # CPU; these calls alone ran on the card before too, and check values.)
    assert pooling._avg_applies(torch.empty(shape), **kwargs)
    check_against_eager(lambda x: F.avg_pool2d(x, **kwargs),
                        data(torch.float32, shape).nan_to_num(0.5).to(dtype), depth=49)
    assert dict(counters.fallbacks) == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape,kwargs", [
    ((1, 8, 14, 14), dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    ((2, 3, 12, 11), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 12, 11), dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True,
                          count_include_pad=False)),
    ((3, 13, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((1, 4, 9, 10), dict(kernel_size=3, stride=2, padding=1, divisor_override=2)),
    ((1, 4, 8, 8), dict(kernel_size=2)),
])
def test_avg_pool_windows_read_the_input_in_place(dtype, shape, kwargs):
    """A padded average pool as a max pool's windows (pooling.py): strided
    views of the input, the padding read as 0, summed in f32 in the window's
    order and divided by the CPU kernel's divisor (padding counted or not,
    windows past the input with ceil_mode, divisor_override), known when
    compiling. NaN and infinities beside a row's padding stay out of it."""
    x = data(torch.float32, shape)
    x[..., 3, -1] = NAN
    x[..., 4, 0] = INF
    check_against_eager(lambda x: F.avg_pool2d(x, **kwargs), x.to(dtype), depth=9)
    assert dict(counters.fallbacks) == {}


def test_a_strided_average_pool_reads_its_input_once():
    """ResNet-D's and Inception's 3 x 3 / 2 average pool over 64 x 56 x 56:
    through Inductor's masked loads, cut into nine pieces whose side
    columns were written an element per row, 42.5k cycles; its windows read
    in place, 15.4k."""
    x = torch.randn(1, 64, 56, 56, dtype=torch.float16)
    check_against_eager(lambda x: F.avg_pool2d(x, 3, 2, 1), x, depth=9)
    assert counters.simulated_cycles < 25_000


def test_a_stride_one_pool_reads_one_extended_copy():
    """PoolFormer's token mixer (3 x 3 / 1 average, padding not counted)
    over 64 x 56 x 56: its views read past the input's two ends, so they
    read a copy with those few elements added, one run per tile (a copy
    padded row by row, an element per row for its padding: 53.7k cycles;
    through Inductor's pieces 65.9k), their taps sharing one run per
    channel: 41.9k."""
    x = torch.randn(1, 64, 56, 56, dtype=torch.float16)
    check_against_eager(lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False), x, depth=9)
    assert counters.simulated_cycles < 48_000
