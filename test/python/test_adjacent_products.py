"""Products of one input placed together in the post-grad graph
(spyre_mlir.inductor.adjacent_products), so that the scheduler runs them
side by side: what moves, what must not, and that the program computes the
same values."""

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from spyre_mlir.inductor.adjacent_products import place_products_together

mm = torch.ops.aten.mm.default


def _products(gm):
    return [n.name for n in gm.graph.nodes if n.target is mm]


def _position(gm, name):
    return [n.name for n in gm.graph.nodes].index(name)


def _graph(fn, *args):
    return make_fx(fn, tracing_mode="fake")(*args)


X, WK, WV, WQ = torch.randn(8, 16), torch.randn(4, 16), torch.randn(4, 16), torch.randn(6, 16)


def key_value(x, wk, wv):
    # Each projection reshapes x itself; the key's consumer comes between.
    k = x.reshape(8, 16) @ wk.t()
    rotated = k.sin() * 2
    v = x.reshape(8, 16) @ wv.t()
    return rotated, v


def test_the_second_product_moves_next_to_the_first():
    gm = _graph(key_value, X, WK, WV)
    first, second = _products(gm)
    assert _position(gm, second) > _position(gm, first) + 1
    assert place_products_together(gm.graph) == 1
    gm.recompile()
    # Only the views it reads (of x, of its weight) come between.
    nodes = list(gm.graph.nodes)
    between = nodes[_position(gm, first) + 1:_position(gm, second)]
    assert {n.target for n in between} <= {torch.ops.aten.view.default, torch.ops.aten.t.default}
    for actual, expected in zip(gm(X, WK, WV), key_value(X, WK, WV)):
        torch.testing.assert_close(actual, expected)


def test_products_that_cannot_share_tiles_stay():
    def other_shapes(x, wk, wq):  # a query projection's columns differ
        k = x @ wk.t()
        s = k.sin()
        q = x @ wq.t()
        return s, q

    def reads_the_first(x, wk, wv):  # the second reads what the first's consumer made
        k = x @ wk.t()
        w = wv + k.sum()
        return x @ w.t()

    def other_inputs(x, wk, wv):
        k = x @ wk.t()
        s = k.sin()
        return s, (x + 1) @ wv.t()

    for fn, args in ((other_shapes, (X, WK, WQ)), (reads_the_first, (X, WK, WV)),
                     (other_inputs, (X, WK, WV))):
        gm = _graph(fn, *args)
        before = [n.name for n in gm.graph.nodes]
        assert place_products_together(gm.graph) == 0, fn.__name__
        assert [n.name for n in gm.graph.nodes] == before


def test_a_product_does_not_move_before_a_write_to_its_weight():
    def updated_weight(x, wk, wv):
        wvt = wv.t()  # a view taken before the update, read after it
        k = x @ wk.t()
        wv.add_(1)
        return k.sin(), x @ wvt

    gm = make_fx(updated_weight, tracing_mode="fake")(X, WK, WV.clone())
    before = [n.name for n in gm.graph.nodes]
    assert any(n.target is torch.ops.aten.add_.Tensor for n in gm.graph.nodes)
    assert place_products_together(gm.graph) == 0
    assert [n.name for n in gm.graph.nodes] == before
