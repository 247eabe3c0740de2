"""Indexing that is affine only piecewise (pieces.py) runs on the card:
reflection/replication padding, nearest and linear interpolation, padded
and adaptive pooling; against eager, fp32 and fp16, with zero fallbacks."""

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import counters

CASES = {
    "pad_reflect": lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"),
    "pad_replicate": lambda x: F.pad(x, (1, 2, 2, 1), mode="replicate"),
    "nearest_x2": lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
    "nearest_sized": lambda x: F.interpolate(x, size=(3, 7), mode="nearest"),
    "bilinear_x2": lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    # Padded pooling runs as pooling.py's windows (strided views of the
    # input), not as pieces; kept here as checks against eager: the divisor
    # counts the window inside the input (PoolFormer's pooling).
    "avg_pool_padded": lambda x: F.avg_pool2d(x, 3, 1, 1),
    "avg_pool_padding_not_counted": lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
    "avg_pool_ceil_not_counted": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                        count_include_pad=False),
    "max_pool_padded": lambda x: F.max_pool2d(x, 3, 1, 1),
    "adaptive_avg_pool": lambda x: F.adaptive_avg_pool2d(x, (3, 3)),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("name", sorted(CASES))
def test_piecewise_indexing_on_card(name, dtype):
    fn = CASES[name]
    x = torch.randn(1, 2, 4, 5, generator=torch.Generator().manual_seed(0)).to(dtype)
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(x)
    assert not counters.fallbacks, dict(counters.fallbacks)
    assert counters.kernels_run > 0
    expected = fn(x.float()).to(dtype)
    tol = 1e-5 if dtype == torch.float32 else 4e-3
    torch.testing.assert_close(actual, expected, rtol=tol, atol=tol)


def _rows_folded_in_two(x):
    # ConvBERT's dynamic convolution kernels: a projection's 18 columns (bias
    # added) viewed as two rows of 9 for a softmax; the bias is read at
    # (9 * row + column) mod 18, a modulus of two loops.
    weight, bias = x[0, :18, :], x[1, 0, :18]
    return torch.softmax(F.linear(x, weight, bias).reshape(-1, 9, 1), dim=1)


@pytest.mark.parametrize("fn", [lambda x: torch.fft.fftshift(x),
                                lambda x: torch.linalg.cross(x[:, :, :3], x[:, :, 1:], dim=2),
                                _rows_folded_in_two],
                         ids=["fftshift", "cross", "rows_folded_in_two"])
def test_modular_indexing_on_card(fn):
    shape = (3, 20, 32) if fn is _rows_folded_in_two else (1, 2, 4, 5)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(x)
    assert not counters.fallbacks, dict(counters.fallbacks)
    torch.testing.assert_close(actual, fn(x), rtol=1e-5, atol=1e-5)


# Row lookups whose rows are not one index buffer read in order: computed
# from several buffers, broadcast over a batch, or stored into part of a
# wider buffer. The rows are computed on the card and gathered, with
# eager's values exactly (a lookup copies rows).
def _counted_positions(ids, table):
    """M2M100's positions: a running count of the non-padding tokens."""
    mask = ids.ne(1).int()
    positions = (torch.cumsum(mask, dim=1).type_as(mask) + 0) * mask
    return table.index_select(0, (positions.long() + 1).view(-1)).view(*ids.shape, -1)


LOOKUPS = {
    "counted_positions": _counted_positions,
    # One token type for every token of the batch, from a one-row table.
    "one_row_table": lambda ids, t: F.embedding((ids[:1] % 1).expand_as(ids),
                                                t.amax(0, keepdim=True)),
    # CANINE's hash embeddings: each lookup fills a slice of the result.
    "into_slices": lambda ids, t: torch.cat([F.embedding(ids * 31 % 40, t),
                                             F.embedding((ids + 7) * 17 % 40, t)], -1),
}


@pytest.mark.parametrize("name", sorted(LOOKUPS))
def test_lookups_of_computed_rows_on_card(name):
    fn = LOOKUPS[name]
    g = torch.Generator().manual_seed(2)
    ids, table = torch.randint(0, 40, (3, 10), generator=g), torch.randn(40, 16, generator=g)
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(ids, table)
    assert not counters.fallbacks, dict(counters.fallbacks)
    assert torch.equal(actual, fn(ids, table))


