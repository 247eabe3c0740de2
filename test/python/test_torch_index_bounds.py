"""Indices outside their dimension raise as eager raises, and negative ones
count from the end exactly where eager counts them, on every path an index
takes to the card: a pick (each index compared with every position, which
would otherwise pick nothing), the card's row gather and scatter (which
refuse the index themselves) and the decompositions between them."""

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import counters

X = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))

#: name -> fn(x, i) with i = [0, v]; x is 4 x 6.
OPS = {
    "columns": lambda x, i: x[:, i],
    "rows": lambda x, i: x[i],
    "rows_and_columns": lambda x, i: x[i, i],
    "last_dimension_of_three": lambda x, i: x.reshape(2, 2, 6)[..., i],
    "gather": lambda x, i: x.gather(1, i.expand(4, 2)),
    "take": lambda x, i: x.take(i * 4),
    "index_select_rows": lambda x, i: x.index_select(0, i),
    "index_select_columns": lambda x, i: x.index_select(1, i),
    "scatter": lambda x, i: x.scatter(1, i.expand(4, 2), 1.0),
    "scatter_add": lambda x, i: x.scatter_add(1, i.expand(4, 2), torch.ones(4, 2)),
    "index_put_rows": lambda x, i: x.index_put((i,), torch.tensor(1.0)),
    "index_put_accumulate": lambda x, i: x.index_put((i,), torch.tensor(1.0), accumulate=True),
    "index_put_columns": lambda x, i: x.index_put((torch.arange(4)[:, None], i),
                                                  torch.tensor(1.0)),
    "index_add": lambda x, i: x.index_add(1, i, torch.ones(4, 2)),
    "index_copy": lambda x, i: x.index_copy(0, i, torch.ones(2, 6)),
    "index_fill": lambda x, i: x.index_fill(1, i, 2.0),
    "index_reduce": lambda x, i: x.index_reduce(1, i, torch.ones(4, 2), "amax"),
    "put": lambda x, i: x.put(i * 4, torch.ones(2)),
    "embedding": lambda x, i: F.embedding(i, x),
    "nll_loss": lambda x, i: F.nll_loss(x[:2], i),
    "max_unpool": lambda x, i: F.max_unpool1d(x[None, :2, :2], i.expand(2, 2)[None], 2),
}

#: 3 and 5 are inside some of the dimensions, 6 and -7 inside none, -1
#: inside all where negatives count.
VALUES = (3, 5, 6, -1, -7)


def _eager(fn, i):
    try:
        return fn(X, i), None
    except (IndexError, RuntimeError) as error:
        return None, error


def _as_eager(fn, i, errors, match):
    """fn(X, i) compiled raises (one of `errors`, matching `match`) where
    eager raises, else gives eager's result with nothing on the CPU."""
    expected, error = _eager(fn, i)
    with torch.compiler.config.patch(force_disable_caches=True):
        torch._dynamo.reset()
        counters.reset()
        compiled = torch.compile(fn, backend="spyre")
        if error is not None:
            with pytest.raises(errors, match=match):
                compiled(X, i)
            return
        actual = compiled(X, i)
    assert not counters.fallbacks, dict(counters.fallbacks)
    torch.testing.assert_close(actual, expected)


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_an_index_raises_or_counts_from_the_end_as_in_eager(name, value):
    # IndexError or RuntimeError (the simulator's SimulationError is one).
    _as_eager(OPS[name], torch.tensor([0, value]), (IndexError, RuntimeError), "out of|outside")


def test_the_checks_do_not_fall_back():
    # The range check is computed on the card; only its verdict is read on
    # the host, which is not a fallback.
    fn = OPS["columns"]
    with torch.compiler.config.patch(force_disable_caches=True):
        torch._dynamo.reset()
        counters.reset()
        torch.compile(fn, backend="spyre")(X, torch.tensor([0, 5]))
    assert not counters.fallbacks, dict(counters.fallbacks)
    assert counters.kernels_run > 0


@pytest.mark.parametrize("name, fn, args", [
    ("masked_scatter with too short a source",
     lambda x, m, s: x.masked_scatter(m, s), (X, X > 0, torch.ones(3))),
    ("segment_reduce with lengths past the data",
     lambda x, n: torch.segment_reduce(x, "sum", lengths=n), (X[0], torch.tensor([2, 5]))),
    ("segment_reduce with a negative length",
     lambda x, n: torch.segment_reduce(x, "sum", lengths=n), (X[0], torch.tensor([7, -1]))),
])
def test_positions_counted_on_the_card_raise_as_in_eager(name, fn, args):
    # Eager raises; the card's one-hot form would pick nothing (zeros).
    with pytest.raises(RuntimeError):
        fn(*args)
    with torch.compiler.config.patch(force_disable_caches=True):
        torch._dynamo.reset()
        with pytest.raises(RuntimeError, match="masked_scatter|segment_reduce"):
            torch.compile(fn, backend="spyre")(*args)


@pytest.mark.parametrize("value", VALUES)
def test_one_hot_runs_on_the_card_and_raises_as_eager(value):
    # Its decomposition asserts the classes' range with aten._assert_async,
    # which Inductor lowers to a device assert: the checks and their
    # comparisons ran on the CPU (counted) before they became host checks.
    _as_eager(lambda x, i: F.one_hot(i, 6) * x[:2], torch.tensor([0, value]), RuntimeError,
              "Class values must be")


def test_assert_async_is_checked_on_the_host_from_the_cards_condition():
    def fn(x):
        torch._assert_async((x > -10).all(), "a value at or below -10")
        return x * 2

    with torch.compiler.config.patch(force_disable_caches=True):
        torch._dynamo.reset()
        counters.reset()
        compiled = torch.compile(fn, backend="spyre")
        torch.testing.assert_close(compiled(X), X * 2)
        assert not counters.fallbacks, dict(counters.fallbacks)
        with pytest.raises(RuntimeError, match="a value at or below -10"):
            compiled(X - 20)
