"""Picking elements by index as comparisons, for the decompositions of
gathers, scatters and searches: the card has no element-wise indirect loads
or stores (its gather moves whole rows), so each index is compared with every
position it may name, and the chosen terms are reduced."""

from __future__ import annotations

import math

import torch

from .ranges import integer_limits


def position_matches(indices, sizes):
    """onehot (..., P): the index tensors `indices` (negative ones counted
    from the end, as eager) name position p of the P = prod(sizes) positions
    that flatten dimensions of `sizes`. Indices are compared with each
    position's coordinates, never multiplied: int64 indices may be beyond
    what the card's int32 holds once scaled."""
    total = math.prod(sizes)
    if total == 0:  # an empty tensor: no position to name (eager's take of one)
        shape = torch.broadcast_shapes(*(i.shape for i in indices))
        return torch.zeros(*shape, 0, dtype=torch.bool, device=indices[0].device)
    positions = torch.arange(total, device=indices[0].device)
    onehot, stride = None, total
    for i, size in zip(indices, sizes):
        stride //= size
        coordinate = positions // stride if stride > 1 else positions
        coordinate = coordinate % size if size * stride < total else coordinate
        match = torch.where(i < 0, i + size, i).unsqueeze(-1) == coordinate
        onehot = match if onehot is None else onehot & match
    return onehot


def pick_last(values, indices, sizes):
    """values[..., p] along the last dimension of `values` (broadcasting the
    others with the indices'), at the position p whose coordinates are
    `indices` when that dimension flattens dimensions of `sizes`."""
    onehot = position_matches(indices, sizes)
    if values.dtype == torch.bool:
        return (onehot & values).any(-1)
    if values.is_floating_point():
        zero = torch.zeros((), dtype=values.dtype, device=values.device)
        return torch.where(onehot, values, zero).sum(-1)
    # A maximum rather than a sum for integers: the card sums in f32, which
    # need not hold a sum of large integers exactly (one term is nonzero, but
    # nothing tells the card's range checks so).
    return torch.where(onehot, values, integer_limits(values.dtype)[0]).amax(-1)
