"""A concatenation of a tensor's two halves in swapped order, either or both
negated (`torch.cat((-x2, x1), -1)`: rotary embeddings' rotate_half, the
halves sliced or from `x.chunk(2, -1)`), and a stack of its odd and even
elements (`torch.stack((-x[..., 1::2], x[..., ::2]), -1)`: GPT-J's
rotate_every_two), as one elementwise expression of the tensor.

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


def _signed(graph: fx.Graph, mode, swapped, dim: int, negated: tuple[bool, bool]):
    """`swapped` with the elements at index 0 or 1 of its dimension `dim`
    (of size 2) negated as `negated` says: a select on the index, which
    indexes the tensor directly."""
    if all(negated):
        return _add(graph, mode, aten.neg.default, swapped)
    if not any(negated):
        return swapped
    rank = len(swapped.meta["val"].shape)
    which = _add(graph, mode, torch.ops.prims.iota.default, 2, start=0, step=1,
                 dtype=torch.int32, device=swapped.meta["val"].device, requires_grad=False)
    which = _add(graph, mode, aten.reshape.default, which, [2] + [1] * (rank - dim - 1))
    in_first = _add(graph, mode, aten.eq.Scalar, which, 0)
    return _add(graph, mode, aten.where.self,
                in_first if negated[0] else _add(graph, mode, aten.logical_not.default, in_first),
                _add(graph, mode, aten.neg.default, swapped), swapped)


def _paired(graph: fx.Graph, node, source, split: list[int], dim: int, swap: bool,
            negated: tuple[bool, bool], shape: list[int]):
    """Replaces `node` by `source` viewed as `split` (a dimension of 2 at
    `dim`), flipped along it where `swap`, negated per `negated`, viewed as
    `shape`."""
    mode = detect_fake_mode([source.meta["val"]])
    with graph.inserting_before(node):
        paired = _add(graph, mode, aten.reshape.default, source, split)
        if swap:
            paired = _add(graph, mode, torch.ops.prims.rev.default, paired, [dim])
        paired = _signed(graph, mode, paired, dim, negated)
        result = _add(graph, mode, aten.reshape.default, paired, shape)
    node.replace_all_uses_with(result)
    graph.erase_node(node)


def _concatenated(node):
    """(pieces, dim, out) of a concatenation of two tensors of static shape,
    else None."""
    if node.op != "call_function" or node.target is not aten.cat.default:
        return None
    tensors, out = node.args[0], node.meta.get("val")
    if len(tensors) != 2 or not isinstance(out, torch.Tensor) or \
            any(not isinstance(s, int) for s in out.shape):
        return None
    return tensors, (node.args[1] if len(node.args) > 1 else 0) % out.dim(), out


def _same_source(pieces, out) -> bool:
    source = pieces[0][0]
    return source is pieces[1][0] and detect_fake_mode([source.meta["val"]]) is not None and \
        source.meta["val"].dtype == out.dtype


def swap_halves(graph: fx.Graph) -> int:
    """Rewrites each such concatenation, and each interleave of a tensor's
    even and odd elements (swap_pairs); returns how many."""
    rewritten = swap_pairs(graph)
    for node in list(graph.nodes):
        found = _concatenated(node)
        if found is None:
            continue
        tensors, dim, out = found
        size = out.shape[dim]
        halves = [_half(t, dim, size) for t in tensors]
        if size % 2 or None in halves or not _same_source(halves, out) or \
                (halves[0][1], halves[1][1]) != (size // 2, 0):
            continue
        shape = list(out.shape)
        split = shape[:dim] + [2, size // 2] + shape[dim + 1:]
        _paired(graph, node, halves[0][0], split, dim, True, (halves[0][2], halves[1][2]),
                shape)
        rewritten += 1
    if rewritten:
        graph.eliminate_dead_code()
    return rewritten


def _every_other(node, dim: int, size: int):
    """(source, start, negated) when `node` is `x[..., start::2]` along `dim`
    of a tensor of even length `size` there, possibly negated, unsqueezed
    after `dim`; else None."""
    if not (isinstance(node, fx.Node) and node.op == "call_function" and
            node.target is aten.unsqueeze.default and
            node.args[1] % node.meta["val"].dim() == dim + 1):
        return None
    node = node.args[0]
    negated = node.op == "call_function" and node.target is aten.neg.default
    if negated:
        node = node.args[0]
    if not (isinstance(node, fx.Node) and node.op == "call_function" and
            node.target is aten.slice.Tensor):
        return None
    defaults = (None, 0, None, None, 1)
    source, sdim, start, end, step = (*node.args, *defaults[len(node.args):])
    value = source.meta.get("val") if isinstance(source, fx.Node) else None
    if not isinstance(value, torch.Tensor) or step != 2 or start not in (0, 1) or \
            sdim % value.dim() != dim or value.shape[dim] != size or size % 2 or \
            (end is not None and end < size):
        return None
    return source, start, negated


def swap_pairs(graph: fx.Graph) -> int:
    """`torch.stack((-x[..., 1::2], x[..., ::2]), -1)` (GPT-J's and CodeGen's
    rotate_every_two, before its flatten) as one elementwise expression of
    `x`: a view of pairs, flipped within each pair where the odd elements
    come first, the sign a select on the index within the pair. As a
    concatenation it was two strided copies into a buffer of their own
    (25 us each for GPT-J's 512 x 8 heads x 32 rotary elements) that the
    rotation then read back."""
    rewritten = 0
    for node in list(graph.nodes):
        found = _concatenated(node)
        if found is None or found[1] == 0:
            continue
        tensors, dim, out = found
        source_dim = dim - 1
        if out.shape[dim] != 2:
            continue
        size = 2 * out.shape[source_dim]
        pieces = [_every_other(t, source_dim, size) for t in tensors]
        if None in pieces or not _same_source(pieces, out) or \
                {pieces[0][1], pieces[1][1]} != {0, 1}:
            continue
        shape = list(out.shape)
        _paired(graph, node, pieces[0][0], shape, dim, pieces[0][1] == 1,
                (pieces[0][2], pieces[1][2]), shape)
        rewritten += 1
    return rewritten
