"""int64 inputs holding only 0 and 1 that reach a sum are compiled as masks
(inductor/mask_inputs.py): their running sums run on the card, and inputs
that stop being masks are still computed right."""

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import causal_masks, counters, mask_inputs
from test_torch_attention import dynamo_graph

LENGTH = 48  # 48 int64 terms of up to 2^24 are not exact in the card's f32 sums


def positions(x, mask):
    """OPT's and BLOOM's positions of a padded batch."""
    return x * ((mask.cumsum(-1) - 1) * mask)


def compiled(fn, *args):
    counters.reset()
    return fn(*args)


def padded_mask():
    mask = torch.ones(2, LENGTH, dtype=torch.long)
    mask[1, :7] = 0
    return mask


def test_running_sum_of_a_mask_runs_on_the_card():
    torch._dynamo.reset()
    fn = torch.compile(positions, backend="spyre")
    x, mask = torch.randn(2, LENGTH), padded_mask()
    torch.testing.assert_close(compiled(fn, x, mask), positions(x, mask))
    assert dict(counters.fallbacks) == {}
    assert counters.kernels_run > 0
    # Another mask: the same compiled graph.
    other = torch.ones_like(mask)
    torch.testing.assert_close(compiled(fn, x, other), positions(x, other))
    assert dict(counters.fallbacks) == {}


def test_an_input_that_stops_being_a_mask_is_still_right():
    """Values beyond 1 compile the general graph, whose sum of possibly
    inexact terms runs on the CPU (counted), and are computed as eager."""
    torch._dynamo.reset()
    fn = torch.compile(positions, backend="spyre")
    x, mask = torch.randn(2, LENGTH), padded_mask()
    compiled(fn, x, mask)
    counts = mask * 3
    torch.testing.assert_close(compiled(fn, x, counts), positions(x, counts))
    assert sum(counters.fallbacks.values()) > 0
    # From then on the general graph, also for masks.
    torch.testing.assert_close(compiled(fn, x, mask), positions(x, mask))


def graph_inputs(fn, x, mask):
    """The names of the inputs of fn's graph that are masks."""
    gm = dynamo_graph(fn, x, mask)
    # Dynamo's graph takes the inputs in the order the function first reads them.
    names = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    values = {"L_x_": x, "L_mask_": mask}
    return [names[i] for i in mask_inputs.zero_one_inputs(gm, [values[n] for n in names])]


def written(x, mask):
    mask.add_(0)
    return x * mask.cumsum(-1)


def written_through_a_view(x, mask):
    s = mask.cumsum(-1)
    mask.view(-1).mul_(2)
    return x * s


def returned_as_a_view(x, mask):
    return x * mask.cumsum(-1), mask[:, :4]


def returned_permuted_and_itself(x, mask):
    # Switch Transformers' router: its one-hot mask summed and returned.
    view = mask.t()
    return view.sum(-1) > 0, view, mask


@pytest.mark.parametrize("fn, mask, expected", [
    (positions, padded_mask(), ["L_mask_"]),
    # Token ids, not a mask.
    (positions, torch.arange(2 * LENGTH).reshape(2, LENGTH), []),
    # A mask that reaches no sum needs no bound.
    (lambda x, mask: x * mask, padded_mask(), []),
    # Written in place, itself or through a view: read as it is, so that
    # the caller's tensor is the one written.
    (written, padded_mask(), []),
    (written_through_a_view, padded_mask(), []),
    # Returned as a view: a mask, what is returned read from the input.
    (returned_as_a_view, padded_mask(), ["L_mask_"]),
], ids=["mask", "token_ids", "no_sum", "written", "written_through_a_view",
        "returned_as_a_view"])
def test_which_inputs_are_masks(fn, mask, expected):
    assert graph_inputs(fn, torch.randn(2, LENGTH), mask) == expected


def test_clamped_graph_computes_the_same():
    x, mask = torch.randn(2, LENGTH), padded_mask()
    gm = dynamo_graph(positions, x, mask)
    assert [n.target for n in gm.graph.nodes if n.op == "placeholder"] == ["L_mask_", "L_x_"]
    bounded = mask_inputs.specialized(gm, mask_inputs.assumptions(gm, [mask, x]))
    assert sum(n.target is torch.clamp for n in bounded.graph.nodes) == 1
    assert not any(n.target is torch.clamp for n in gm.graph.nodes)  # a copy
    torch.testing.assert_close(bounded(mask, x)[0], gm(mask, x)[0])


def test_a_mask_returned_as_a_view_is_still_a_view_of_the_callers_tensor():
    torch._dynamo.reset()
    x, mask = torch.randn(2, LENGTH), padded_mask()
    fn = torch.compile(returned_permuted_and_itself, backend="spyre")
    hit, view, same = compiled(fn, x, mask)
    assert dict(counters.fallbacks) == {}  # the sum of 48 terms on the card
    torch.testing.assert_close(hit, mask.t().sum(-1) > 0)
    assert same is mask
    assert view.untyped_storage().data_ptr() == mask.untyped_storage().data_ptr()
    torch.testing.assert_close(view, mask.t())


def test_a_mask_written_through_a_view_is_written():
    torch._dynamo.reset()
    x, mask = torch.randn(2, LENGTH), padded_mask()
    expected_mask = mask.clone()
    expected = written_through_a_view(x, expected_mask)
    actual = torch.compile(written_through_a_view, backend="spyre")(x, mask)
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(mask, expected_mask)


