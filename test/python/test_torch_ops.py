"""torch.compile(..., backend="spyre") against eager, op by op: every kernel
is exported from Inductor's scheduled graph, compiled by the C++ pipeline and
run on the simulator. Zero CPU fallbacks unless a test says otherwise."""

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import counters

torch.manual_seed(0)


def run(fn, *args, fallbacks=0):
    """Compiled and eager results of fn(*args); asserts the fallback count."""
    torch._dynamo.reset()
    counters.reset()
    compiled = torch.compile(fn, backend="spyre")(*args)
    assert sum(counters.fallbacks.values()) == fallbacks, dict(counters.fallbacks)
    assert counters.kernels_run > 0
    return compiled, fn(*args)


def tolerance(dtype, depth=0):
    """DLFloat16 keeps 9 fraction bits: 16-bit results are within a few of
    its roundings; the matrix unit rounds f32 inputs to it as well. Sums of
    `depth` rounded terms drift like the square root of depth."""
    if dtype == torch.float32 and not depth:
        return dict(rtol=1e-5, atol=1e-5)
    eps = 2.0 ** -9
    depth = max(depth, 1) ** 0.5
    return dict(rtol=4 * eps, atol=4 * eps * depth)


def check(fn, *args, dtype=torch.float32, depth=0, fallbacks=0):
    compiled, expected = run(fn, *args, fallbacks=fallbacks)
    if isinstance(expected, torch.Tensor):
        compiled, expected = (compiled,), (expected,)
    for c, e in zip(compiled, expected):
        assert c.shape == e.shape and c.dtype == e.dtype
        if e.dtype in (torch.int64, torch.int32, torch.bool):
            torch.testing.assert_close(c, e)
        else:
            torch.testing.assert_close(c.float(), e.float(), **tolerance(dtype, depth))


DTYPES = [torch.float32, torch.float16]


def rand(*shape, dtype=torch.float32, low=None):
    x = torch.randn(*shape)
    if low is not None:
        x = x.abs() + low
    return x.to(dtype)


UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "sigmoid": torch.sigmoid,
    "tanh": torch.tanh, "relu": torch.relu, "silu": F.silu,
    "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "clamp": lambda x: torch.clamp(x, -0.5, 0.7), "square": lambda x: x * x,
    "dropout_eval": lambda x: F.dropout(x, 0.3, training=False),
}
POSITIVE = {"log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
            "pow": lambda x: torch.pow(x, 1.7)}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY) + list(POSITIVE))
def test_unary(name, dtype):
    fn = UNARY.get(name) or POSITIVE[name]
    x = rand(37, 130, dtype=dtype, low=0.1 if name in POSITIVE else None)
    check(fn, x, dtype=dtype)


BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
          "maximum": torch.maximum, "where": lambda a, b: torch.where(a > b, a, b * 2)}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_with_broadcast(name, dtype):
    a = rand(16, 70, dtype=dtype)
    b = rand(70, dtype=dtype, low=0.5) if name == "div" else rand(70, dtype=dtype)
    if name == "where":
        # Quarters are exact in f16 and DLFloat16, so the comparison cannot
        # flip where rounding to DLFloat16 makes two f16 values equal.
        a = (torch.randint(-16, 16, (16, 70)) / 4).to(dtype)
        b = (torch.randint(-16, 16, (70,)) / 4).to(dtype)
    check(BINARY[name], a, b, dtype=dtype)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons(op):
    a = torch.randint(-3, 3, (9, 40)).float()
    b = torch.randint(-3, 3, (9, 40)).float()
    check(getattr(torch, op), a, b)


