"""Scatters (scatter, scatter_add, scatter_reduce, index_put, index_reduce,
masked_scatter and what decomposes into them: index_add, index_copy,
index_fill, put, max_unpool) as decompositions the card runs, used in spyre
compiles (decompositions.py registers them).

The card scatters whole rows only (its DMA engine writes rows at indices it
reads from LX): an index_put that replaces rows at one index tensor (a
static KV cache's index_copy_) is left to Inductor, whose indirect store
becomes spyre.scatter (export._scatter). Every other scatter instead
compares each target position with every index (a one-hot square of
indices by positions) and reduces the sources that chose it, so a scatter
is elementwise ops and one reduction over the indices, with the result the
CPU computes: sums and means add the same terms (in f32), prod, amax and
amin are exact, and a plain scatter keeps the last source written to a
position, as the CPU's sequential loop does. The square costs one
comparison per index and position, so it is bounded (MAX_COMPARISONS);
larger scatters stay on the CPU, counted, except an index_put that replaces
whole rows at several index tensors: its positions compare with the indices
only and gather their last source row, which it also does within the budget
where that is cheaper (_rows_are_cheaper).

Indices out of range raise as on the CPU: the card computes whether each
is inside its dimension and the host raises (host_checks); the row scatter
refuses them itself.
"""

from __future__ import annotations

import math

import torch

from . import host_checks
from .picks import position_matches
from .ranges import integer_limits
from .trace import TORCH_TO_MLIR

#: Index-by-position comparisons beyond which the CPU is the better place.
MAX_COMPARISONS = 1 << 24

REDUCTIONS = ("replace", "sum", "prod", "mean", "amax", "amin")


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return False if dtype == torch.bool else 0
    if reduce == "prod":
        return 1
    if dtype.is_floating_point:
        return -math.inf if reduce == "amax" else math.inf
    lowest, highest = integer_limits(dtype)
    return lowest if reduce == "amax" else highest


def _combine(onehot, src, reduce):
    """The sources chosen by each position, reduced over the indices:
    onehot (..., I, N) and src (..., I) give (..., N)."""
    chosen = torch.where(onehot, src.unsqueeze(-1), _identity(reduce, src.dtype))
    if reduce in ("sum", "mean"):
        return chosen.any(-2) if src.dtype == torch.bool else chosen.sum(-2, dtype=src.dtype)
    if reduce == "prod":
        return chosen.prod(-2, dtype=src.dtype)
    return chosen.amax(-2) if reduce == "amax" else chosen.amin(-2)


def _last_writer(onehot, src):
    """For each position, the source of the highest index that chose it:
    what a sequential loop leaves there."""
    order = torch.arange(onehot.shape[-2], dtype=torch.int32, device=src.device).unsqueeze(-1)
    last = torch.where(onehot, order, -1).amax(-2, keepdim=True)  # (..., 1, N)
    only = onehot & (order == last)
    if src.dtype == torch.bool:
        return (only & src.unsqueeze(-1)).any(-2)
    if src.is_floating_point():
        # One chosen term per position: the sum is that term, exactly.
        return torch.where(only, src.unsqueeze(-1), 0).sum(-2, dtype=src.dtype)
    return torch.where(only, src.unsqueeze(-1), _identity("amax", src.dtype)).amax(-2)


def scatter_last(self, onehot, src, reduce, include_self=True):
    """self (..., N) with src (..., I) scattered where onehot (..., I, N)
    says, reduced by `reduce`; the indices are the second-to-last dimension."""
    hit = onehot.any(-2)
    if reduce == "replace":
        return torch.where(hit, _last_writer(onehot, src), self)
    chosen = _combine(onehot, src, reduce)
    if reduce == "mean":
        count = onehot.sum(-2, dtype=torch.int32) + int(include_self)
        total = self + chosen if include_self else chosen
        if self.is_floating_point():
            mean = total / count.clamp(min=1)
        else:
            mean = torch.div(total, count.clamp(min=1), rounding_mode="floor")
        return torch.where(hit, mean.to(self.dtype), self)
    if include_self:
        if reduce == "sum":
            chosen = (self | chosen) if self.dtype == torch.bool else self + chosen
        elif reduce == "prod":
            chosen = self * chosen
        else:
            chosen = torch.maximum(self, chosen) if reduce == "amax" else torch.minimum(self, chosen)
    # Positions nobody chose keep self exactly (-0.0 + 0 would be +0.0).
    return torch.where(hit, chosen.to(self.dtype), self)


