"""int64 inputs holding only 0 and 1 that reach a sum are compiled as masks
(inductor/mask_inputs.py): their running sums run on the card, and inputs
that stop being masks are still computed right."""

import pytest
import torch

from spyre_mlir.inductor import counters, mask_inputs
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


@pytest.mark.parametrize("fn, mask, expected", [
    (positions, padded_mask(), ["L_mask_"]),
    # Token ids, not a mask.
    (positions, torch.arange(2 * LENGTH).reshape(2, LENGTH), []),
    # A mask that reaches no sum needs no bound.
    (lambda x, mask: x * mask, padded_mask(), []),
    # Written in place, itself or through a view, or returned as a view:
    # read as it is, so that the caller's tensor is the one written or seen.
    (written, padded_mask(), []),
    (written_through_a_view, padded_mask(), []),
    (returned_as_a_view, padded_mask(), []),
], ids=["mask", "token_ids", "no_sum", "written", "written_through_a_view",
        "returned_as_a_view"])
def test_which_inputs_are_masks(fn, mask, expected):
    assert graph_inputs(fn, torch.randn(2, LENGTH), mask) == expected


def test_clamped_graph_computes_the_same():
    x, mask = torch.randn(2, LENGTH), padded_mask()
    gm = dynamo_graph(positions, x, mask)
    assert [n.target for n in gm.graph.nodes if n.op == "placeholder"] == ["L_mask_", "L_x_"]
    bounded = mask_inputs.clamped(gm, [0])
    assert sum(n.target is torch.clamp for n in bounded.graph.nodes) == 1
    assert not any(n.target is torch.clamp for n in gm.graph.nodes)  # a copy
    torch.testing.assert_close(bounded(mask, x)[0], gm(mask, x)[0])


def test_a_mask_written_through_a_view_is_written():
    torch._dynamo.reset()
    x, mask = torch.randn(2, LENGTH), padded_mask()
    expected_mask = mask.clone()
    expected = written_through_a_view(x, expected_mask)
    actual = torch.compile(written_through_a_view, backend="spyre")(x, mask)
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(mask, expected_mask)
