"""F.linear_cross_entropy's chunked path (losses.py) with
torch.compile(backend="spyre") against eager: every argument, every
chunk size, ignored rows, NaN, the precomputed gradients."""

import functools
import math

import pytest
import torch
import torch.nn.functional as F

from eager_compare import compiled_and_eager

# allow_retain_graph: otherwise the scalar path warns under torch.compile,
# a graph break before the op.
Options = functools.partial(torch.nn.LinearCrossEntropyOptions, allow_retain_graph=True)
ops = torch.ops.torch_nn

# The logits come from the matrix unit, which rounds its operands to
# DLFloat16 (9 fraction bits).
CLOSE = dict(atol=2e-2, rtol=2e-2, equal_nan=True)


def run(fn, *args, on_card=True):
    actual, expected = compiled_and_eager(fn, *args, on_card=on_card)
    torch.testing.assert_close(actual, expected, **CLOSE)
    return actual, expected


def _inputs(n=7, features=5, classes=6, seed=0):
    torch.manual_seed(seed)
    return torch.randn(n, features), torch.randn(classes, features), \
        torch.randint(0, classes, (n,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [1, 3, 100])
def test_every_reduction_and_chunk_size(reduction, chunk):
    x, w, t = _inputs()
    bias, weight = torch.randn(6), torch.rand(6) + 0.5
    t[2] = 1
    options = Options(batch_chunk_size=chunk)
    for kwargs in ({}, dict(linear_bias=bias), dict(weight=weight),
                   dict(linear_bias=bias, weight=weight, ignore_index=1)):
        run(lambda x, w, t: F.linear_cross_entropy(x, w, t, reduction=reduction,
                                                   options=options, **kwargs), x, w, t)


def test_ignored_rows_and_ignore_index_outside_the_classes():
    x, w, t = _inputs()
    t[0], t[3] = -100, -100
    for reduction in ("mean", "sum", "none"):
        actual, _ = run(lambda x, w, t: F.linear_cross_entropy(
            x, w, t, reduction=reduction, options=Options(batch_chunk_size=2)), x, w, t)
    assert actual[0] == 0 and actual[3] == 0
    t[0], t[3] = 9, 9
    run(lambda x, w, t: F.linear_cross_entropy(x, w, t, ignore_index=9,
                                               options=Options(batch_chunk_size=2)), x, w, t)


def test_every_row_ignored_or_weights_summing_to_zero_is_nan_for_mean():
    x, w, t = _inputs()
    every = torch.full_like(t, -100)
    actual, _ = run(lambda x, w, t: F.linear_cross_entropy(x, w, t, options=Options()),
                    x, w, every)
    assert math.isnan(actual)
    actual, _ = run(lambda x, w, t: F.linear_cross_entropy(x, w, t, reduction="sum",
                                                           options=Options()), x, w, every)
    assert actual == 0
    # Weights of opposite signs summing to 0: NaN, not a division by zero.
    weight = torch.tensor([3.0, -4.0, 1.0, 1.0, 1.0, 1.0])
    t = torch.tensor([0, 0, 0, 0, 1, 1, 1])  # 4 * 3 - 3 * 4 = 0
    actual, _ = run(lambda x, w, t, c: F.linear_cross_entropy(x, w, t, weight=c,
                                                              options=Options()),
                    x, w, t, weight)
    assert math.isnan(actual)


def test_nan_in_an_ignored_row_propagates_as_in_eager():
    x, w, t = _inputs()
    x[4, 0] = math.nan
    t[4] = -100
    for reduction in ("mean", "sum", "none"):
        actual, expected = run(lambda x, w, t: F.linear_cross_entropy(
            x, w, t, reduction=reduction, options=Options(batch_chunk_size=2)), x, w, t)
        assert torch.isnan(expected).any()


def test_precomputed_gradients():
    x, w, t = _inputs()
    bias, weight = torch.randn(6), torch.rand(6) + 0.5
    t[1] = 2
    for reduction in ("mean", "sum"):
        run(lambda x, w, t, b, c: ops._linear_cross_entropy_batch_chunked(
            x, w, t, b, c, reduction, 2, 0.0, 3, "balanced", torch.float32, True,
            True, True, True), x, w, t, bias, weight)
        # Gradients not asked for are empty, as eager's.
        actual, _ = run(lambda x, w, t: ops._linear_cross_entropy_batch_chunked(
            x, w, t, None, None, reduction, -100, 0.0, 3, "balanced", torch.float32, True,
            False, False, False), x, w, t)
        assert [g.shape for g in actual[1:]] == [(0, 0), (0, 0), (0,)]


def test_float16_accumulated_in_float32():
    x, w, t = _inputs()
    x, w = x.half(), w.half()
    for reduction in ("mean", "none"):
        run(lambda x, w, t: F.linear_cross_entropy(
            x, w, t, reduction=reduction, options=Options(acc_dtype=torch.float32)), x, w, t)


def test_arguments_eager_refuses_raise_as_in_eager():
    x, w, t = _inputs()
    for args in ((0.1, "balanced"), (0.0, "auto")):  # label smoothing, unresolved policy
        def fn(x, w, t):
            return ops._linear_cross_entropy_batch_chunked(
                x, w, t, None, None, "mean", -100, args[0], 3, args[1], torch.float32, True,
                False, False, False)
        with pytest.raises((NotImplementedError, RuntimeError)):
            fn(x, w, t)
        with pytest.raises(Exception):
            torch._dynamo.reset()
            torch.compile(fn, backend="spyre")(x, w, t)