def _positions_matching(index, n):
    """onehot (..., I, N): index (..., I) names position N."""
    return index.unsqueeze(-1) == torch.arange(n, device=index.device)


# --------------------------------------------------------------------------
# scatter, scatter_add, scatter_reduce: along one dimension, source element
# p goes to self[p with dim replaced by index[p]].


def _scatter_dim(self, dim, index, src, reduce, include_self=True):
    if self.dim() == 0:
        return _scatter_dim(self.reshape(1), 0, index.reshape(1), src if not isinstance(
            src, torch.Tensor) else src.reshape(1), reduce, include_self).reshape(())
    dim = dim % self.dim()
    if index.numel() == 0:
        return self.clone()
    if isinstance(src, torch.Tensor):
        for d in range(src.dim()):
            src = src.narrow(d, 0, index.shape[d])
        src = src.to(self.dtype)
    else:
        src = torch.full(index.shape, src, dtype=self.dtype, device=self.device)
    # Only the part of self that the index spans in the other dimensions.
    region = self
    for d in range(self.dim()):
        if d != dim:
            region = region.narrow(d, 0, index.shape[d])
    host_checks.check_positions([index], [self.shape[dim]], "scatter", negatives=False,
                                error="RuntimeError")
    onehot = _positions_matching(index.movedim(dim, -1), self.shape[dim])
    out = scatter_last(region.movedim(dim, -1), onehot, src.movedim(dim, -1), reduce,
                       include_self).movedim(-1, dim)
    # The rest of self, joined back one dimension at a time.
    for d in range(self.dim()):
        if d == dim or index.shape[d] == self.shape[d]:
            continue
        rest = self
        for later in range(d + 1, self.dim()):
            if later != dim:
                rest = rest.narrow(later, 0, index.shape[later])
        rest = rest.narrow(d, index.shape[d], self.shape[d] - index.shape[d])
        out = torch.cat([out, rest], d)
    return out


def _fits(self, dim, index) -> bool:
    size = self.shape[dim] if self.dim() else 1
    return index.numel() * size <= MAX_COMPARISONS and self.dtype != torch.bool


def scatter_src(self, dim, index, src):
    return _scatter_dim(self, dim, index, src, "replace")


def scatter_value(self, dim, index, value):
    return _scatter_dim(self, dim, index, value, "replace")


def scatter_add(self, dim, index, src):
    return _scatter_dim(self, dim, index, src, "sum")


def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    return _scatter_dim(self, dim, index, src, reduce, include_self)


def _scatter_applies(self, dim, index, src, *args, **kwargs):
    return _fits(self, dim, index)


# --------------------------------------------------------------------------
# index_put: self[indices] = values (or += with accumulate), for adjacent
# integer index tensors; the indexed dimensions flatten into one, whose
# positions compare their coordinates with the indices (never a product of
# indices, which could leave the card's int32).


def _index_put(self, indices, values, reduce, include_self=True):
    first = next(d for d, i in enumerate(indices) if i is not None)
    tensors = [i for i in indices if i is not None]
    sizes = list(self.shape[first:first + len(tensors)])
    before, after = list(self.shape[:first]), list(self.shape[first + len(tensors):])
    shape = torch.broadcast_shapes(*(i.shape for i in tensors))
    k = math.prod(shape)
    if k == 0:
        return self.clone()
    # (K, P): index k of the broadcast shape names position p.
    onehot = position_matches([i.expand(shape).reshape(-1) for i in tensors], sizes)
    values = values.to(self.dtype).expand((*before, *shape, *after))  # (a tuple: 0-d too)
    rest = math.prod(before) * math.prod(after)
    if reduce == "replace" and self.dtype != torch.bool and \
            (k * onehot.shape[-1] * rest > MAX_COMPARISONS or
             _rows_are_cheaper(k, onehot.shape[-1], rest)):
        return _index_put_rows(self, onehot, values.reshape(*before, k, *after), len(before))
    flat = self.reshape(*before, math.prod(sizes), *after).movedim(len(before), -1)
    values = values.reshape(*before, k, *after).movedim(len(before), -1)
    out = scatter_last(flat, onehot, values, reduce, include_self)
    return out.movedim(-1, len(before)).reshape(self.shape)


