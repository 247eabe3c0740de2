"""F.unfold and F.fold (aten.im2col, aten.col2im) with torch.compile(backend=
"spyre") against eager, with zero CPU fallbacks (folds.py: a window's taps
are strided slices of the padded image; fold adds each back on its phase of
the image). Unfold only moves elements: exact. Before, unfold compared an
arange index with every image position (a one-hot sum) and fold's
accumulating index_put ran on the CPU."""

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir import report
from spyre_mlir.inductor import counters, folds
from test_torch_scans_sorts import as_card_holds, check, compiled

DTYPES = [torch.float32, torch.float16]

WINDOWS = [
    dict(kernel_size=(9, 1), padding=(4, 0)),                    # ConvBERT's span convolution
    dict(kernel_size=3, padding=1, stride=2),
    dict(kernel_size=2, stride=2),                               # disjoint patches
    dict(kernel_size=(3, 2), padding=(1, 2), stride=(2, 3), dilation=(2, 1)),
    dict(kernel_size=(2, 3), padding=(0, 1), stride=(1, 2), dilation=(3, 1)),
]


def data(dtype, shape, seed=0):
    torch.manual_seed(seed)
    return torch.randn(*shape).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", WINDOWS)
def test_unfold(dtype, args):
    check(lambda x: F.unfold(x, **args), data(dtype, (2, 3, 11, 9)), exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", WINDOWS)
def test_fold(dtype, args):
    size = (11, 9)
    cols = F.unfold(data(torch.float32, (2, 3, *size)), **args)
    # Overlapping windows add up to kh * kw terms per pixel: eager's order
    # and the card's differ, so the sums match to rounding.
    check(lambda c: F.fold(c, output_size=size, **args), data(dtype, cols.shape, seed=1),
          depth=2)


def test_unbatched_inputs():
    x = data(torch.float32, (3, 8, 7))
    check(lambda x: F.unfold(x, 3, padding=1), x, exact=True)
    cols = data(torch.float32, (3 * 4, 4 * 3))
    check(lambda c: F.fold(c, (8, 7), 2, stride=2), cols)


def test_fold_of_unfold_counts_each_pixel_once_per_window():
    """fold(unfold(x)) multiplies each pixel by the windows that cover it:
    with 3 x 3 windows and padding 1 the corners are in 4, the middle in 9."""
    x = torch.ones(1, 2, 6, 5)
    out = compiled(lambda x: F.fold(F.unfold(x, 3, padding=1), (6, 5), 3, padding=1), x)
    assert out[0, 0, 0, 0] == 4 and out[0, 0, 0, 2] == 6 and out[0, 0, 2, 2] == 9
    torch.testing.assert_close(out, F.fold(F.unfold(x, 3, padding=1), (6, 5), 3, padding=1))


def test_unfold_moves_each_element_with_no_reduction():
    """ConvBERT's unfold (384 channels x 128 positions, a 9-tap window) as
    copies: the vector unit does about one operation per output element.
    Inductor's decomposition compared each output's arange index with the
    136 padded positions: ~136 per element (1 ms simulated)."""
    x = data(torch.float16, (1, 384, 128, 1))
    out = compiled(lambda x: F.unfold(x, (9, 1), padding=(4, 0)), x)
    expected = F.unfold(as_card_holds(x), (9, 1), padding=(4, 0))
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    vector_ops = sum(r.vector_ops for r in report.kernel_rows())
    assert vector_ops <= 4 * out.numel(), vector_ops


def test_fold_of_many_windows_runs_on_card():
    """Fold of ConvBERT's size: Inductor's accumulating index_put, a one-hot
    scatter too large for the card's budget, ran on the CPU."""
    cols = data(torch.float16, (1, 384 * 9, 128))
    out = compiled(lambda c: F.fold(c, (128, 1), (9, 1), padding=(4, 0)), cols)
    expected = F.fold(as_card_holds(cols).float(), (128, 1), (9, 1), padding=(4, 0))
    torch.testing.assert_close(out.float(), expected, rtol=1e-2, atol=1e-2)


def test_gradients_through_unfold_and_fold():
    """Each is the other's backward (AOTAutograd's graph has col2im for
    unfold and im2col for fold): both gradients exact in f32."""
    weights = data(torch.float32, (2, 27, 16), seed=1), data(torch.float32, (2, 3, 8, 8), seed=2)
    losses = (lambda x: (F.unfold(x, 3, padding=1, stride=2) * weights[0]).sum(),
              lambda c: (F.fold(c, (8, 8), 3, padding=1, stride=2) * weights[1]).sum())
    for loss, shape in zip(losses, ((2, 3, 8, 8), (2, 27, 16))):
        x = data(torch.float32, shape).requires_grad_()
        torch._dynamo.reset()
        counters.reset()
        expected = torch.autograd.grad(loss(x), x)[0]
        actual = torch.autograd.grad(torch.compile(loss, backend="spyre")(x), x)[0]
        assert dict(counters.fallbacks) == {}
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)


def test_too_many_taps_keep_inductors_decomposition():
    """Beyond folds.MAX_TAPS taps the slices would make one huge kernel:
    Inductor's own decomposition runs (still correct)."""
    side = 17
    assert side * side > folds.MAX_TAPS
    x = data(torch.float32, (1, 1, side + 1, side + 1))
    torch._dynamo.reset()
    out = torch.compile(lambda x: F.unfold(x, side), backend="spyre")(x)
    torch.testing.assert_close(out, F.unfold(x, side), rtol=0, atol=0)


@pytest.mark.parametrize("fn, shape, message", [
    (lambda c: F.fold(c, (4, 4), 2), (1, 12, 5), "expected"),      # 5 windows, not 9
    (lambda x: F.unfold(x, 3), (1, 1, 2, 2), "at least one"),  # no window fits
])
def test_bad_shapes_raise_as_eager(fn, shape, message):
    x = torch.randn(*shape)
    with pytest.raises(RuntimeError, match=message):
        fn(x)
    torch._dynamo.reset()
    with pytest.raises(Exception, match=message):
        torch.compile(fn, backend="spyre")(x)
