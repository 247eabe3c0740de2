"""What Inductor inlines into a consumer and what the card computes once:
a pointwise producer that a consumer broadcasts and that evaluates a
transcendental is realized into a buffer (lowerings._realize_broadcast),
so that rotary embeddings' cos and sin of (position x frequency) are not
evaluated again for every head. Values per row (a norm's rsqrt) stay
inlined, and so do producers cheaper to recompute than to store and load."""

import pytest
import torch

from eager_compare import compiled_and_eager
from spyre_mlir.inductor import counters, lowerings
from test_torch_ops import rand

DIM = 64


def _rotary(q, k, inv_freq):
    # As Hugging Face's Llama computes and applies it.
    positions = torch.arange(q.shape[-2])[None, None, :].float()
    freqs = (inv_freq[None, :, None].float() @ positions).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(q.dtype).unsqueeze(1), emb.sin().to(q.dtype).unsqueeze(1)

    def rotate_half(x):
        return torch.cat([-x[..., DIM // 2:], x[..., :DIM // 2]], -1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def _inputs(heads, seq):
    q, k = rand(1, heads, seq, DIM, dtype=torch.float16), rand(1, 2, seq, DIM, dtype=torch.float16)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, DIM, 2, dtype=torch.float32) / DIM))
    return q, k, inv_freq


def _domains_evaluating(kernels, op):
    """The domain sizes of the generics whose body evaluates `op`."""
    sizes = []
    for mlir in kernels:
        for generic in mlir.split("spyre.generic domain [")[1:]:
            body = generic.split("spyre.yield")[0]
            if op in body:
                dims = generic.split("]")[0].split(",")
                sizes.append(int(torch.tensor([int(d) for d in dims]).prod()))
    return sizes


@torch._inductor.config.patch(force_disable_caches=True)  # the same graph compiles twice
def test_rotary_cos_and_sin_are_computed_once_not_per_head(kernels):
    heads, seq = 32, 256
    q, k, inv_freq = _inputs(heads, seq)
    (rq, rk), (eq, ek) = compiled_and_eager(_rotary, q, k, inv_freq)
    for a, e in ((rq, eq), (rk, ek)):
        torch.testing.assert_close(a.float(), e.float(), atol=2e-2, rtol=1e-2)
    for op in ("math.cos", "math.sin"):
        assert _domains_evaluating(kernels, op) == [seq * DIM], op
    realized = counters.simulated_cycles

    # Without the rule, every head evaluates them again, and it takes longer.
    kernels.clear()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lowerings, "RECOMPUTED_AT_A_COST", frozenset())
        (iq, ik), _ = compiled_and_eager(_rotary, q, k, inv_freq)
    assert max(_domains_evaluating(kernels, "math.cos")) == heads * seq * DIM
    torch.testing.assert_close(iq, rq)
    torch.testing.assert_close(ik, rk)
    assert realized < counters.simulated_cycles


def test_a_few_heads_of_a_short_sequence_evaluate_them_inline(kernels):
    # Recomputing them for 8 heads of 16 positions costs less than the
    # buffer's round trip through device memory.
    heads, seq = 8, 16
    q, k, inv_freq = _inputs(heads, seq)
    (rq, _), (eq, _) = compiled_and_eager(_rotary, q, k, inv_freq)
    torch.testing.assert_close(rq.float(), eq.float(), atol=2e-2, rtol=1e-2)
    assert max(_domains_evaluating(kernels, "math.cos")) == heads * seq * DIM


def test_a_norms_rsqrt_per_row_stays_in_the_row_kernel(kernels):
    def rms_norm(x, w):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return w * (x.float() * torch.rsqrt(variance + 1e-6)).to(x.dtype)
    x, w = rand(256, 512, dtype=torch.float16), rand(512, dtype=torch.float16)
    actual, expected = compiled_and_eager(rms_norm, x, w)
    torch.testing.assert_close(actual.float(), expected.float(), atol=2e-2, rtol=1e-2)
    assert counters.kernels_run == 1
    # Evaluated in the generic that normalizes the rows, not in one of its own.
    assert all(size == 256 * 512 for size in _domains_evaluating(kernels, "math.rsqrt"))