def _rows_are_cheaper(k, positions, rest):
    """Whether gathering each position's source row (_index_put_rows) costs
    less than the one-hot square with the rows' `rest` elements multiplied
    in: that selects and sums k x positions x rest elements; the gather
    compares k x positions once, writes the k sources as a table and moves
    positions x rest elements twice (the gather and the choice of the old
    value), in about four kernels more, counted as four times the work: at
    64 indices of rows of 2048 elements, 21 times cheaper; at one index, not.
    (Rows at one index tensor, a KV cache's write, are scattered instead.)"""
    return k * positions * rest > 4 * (k * positions + k * rest + 2 * positions * rest)


def _index_put_rows(self, onehot, values, dim):
    """A replace-index_put whose positions hold whole rows of elements (a KV
    cache written at a prompt's positions): each position finds the last
    index naming it, K x P comparisons without the rows' length multiplied
    in, and gathers that source's row; positions no index names keep self's.
    `values` has the K sources at dimension `dim`, self the P positions."""
    k, positions = onehot.shape
    order = torch.arange(k, dtype=torch.int32, device=values.device).unsqueeze(-1)
    last = torch.where(onehot, order, -1).amax(0)  # (P,): -1 where nobody wrote
    # The sources as the contiguous rows of a table, the dimensions before
    # `dim` outermost (a permuted table would not be a row gather): block b's
    # source k is row b * K + k.
    blocks = math.prod(values.shape[:dim])
    table = values.reshape(blocks * k, -1)
    block = torch.arange(blocks, dtype=torch.int32, device=values.device).unsqueeze(-1)
    picked = torch.nn.functional.embedding(block * k + last.clamp(min=0), table)  # (B, P, A)
    target = self.reshape(blocks, positions, -1)
    out = torch.where((last >= 0).unsqueeze(-1), picked, target)
    return out.reshape(self.shape)


def index_put(self, indices, values, accumulate=False):
    first = next(d for d, i in enumerate(indices) if i is not None)
    tensors = [i for i in indices if i is not None]
    host_checks.check_positions(tensors, self.shape[first:first + len(tensors)], "index_put")
    return _index_put(self, indices, values, "sum" if accumulate else "replace")


#: The element types a row scatter moves as they are: the card's, but int64
#: (narrowed to int32 on the card) and bool.
_MOVED_AS_THEY_ARE = frozenset(TORCH_TO_MLIR) - {torch.int64, torch.bool}


def _writes_rows(self, indices, values, accumulate) -> bool:
    """Whether an index_put replaces whole rows at one 1-D index tensor (a
    static KV cache's `index_copy_`): Inductor then stores each row through
    the index and the card runs that as a row scatter (export._scatter),
    which moves the rows written, not the whole table."""
    tensors = [i for i in indices if i is not None]
    if len(tensors) != 1 or indices[-1] is None or tensors[0].dim() != 1:
        return False
    rows = (*self.shape[:len(indices) - 1], tensors[0].numel(), *self.shape[len(indices):])
    try:
        fits = torch.broadcast_shapes(values.shape, rows) == rows
    except RuntimeError:
        return False  # eager's error, from eager's code
    # int64 keeps the one-hot form, whose range analysis decides between the
    # card's int32 and the CPU; moved as it is, a large value could not be.
    return fits and not accumulate and self.dtype in _MOVED_AS_THEY_ARE and \
        tensors[0].dtype in (torch.int64, torch.int32) and \
        values.dtype == self.dtype and self.is_contiguous() and \
        self.numel() > 0 and values.numel() > 0 and \
        self.shape[len(indices) - 1] > 1  # one row: Inductor's store drops the index