def test_casts():
    x = rand(20, 33) * 10
    check(lambda x: (x.to(torch.float16) * 2).to(torch.float32) + x.to(torch.int32), x,
          dtype=torch.float16)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,fn", [
    ("sum", lambda x: x.sum(-1)), ("sum0", lambda x: x.sum(0)), ("mean", lambda x: x.mean(-1)),
    ("amax", lambda x: x.amax(-1)), ("amin", lambda x: x.amin(0)),
    ("var", lambda x: x.var(-1)), ("var_mean", lambda x: torch.var_mean(x, -1)),
])
def test_reductions(name, fn, dtype):
    check(fn, rand(24, 300, dtype=dtype), dtype=dtype, depth=300 if dtype != torch.float32 else 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,fn,shape", [
    ("sum", lambda x: x.sum(), (256, 1024)),
    ("mse", lambda x: (x * x).mean(), (1 << 18,)),
    ("amax_few_rows", lambda x: x.amax(-1), (3, 65536)),
    ("amin_narrow_cols", lambda x: x.amin(0), (32768, 8)),
    ("by_position", lambda x: (x.float() * torch.arange(65536, dtype=torch.float32)).sum(),
     (65536,)),
])
def test_reductions_with_few_outputs(name, fn, shape, dtype):
    # Cut in parts of the reduced loop and combined (spyre-split-reductions):
    # the same values as eager, 16-bit sums rounded once from f32.
    x = rand(*shape, dtype=dtype)
    if name.startswith(("amax", "amin")):  # exact: a value of x
        check(fn, x, dtype=dtype)
        return
    compiled, expected = run(fn, x)
    assert compiled.dtype == expected.dtype and compiled.shape == expected.shape
    # f32 sums of 2^18 terms in another order differ by a few 1e-5. A 16-bit
    # input reaches the card as DLFloat16 (tolerance()): a plain sum of n of
    # them drifts from eager's like sqrt(n) roundings, which a total near
    # zero (-24.5 from 2^18 terms of size 1) does not hide in its own.
    depth = x.numel() if name == "sum" else 0
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else tolerance(dtype, depth)
    if name == "by_position" and dtype != torch.float32:
        # Each weighted term's rounding is relative to the term: their sum
        # drifts like the terms' root sum of squares, however near zero the
        # total (random signs) falls; a tolerance relative to the total
        # failed a few runs in a hundred.
        terms = x.float() * torch.arange(x.numel(), dtype=torch.float32)
        tol = dict(rtol=0, atol=4 * 2.0 ** -9 * float(terms.norm()))
    torch.testing.assert_close(compiled.float(), expected.float(), **tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,fn", [
    ("weighted_sum", lambda x, w: (x * w[:, None, None]).sum((1, 2, 3))),
    ("amax", lambda x, w: (x * w[:, None, None]).amax((1, 2, 3))),
    ("centred_squares", lambda x, w: ((x * w[:, None, None]) - 0.5).square().sum((1, 2, 3))),
    ("var_mean", lambda x, w: torch.var_mean(x * w[:, None, None], dim=(1, 2, 3))),
    ("group_norm", lambda x, w: F.group_norm(x + w[:, None, None], 4)),
])
def test_reductions_over_channels_of_few_positions(name, fn, dtype):
    """A reduction over channels and a few positions each, which a
    per-channel operand keeps from being one loop (a GroupNorm's statistics
    after PoolFormer's layer scale, or after a UNet's time embedding, at
    2 x 2 positions): reduced along the positions into partials per channel,
    then along the channels (spyre-split-reductions; Welford's partial
    states merged as Chan et al. do). Stepping the channels one at a time,
    the sums took 128.9 us each; now 2.7-3.8 us."""
    torch.manual_seed(0)
    x, w = rand(2, 128, 2, 2, dtype=dtype), rand(128, dtype=dtype)
    compiled, expected = run(fn, x, w)
    assert counters.simulated_cycles < 40_000
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else tolerance(dtype, 512)
    if isinstance(expected, torch.Tensor):
        compiled, expected = (compiled,), (expected,)
    for c, e in zip(compiled, expected):
        assert c.shape == e.shape and c.dtype == e.dtype
        torch.testing.assert_close(c.float(), e.float(), **tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_group_norm_over_channels_of_many_positions(dtype):
    """The same over 64 channels of 56 x 56 positions (PoolFormer's first
    stage): one image's statistics ran on one core, 151.0 us for the whole
    GroupNorm kernel (fp16); the partials per channel spread over the cores
    (37.1 us)."""
    torch.manual_seed(0)
    x, w = rand(1, 64, 56, 56, dtype=dtype), rand(64, dtype=dtype)
    compiled, expected = run(lambda x, w: F.group_norm(x * w[:, None, None], 1), x, w)
    assert counters.simulated_cycles < 80_000
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else tolerance(dtype, 64)
    torch.testing.assert_close(compiled.float(), expected.float(), **tol)


def test_cut_reductions_into_a_concatenation():
    # Each sum writes its slice of the result; the one cut in parts rounds
    # its f32 total into its own slice only.
    w, x = rand(2, 100, dtype=torch.float16), rand(2, 65536, dtype=torch.float16)
    check(lambda w, x: torch.cat([w.sum(1), x.sum(1)]), w, x, dtype=torch.float16, depth=65536)


def test_product_with_few_outputs():
    # f32 only: 16-bit terms near 1 each round to it or a step below (eager
    # rounds them too), which no tolerance covers over 2^16 terms.
    compiled, expected = run(lambda x: (1 + x / 4096).prod(-1), rand(2, 65536))
    torch.testing.assert_close(compiled, expected, rtol=1e-4, atol=1e-4)


def test_argmax():
    check(lambda x: x.argmax(-1), rand(24, 3000))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_softmax_and_log_softmax(dtype):
    x = rand(16, 500, dtype=dtype)
    check(lambda x: torch.softmax(x, -1), x, dtype=dtype)
    check(lambda x: torch.log_softmax(x.float(), -1), x, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_layer_norm_and_rms_norm(dtype):
    x, w, b = rand(8, 256, dtype=dtype), rand(256, dtype=dtype), rand(256, dtype=dtype)
    check(lambda x, w, b: F.layer_norm(x, (256,), w, b), x, w, b, dtype=dtype)
    check(lambda x, w: F.rms_norm(x, (256,), w, eps=1e-6), x, w, dtype=dtype)


def test_layer_norm_keeps_its_rows_in_lx_for_every_pass():
    # Inductor's LayerNorm divides the row sums by the row length in a
    # generic of its own, over the rows only. Its two readers compute that
    # mean themselves (spyre-fuse-elementwise), so the sum, the variance and
    # the normalization form one row group that loads x once; the
    # difference from the mean, which the last two both compute, is a member
    # of its own that computes it once per tile (ShareExpressions.cpp).
    from spyre_mlir import compiler
    from spyre_mlir.ir import Context, Module
    x, w, b = rand(64, 768, dtype=torch.float16), rand(768, dtype=torch.float16), \
        rand(768, dtype=torch.float16)
    counters.reset()
    check(lambda x, w, b: F.layer_norm(x, (768,), w, b), x, w, b, dtype=torch.float16)
    (kernel,) = [k for k in counters.per_kernel if "spyre.generic" in k.mlir]
    with Context():
        fused = str(compiler.compile_module(Module.parse(kernel.mlir), stop_after="fuse"))
    assert fused.count("spyre.fused") == 1 and fused.count("spyre.generic") == 4, fused


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_layer_norms_over_the_channels_of_a_channel_first_image_form_one_row_group(dtype):
    # SegFormer's and Swin's patch embeddings: a conv's channel-first output
    # viewed as [positions, channels], two LayerNorms over the channels, the
    # result copied back to channel-first. Inductor lays the first
    # LayerNorm's output (an intermediate) out as its input, channel-first,
    # and iterates it channels first; turned to its statistics' order it
    # joins them, and the second LayerNorm and the copy join too: one group
    # that loads the image once.
    from spyre_mlir import compiler
    from spyre_mlir.ir import Context, Module
    c, h, w = 32, 28, 28
    x = rand(1, c, h, w, dtype=dtype)
    g1, b1, g2, b2 = (rand(c, dtype=dtype) for _ in range(4))

    def embed(x, g1, b1, g2, b2):
        t = F.layer_norm(x.flatten(2).transpose(1, 2), (c,), g1, b1)
        u = F.layer_norm(t, (c,), g2, b2)
        return u.transpose(1, 2).reshape(1, c, h, w), torch.relu(t)
    counters.reset()
    check(embed, x, g1, b1, g2, b2, dtype=dtype)
    (kernel,) = [k for k in counters.per_kernel if "spyre.generic" in k.mlir]
    with Context():
        fused = str(compiler.compile_module(Module.parse(kernel.mlir), stop_after="fuse"))
    assert fused.count("spyre.fused") == 1, fused
    # Every generic is a member: indented under the group, none beside it.
    group = next(line for line in fused.splitlines() if "spyre.fused" in line)
    depth = len(group) - len(group.lstrip())
    assert all(len(line) - len(line.lstrip()) > depth
               for line in fused.splitlines() if "spyre.generic" in line), fused


@pytest.mark.parametrize("overflow", [False, True], ids=["finite", "overflowing"])
def test_a_flat_sum_read_by_a_row_norm_joins_its_group(overflow):
    # T5's fp16 layer: residual sums clamped below the largest half (less
    # when an element is infinite), then an RMSNorm. Inductor keeps the
    # clamped sum, which reads four buffers, as a buffer over its linear
    # index; it takes the norm's rows and joins the norm's group, so it
    # never reaches device memory.
    from spyre_mlir import compiler
    from spyre_mlir.ir import Context, Module
    dtype = torch.float16
    a, b, c = (rand(1, 96, 512, dtype=dtype) for _ in range(3))
    w = rand(512, dtype=dtype)
    if overflow:
        a[0, 5, 7] = b[0, 5, 7] = 60000.0

    def clamped(h):
        big = torch.finfo(h.dtype).max
        limit = torch.where(torch.isinf(h).any(), big - 1000, big)
        return torch.clamp(h, min=-limit, max=limit)

    def layer(a, b, c, w):
        h = clamped(clamped(a + b) + c)
        variance = h.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return w * (h * torch.rsqrt(variance + 1e-6)).to(dtype)
    counters.reset()
    check(layer, a, b, c, w, dtype=dtype)
    (kernel,) = [k for k in counters.per_kernel if "spyre.generic" in k.mlir]
    with Context():
        fused = str(compiler.compile_module(Module.parse(kernel.mlir), stop_after="fuse"))
    # The clamped sum, the sum of squares and the normalization, in a group
    # (indented under it); the sums' checks for infinities group apart.
    rows = [line for line in fused.splitlines() if "spyre.generic domain [96, 512]" in line]
    kernel_line = next(line for line in fused.splitlines() if "spyre.kernel @" in line)
    kernel_depth = len(kernel_line) - len(kernel_line.lstrip())
    assert len(rows) == 3, fused
    assert all(len(line) - len(line.lstrip()) > kernel_depth + 2 for line in rows), fused


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matmuls(dtype):
    a, b = rand(33, 70, dtype=dtype), rand(70, 20, dtype=dtype)
    check(torch.matmul, a, b, dtype=dtype, depth=70)
    x, y = rand(3, 17, 40, dtype=dtype), rand(3, 40, 9, dtype=dtype)
    check(torch.bmm, x, y, dtype=dtype, depth=40)
    w, bias = rand(20, 70, dtype=dtype), rand(20, dtype=dtype)
    check(F.linear, a, w, bias, dtype=dtype, depth=70)
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0), rand(33, 20, dtype=dtype),
          a, b, dtype=dtype, depth=70)
    check(lambda c, x, y: torch.baddbmm(c, x, y), rand(3, 17, 9, dtype=dtype), x, y,
          dtype=dtype, depth=40)


