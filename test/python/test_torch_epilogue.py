"""Matmul epilogues (issue 13): the elementwise node that consumes a product
(bias, activation, residual add, scale, cast) runs on the product's output
tiles in LX (spyre-fuse-epilogue), in the same kernel, against eager."""

import pytest
import torch
import torch.nn.functional as F

from eager_compare import compiled_and_eager
from spyre_mlir.inductor import counters
from spyre_mlir.models import rotate_half
from test_torch_ops import rand, tolerance

# Not multiples of the tile (or of a stick) in any dimension.
M, K, N = 100, 72, 136



def _linear(x, w, b):  # W stored as nn.Linear stores it, N x K
    return F.linear(x, w, b)


CASES = {
    "linear+bias+gelu": (lambda x, w, b: F.gelu(_linear(x, w, b)), "linear"),
    "linear+bias+gelu_tanh": (lambda x, w, b: F.gelu(_linear(x, w, b), approximate="tanh"),
                              "linear"),
    "linear+bias+silu": (lambda x, w, b: F.silu(_linear(x, w, b)), "linear"),
    "linear+bias+relu": (lambda x, w, b: F.relu(_linear(x, w, b)), "linear"),
    "linear+bias": (_linear, "linear"),
    "x@W+bias, gelu": (lambda x, w, b: F.gelu(x @ w + b), "plain"),
    "residual add": (lambda x, w, r: x @ w.T + r, "residual"),
    "scale": (lambda x, w, r: (x @ w.T) * 0.125, "residual"),
    # f16 products to f32, f32 ones to f16.
    "cast": (lambda x, w, r: (x @ w.T).to(torch.float32 if x.dtype == torch.float16
                                          else torch.float16), "residual"),
    "bias, relu, residual": (lambda x, w, b, r: F.relu(_linear(x, w, b)) + r, "both"),
}


def _inputs(kind, dtype):
    x, w = rand(M, K, dtype=dtype) / 4, rand(N, K, dtype=dtype) / 4
    if kind == "plain":
        return x, w.T.contiguous(), rand(N, dtype=dtype)
    if kind == "linear":
        return x, w, rand(N, dtype=dtype)
    if kind == "residual":
        return x, w, rand(M, N, dtype=dtype)
    return x, w, rand(N, dtype=dtype), rand(M, N, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("name", CASES)
def test_epilogue_runs_in_the_product_kernel(name, dtype, kernels):
    fn, kind = CASES[name]
    inputs = _inputs(kind, dtype)
    actual, expected = compiled_and_eager(fn, *inputs)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    # The 16-bit product is rounded once less than in eager (the epilogue
    # reads the f32 accumulator): within the tolerance of a sum of K terms.
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(torch.float16, K))
    # One kernel: the product and its epilogue, grouped by the C++ pipeline.
    assert counters.kernels_run == 1, kernels
    assert "spyre.matmul" in kernels[0] and "spyre.generic" in kernels[0]


def test_one_kernel_fewer_and_faster_than_two():
    # 512 x 256 x 512, bias + GELU: the product no longer round-trips device
    # memory. The same graph with the product also returned (read after
    # the kernel) cannot fuse: two kernels, as before.
    x, w, b = rand(512, 256, dtype=torch.float16) / 4, rand(512, 256, dtype=torch.float16) / 4, \
        rand(512, dtype=torch.float16)
    fused, expected = compiled_and_eager(lambda x, w, b: F.gelu(F.linear(x, w, b)), x, w, b)
    fused_cycles, fused_kernels = counters.simulated_cycles, counters.kernels_run
    torch.testing.assert_close(fused.float(), expected.float(),
                               **tolerance(torch.float16, 256))
    (both, product), _ = compiled_and_eager(
        lambda x, w, b: (F.gelu(F.linear(x, w, b)), x @ w.T), x, w, b)
    assert fused_kernels == 1 and counters.kernels_run == 2
    torch.testing.assert_close(both, fused)
    assert fused_cycles < counters.simulated_cycles


def test_batched_linear_keeps_its_epilogue():
    # nn.Linear over (batch, tokens, features): Inductor multiplies the
    # flattened rows; the epilogue reads the product row by row.
    layer = torch.nn.Linear(72, 136).half()
    x = rand(3, 20, 72, dtype=torch.float16) / 4
    actual, expected = compiled_and_eager(lambda x: F.silu(layer(x)), x)
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(torch.float16, 72))
    assert counters.kernels_run == 1