def _routed(hidden, weights, order):
    """MoE routing (Qwen2-MoE, OLMoE, ...): the rows of the expert slots
    back in token order, each times its routing weight, both looked up at
    the slot's position; the inverse order is an index_put into an empty
    tensor, whose unwritten int64 garbage the lookup reads and discards."""
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel())
    return hidden[inverse] * weights[inverse].unsqueeze(-1)


def test_a_node_computing_on_looked_up_rows_runs_on_card():
    g = torch.Generator().manual_seed(3)
    hidden, weights = torch.randn(48, 64, generator=g), torch.rand(48, generator=g)
    order = torch.randperm(48, generator=g)
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(_routed, backend="spyre")(hidden, weights, order)
    assert not counters.fallbacks, dict(counters.fallbacks)
    assert torch.equal(actual, _routed(hidden, weights, order))


def test_a_table_read_through_a_view_at_computed_rows():
    # OLMoE's experts read their tokens from a (batch, seq, hidden) tensor
    # viewed as rows: Inductor indexes it at ModularIndexing(row, 1, rows),
    # which is the row itself since the lookup checks it is below `rows`.
    g = torch.Generator().manual_seed(4)
    x, order = torch.randn(2, 12, 64, generator=g), torch.randperm(48, generator=g)
    fn = lambda x, order: torch.sin(x).view(-1, 64)[order // 2] * 3  # noqa: E731
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(x, order)
    assert not counters.fallbacks, dict(counters.fallbacks)
    torch.testing.assert_close(actual, fn(x, order), rtol=1e-5, atol=1e-5)


def _interleaved_rotary(x, table, positions):
    """CodeGen's and GPT-J's rotary embedding: sin and cos looked up at the
    positions, each of their columns repeated twice."""
    sin, cos = torch.split(table[positions], table.shape[1] // 2, dim=-1)
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return x * cos + x.flip(-1) * sin


@pytest.mark.parametrize("positions", [1, 8])
def test_a_lookup_whose_columns_repeat_at_one_or_more_positions(positions):
    # At one position (a decode step) Inductor's node has one loop, over the
    # heads' columns: no rows to look up, its elements are gathered.
    g = torch.Generator().manual_seed(5)
    x, table = torch.randn(1, positions, 4, 16, generator=g), torch.randn(128, 16, generator=g)
    at = torch.arange(positions).unsqueeze(0) + 3
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(_interleaved_rotary, backend="spyre")(x, table, at)
    assert not counters.fallbacks, dict(counters.fallbacks)
    torch.testing.assert_close(actual, _interleaved_rotary(x, table, at), rtol=1e-5, atol=1e-5)


def _disentangled_scores(q, k, positions, mask):
    # DeBERTa's and SEW-D's relative attention: content-to-position and
    # position-to-content scores gathered at each pair's clamped distance,
    # added to the content scores in one node (two indirect indices).
    span = positions.shape[0] // 2
    s = q.shape[1]
    distance = torch.arange(s)[:, None] - torch.arange(s)[None, :]
    c2p = torch.clamp(distance + span, 0, 2 * span - 1).expand(q.shape[0], s, s)
    p2c = torch.clamp(-distance + span, 0, 2 * span - 1).expand(q.shape[0], s, s)
    scores = q @ k.transpose(-1, -2) + torch.gather(q @ positions.T, -1, c2p) + \
        torch.gather(k @ positions.T, -1, p2c).transpose(-1, -2)
    return torch.softmax((scores / 3.0).masked_fill(~mask, -1e4), dim=-1)


ELEMENT_GATHERS = {
    "last_dim": (lambda x, i: torch.gather(x, -1, i) + 1,
                 lambda g: (torch.randn(4, 6, generator=g), torch.randint(-6, 6, (4, 9), generator=g))),
    "dim_1_of_3": (lambda x, i: torch.gather(x, 1, i) * 2,
                   lambda g: (torch.randn(2, 5, 3, generator=g),
                              torch.randint(0, 5, (2, 7, 3), generator=g))),
    "disentangled_attention": (_disentangled_scores,
                               lambda g: (torch.randn(6, 12, 16, generator=g),
                                          torch.randn(6, 12, 16, generator=g),
                                          torch.randn(8, 16, generator=g),
                                          torch.rand(12, 12, generator=g) > 0.2)),
}


@pytest.mark.parametrize("name", sorted(ELEMENT_GATHERS))
def test_gathers_of_single_elements_beyond_the_pick_budget(name, monkeypatch):
    # Past MAX_PICK_COMPARISONS torch.gather stays an indirect load of one
    # element (SEW-D's relative attention at 79 tokens and 512 positions):
    # each element's position is computed and gathered on the card.
    from spyre_mlir.inductor import decompositions
    monkeypatch.setattr(decompositions, "MAX_PICK_COMPARISONS", 0)
    fn, make = ELEMENT_GATHERS[name]
    args = make(torch.Generator().manual_seed(5))
    if name == "last_dim":
        args = (args[0], args[1] % 6)
    with torch.compiler.config.patch(force_disable_caches=True):
        torch._dynamo.reset()
        counters.reset()
        actual = torch.compile(fn, backend="spyre")(*args)
    assert not counters.fallbacks, dict(counters.fallbacks)
    torch.testing.assert_close(actual, fn(*args), rtol=2e-3, atol=2e-3)


def test_a_gather_index_outside_its_dimension_raises(monkeypatch):
    # Position 7 of a row of 6 is the next row's second element in the
    # flattened table: the card must refuse it as eager does, not read it.
    from spyre_mlir.inductor import decompositions
    monkeypatch.setattr(decompositions, "MAX_PICK_COMPARISONS", 0)
    x, index = torch.randn(4, 6), torch.tensor([[0, 7], [1, 2], [3, 4], [5, 0]])
    with pytest.raises(RuntimeError):
        torch.gather(x, 1, index)
    with torch.compiler.config.patch(force_disable_caches=True):
        torch._dynamo.reset()
        with pytest.raises(Exception, match="outside"):
            torch.compile(lambda x, i: torch.gather(x, 1, i) + 1, backend="spyre")(x, index)


def _sinusoids_into_a_norm(x):
    # Pegasus-X's positions: halves of a table assigned in place, added to
    # the embeddings and normalized (the table's halves are slice scatters).
    n, d = x.shape[-2:]
    table = torch.zeros(n, d)
    angles = torch.arange(n).float()[:, None] * torch.exp(torch.arange(d // 2).float() * -0.3)
    table[:, :d // 2] = torch.sin(angles)
    table[:, d // 2:] = torch.cos(angles)
    return F.layer_norm(x + table, (d,))


def _a_mask_gathered(x, restore):
    # ViT-MAE: a mask of kept patches, assigned in place, then unshuffled.
    mask = torch.ones(x.shape[:2])
    mask[:, :3] = 0
    return torch.gather(mask, 1, restore) * x.sum(-1)


@pytest.mark.parametrize("fn", [_sinusoids_into_a_norm, _a_mask_gathered],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_slice_assignment_read_by_a_reduction_runs_on_card(fn):
    # Inlined into a reduction over the assigned dimension, the assignment
    # is an index affine only piecewise in the reduction loop; it is
    # computed into a buffer of its own first.
    g = torch.Generator().manual_seed(6)
    x = torch.randn(2, 10, 16, generator=g)
    args = (x,) if fn is _sinusoids_into_a_norm else \
        (x, torch.stack([torch.randperm(10, generator=g) for _ in range(2)]))
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(*args)
    assert not counters.fallbacks, dict(counters.fallbacks)
    torch.testing.assert_close(actual, fn(*args), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("pick,sliced", [
    (lambda x: x[:, :, [-2]], True),       # Falcon's key of its fused projection
    (lambda x: x[:, [3]], True),
    (lambda x: x[..., [[1]], :], True),    # any shape of index
    # Tracing keeps the values of one-element constants only: a pick.
    (lambda x: x[:, [0, 2, 4]], False),
], ids=["last_but_one", "one", "shaped", "three"])
def test_a_constant_index_that_steps_evenly_is_a_slice(pick, sliced, monkeypatch):
    # decompositions._evenly_stepping_constant: a slice reads the rows it
    # keeps; a pick compares every index with every position.
    from spyre_mlir.inductor import decompositions
    x = torch.randn(3, 6, 5, 64)

    def run():
        torch._dynamo.reset()
        counters.reset()
        actual = torch.compile(lambda x: pick(x) * 2, backend="spyre")(x)
        assert dict(counters.fallbacks) == {}
        torch.testing.assert_close(actual, pick(x) * 2, rtol=0, atol=0)
        return counters.simulated_cycles

    # Not from Inductor's caches, which would keep the first graph.
    with torch.compiler.config.patch(force_disable_caches=True):
        cycles = run()
        monkeypatch.setattr(decompositions, "_evenly_stepping_constant", lambda *args: None)
        assert (cycles < run()) == sliced


@pytest.mark.parametrize("name", ["expand", "repeat", "repeat_used_twice", "batch_dims",
                                  "not_along_rows"])
def test_a_gather_of_whole_rows_is_a_row_lookup(name):
    # decompositions._rows_gather: an index the same along the gathered rows
    # (expanded, or repeated as GPT-J writes it: repeated_indices.py) looks
    # rows up on the card's row gather instead of comparing every index with
    # every position; one used elsewhere too, or varying along the rows,
    # keeps the general gather.
    from spyre_mlir import report
    g = torch.Generator().manual_seed(0)
    table = torch.randn(2, 300, 24, generator=g)
    ids = torch.randint(0, 300, (2, 7), generator=g)
    fns = {
        "expand": lambda t, i: torch.gather(t, 1, i.unsqueeze(-1).expand(-1, -1, 24)),
        "repeat": lambda t, i: torch.gather(t, 1, i.unsqueeze(-1).repeat(1, 1, 24)),
        "repeat_used_twice": lambda t, i: (
            lambda r: torch.gather(t, 1, r) + r)(i.unsqueeze(-1).repeat(1, 1, 24)),
        "batch_dims": lambda t, i: torch.gather(t.reshape(2, 1, 300, 24), -2,
                                                i.reshape(2, 1, 7, 1).expand(2, 1, 7, 24)),
        "not_along_rows": lambda t, i: torch.gather(t, 1, i.unsqueeze(-1).expand(-1, -1, 24) +
                                                    torch.arange(24) % 2),
    }
    fn = fns[name]
    torch._dynamo.reset()
    counters.reset()
    with torch.compiler.config.patch(force_disable_caches=True):
        actual = torch.compile(fn, backend="spyre")(table, ids)
    assert dict(counters.fallbacks) == {}
    torch.testing.assert_close(actual, fn(table, ids), rtol=0, atol=0)
    ops = {op for row in report.kernel_rows(counters) for op in row.ops}
    assert ("aten.embedding.default" in ops) == (name in ("expand", "repeat", "batch_dims"))


def test_a_repeated_row_index_in_a_dynamic_graph_keeps_each_calls_positions():
    # The expand that replaces GPT-J's repeat wrote the positions' size as
    # the first call's: in a dynamic graph every later length raised
    # "expand: attempting to expand a dimension of length 17 -> 5".
    fn = lambda t, i: torch.gather(t, 1, i.unsqueeze(-1).repeat(1, 1, 24)) * 2  # noqa: E731
    table = torch.randn(2, 300, 24, generator=torch.Generator().manual_seed(1))
    torch._dynamo.reset()
    counters.reset()
    compiled = torch.compile(fn, backend="spyre", dynamic=True)
    for positions in (5, 17, 4):
        ids = torch.randint(0, 300, (2, positions), generator=torch.Generator().manual_seed(2))
        torch.testing.assert_close(compiled(table, ids), fn(table, ids), rtol=0, atol=0)
    assert dict(counters.fallbacks) == {}


def test_a_row_lookup_past_its_dimension_raises():
    # Batch 1's index 300 would be batch 2's first row in one flattened
    # table: each batch looks up its own rows, and the card refuses it.
    table, ids = torch.randn(2, 300, 24), torch.tensor([[3, 5], [300, 1]])
    fn = lambda t, i: torch.gather(t, 1, i.unsqueeze(-1).expand(-1, -1, 24)) + 1  # noqa: E731
    with pytest.raises(RuntimeError):
        fn(table, ids)
    with torch.compiler.config.patch(force_disable_caches=True):
        torch._dynamo.reset()
        with pytest.raises(Exception, match="outside"):
            torch.compile(fn, backend="spyre")(table, ids)