def test_views_and_movement():
    x = rand(12, 40)
    check(lambda x: x.t().contiguous() * 2, x)
    check(lambda x: x.permute(1, 0).reshape(4, 120) + 1, x)
    check(lambda x: x.view(3, 4, 40).expand(2, 3, 4, 40) * 1.5, x)
    check(lambda x: x[2:9, 5:31:2] * 3, x)


def test_cat_index_select_embedding():
    a, b = rand(6, 10), rand(6, 22)
    check(lambda a, b: torch.cat([a, b], dim=1) * 2, a, b)
    table, ids = rand(50, 24), torch.randint(0, 50, (7,))
    check(lambda t, i: torch.index_select(t, 0, i) + 1, table, ids)
    check(lambda t, i: F.embedding(i, t), table, torch.randint(0, 50, (3, 5)))


def test_conv2d():
    x, w, b = rand(2, 3, 12, 12), rand(8, 3, 3, 3), rand(8)
    check(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b, depth=27)
    check(lambda x, w: F.conv2d(x, w, stride=2), x, w, depth=27)


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(causal):
    q, k, v = rand(2, 4, 16, 32), rand(2, 4, 16, 32), rand(2, 4, 16, 32)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal), q, k, v,
          depth=32)


def test_concatenation_and_padding_without_masks():
    # Inductor would write these as masked loads; ours are copies into slices.
    a, b = rand(6, 10), rand(6, 22)
    check(lambda a, b: torch.cat([a * 2, b.exp()], dim=1) + 1, a, b)
    check(lambda a: torch.stack([a, a * 2]).sum(0), a)
    check(lambda a: F.pad(a, (1, 2, 3, 0)) * 3, a)
    check(lambda a: F.pad(a, (2, 2), value=1.5) - 1, a)


def test_softmax_nodes_become_one_kernel():
    # Inductor schedules max, sum and divide as three nodes; consecutive
    # elementwise/reduction nodes go into one kernel, where spyre-fuse-rows
    # groups them over whole rows.
    x = rand(16, 500)
    compiled, expected = run(lambda x: torch.softmax(x, -1), x)
    torch.testing.assert_close(compiled, expected)
    assert counters.kernels_run == 1


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_and_nll_loss(reduction):
    logits = rand(12, 7)
    target = torch.randint(0, 7, (12,))
    target[3] = -100  # ignored
    check(lambda x, t: F.cross_entropy(x, t, reduction=reduction), logits, target)
    check(lambda x, t: F.nll_loss(F.log_softmax(x, -1), t, reduction=reduction, ignore_index=2),
          logits, target.clamp(min=0))
