"""Masks passed as inputs, compiled as what they hold.

Two kinds of graph inputs are compiled for the values they hold when the
graph is compiled, because those values let the card do better:

- An int64 input holding only 0 and 1 that reaches a sum or a running sum
  (a padded batch's attention mask, from which OPT and BLOOM count
  positions with `attention_mask.cumsum(-1)`). The card sums in f32, exact
  to 2^24, and an int64 input may hold anything up to ranges.INT64_INPUTS
  (2^24): a sum of 48 of them is not provably exact, so the kernel that
  counts ran on the CPU, and with it much of the model (BLOOM: 82 ops). The
  compiled graph reads it through clamp(x, 0, 1), which changes none of its
  values and gives the range analysis the bound it needs.
- A boolean input that is an attention call's mask and hides every key
  after its query (key j of query i, j > i). Hugging Face's `generate` with
  a static cache builds the prefill's mask outside the compiled forward, so
  causal_masks.py cannot read its construction; the compiled graph calls
  spyre::causal_attention with it, which skips the keys' blocks past the
  diagonal (a 1B Llama layer at 512 tokens: 190 -> 116 us).

Every call checks that its inputs still hold what was assumed; the first
call whose inputs do not compiles the graph without the assumptions
(torch.compile's guards do not look at values) and uses that version from
then on.
"""

from __future__ import annotations

import copy
from typing import Callable, NamedTuple

import torch

from . import causal_masks
from .grouped_attention import aliases, written_in_place

_SUMS = ("sum", "cumsum", "nansum")


class Assumption(NamedTuple):
    """What input `position` is compiled for: `holds` checks a call's
    tensor, `apply` rewrites the graph's copy of its placeholder."""
    position: int
    holds: Callable[[torch.Tensor], bool]
    apply: Callable[[torch.fx.Graph, torch.fx.Node], None]


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


def _zero_one(tensor: torch.Tensor) -> bool:
    from .backend import _outside
    return not tensor.numel() or not _outside(tensor, 0, 1)


def _returned_views(x: torch.fx.Node) -> list[list[torch.fx.Node]] | None:
    """The chains of views from `x` (last first, `x` excluded) that the
    graph returns; None if one is not a chain whose views read it first."""
    chains, views = [], set(aliases(x))
    for returned in aliases(x):
        if returned is x or not any(u.op == "output" for u in returned.users):
            continue
        chain = [returned]
        while chain[-1].args and chain[-1].args[0] is not x:
            if not isinstance(chain[-1].args[0], torch.fx.Node) or \
                    chain[-1].args[0] not in views:
                return None
            chain.append(chain[-1].args[0])
        if not chain[-1].args:
            return None
        chains.append(chain)
    return chains


def _returned_views_kept(graph: torch.fx.Graph, x: torch.fx.Node) -> set:
    """Copies of the chains of views from `x` that the graph returns (a
    router returns its one-hot mask permuted, and sums it), which the output
    reads instead: what it returns must stay a view of the caller's tensor,
    not of the clamped copy. Returns the copies' first nodes, which read `x`."""
    output = next(n for n in graph.nodes if n.op == "output")
    kept = set()
    for chain in _returned_views(x):
        copies = {}
        with graph.inserting_before(output):
            for node in reversed(chain):
                copies[node] = graph.node_copy(node, lambda n: copies.get(n, n))
        kept.add(copies[chain[-1]])
        output.replace_input_with(chain[0], copies[chain[0]])
    return kept


def _clamp(graph: torch.fx.Graph, x: torch.fx.Node) -> None:
    kept = _returned_views_kept(graph, x)
    with graph.inserting_after(x):
        bounded = graph.call_function(torch.clamp, (x, 0, 1))
    bounded.meta = copy.copy(x.meta)
    x.replace_all_uses_with(bounded, delete_user_cb=lambda user: (
        user is not bounded and user not in kept and user.op != "output"))


def _hides_later_keys(tensor: torch.Tensor) -> bool:
    from .counting import host_side
    with host_side():
        return causal_masks.hides_later_keys(tensor)


def zero_one_inputs(gm: torch.fx.GraphModule, example_inputs) -> list[int]:
    """Positions of the int64 inputs that hold only 0 and 1, reach a sum and
    are not written in place, themselves or through a view (read through
    the clamp, a write would not reach the caller's tensor). What the graph
    returns of them is read from the input itself (`_returned_views_kept`)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return [i for i, (node, x) in enumerate(zip(placeholders, example_inputs))
            if isinstance(x, torch.Tensor) and x.dtype == torch.int64 and x.numel() and
            not written_in_place(node) and _returned_views(node) is not None and
            _zero_one(x) and _reaches_sum(node)]


def causal_inputs(gm: torch.fx.GraphModule, example_inputs) -> list[int]:
    """Positions of the boolean inputs that are attention masks
    (causal_masks.attentions_masked_by), hide every later key and are not
    written in place."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return [i for i, (node, x) in enumerate(zip(placeholders, example_inputs))
            if isinstance(x, torch.Tensor) and x.dtype == torch.bool and
            causal_masks.attentions_masked_by(node) and not written_in_place(node) and
            _hides_later_keys(x)]


def assumptions(gm: torch.fx.GraphModule, example_inputs) -> list[Assumption]:
    return [Assumption(i, _zero_one, _clamp) for i in zero_one_inputs(gm, example_inputs)] + \
        [Assumption(i, _hides_later_keys, causal_masks.run_causal_on)
         for i in causal_inputs(gm, example_inputs)]


def copied(gm: torch.fx.GraphModule) -> tuple[torch.fx.Graph, dict]:
    """A copy of `gm`'s graph to rewrite, and the map from its nodes to the
    copy's. The graph is copied node by node (metadata shared, as
    Graph.node_copy does): a deep copy would duplicate the real tensors that
    Dynamo keeps in the placeholders' metadata, a model's weights."""
    graph = torch.fx.Graph()
    graph._codegen = copy.deepcopy(gm.graph._codegen)
    values: dict = {}
    result, output = graph.graph_copy(gm.graph, values, return_output_node=True)
    graph.output(result, type_expr=output.type).meta = copy.copy(output.meta)
    return graph, values


def module_of(gm: torch.fx.GraphModule, graph: torch.fx.Graph) -> torch.fx.GraphModule:
    """`graph`, a rewritten copy of gm's, as a module of gm's attributes."""
    result = torch.fx.GraphModule(gm, graph)
    result.meta = dict(gm.meta)
    return result


def specialized(gm: torch.fx.GraphModule, assumed: list[Assumption]) -> torch.fx.GraphModule:
    """A copy of `gm` rewritten for the `assumed` inputs."""
    graph, values = copied(gm)
    placeholders = [values[n] for n in gm.graph.nodes if n.op == "placeholder"]
    for a in assumed:
        a.apply(graph, placeholders[a.position])
    return module_of(gm, graph)


class Specialized:
    """The graph compiled for what its inputs held (`specialized`), and the
    general version, compiled by the first call whose inputs hold anything
    else."""

    def __init__(self, gm, example_inputs, assumed: list[Assumption], compile_graph):
        self.gm, self.assumed, self.compile_graph = gm, assumed, compile_graph
        self.specialized = compile_graph(specialized(gm, assumed), gm, example_inputs)
        self.general = None

    def __call__(self, *args):
        if self.general is None and all(a.holds(args[a.position]) for a in self.assumed):
            return self.specialized(*args)
        if self.general is None:
            self.specialized = None
            self.general = self.compile_graph(self.gm, self.gm, list(args))
        return self.general(*args)