def _index_put_applies(self, indices, values, accumulate=False):
    if _writes_rows(self, indices, values, accumulate):
        return False
    positions = [d for d, i in enumerate(indices) if i is not None]
    tensors = [i for i in indices if i is not None]
    if not tensors or positions != list(range(positions[0], positions[0] + len(tensors))) \
            or any(i.dtype not in (torch.int64, torch.int32) for i in tensors) \
            or self.dtype == torch.bool and accumulate:
        return False
    try:
        shape = torch.broadcast_shapes(*(i.shape for i in tensors))
    except RuntimeError:
        return False  # eager's error, from eager's code
    rest = math.prod(self.shape[:positions[0]]) * math.prod(self.shape[positions[-1] + 1:])
    square = math.prod(shape) * math.prod(self.shape[d] for d in positions)
    # A replace gathers whole rows (_index_put_rows): only the square counts.
    rows = not accumulate and self.dtype != torch.bool
    return square * (1 if rows else rest) <= MAX_COMPARISONS


def masked_index_put_accumulate(self, mask, indices, values):
    """Inductor's form of index_put with accumulate under a mask (padded
    gathers' gradients): masked-off values and their indices are zeroed."""
    indices = [None if i is None else torch.where(mask, i, 0) for i in indices]
    return _index_put(self, indices, torch.where(mask, values, 0), "sum")


def _masked_index_put_applies(self, mask, indices, values):
    return _index_put_applies(self, indices, values, True)


# --------------------------------------------------------------------------
# index_reduce along a dimension with a 1-D index.


def index_reduce(self, dim, index, source, reduce, *, include_self=True):
    if self.dim() == 0:
        return index_reduce(self.reshape(1), 0, index.reshape(1), source.reshape(1), reduce,
                            include_self=include_self).reshape(())
    dim = dim % self.dim()
    host_checks.check_positions([index], [self.shape[dim]], "index_reduce", negatives=False)
    onehot = _positions_matching(index.reshape(-1), self.shape[dim])  # (I, N)
    out = scatter_last(self.movedim(dim, -1), onehot, source.to(self.dtype).movedim(dim, -1),
                       reduce, include_self)
    return out.movedim(-1, dim)


def _index_reduce_applies(self, dim, index, source, reduce, *, include_self=True):
    # The square is (self's other dimensions, I, N): I times self's size.
    return reduce in REDUCTIONS and self.dtype != torch.bool and \
        index.numel() * self.numel() <= MAX_COMPARISONS


# --------------------------------------------------------------------------
# masked_scatter: the k-th true element of the mask takes source's k-th
# element.


def masked_scatter(self, mask, source):
    mask = mask.expand(self.shape) if mask.dim() <= self.dim() else mask
    shape = torch.broadcast_shapes(self.shape, mask.shape)
    target = self.expand(shape).reshape(-1)
    flat_mask = mask.expand(shape).reshape(-1)
    rank = torch.cumsum(flat_mask.to(torch.int32), 0) - 1  # which source element
    host_checks.check(~flat_mask | (rank < source.numel()),
                      "masked_scatter: the source has fewer elements than the mask has ones")
    onehot = _positions_matching(rank, source.numel())  # (T, S)
    values = source.reshape(-1).to(self.dtype)
    if self.is_floating_point():  # one chosen term: the sum is that term
        picked = torch.where(onehot, values, 0).sum(-1, dtype=self.dtype)
    else:
        picked = torch.where(onehot, values, _identity("amax", self.dtype)).amax(-1)
    return torch.where(flat_mask, picked, target).reshape(shape)


def _masked_scatter_applies(self, mask, source):
    from . import scans
    n = max(self.numel(), mask.numel())
    return self.dtype != torch.bool and n * max(source.numel(), 1) <= MAX_COMPARISONS and \
        n * n <= scans.MAX_SQUARE and source.numel() > 0


# --------------------------------------------------------------------------
# max_unpool: each (batch, channel) plane of the output takes the inputs at
# the flat positions their indices name, zeros elsewhere.


