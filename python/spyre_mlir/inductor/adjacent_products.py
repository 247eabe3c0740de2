"""Matrix products of one input placed next to each other in the post-grad
graph, so that the scheduler runs them side by side (docs/matmul.md,
"Products side by side").

Inductor's `reorder_for_locality` moves each node's producers right before
it: a layer's key projection is followed by its rotary embedding and cache
update before the value projection, which reads the same x, comes. Each
`mm` whose lhs and operand shapes are an earlier `mm`'s moves to right
after it, with the views of its rhs that only it reads (nn.Linear's
transposed weight), when everything else it reads is computed before that
product and nothing between them writes in place: the same program in
another order.
"""

from __future__ import annotations

import torch
from torch import fx

_VIEWS = {torch.ops.aten.permute.default, torch.ops.aten.t.default,
          torch.ops.aten.view.default, torch.ops.aten.reshape.default,
          torch.ops.aten.expand.default}


def _shape(node) -> tuple | None:
    val = node.meta.get("val") if isinstance(node, fx.Node) else None
    return (tuple(val.shape), val.dtype, val.stride()) if isinstance(val, torch.Tensor) else None


def _lhs(product: fx.Node):
    """What a product's lhs reads: a view of a node (each nn.Linear reshapes
    x itself) stands for that node seen in that shape."""
    lhs = product.args[0]
    if isinstance(lhs, fx.Node) and lhs.op == "call_function" and lhs.target in _VIEWS:
        return lhs.args[0], _shape(lhs)
    return lhs, _shape(lhs)


def _base(node):
    """The node whose storage `node` views (itself if it is no view)."""
    while isinstance(node, fx.Node) and node.op == "call_function" and node.target in _VIEWS:
        node = node.args[0]
    return node


def _writes(node: fx.Node) -> set:
    """The storages an in-place op (a graph input's `copy_`) writes."""
    schema = getattr(node.target, "_schema", None)
    if node.op != "call_function" or schema is None or not schema.is_mutable:
        return set()
    return {_base(arg) for arg, info in zip(node.args, schema.arguments)
            if isinstance(arg, fx.Node) and info.alias_info is not None and
            info.alias_info.is_write}


def _movable_inputs(product: fx.Node, before: dict, limit: int) -> list[fx.Node] | None:
    """The nodes to move with `product` so that it can follow position
    `limit`: views of nodes already before it that only it reads. None if
    something it reads is computed later."""
    moved = []
    for arg in product.all_input_nodes:
        if before[arg] < limit:
            continue
        if arg.op != "call_function" or arg.target not in _VIEWS or len(arg.users) != 1 or \
                any(before[a] >= limit for a in arg.all_input_nodes):
            return None
        moved.append(arg)
    return moved


def place_products_together(graph: fx.Graph) -> int:
    """Moves each `mm` that shares its lhs and shapes with an earlier one to
    right after it (above); returns how many moved."""
    mm = torch.ops.aten.mm.default
    moved = 0
    products = [n for n in graph.nodes if n.op == "call_function" and n.target is mm]
    taken = set()
    for first in products:
        if first in taken:
            continue
        position = {n: i for i, n in enumerate(graph.nodes)}
        for second in products:
            if second in taken or position[second] <= position[first] or \
                    _lhs(second) != _lhs(first) or \
                    _shape(second.args[1]) != _shape(first.args[1]) or \
                    _shape(second) != _shape(first):
                continue
            if position[second] == position[first] + 1:
                taken.update((first, second))
                break
            inputs = _movable_inputs(second, position, position[first] + 1)
            if inputs is None:
                continue
            # It must not move before a write to what it reads.
            read = {_base(a) for n in [second, *inputs] for a in n.all_input_nodes}
            nodes = list(graph.nodes)
            if any(_writes(n) & read for n in nodes[position[first] + 1:position[second]]):
                continue
            anchor = first
            for node in inputs:
                anchor.append(node)
                anchor = node
            anchor.append(second)
            taken.update((first, second))
            moved += 1
            break
    if moved:
        graph.lint()
    return moved
