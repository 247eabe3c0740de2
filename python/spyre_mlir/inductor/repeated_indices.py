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

from .manual_attention import _arg, _call, _only_user, _value


def expand_repeated_gather_indices(graph: torch.fx.Graph) -> int:
    """Rewrites each such repeat to an expand; returns how many."""
    rewritten = 0
    for node in list(graph.nodes):
        if not _call(node, (torch.gather,), ("gather",)) or _arg(node, 3, "sparse_grad"):
            continue
        dim, repeat = _arg(node, 1, "dim"), _arg(node, 2, "index")
        if not isinstance(dim, int) or not _call(repeat, (torch.Tensor.repeat,), ("repeat",)) or \
                not _only_user(repeat, node):
            continue
        source, counts = repeat.args[0], repeat.args[1:]
        if len(counts) == 1 and isinstance(counts[0], (tuple, list)):
            counts = tuple(counts[0])
        value = _value(source)
        if value is None or len(counts) != value.dim() or \
                not all(isinstance(c, int) for c in counts):
            continue
        dim %= value.dim()
        if not all(c == 1 or (d > dim and value.shape[d] == 1) for d, c in enumerate(counts)):
            continue
        # -1 keeps a dimension as it is: its size may be symbolic (a dynamic
        # graph's positions), and written as the traced value it would
        # hold every later call to the first call's size.
        sizes = [-1 if c == 1 else c for c in counts]  # a repeated dimension is 1
        with graph.inserting_before(repeat):
            expand = graph.call_method("expand", (source, *sizes))
        expand.meta = {**repeat.meta, "example_value": value.expand(*sizes)}
        repeat.replace_all_uses_with(expand)
        graph.erase_node(repeat)
        rewritten += 1
    return rewritten
