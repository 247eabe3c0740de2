"""A concatenation of a tensor's two halves in swapped order, either or both
negated (`torch.cat((-x2, x1), -1)`: rotary embeddings' rotate_half, the
halves sliced or from `x.chunk(2, -1)`), as one elementwise expression of
the tensor.

Concatenations run on the card as copies into slices of a buffer of their own
(backend.py: no masked loads), so rotate_half cost a kernel phase per half
and a round trip through device memory before the rotation could read it.
Swapping the halves is a flip of a [2, h] view of the dimension, and the sign
a select on which half an element is in: both index the tensor directly, so
Inductor fuses them into whatever reads the result.
"""

from __future__ import annotations

import operator

import torch
from torch import fx
from torch._guards import detect_fake_mode

aten = torch.ops.aten


def _split_half(node, dim: int, size: int):
    """(source, start) when `node` is a piece of `aten.split.Tensor` of a
    tensor into halves along `dim` (`x.chunk(2, dim)`, `x.split(h, dim)`);
    else None."""
    if not (node.op == "call_function" and node.target is operator.getitem):
        return None
    split, index = node.args
    if not (isinstance(split, fx.Node) and split.op == "call_function" and
            split.target is aten.split.Tensor and index in (0, 1)):
        return None
    source, pieces, sdim = (*split.args, 0)[:3]
    value = source.meta.get("val") if isinstance(source, fx.Node) else None
    if not isinstance(value, torch.Tensor) or sdim % value.dim() != dim or \
            value.shape[dim] != size or pieces != size // 2:
        return None
    return source, index * pieces


def _half(node, dim: int, size: int):
    """(source, start, negated) when `node` is a slice of a tensor along `dim`
    of length `size` // 2, possibly negated; else None."""
    negated = node.op == "call_function" and node.target is aten.neg.default
    if negated:
        node = node.args[0]
    if not isinstance(node, fx.Node):
        return None
    if (piece := _split_half(node, dim, size)) is not None:
        return (*piece, negated)
    if not (node.op == "call_function" and node.target is aten.slice.Tensor):
        return None
    defaults = (None, 0, None, None, 1)  # aten.slice.Tensor(self, dim, start, end, step)
    source, sdim, start, end, step = (*node.args, *defaults[len(node.args):])
    value = source.meta.get("val") if isinstance(source, fx.Node) else None
    if not isinstance(value, torch.Tensor) or step != 1 or \
            sdim % value.dim() != dim or value.shape[dim] != size:
        return None
    start, end = start or 0, min(end if end is not None else size, size)
    half = size // 2
    if (start, end) not in ((0, half), (half, size)):
        return None
    return source, start, negated


def _add(graph: fx.Graph, mode, target, *args, **kwargs) -> fx.Node:
    """A call of `target` (an op as the post-grad graph has it: decomposed)
    with its fake value in meta, as Inductor lowers it."""
    node = graph.call_function(target, args, kwargs)
    values = [a.meta["val"] if isinstance(a, fx.Node) else a for a in args]
    with mode:
        node.meta["val"] = target(*values, **kwargs)
    return node


def swap_halves(graph: fx.Graph) -> int:
    """Rewrites each such concatenation; returns how many."""
    rewritten = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.cat.default:
            continue
        tensors = node.args[0]
        out = node.meta.get("val")
        if len(tensors) != 2 or not isinstance(out, torch.Tensor) or \
                any(not isinstance(s, int) for s in out.shape):
            continue
        dim = (node.args[1] if len(node.args) > 1 else 0) % out.dim()
        size = out.shape[dim]
        halves = [_half(t, dim, size) for t in tensors]
        if size % 2 or None in halves or halves[0][0] is not halves[1][0] or \
                (halves[0][1], halves[1][1]) != (size // 2, 0):
            continue
        source = halves[0][0]
        mode = detect_fake_mode([source.meta["val"]])
        if mode is None or source.meta["val"].dtype != out.dtype:
            continue
        shape = list(out.shape)
        split = shape[:dim] + [2, size // 2] + shape[dim + 1:]
        with graph.inserting_before(node):
            swapped = _add(graph, mode, torch.ops.prims.rev.default,
                           _add(graph, mode, aten.reshape.default, source, split), [dim])
            first_negated, second_negated = halves[0][2], halves[1][2]
            if first_negated and second_negated:
                swapped = _add(graph, mode, aten.neg.default, swapped)
            elif first_negated or second_negated:
                # Which half an element is in, as a [2, 1, ...] mask.
                which = _add(graph, mode, torch.ops.prims.iota.default, 2, start=0, step=1,
                             dtype=torch.int32, device=out.device, requires_grad=False)
                which = _add(graph, mode, aten.reshape.default, which,
                             [2] + [1] * (len(split) - dim - 1))
                in_first = _add(graph, mode, aten.eq.Scalar, which, 0)
                negated = _add(graph, mode, aten.neg.default, swapped)
                swapped = _add(graph, mode, aten.where.self,
                               in_first if first_negated else
                               _add(graph, mode, aten.logical_not.default, in_first),
                               negated, swapped)
            result = _add(graph, mode, aten.reshape.default, swapped, shape)
        node.replace_all_uses_with(result)
        graph.erase_node(node)
        rewritten += 1
    if rewritten:
        graph.eliminate_dead_code()
    return rewritten