def test_the_epilogue_does_not_hold_up_the_next_operands():
    # GPT-2's MLP up projection at 512 tokens, with its GELU: the SFU works
    # on a tile's epilogue while the PT runs the next steps, whose operand
    # loads wait for the product only, not for the epilogue (and go ahead of
    # the tile's store). When they queued behind the store, which waits for
    # the epilogue, the GELU cost 21% on top of the product (111.1 against
    # 91.9 us); it costs 7.5% now. Simulated cycles: deterministic.
    x, w = rand(512, 768, dtype=torch.float16) / 4, rand(3072, 768, dtype=torch.float16) / 4
    cycles = {}
    for name, fn in [("product", lambda x, w: x @ w.T),
                     ("gelu", lambda x, w: F.gelu(x @ w.T))]:
        actual, expected = compiled_and_eager(fn, x, w)
        torch.testing.assert_close(actual.float(), expected.float(),
                                   **tolerance(torch.float16, 768))
        assert counters.kernels_run == 1
        cycles[name] = counters.simulated_cycles
    assert cycles["gelu"] <= 1.12 * cycles["product"], cycles


@pytest.mark.parametrize("name", ["linear", "linear+bias+silu", "residual add", "x@W+bias, gelu"])
def test_a_decode_steps_last_columns_come_in_two_halves(name):
    # One row against a 4096 x 1024 weight: the loads pace every core, so
    # its last step loads, multiplies and finishes (epilogue, conversion)
    # its tile's columns in two halves (MatmulPlan::splitsColumns; the
    # weight as nn.Linear stores it is split anywhere, x @ W by sticks):
    # each half's values land in their own columns.
    fn, kind = (lambda x, w, b: F.linear(x, w), "linear") if name == "linear" else CASES[name]
    k, n = 1024, 4096
    x, w = rand(1, k, dtype=torch.float16) / 4, rand(n, k, dtype=torch.float16) / 4
    third = {"linear": rand(n, dtype=torch.float16), "plain": rand(n, dtype=torch.float16),
             "residual": rand(1, n, dtype=torch.float16)}[kind]
    actual, expected = compiled_and_eager(fn, x, w.T.contiguous() if kind == "plain" else w, third)
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(torch.float16, k))
    assert counters.kernels_run == 1


# A gated MLP's gate and up projections read the same x; their epilogue,
# silu(gate) * up, reads both. The card computes both products on each
# output tile (one kernel, the lhs loaded once for both), and neither
# product reaches device memory.
def _input_and_weights(rows, dtype, linear):
    """x (rows x K) and two weights, stored as nn.Linear stores them (N x K)
    or, for x @ W, K x N."""
    x = rand(rows, K, dtype=dtype) / 4
    w1, w2 = (rand(N, K, dtype=dtype) / 4 for _ in range(2))
    if not linear:
        w1, w2 = w1.T.contiguous(), w2.T.contiguous()
    return x, w1, w2


GATED = {
    "silu, linear": (lambda x, wg, wu: F.silu(F.linear(x, wg)) * F.linear(x, wu), True),
    "gelu, linear": (lambda x, wg, wu: F.gelu(F.linear(x, wg)) * F.linear(x, wu), True),
    "silu, x@W": (lambda x, wg, wu: F.silu(x @ wg) * (x @ wu), False),
}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("name", GATED)
def test_gated_products_share_one_kernel(name, dtype, kernels):
    fn, linear = GATED[name]
    actual, expected = compiled_and_eager(fn, *_input_and_weights(M, dtype, linear))
    assert actual.dtype == expected.dtype
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(torch.float16, K))
    assert counters.kernels_run == 1, kernels
    assert kernels[0].count("spyre.matmul") == 2 and "spyre.generic" in kernels[0]
    assert not counters.fallbacks


def test_gated_mlp_moves_less_and_runs_faster():
    # Llama's MLP, down(silu(gate(x)) * up(x)), at 256 tokens: the gate's
    # product no longer goes to device memory and back, and x is read once
    # for both products. Against the same graph with the gate's product also
    # returned (so it must be stored): one kernel fewer, fewer bytes.
    torch.manual_seed(0)
    x = rand(256, 512, dtype=torch.float16) / 4
    wg, wu = (rand(1024, 512, dtype=torch.float16) / 8 for _ in range(2))
    wd = rand(512, 1024, dtype=torch.float16) / 8

    def mlp(x, wg, wu, wd):
        return F.linear(F.silu(F.linear(x, wg)) * F.linear(x, wu), wd)

    fused, expected = compiled_and_eager(mlp, x, wg, wu, wd)
    fused_counts = (counters.kernels_run, counters.simulated_cycles, counters.bus_read_bytes +
                    counters.bus_write_bytes)
    torch.testing.assert_close(fused.float(), expected.float(), **tolerance(torch.float16, 1024))
    (apart, gate), _ = compiled_and_eager(
        lambda x, wg, wu, wd: (mlp(x, wg, wu, wd), F.linear(x, wg)), x, wg, wu, wd)
    torch.testing.assert_close(apart, fused)
    assert fused_counts[0] == 2 and counters.kernels_run == 3
    assert fused_counts[2] < counters.bus_read_bytes + counters.bus_write_bytes
    assert fused_counts[1] < counters.simulated_cycles