# Boolean attention masks passed as inputs (Hugging Face's generate builds
# the prefill's mask outside the compiled forward).

def attend(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def attend_and_write(q, k, v, mask):
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    mask.logical_not_()
    return out


def attend_after_padding(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask[..., 1:])


def causal_mask(lq, lk, padding=3):
    """A static cache's prefill mask: key j for query i if j <= i, the first
    `padding` keys (left padding) never."""
    mask = (torch.arange(lk)[None, :] <= torch.arange(lq)[:, None])[None, None].clone()
    mask[..., :padding] = False
    return mask


def attention_inputs(heads=4, lq=64, lk=66, dtype=torch.float32):
    torch.manual_seed(0)
    q = torch.randn(1, heads, lq, 32).to(dtype)
    k, v = (torch.randn(1, heads, lk, 32).to(dtype) for _ in range(2))
    return q, k, v, causal_mask(lq, lk)


def later_key_visible():
    mask = causal_mask(64, 66)
    mask[0, 0, 10, 11] = True
    return mask


@pytest.mark.parametrize("fn, mask, expected", [
    (attend, causal_mask(64, 66), ["L_mask_"]),
    # One row for every query: causal only if it shows the first key alone.
    (attend, causal_mask(1, 66, padding=0), ["L_mask_"]),
    (attend, causal_mask(41, 66, padding=0)[..., 40:, :], []),
    (attend, later_key_visible(), []),
    (attend, causal_mask(64, 66).float(), []),
    (attend_and_write, causal_mask(64, 66), []),
    # Its mask is a slice of the input: the input's causality is not its.
    (attend_after_padding, causal_mask(64, 67), []),
], ids=["causal", "one_row", "one_row_of_a_decode_step", "later_key_visible", "additive", "written",
        "sliced"])
def test_which_inputs_are_causal_masks(fn, mask, expected):
    q, k, v, _ = attention_inputs()
    gm = dynamo_graph(fn, q, k, v, mask)
    names = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    values = {"L_q_": q, "L_k_": k, "L_v_": v, "L_mask_": mask}
    found = mask_inputs.causal_inputs(gm, [values[n] for n in names])
    assert [names[i] for i in found] == expected


def test_causal_mask_inputs_run_causal_on_the_card(monkeypatch):
    """Eager's values, fewer simulated cycles than the same mask over every
    block; a mask that stops being causal compiles the general graph and is
    still right."""
    from spyre_mlir.inductor import backend
    q, k, v, mask = attention_inputs(heads=32, lq=256, lk=258, dtype=torch.float16)
    monkeypatch.setattr(backend, "CONFIG", {**backend.CONFIG, "fx_graph_cache": False})
    expected = attend(q.float(), k.float(), v.float(), mask)
    rows = slice(3, None)  # rows with a visible key (eager gives NaN for the others)

    def run(fn, mask):
        counters.reset()
        with torch.no_grad():
            out = fn(q, k, v, mask)
        assert dict(counters.fallbacks) == {}
        return out, counters.simulated_cycles

    torch._dynamo.reset()
    fn = torch.compile(attend, backend="spyre")
    causal, causal_cycles = run(fn, mask)
    torch.testing.assert_close(causal[:, :, rows].float(), expected[:, :, rows],
                               atol=2e-2, rtol=2e-2)
    other = mask.clone()
    other[..., 100, 200] = True  # a later key: not causal any more
    general, _ = run(fn, other)
    torch.testing.assert_close(general[:, :, rows].float(),
                               attend(q.float(), k.float(), v.float(), other)[:, :, rows],
                               atol=2e-2, rtol=2e-2)

    monkeypatch.setattr(mask_inputs, "causal_inputs", lambda gm, inputs: [])
    torch._dynamo.reset()
    dense, dense_cycles = run(torch.compile(attend, backend="spyre"), mask)
    torch.testing.assert_close(dense[:, :, rows].float(), expected[:, :, rows],
                               atol=2e-2, rtol=2e-2)
    assert causal_cycles < 0.9 * dense_cycles


def attend_repeated(q, k, v, mask):
    """Key and value heads repeated for the query heads, as Llama's repeat_kv."""
    k, v = (x.repeat_interleave(4, dim=1) for x in (k, v))
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def test_repeated_heads_reach_causal_attention_unrepeated():
    """The causal call hides the attention from the pass that ungroups
    repeated heads: the specialized graph ungroups them first."""
    q, _, _, mask = attention_inputs(heads=8)
    k, v = (torch.randn(1, 2, 66, 32) for _ in range(2))
    gm = dynamo_graph(attend_repeated, q, k, v, mask)
    names = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    values = {"L_q_": q, "L_k_": k, "L_v_": v, "L_mask_": mask}
    inputs = [values[n] for n in names]
    graph = mask_inputs.specialized(gm, mask_inputs.assumptions(gm, inputs))
    [call] = [n for n in graph.graph.nodes if n.target is causal_masks.op]
    assert call.args[1].meta["example_value"].shape[1] == 2
    assert not any("repeat" in str(n.target) for n in graph.graph.nodes)
    expected = attend_repeated(q, k, v, mask)
    rows = slice(3, None)
    torch.testing.assert_close(graph(*inputs)[0][:, :, rows], expected[:, :, rows])
