"""A graph input the graph updates (a static KV cache's index_copy_) is
computed in place when the graph also reads its new value
(spyre_mlir.inductor.inplace_updates and the copy_ lowering it enables):
no buffer of its own and no copy back."""

import re

import pytest
import torch
import torch.nn.functional as F
from torch import fx

from spyre_mlir.inductor import counters
from spyre_mlir.inductor.inplace_updates import write_updates_in_place


def decode_step(cache, position, row, query):
    """A cache row written, then attention over the whole cache, as a static
    cache's decode step does."""
    cache.index_copy_(2, position, row)
    return F.scaled_dot_product_attention(query, cache, cache)


def _inputs():
    g = torch.Generator().manual_seed(0)
    cache = torch.randn(1, 4, 96, 64, generator=g).half()
    row = torch.randn(1, 4, 1, 64, generator=g).half()
    query = torch.randn(1, 4, 1, 64, generator=g).half()
    return cache, torch.tensor([37]), row, query


def projected_decode_step(cache, position, hidden, weight, query):
    """The row is computed in the graph, as a layer's k is (a projection of
    one token, rotated): when the update is lowered, the rotated row is a
    buffer whose layout is not fixed yet."""
    row = F.linear(hidden, weight).view(1, 4, 1, 64)
    angle = position.float() * 0.5 ** torch.arange(64, device=row.device).float()
    half = torch.cat((-row[..., 32:], row[..., :32]), -1)
    row = (row * angle.cos() + half * angle.sin()).half()
    return decode_step(cache, position, row, query)


@pytest.mark.parametrize("projected", [False, True])
def test_the_update_is_written_into_the_input(kernels, projected):
    cache, position, row, query = _inputs()
    step, args = decode_step, (position, row, query)
    if projected:
        g = torch.Generator().manual_seed(1)
        hidden = torch.randn(1, 128, generator=g).half()
        weight = (torch.randn(256, 128, generator=g) / 16).half()
        step, args = projected_decode_step, (position, hidden, weight, query)
    expected_cache = cache.clone()
    expected = step(expected_cache, *args)
    torch._dynamo.reset()
    counters.reset()
    out = torch.compile(step, backend="spyre")(cache, *args)
    torch.testing.assert_close(out, expected, atol=2e-3, rtol=2e-3)
    # Within DLFloat16's rounding: the card keeps fp16 as DLFloat16 (and a
    # projected row is a product's, rounded on the card).
    torch.testing.assert_close(cache, expected_cache, atol=2e-3 if projected else 1e-3,
                               rtol=2e-3)
    assert counters.fallbacks == {}
    # One kernel updates the cache, reading and writing the input buffer in
    # the same op (a row scatter reads the table it writes rows of); none
    # copies a buffer of the new cache into it afterwards. The cache by its
    # size (kernels may flatten it, or split its rows as a rotation's loops
    # do) and as a graph input.
    cache_input = r'(%arg\d+): !spyre.buffer<(?:24576|(?:1x)?4x96x(?:64|2x32))xf16> {spyre.name = "arg\d+_1"}'
    updates = [k for k in kernels if re.search(cache_input, k)]
    assert updates, kernels
    for k in updates:
        cache_arg = re.search(cache_input, k)[1]
        writers = re.findall(rf"(spyre\.scatter )?ins\(([^)]*)\) outs\({cache_arg} ", k)
        assert writers and all(scatter or cache_arg in ins.split(":")[0]
                               for scatter, ins in writers), k


def test_an_update_that_reads_other_elements_is_not_computed_in_place():
    # Element i reads element n - 1 - i: written in place, the later tiles
    # would read rows the earlier ones have already written.
    def mirrored(x):
        x.add_(x.flip(0))
    x = torch.randn(8192, 1024)
    expected = x.clone()
    mirrored(expected)
    torch._dynamo.reset()
    torch.compile(mirrored, backend="spyre")(x)
    torch.testing.assert_close(x, expected)


