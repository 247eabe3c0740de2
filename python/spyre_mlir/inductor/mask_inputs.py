"""Integer masks passed as int64 inputs, compiled as what they hold: 0 and 1.

A padded batch gives a model an int64 attention mask, and OPT and BLOOM
count positions from it (`attention_mask.cumsum(-1)`). The card sums in f32,
exact to 2^24, and an int64 input may hold anything up to ranges.INT64_INPUTS
(2^24): a sum of 48 of them is not provably exact, so the kernel that counts
ran on the CPU, and with it much of the model (BLOOM: 82 ops).

When the graph is compiled, an int64 input that holds only 0 and 1 and
reaches a sum or a running sum is taken to be such a mask: the compiled
graph reads it through clamp(x, 0, 1), which changes none of its values and
gives the range analysis the bound it needs. Every call checks that the
inputs still hold only 0 and 1; the first call whose inputs do not compiles
the graph without the assumption (torch.compile's guards do not look at
values) and uses that version from then on.
"""

from __future__ import annotations

import copy

import torch

from .grouped_attention import aliases, written_in_place

_SUMS = ("sum", "cumsum", "nansum")


def _is_sum(node: torch.fx.Node) -> bool:
    if node.op == "call_method":
        return node.target in _SUMS
    return node.op == "call_function" and getattr(node.target, "__name__", None) in _SUMS


def _reaches_sum(node: torch.fx.Node) -> bool:
    seen, stack = {node}, [node]
    while stack:
        for user in stack.pop().users:
            if _is_sum(user):
                return True
            if user not in seen:
                seen.add(user)
                stack.append(user)
    return False


def zero_one_inputs(gm: torch.fx.GraphModule, example_inputs) -> list[int]:
    """Positions of the int64 inputs that hold only 0 and 1, reach a sum and
    are neither written in place nor returned, themselves or through a view
    (read through the clamp, a write or a returned view would not reach the
    caller's tensor)."""
    from .backend import _outside
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    found = []
    for i, (node, x) in enumerate(zip(placeholders, example_inputs)):
        if isinstance(x, torch.Tensor) and x.dtype == torch.int64 and x.numel() and \
                not written_in_place(node) and \
                not any(u.op == "output" for a in aliases(node) for u in a.users) and \
                not _outside(x, 0, 1) and _reaches_sum(node):
            found.append(i)
    return found


def clamped(gm: torch.fx.GraphModule, positions: list[int]) -> torch.fx.GraphModule:
    """A copy of `gm` whose inputs at `positions` are read through
    clamp(x, 0, 1). The graph is copied node by node (metadata shared, as
    Graph.node_copy does): a deep copy would duplicate the real tensors that
    Dynamo keeps in the placeholders' metadata, a model's weights."""
    graph = torch.fx.Graph()
    graph._codegen = copy.deepcopy(gm.graph._codegen)
    values: dict = {}
    result, output = graph.graph_copy(gm.graph, values, return_output_node=True)
    graph.output(result, type_expr=output.type).meta = copy.copy(output.meta)
    placeholders = [values[n] for n in gm.graph.nodes if n.op == "placeholder"]
    for i in positions:
        x = placeholders[i]
        with graph.inserting_after(x):
            bounded = graph.call_function(torch.clamp, (x, 0, 1))
        bounded.meta = copy.copy(x.meta)
        x.replace_all_uses_with(bounded, delete_user_cb=lambda user: user is not bounded)
    result = torch.fx.GraphModule(gm, graph)
    result.meta = dict(gm.meta)
    return result


class ZeroOneSpecialized:
    """The graph compiled for masks of 0 and 1 (`clamped`), and the general
    version, compiled by the first call whose masks hold anything else."""

    def __init__(self, gm, example_inputs, positions: list[int], compile_graph):
        self.gm, self.positions, self.compile_graph = gm, positions, compile_graph
        self.specialized = compile_graph(clamped(gm, positions), gm, example_inputs)
        self.general = None

    def __call__(self, *args):
        from .backend import _outside
        if self.general is None and not any(_outside(args[i], 0, 1) for i in self.positions
                                            if args[i].numel()):
            return self.specialized(*args)
        if self.general is None:
            self.specialized = None
            self.general = self.compile_graph(self.gm, self.gm, list(args))
        return self.general(*args)
