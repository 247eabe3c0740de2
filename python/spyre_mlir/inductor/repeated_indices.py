"""Gathers whose index is repeated along the gathered rows, as expanded.

GPT-J and CodeGen look up their rotary table at each position with

    torch.gather(table, 1, position_ids.unsqueeze(-1).repeat(1, 1, table.shape[-1]))

The repeat is a copy, indistinguishable once traced from any index, so the
gather was a pick that compared every index with every position (242 us for
512 positions of a 1024-row table; quadratic in the positions). The same
index expanded is a view of stride 0 along the row, which the gather
decomposition recognises as a lookup of whole rows (decompositions._rows_gather).
This pass, on Dynamo's graph before AOTAutograd, makes a repeat that only a
gather reads, repeating its index's size-1 dimensions after the gathered
one, an expand: the same values, and gather only reads its index.
"""

from __future__ import annotations

import torch


def _shape(node):
    value = node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None
    return tuple(value.shape) if isinstance(value, torch.Tensor) else None


def _is_gather(node: torch.fx.Node) -> bool:
    return (node.op == "call_function" and node.target is torch.gather or
            node.op == "call_method" and node.target == "gather")


def _is_repeat(node) -> bool:
    return isinstance(node, torch.fx.Node) and (
        node.op == "call_method" and node.target == "repeat" or
        node.op == "call_function" and node.target is torch.Tensor.repeat)


def _gather_operands(node: torch.fx.Node):
    """(input, dim, index) of a gather node, or None if its dim is not an int."""
    args = list(node.args)
    for name in ("dim", "index")[len(args) - 1:]:
        args.append(node.kwargs.get(name))
    if not isinstance(args[1], int):
        return None
    return args[0], args[1], args[2]


def expand_repeated_gather_indices(graph: torch.fx.Graph) -> int:
    """Rewrites each such repeat to an expand; returns how many."""
    rewritten = 0
    for node in list(graph.nodes):
        if not _is_gather(node) or node.kwargs.get("sparse_grad"):
            continue
        operands = _gather_operands(node)
        if operands is None:
            continue
        _, dim, repeat = operands
        if not _is_repeat(repeat) or len(repeat.users) != 1:
            continue
        source = repeat.args[0]
        counts = repeat.args[1:]
        if len(counts) == 1 and isinstance(counts[0], (tuple, list)):
            counts = tuple(counts[0])
        shape = _shape(source)
        if shape is None or len(counts) != len(shape) or \
                not all(isinstance(c, int) for c in counts):
            continue
        dim %= len(shape)
        if not all(c == 1 or (d > dim and shape[d] == 1) for d, c in enumerate(counts)):
            continue
        with graph.inserting_before(repeat):
            expand = graph.call_method("expand", (source, *(s * c for s, c in zip(shape, counts))))
        expand.meta = dict(repeat.meta)
        value = source.meta.get("example_value")
        if isinstance(value, torch.Tensor):
            expand.meta["example_value"] = value.expand(*(s * c for s, c in zip(shape, counts)))
        repeat.replace_all_uses_with(expand)
        graph.erase_node(repeat)
        rewritten += 1
    return rewritten
