"""Random compositions of model pieces at random sizes (seeded: case i is the
same on every run), through torch.compile(backend="spyre") against eager in
f32 on the inputs as the card holds them (fp16 rounded to DLFloat16), with
no CPU fallback. The scheduler holds products for their epilogues, chains
them, pairs products of one input and splits epilogues by heads: paths that
the per-op tests reach one at a time and that random graphs combine. A net,
not the regression test of any one bug: the bugs such graphs found have
tests of their own (test_torch_epilogue.py). A wider sweep:
TEST_RANDOM_MODELS=2000 runs that many cases of each kind."""

import math
import os
import random

import pytest
import torch
import torch.nn.functional as F

from eager_compare import compiled_and_eager
from spyre_mlir.dlfloat16 import DLFloat16

SIZES = [1, 2, 3, 5, 8, 16, 31, 33, 64, 65, 100, 128, 130, 200, 257]
CASES = int(os.environ.get("TEST_RANDOM_MODELS", "16"))


def _size(r, lo=1, hi=10 ** 9):
    return r.choice([s for s in SIZES if lo <= s <= hi])


def _randn(*shape, dtype):
    return torch.randn(*shape).to(dtype)


def products_graph(r, dtype):
    """Products sharing inputs, activations, sums and scaled products."""
    m = _size(r, 2)
    widths = sorted({_size(r, 2, 257) for _ in range(3)})
    args, plan, pool = [_randn(m, widths[0], dtype=dtype)], [], [(0, widths[0])]
    for _ in range(r.randint(3, 8)):
        kind = r.choice(["mm", "mm", "mm", "act", "add", "mul"])
        i, w = r.choice(pool)
        if kind == "mm":
            w2 = r.choice(widths)
            args.append(_randn(w, w2, dtype=dtype) / math.sqrt(w))
            plan.append(("mm", i, len(args) - 1))
            pool.append((len(plan), w2))
        else:
            j = r.choice([j for j, w2 in pool if w2 == w]) if kind != "act" else r.randrange(3)
            plan.append((kind, i, j))
            pool.append((len(plan), w))
    outputs = sorted({len(plan), r.randrange(len(plan) + 1)})
    activations = [F.gelu, F.silu, torch.tanh]

    def fn(*a):
        values = [a[0]]
        for kind, i, j in plan:
            values.append(values[i] @ a[j] if kind == "mm" else
                          activations[j](values[i]) if kind == "act" else
                          values[i] + values[j] if kind == "add" else
                          values[i] * values[j] * 0.5)
        return tuple(values[o] for o in outputs)
    return fn, args