def _graph(late_reader: bool) -> tuple[fx.Graph, fx.Node]:
    """x updated to x + 1, read after the update by a mul; with
    `late_reader`, a node after the update also reads the old x."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    x.meta["val"] = torch.empty(4, 8)
    new = graph.call_function(torch.ops.aten.add.Tensor, (x, 1))
    new.meta["val"] = torch.empty(4, 8)
    reader = graph.call_function(torch.ops.aten.mul.Tensor, (new, 2))
    outputs = [reader]
    if late_reader:
        outputs.append(graph.call_function(torch.ops.aten.sub.Tensor, (x, 1)))
    copy = graph.call_function(torch.ops.aten.copy_.default, (x, new))
    graph.output(tuple(outputs))
    return graph, copy


def test_the_copy_moves_to_the_new_value_and_its_readers_read_the_input():
    graph, copy = _graph(late_reader=False)
    assert write_updates_in_place(graph) == 1
    nodes = list(graph.nodes)
    new = copy.args[1]
    assert nodes.index(copy) == nodes.index(new) + 1
    assert list(new.users) == [copy]
    assert [u.target for u in copy.users] == [torch.ops.aten.mul.Tensor]


def test_a_returned_new_value_stays_a_tensor_of_its_own():
    def update_and_return(x):
        y = x * 2 + 1
        x.copy_(y)
        return y.t()
    x = torch.randn(32, 64)
    expected_x = x.clone()
    expected = update_and_return(expected_x)
    torch._dynamo.reset()
    y = torch.compile(update_and_return, backend="spyre")(x)
    torch.testing.assert_close(y, expected)
    torch.testing.assert_close(x, expected_x)
    assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def test_an_old_value_read_after_the_update_keeps_the_copy_last():
    graph, copy = _graph(late_reader=True)
    before = [n.name for n in graph.nodes]
    assert write_updates_in_place(graph) == 0
    assert [n.name for n in graph.nodes] == before
    assert len(copy.args[1].users) == 2


def sliding_decode_step(keys, values, hidden, weight, query, kind):
    """A sliding window's cache update as transformers' SlidingWindowLayer
    writes it once the window is full (Gemma 2, Mistral): the cache rolled
    or otherwise computed into a new tensor, its last row set to the new
    token's key, copied into the cache, then attention over it. The row
    comes from a projection, as a layer's k does. `kind`: "rolled",
    "computed" (not from other elements), or "read_late" (the old cache is
    also read after the new one is computed, so the copy stays last)."""
    kv = F.linear(hidden, weight).view(2, 1, 2, 1, 16)
    rolled = kind == "rolled"
    new_keys = keys.roll(1, dims=-2) if rolled else keys - keys.mean(-1, keepdim=True)
    new_values = values.roll(1, dims=-2) if rolled else values * 0.5
    index = torch.tensor([-1])
    new_keys[:, :, index] = kv[0]
    new_values[:, :, index] = kv[1]
    old = keys.amax() if kind == "read_late" else 0
    keys.copy_(new_keys)
    values.copy_(new_values)
    return F.scaled_dot_product_attention(query, keys, values, enable_gqa=True) + old


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("kind", ["rolled", "computed", "read_late"])
def test_a_new_value_updated_after_it_is_computed_is_copied_into_the_input(dtype, kind):
    # A new value mutated (its row update) after it is computed is not
    # computed into the input: the attention, reading the input, would not
    # wait for the row update (Gemma 2's sliding-window decode logits off by
    # 0.2 of a 0.86 range), and rolled in place, rows would read rows already
    # shifted. Copied last, it is not a temporary of the kernel computing it
    # (the attention read a buffer that was never allocated: NameError).
    g = torch.Generator().manual_seed(0)
    keys, values = (torch.randn(1, 2, 8, 16, generator=g).to(dtype) for _ in range(2))
    hidden = torch.randn(1, 64, generator=g).to(dtype)
    weight = (torch.randn(64, 64, generator=g) / 8).to(dtype)
    query = torch.randn(1, 4, 1, 16, generator=g).to(dtype)
    expected_keys, expected_values = keys.clone(), values.clone()
    expected = sliding_decode_step(expected_keys, expected_values, hidden, weight, query, kind)
    torch._dynamo.reset()
    counters.reset()
    out = torch.compile(sliding_decode_step, backend="spyre")(keys, values, hidden, weight,
                                                              query, kind)
    assert counters.fallbacks == {}
    # Within the rounding of a product on the card (DLFloat16 operands).
    torch.testing.assert_close(keys, expected_keys, atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(values, expected_values, atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(out, expected, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_inputs_swapped_through_a_computed_value_keep_their_old_values(dtype):
    # a's new value (from c) was computed into a before c's copy of the old
    # a read it: c came back holding the new a.
    def swap(a, c):
        tmp = c * 2
        c.copy_(a)
        a.copy_(tmp)

    g = torch.Generator().manual_seed(0)
    a, c = (torch.randn(3, 4, generator=g).to(dtype) for _ in range(2))
    expected_a, expected_c = a.clone(), c.clone()
    swap(expected_a, expected_c)
    torch._dynamo.reset()
    counters.reset()
    torch.compile(swap, backend="spyre")(a, c)
    assert counters.fallbacks == {}
    torch.testing.assert_close(a, expected_a, atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(c, expected_c, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_an_update_read_after_the_product_that_replaces_its_input(dtype):
    # a's index_copy_ result is read after a is replaced by a product of it:
    # with a's final copy moved to the product, Inductor's reinplacing (after
    # our pass) computed the index_copy_ into a, and b's copy of it came back
    # as the product (2.4x its range wrong). Plain Inductor is right.
    def fn(a, b, index, w):
        b.add_(a)
        a.index_copy_(0, index, b[[2, 1, 3, 5, 6, 7]])
        b.copy_(a @ w)
        head = b.view(-1)[:3]
        product = b.clone()
        b.copy_(a)
        a.copy_(product)
        return head, a.sum()

    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(8, 4, generator=g).to(dtype) for _ in range(2))
    w = (torch.randn(4, 4, generator=g) / 2).to(dtype)
    index = torch.tensor([1, 3, 2, 4, 6, 5])
    expected_a, expected_b = a.clone(), b.clone()
    expected = fn(expected_a, expected_b, index, w)
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(a, b, index, w)
    assert counters.fallbacks == {}
    # Within the rounding of a product on the card (DLFloat16 operands).
    for x, y in ((actual[0], expected[0]), (a, expected_a), (b, expected_b)):
        torch.testing.assert_close(x, y, atol=3e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("shape,dim", [((4, 8), 0), ((1, 2, 8, 16), 2)])
def test_a_part_written_then_the_whole_updated_keeps_the_rest(dtype, shape, dim):
    # One kernel fills a row (its index a constant of the graph), then
    # updates the whole tensor: the input's buffer was taken for an output
    # (written before read), whose content on entry a 16-bit tensor's
    # conversion skips, so the other rows read 0.
    def fn(x):
        x.index_fill_(dim, torch.tensor([1]), 5.0)
        x.add_(1)

    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0)).to(dtype)
    expected = x.clone()
    fn(expected)
    torch._dynamo.reset()
    counters.reset()
    torch.compile(fn, backend="spyre")(x)
    assert counters.fallbacks == {}
    torch.testing.assert_close(x, expected, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_an_update_reading_its_input_waits_for_the_inputs_other_readers(dtype):
    # c.add_(a) with a holding c's old value is c + c, computed into c;
    # b * 2 + a also reads c's old value, and was computed after c's update
    # (a off by 40% of its range; with a product, b @ w + a, too).
    def fn(a, b, c):
        b.copy_(c.clone())
        old_b = b.clone()
        b.copy_(a)
        a.copy_(old_b)
        c.add_(a)
        a.copy_(b * 2 + a)

    g = torch.Generator().manual_seed(0)
    a, b, c = (torch.randn(2, 3, generator=g).to(dtype) for _ in range(3))
    expected = [t.clone() for t in (a, b, c)]
    fn(*expected)
    torch._dynamo.reset()
    counters.reset()
    torch.compile(fn, backend="spyre")(a, b, c)
    assert counters.fallbacks == {}
    for actual, wanted in zip((a, b, c), expected):
        torch.testing.assert_close(actual, wanted, atol=1e-2, rtol=1e-2)
