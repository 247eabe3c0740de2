"""Boolean masks that are causal run as causal attention
(inductor/causal_masks.py): the same values as eager, fewer blocks."""

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import causal_masks, counters
from test_torch_attention import dynamo_graph
from test_torch_ops import tolerance

HEADS, LQ, LK, D = 4, 64, 66, 32  # keys: a static cache two longer than the prompt


def positions(n, offset=0):
    return torch.arange(n) + offset


def hugging_face(q, k, v, keep):
    """transformers' sdpa_mask: and-ed terms on index vectors with new axes."""
    kv, qi = positions(LK)[None, None, None, :], positions(LQ)[None, None, :, None]
    mask = q.new_ones((), dtype=torch.bool) & (kv <= qi).to(q.device) & keep[:, None, None, :]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask.expand(1, -1, LQ, LK))


def two_d(q, k, v, keep):
    mask = torch.arange(LQ)[:, None] >= torch.arange(LK)[None, :]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.2)


def strict(q, k, v, keep):
    mask = torch.logical_and(torch.arange(LK)[None, :] < torch.arange(LQ)[:, None] + 1, keep)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def earlier_keys_only(q, k, v, keep):
    """Key j for query i only if j <= i - 2: stricter than causal."""
    mask = positions(LK, 2)[None, :] <= positions(LQ)[:, None]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask & keep)


def inputs(dtype=torch.float32, heads=HEADS, lq=LQ, lk=LK):
    torch.manual_seed(0)
    q = torch.randn(1, heads, lq, D).to(dtype)
    k, v = (torch.randn(1, heads, lk, D).to(dtype) for _ in range(2))
    keep = torch.ones(1, lk, dtype=torch.bool)
    keep[0, :3] = False  # left padding: the first queries see no key at all
    return q, k, v, keep


def converted(fn, args) -> torch.fx.GraphModule:
    gm = dynamo_graph(fn, *args)
    causal_masks.use_causal_attention(gm.graph)
    gm.recompile()
    return gm


def attention_calls(gm):
    return [n.target for n in gm.graph.nodes
            if n.target in causal_masks._ATTENTION or n.target is causal_masks.op]


@pytest.mark.parametrize("fn", [hugging_face, two_d, strict, earlier_keys_only])
def test_causal_masks_become_causal_attention(fn):
    """The pass finds the causal term; the rewritten graph, run eagerly,
    computes what the original did."""
    args = inputs()
    gm = converted(fn, args)
    assert attention_calls(gm) == [causal_masks.op]
    # Dynamo's graph takes the inputs in the order the function first reads them.
    named = dict(zip(("q", "k", "v", "keep"), args))
    order = [n.target.removeprefix("L_").removesuffix("_") for n in gm.graph.nodes
             if n.op == "placeholder"]
    torch.testing.assert_close(gm(*(named[x] for x in order))[0], fn(*args), equal_nan=True)


def written_mask():
    mask = positions(LK)[None, :] <= positions(LQ)[:, None]
    mask[0, 5] = True
    return mask


@pytest.mark.parametrize("fn", [
    # Query i sees key i + 1: more than causal attention allows.
    lambda q, k, v, keep: F.scaled_dot_product_attention(
        q, k, v, attn_mask=positions(LK)[None, :] <= positions(LQ, 1)[:, None]),
    # Later keys only (the transpose of causal).
    lambda q, k, v, keep: F.scaled_dot_product_attention(
        q, k, v, attn_mask=positions(LQ)[:, None] <= positions(LK)[None, :]),
    # Either term: an `or` proves nothing about the keys it keeps.
    lambda q, k, v, keep: F.scaled_dot_product_attention(
        q, k, v, attn_mask=(positions(LK)[None, :] <= positions(LQ)[:, None]) | keep),
    # Positions every other index apart.
    lambda q, k, v, keep: F.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.arange(0, 2 * LK, 2)[None, :] <= positions(LQ)[:, None]),
    # Query positions from a tensor (a decode step's cache positions).
    lambda q, k, v, keep: F.scaled_dot_product_attention(
        q, k, v, attn_mask=positions(LK)[None, :] <= keep.sum() + positions(LQ)[:, None]),
    # Already causal, or an additive mask.
    lambda q, k, v, keep: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    lambda q, k, v, keep: F.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.where(positions(LK)[None, :] <= positions(LQ)[:, None],
                                       0.0, -1e4)),
    # One key position broadcast along the keys: every key is kept.
    lambda q, k, v, keep: F.scaled_dot_product_attention(
        q, k, v, attn_mask=(positions(1)[None, :] <= positions(LQ)[:, None]) & keep),
    # q - (-1) * 1 is q + 1: query i sees key i + 1.
    lambda q, k, v, keep: F.scaled_dot_product_attention(
        q, k, v, attn_mask=positions(LK)[None, :] <= positions(LQ)[:, None].add(-1, alpha=-1)),
    # Written after it is built: query 0 sees key 5 too.
    lambda q, k, v, keep: F.scaled_dot_product_attention(q, k, v, attn_mask=written_mask()),
], ids=["later_key", "transposed", "or", "strided", "tensor_positions", "is_causal",
        "additive", "one_key_position", "alpha", "written"])
def test_other_masks_are_left_alone(fn):
    gm = converted(fn, inputs())
    assert causal_masks.op not in attention_calls(gm)


def test_attention_needing_gradients_is_left_alone():
    q, k, v, keep = inputs()
    gm = converted(hugging_face, (q.requires_grad_(), k, v, keep))
    assert causal_masks.op not in attention_calls(gm)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_causal_mask_runs_causal_on_the_card(dtype, monkeypatch):
    """Compiled: eager's values, and fewer simulated cycles than the same
    mask computed over every block."""
    from spyre_mlir.inductor import backend
    args = inputs(dtype, heads=32, lq=256, lk=258)
    # The second graph is the first one's to Inductor's cache.
    monkeypatch.setattr(backend, "CONFIG", {**backend.CONFIG, "fx_graph_cache": False})

    def run():
        torch._dynamo.reset()
        counters.reset()
        with torch.no_grad():
            out = torch.compile(lambda *a: attend(*a), backend="spyre")(*args)
        assert dict(counters.fallbacks) == {}
        assert "attention" in counters.cycles_per_kernel
        return out, counters.simulated_cycles

    def attend(q, k, v, keep):
        kv, qi = torch.arange(258)[None, None, None, :], torch.arange(256)[None, None, :, None]
        mask = (kv <= qi) & keep[:, None, None, :]
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    causal, causal_cycles = run()
    monkeypatch.setattr(causal_masks, "use_causal_attention", lambda graph: None)
    dense, dense_cycles = run()
    expected = attend(*(a.float() if a.is_floating_point() else a for a in args))
    rows = slice(3, None)  # rows with a visible key (eager gives NaN for the others)
    for out in (causal, dense):
        torch.testing.assert_close(out[:, :, rows].float(), expected[:, :, rows],
                                   **tolerance(dtype, 258))
        assert out[:, :, :3].eq(0).all()
    # f16: 55.2 against 70.3 us. f32: 68.1 against 70.3: its causal panels
    # run in blocks of 64 keys, the estimate's choice (in blocks of 128 the
    # kernel takes 56.3 us rather than 64.5).
    assert causal_cycles < (0.9 if dtype == torch.float16 else 1.0) * dense_cycles