def test_products_of_different_inputs_stay_apart(kernels):
    # silu(x @ Wg) * (y @ Wu): no shared lhs, so the gate's product is its own
    # kernel and the up projection takes the epilogue, as before.
    x, y = rand(M, K, dtype=torch.float16) / 4, rand(M, K, dtype=torch.float16) / 4
    wg, wu = (rand(N, K, dtype=torch.float16) / 4 for _ in range(2))
    actual, expected = compiled_and_eager(
        lambda x, y, wg, wu: F.silu(F.linear(x, wg)) * F.linear(y, wu), x, y, wg, wu)
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(torch.float16, K))
    assert counters.kernels_run == 2
    assert [k.count("spyre.matmul") for k in kernels] == [1, 1]


@pytest.mark.parametrize("name", GATED)
def test_a_gated_decode_step_keeps_its_column_halves(name):
    # One row against two 4096 x 1024 weights: as for one product, the last
    # step of each core finishes its columns in two halves; each half loads
    # and multiplies its columns of both weights (an instruction each), and
    # the epilogue combines the halves' own columns.
    fn, linear = GATED[name]
    x = rand(1, 1024, dtype=torch.float16) / 4
    wg, wu = (rand(4096, 1024, dtype=torch.float16) / 4 for _ in range(2))
    if not linear:
        wg, wu = wg.T.contiguous(), wu.T.contiguous()
    actual, expected = compiled_and_eager(fn, x, wg, wu)
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(torch.float16, 1024))
    assert counters.kernels_run == 1


# A layer's key and value projections read the same x and are returned (to
# the attention and the cache): no epilogue, two outputs. The card computes
# both on each output tile and stores each, loading x once.
SIDE_BY_SIDE = {
    "linear": (lambda x, wk, wv: (F.linear(x, wk), F.linear(x, wv)), True),
    "x@W": (lambda x, wk, wv: (x @ wk, x @ wv), False),
}


@pytest.mark.parametrize("rows", [M, 1])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("name", SIDE_BY_SIDE)
def test_products_of_one_input_run_side_by_side(name, dtype, rows, kernels):
    fn, linear = SIDE_BY_SIDE[name]
    actual, expected = compiled_and_eager(fn, *_input_and_weights(rows, dtype, linear))
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype
        torch.testing.assert_close(a.float(), e.float(), **tolerance(dtype, K))
    assert counters.kernels_run == 1, kernels
    assert kernels[0].count("spyre.matmul") == 2
    assert not counters.fallbacks


def test_side_by_side_products_read_their_input_once():
    # 256 tokens, two 128 x 1024 projections (a GQA layer's key and value):
    # against the same products of two different inputs, which cannot share.
    torch.manual_seed(0)
    x, y = (rand(256, 1024, dtype=torch.float16) / 4 for _ in range(2))
    wk, wv = (rand(128, 1024, dtype=torch.float16) / 8 for _ in range(2))
    (k, v), (ek, ev) = compiled_and_eager(
        lambda x, wk, wv: (F.linear(x, wk), F.linear(x, wv)), x, wk, wv)
    shared = (counters.kernels_run, counters.bus_read_bytes, counters.simulated_cycles)
    torch.testing.assert_close(k, ek, **tolerance(torch.float16, 1024))
    torch.testing.assert_close(v, ev, **tolerance(torch.float16, 1024))
    compiled_and_eager(lambda x, y, wk, wv: (F.linear(x, wk), F.linear(y, wv)), x, y, wk, wv)
    assert shared[0] == 1 and counters.kernels_run == 2
    # x once (512 KB) instead of x and y, and the weights: 512 KB less.
    assert counters.bus_read_bytes - shared[1] >= x.numel() * x.element_size()
    assert shared[2] < counters.simulated_cycles