def max_unpool(self, indices, output_size, *stride_padding):
    planes = self.shape[:-len(output_size)]
    out = torch.zeros(*planes, math.prod(output_size), dtype=self.dtype, device=self.device)
    out = _scatter_dim(out, -1, indices.reshape(*planes, -1), self.reshape(*planes, -1),
                       "replace")
    return out.reshape(*planes, *output_size)


def _max_unpool_applies(self, indices, output_size, *stride_padding):
    return self.dtype != torch.bool and indices.shape == self.shape and \
        indices.numel() * math.prod(output_size) <= MAX_COMPARISONS


# --------------------------------------------------------------------------
# segment_reduce: consecutive segments of the first dimension, given by their
# lengths or offsets, each reduced. Segment s holds positions [start_s,
# end_s); the bounds are partial sums of the lengths, computed in f32: exact,
# since valid lengths sum to the dimension's size (eager checks that), far
# below 2^24.

_SEGMENT_REDUCE = {"max": "amax", "min": "amin", "sum": "sum", "prod": "prod", "mean": "sum"}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    if lengths is not None:
        ends = torch.cumsum(lengths.to(torch.float32), 0)
        starts, counts = ends - lengths.to(torch.float32), lengths
    else:
        bounds = offsets.to(torch.float32)
        starts, ends = bounds[:-1], bounds[1:]
        counts = offsets[1:] - offsets[:-1]
    n = data.shape[0]
    if not unsafe and lengths is not None:  # eager's checks (it checks no offsets)
        # The f32 partial sums are exact for lengths that pass (at most n,
        # far below 2^24); one larger leaves the last of them above n.
        host_checks.check((lengths >= 0) & (ends[-1] == n),
                          f"segment_reduce: the segments' lengths must be nonnegative and "
                          f"sum to {n}")
    positions = torch.arange(n, dtype=torch.float32, device=data.device)
    member = (starts.unsqueeze(-1) <= positions) & (positions < ends.unsqueeze(-1))  # (S, N)
    member = member.reshape(*member.shape, *([1] * (data.dim() - 1)))
    kind = _SEGMENT_REDUCE[reduce]
    chosen = torch.where(member, data.unsqueeze(0), _identity(kind, data.dtype))
    if kind == "sum":
        out = chosen.sum(1)
    elif kind == "prod":
        out = chosen.prod(1)
    else:
        out = chosen.amax(1) if kind == "amax" else chosen.amin(1)
    if initial is not None:
        out = {"amax": torch.maximum, "amin": torch.minimum, "sum": torch.add,
               "prod": torch.mul}[kind](out, torch.tensor(initial, dtype=out.dtype,
                                                          device=out.device))
    if reduce == "mean":
        count = counts.to(out.dtype).reshape(-1, *([1] * (data.dim() - 1)))
        mean = out / count
        out = mean if initial is None else torch.where(count == 0, out, mean)
    return out


def _segment_reduce_applies(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                            unsafe=False, initial=None):
    bounds = lengths if lengths is not None else offsets
    return bounds is not None and indices is None and axis == 0 and bounds.dim() == 1 and \
        data.is_floating_point() and data.dim() >= 1 and reduce in _SEGMENT_REDUCE and \
        bounds.numel() * data.numel() <= MAX_COMPARISONS and data.shape[0] < (1 << 24)


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {
        aten.scatter.src: (scatter_src, _scatter_applies),
        aten.scatter.value: (scatter_value, _scatter_applies),
        aten.scatter_add.default: (scatter_add, _scatter_applies),
        aten.scatter_reduce.two: (scatter_reduce, _scatter_applies),
        aten.index_put.default: (index_put, _index_put_applies),
        aten._unsafe_masked_index_put_accumulate.default: (masked_index_put_accumulate,
                                                           _masked_index_put_applies),
        aten.index_reduce.default: (index_reduce, _index_reduce_applies),
        aten.masked_scatter.default: (masked_scatter, _masked_scatter_applies),
        aten.max_unpool2d.default: (max_unpool, _max_unpool_applies),
        aten.max_unpool3d.default: (max_unpool, _max_unpool_applies),
        aten.segment_reduce.default: (segment_reduce, _segment_reduce_applies),
    }
