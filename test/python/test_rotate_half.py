"""rotate_half (`torch.cat((-x2, x1), -1)` of a tensor's halves) as one
elementwise expression (spyre_mlir.inductor.rotate_half): the rewritten
graph computes what the concatenation did, and a rotary embedding compiles
with no concatenation of halves left."""

import pytest
import torch
from torch._inductor.decomposition import select_decomp_table
from torch.fx.experimental.proxy_tensor import make_fx

from spyre_mlir.inductor import counters, rotate_half
from spyre_mlir.inductor.rotate_half import swap_halves


def hf_rotate_half(x):
    """Hugging Face Llama's."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


CASES = {
    "hf": (hf_rotate_half, 1),
    "second negated": (lambda x: torch.cat((x[..., 4:], -x[..., :4]), -1), 1),
    "both negated": (lambda x: torch.cat((-x[..., 4:], -x[..., :4]), -1), 1),
    "none negated": (lambda x: torch.cat((x[..., 4:], x[..., :4]), -1), 1),
    "along dim 1": (lambda x: torch.cat((-x[:, 2:], x[:, :2]), 1), 1),
    # The halves from chunk or split (spyre_mlir.models' rotate_half).
    "chunked": (lambda x: torch.cat((-x.chunk(2, -1)[1], x.chunk(2, -1)[0]), -1), 1),
    "split": (lambda x: torch.cat((-x.split(4, -1)[1], x.split(4, -1)[0]), -1), 1),
    # Pairs of elements (GPT-J's rotate_every_two, before its flatten).
    "every two": (lambda x: torch.stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2), 1),
    "pairs in order": (lambda x: torch.stack((x[..., ::2], -x[..., 1::2]), -1), 1),
    "pairs of a 2-d slice": (lambda x: torch.stack((x[:, :, 1::2], -x[:, :, ::2]), 3), 1),
    # Not a swap of halves: left as concatenations.
    "pairs of two tensors": (lambda x: torch.stack((x[..., 1::2], x.flip(0)[..., ::2]), -1), 0),
    "every third": (lambda x: torch.stack((x[..., 1::3], x[..., ::3]), -1), 0),
    "the same elements twice": (lambda x: torch.stack((x[..., ::2], x[..., ::2]), -1), 0),
    "halves in order": (lambda x: torch.cat((-x[..., :4], x[..., 4:]), -1), 0),
    "two tensors": (lambda x: torch.cat((-x[..., 4:], x.flip(0)[..., :4]), -1), 0),
    "split in thirds": (lambda x: torch.cat((-x[..., :6].split(2, -1)[1],
                                             x[..., :6].split(2, -1)[0]), -1), 0),
    "uneven split": (lambda x: torch.cat((-x.split(3, -1)[1], x.split(3, -1)[0]), -1), 0),
}


@pytest.mark.parametrize("name", CASES)
def test_the_rewritten_graph_computes_the_concatenation(name):
    fn, expected_rewrites = CASES[name]
    x = torch.randn(3, 4, 8)
    # As Inductor's post-grad graph has them: stack as a concatenation.
    gm = make_fx(fn, decomposition_table=select_decomp_table(), tracing_mode="fake")(x)
    assert swap_halves(gm.graph) == expected_rewrites
    gm.recompile()
    if expected_rewrites:
        assert torch.ops.aten.cat.default not in {n.target for n in gm.graph.nodes}
    torch.testing.assert_close(gm(x), fn(x), rtol=0, atol=0)


def test_a_rotary_embedding_compiles_without_the_concatenation(monkeypatch):
    rewrites = []
    swap = rotate_half.swap_halves
    monkeypatch.setattr(rotate_half, "swap_halves", lambda g: rewrites.append(swap(g)))

    def rotary(q, cos, sin):
        return q * cos + hf_rotate_half(q) * sin
    g = torch.Generator().manual_seed(0)
    q, cos, sin = (torch.randn(s, generator=g).half()
                   for s in ((1, 4, 8, 64), (1, 1, 8, 64), (1, 1, 8, 64)))
    torch._dynamo.reset()
    counters.reset()
    # A graph compiled before comes from Inductor's cache without its passes.
    with torch._inductor.config.patch(fx_graph_cache=False):
        out = torch.compile(rotary, backend="spyre")(q, cos, sin)
    torch.testing.assert_close(out, rotary(q, cos, sin), atol=2e-2, rtol=2e-2)
    assert rewrites == [1] and counters.fallbacks == {}


def _rotary_from_positions(q, inv_freq):
    """Llama's rotary embedding with its angles computed in the graph: the
    frequency table repeated twice (cat(freqs, freqs))."""
    angles = torch.outer(torch.arange(q.shape[-2], dtype=torch.float32), inv_freq)
    emb = torch.cat((angles, angles), -1)
    return q * emb.cos() + hf_rotate_half(q) * emb.sin()


def test_the_backward_of_a_rotary_embedding_runs_on_card():
    # Its halves' masks are conditions on the head dimension, which the
    # repeated frequency table splits in two loops (8 * q + lo >= 8): a
    # condition of both that depends on one (pieces._one_loop_condition).
    q = torch.randn(2, 4, 16, 16, requires_grad=True, generator=torch.Generator().manual_seed(0))
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 16, 2, dtype=torch.float32) / 16))
    weights = torch.randn(2, 4, 16, 16, generator=torch.Generator().manual_seed(1))

    def loss(q):
        return (_rotary_from_positions(q, inv_freq) * weights).sum()
    torch._dynamo.reset()
    counters.reset()
    actual = torch.autograd.grad(torch.compile(loss, backend="spyre")(q), q)[0]
    assert dict(counters.fallbacks) == {}
    expected = torch.autograd.grad(loss(q), q)[0]
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


def rotate_every_two(x):
    """Hugging Face GPT-J's."""
    return torch.stack((-x[:, :, :, 1::2], x[:, :, :, ::2]), dim=-1).flatten(-2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_a_rotary_embedding_of_pairs_reads_each_row_once(dtype):
    # The swapped pairs read the straight input's run with a negative
    # column stride: the kernel moves the query once and writes it once.
    def rotary(q, cos, sin):
        return q * cos + rotate_every_two(q) * sin
    g = torch.Generator().manual_seed(0)
    q, cos, sin = (torch.randn(s, generator=g).to(dtype)
                   for s in ((1, 8, 64, 32), (64, 32), (64, 32)))
    torch._dynamo.reset()
    counters.reset()
    with torch.compiler.config.patch(force_disable_caches=True):
        out = torch.compile(rotary, backend="spyre")(q, cos, sin)
    tol = 2e-2 if dtype == torch.float16 else 1e-5
    torch.testing.assert_close(out, rotary(q, cos, sin), atol=tol, rtol=tol)
    assert counters.fallbacks == {} and counters.kernels_run == 1
    es = q.element_size() if dtype == torch.float32 else 2
    # q in and out, cos and sin once per core that reads them (32 cores).
    assert counters.bus_read_bytes <= (q.numel() + 32 * 2 * cos.numel()) * es