def heads(r, dtype):
    """A projection with a bias, viewed as heads, then an elementwise
    epilogue, a rotation of its halves or attention."""
    b, l = r.choice([1, 2, 4, 8]), r.choice([1, 1, 1, 2, 3, 8, 33, 64])
    h, dh = r.choice([2, 2, 3, 4, 1]), r.choice([16, 32, 64])
    d = h * dh
    kind = r.choice(["bias", "gelu", "rotary", "query", "value"])
    args = [_randn(b, l, d, dtype=dtype), _randn(d, d, dtype=dtype) / math.sqrt(d),
            _randn(d, dtype=dtype), _randn(l, dh, dtype=dtype), _randn(l, dh, dtype=dtype),
            _randn(b, h, l, dh, dtype=dtype), _randn(b, h, l, dh, dtype=dtype)]

    def fn(x, w, bias, cos, sin, a, c):
        y = F.linear(x, w, bias)
        y = (F.gelu(y) if kind == "gelu" else y).view(b, l, h, dh).transpose(1, 2)
        if kind == "rotary":
            y1, y2 = y[..., :dh // 2], y[..., dh // 2:]
            return y * cos + torch.cat((-y2, y1), -1) * sin
        if kind == "query":  # the attention's layout decides the projection's
            return F.scaled_dot_product_attention(y, a, c)
        if kind == "value":
            return F.scaled_dot_product_attention(a, c, y)
        return y * 1.0
    return fn, args


def mlp(r, dtype):
    """A multilayer perceptron, plain or gated, with or without a residual."""
    m, d, hidden = _size(r, 16), _size(r, 16), _size(r, 16) * r.choice([1, 2, 4])
    gated, residual = r.random() < 0.4, r.random() < 0.5
    args = [_randn(m, d, dtype=dtype), _randn(hidden, d, dtype=dtype) / math.sqrt(d),
            _randn(hidden, d, dtype=dtype) / math.sqrt(d),
            _randn(d, hidden, dtype=dtype) / math.sqrt(hidden), _randn(hidden, dtype=dtype)]

    def fn(x, w1, w3, w2, b1):
        h = F.silu(x @ w1.t()) * (x @ w3.t()) if gated else F.gelu(F.linear(x, w1, b1))
        y = h @ w2.t()
        return y + x if residual else y
    return fn, args


def attention(r, dtype):
    """Attention with grouped heads, a causal, boolean or additive mask."""
    b, h = r.choice([1, 2]), r.choice([1, 2, 4])
    l = _size(r, 1, 257)
    s = l if r.random() < 0.6 else _size(r, 1, 257)
    d, kv_heads = r.choice([16, 32, 64, 80, 128]), r.choice([x for x in (1, h) if h % x == 0])
    kind = r.choice(["none", "causal", "bool", "float"])
    if kind == "causal" and l > s:
        kind = "none"
    mask = None
    if kind == "bool":
        mask = torch.rand(b, 1, l, s) > 0.3
        mask[..., 0] = True
    elif kind == "float":
        mask = _randn(b, 1, l, s, dtype=dtype) * 2
    args = [_randn(b, h, l, d, dtype=dtype), _randn(b, kv_heads, s, d, dtype=dtype),
            _randn(b, kv_heads, s, d, dtype=dtype), mask]

    def fn(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                              is_causal=kind == "causal",
                                              enable_gqa=kv_heads != h)
    return fn, args


def convolution(r, dtype):
    """A convolution of any stride, padding, dilation and groups, with a
    bias and maybe a ReLU, then maybe a max pool."""
    n, cin, hw = r.choice([1, 2]), r.choice([1, 3, 8, 16, 32]), r.choice([5, 8, 14, 15, 28])
    cout, k = r.choice([4, 8, 16, 32]), r.choice([1, 3, 5])
    stride, pad, dilation = r.choice([1, 2]), r.choice([0, 1, 2]), r.choice([1, 1, 2])
    groups = cin if cout % cin == 0 and r.random() < 0.3 else 1
    if hw + 2 * pad - dilation * (k - 1) - 1 < 0:
        pad = k
    relu, pool = r.random() < 0.5, r.random() < 0.3
    args = [_randn(n, cin, hw, hw, dtype=dtype),
            _randn(cout, cin // groups, k, k, dtype=dtype) / math.sqrt(cin // groups * k * k),
            _randn(cout, dtype=dtype)]

    def fn(x, w, bias):
        y = F.conv2d(x, w, bias, stride, pad, dilation, groups)
        y = F.relu(y) if relu else y
        return F.max_pool2d(y, 3, 2, 1) if pool and min(y.shape[-2:]) >= 2 else y
    return fn, args


KINDS = {"products_graph": products_graph, "heads": heads, "mlp": mlp, "attention": attention,
         "convolution": convolution}

_DL16 = DLFloat16()


def _as_held(a):
    """Eager's input: f32, fp16 values rounded to DLFloat16 as on the card."""
    if not isinstance(a, torch.Tensor) or not a.is_floating_point():
        return a
    if a.dtype == torch.float16:
        return torch.from_numpy(_DL16.round(a.float().numpy()))
    return a.float()


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("kind", list(KINDS))
def test_random_model_pieces(kind, seed):
    r = random.Random(f"{kind}-{seed}")
    dtype = r.choice([torch.float16, torch.float16, torch.float32])
    torch.manual_seed(seed)
    fn, args = KINDS[kind](r, dtype)
    actual, expected = compiled_and_eager(fn, *args, eager_args=[_as_held(a) for a in args])
    if isinstance(expected, torch.Tensor):
        actual, expected = (actual,), (expected,)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == dtype
        # Each product rounds its operands to DLFloat16 (9 fraction bits),
        # and so does every 16-bit store.
        scale = max(e.abs().max().item(), 1e-3)
        torch.testing.assert_close(a.float(), e.float(), rtol=0,
                                   atol=(0.03 if dtype == torch.float16 else 0.02) * scale)