def _rotated_query_and_key(x, wq, wk, cos, sin):
    b, t, _ = x.shape
    q = (x @ wq.T).view(b, t, 4, -1).transpose(1, 2)
    k = (x @ wk.T).view(b, t, 2, -1).transpose(1, 2)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("tokens", [64, 1])
def test_a_rotary_embedding_runs_on_its_products_tiles(tokens, dtype, kernels):
    # A query and a key projection (4 and 2 heads of 64) and their rotary
    # embeddings: Inductor puts the query's rotation after the key's product;
    # the scheduler holds the query's product for it, and each rotation runs
    # on its product's output tiles (an epilogue over rows, heads, halves
    # and elements). A decode step's one row too.
    x = rand(1, tokens, 96, dtype=dtype) / 4
    wq, wk = rand(256, 96, dtype=dtype) / 4, rand(128, 96, dtype=dtype) / 4
    cos, sin = rand(tokens, 64, dtype=dtype), rand(tokens, 64, dtype=dtype)
    actual, expected = compiled_and_eager(_rotated_query_and_key, x, wq, wk, cos, sin)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a.float(), e.float(), **tolerance(torch.float16, 96))
    products = [k for k in kernels if "spyre.matmul" in k]
    assert len(products) == 2, kernels
    assert all("spyre.generic" in k for k in products), products
    assert not counters.fallbacks


class _ParallelResidual(torch.nn.Module):
    """GPT-NeoX's block, x + attention(ln1(x)) + mlp(ln2(x)), with attention
    written out: the attention's output projection has one reader, the sum,
    which also reads the MLP's down projection computed after it."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.dense = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, self.heads, -1).permute(0, 2, 1, 3).chunk(3, -1)
        a = ((q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5).softmax(-1) @ v
        a = self.dense(a.permute(0, 2, 1, 3).reshape(b, t, d))
        return x + a + self.fc2(F.gelu(self.fc1(self.ln2(x))))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_a_held_product_runs_before_the_kernels_that_read_it(dtype):
    # The scheduler holds a product whose one reader comes later; a reader
    # that also reads a product computed after it, or a product reading it,
    # must find it computed (the attention's products and the sum here).
    torch.manual_seed(0)
    model, x = _ParallelResidual().to(dtype).eval(), rand(1, 16, 64, dtype=dtype)
    with torch.no_grad():
        actual, expected = compiled_and_eager(model, x)
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(torch.float16, 256))
    assert not counters.fallbacks


def _three_scores(q, k, s):
    # Funnel Transformer's attention scores: a content, a positional and a
    # token-type product of one query, summed.
    return q @ k + q @ (k * 2) + (q @ s)[..., :1]


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_two_held_products_run_before_their_one_reader(dtype):
    # Both products wait for the sum, their one reader; only one of them can
    # run with it as its epilogue, and the other must run before it (the
    # sum ran first and read an unassigned buffer).
    q, k, s = rand(8, 16, 16, dtype=dtype), rand(8, 16, 16, dtype=dtype), rand(8, 16, 2, dtype=dtype)
    actual, expected = compiled_and_eager(_three_scores, q, k, s)
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(torch.float16, 16))


@pytest.mark.parametrize("batch,heads", [(4, 2), (8, 4)])
def test_a_bias_added_per_head_of_few_rows(batch, heads):
    # MobileViT's attention over one token: the value projection with its
    # bias, viewed as heads, is a product whose epilogue runs per head. Its
    # 16-bit output is narrowed in place over the product, and the first
    # head's output of one row overwrote the product of the row before,
    # which the second head's add had not read yet (a whole head wrong,
    # error 3.5 on values of 3).
    d = 32 * heads
    q, k = rand(batch, heads, 1, 32, dtype=torch.float16), rand(batch, heads, 1, 32,
                                                               dtype=torch.float16)
    x, w = rand(batch, 1, d, dtype=torch.float16), (rand(d, d) / d ** 0.5).half()
    b = (rand(d) / 8).half()

    def attention(q, k, x, w, b):
        v = F.linear(x, w, b).view(batch, 1, heads, 32).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v)

    def values(x, w, b):
        return F.linear(x, w, b).view(batch, 1, heads, 32).transpose(1, 2) * 1.0

    for fn, args in ((attention, (q, k, x, w, b)), (values, (x, w, b))):
        actual, expected = compiled_and_eager(fn, *args)
        torch.testing.assert_close(actual.float(), expected.float(),
                                   **tolerance(torch.float16, d))
