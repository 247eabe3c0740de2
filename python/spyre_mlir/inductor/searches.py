"""searchsorted and bucketize as decompositions the card runs, used in spyre
compiles (decompositions.py registers them).

The CPU kernel is a binary search per value. Here the same search runs for
all values at once, unrolled over its ceil(log2(n + 1)) steps: each step
reads the sequence at every value's midpoint (a one-hot comparison of
positions with midpoints, the card having no data-dependent loads) and moves
the bounds as the CPU's lower_bound / upper_bound do. Being the same search,
it gives the CPU's answer even for sequences that are not sorted or hold
NaN. The one-hot reads cost values x positions comparisons per step, so the
search is bounded (MAX_COMPARISONS); larger ones stay on the CPU, counted.
"""

from __future__ import annotations

import math

import torch

from . import host_checks
from .picks import pick_last

#: Comparisons per step beyond which the CPU's search is the better place.
MAX_COMPARISONS = 1 << 22


def _search(sequence, values, right):
    """The CPU's binary search of each value in the last dimension of
    `sequence` (values (..., k) with sequence's leading dimensions)."""
    n = sequence.shape[-1]
    start = torch.zeros(values.shape, dtype=torch.int32, device=values.device)
    end = torch.full(values.shape, n, dtype=torch.int32, device=values.device)
    for _ in range(math.ceil(math.log2(n + 1))):
        active = start < end
        mid = start + torch.div(end - start, 2, rounding_mode="floor")
        at_mid = pick_last(sequence.unsqueeze(-2), [torch.where(active, mid, 0)], [n])
        # lower_bound: go right unless sequence[mid] >= value; upper_bound:
        # unless sequence[mid] > value (NaN compares false: go right).
        go_right = ~(at_mid > values) if right else ~(at_mid >= values)
        start = torch.where(active & go_right, mid + 1, start)
        end = torch.where(active & ~go_right, mid, end)
    return start


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
                 sorter=None):
    right = right or side == "right"
    sequence = sorted_sequence
    if sorter is not None and sequence.numel():  # (an empty one needs no order)
        sequence = torch.gather(sequence, -1, sorter)
    common = torch.promote_types(sequence.dtype, values.dtype)
    sequence, values = sequence.to(common), values.to(common)
    out_dtype = torch.int32 if out_int32 else torch.int64
    if values.dim() == 0:
        return _search(sequence, values.reshape(1), right).reshape(()).to(out_dtype)
    if sequence.dim() == 1:
        # One sequence for every value: values flattened into one row.
        found = _search(sequence.unsqueeze(0), values.reshape(1, -1), right)
        return found.reshape(values.shape).to(out_dtype)
    return _search(sequence, values, right).to(out_dtype)


def _searchsorted_applies(sorted_sequence, values, *, out_int32=False, right=False,
                          side=None, sorter=None):
    if not isinstance(values, torch.Tensor) or sorted_sequence.is_complex() or \
            sorted_sequence.dtype == torch.bool or values.dtype == torch.bool:
        return False
    if sorted_sequence.dim() > 1 and sorted_sequence.shape[:-1] != values.shape[:-1]:
        return False  # eager's error, from eager's code
    return values.numel() * sorted_sequence.shape[-1] <= MAX_COMPARISONS


def bucketize(values, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, values, out_int32=out_int32, right=right)


def _bucketize_applies(values, boundaries, *, out_int32=False, right=False):
    return boundaries.dim() == 1 and _searchsorted_applies(boundaries, values)


def _linspace_on_host(start, end, steps, dtype) -> list[float]:
    """torch.linspace's values as eager computes them, while tracing."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing
    with unset_fake_temporarily(), disable_proxy_modes_tracing():
        return torch.linspace(start, end, steps, dtype=dtype).tolist()


def _bin_sums(x, bin_of, inside, bins, weight=None):
    """Counts (or sums of weights) per bin of the flat `x`, given each
    element's bin and whether it is inside the edges."""
    bins_ = torch.arange(bins, dtype=bin_of.dtype, device=x.device).unsqueeze(-1)
    match = (bin_of == bins_) & inside  # (bins, n)
    if weight is None:
        return match.sum(-1, dtype=torch.int32).to(x.dtype)
    return torch.where(match, weight, torch.zeros((), dtype=x.dtype, device=x.device)).sum(-1)


def _inside(x, edges):
    return (x >= edges[0]) & (x <= edges[-1])  # (NaN is in no bin)


def _host_tensor(values, like):
    return torch.tensor(values, dtype=like.dtype, device=like.device)


def histc(self, bins=100, min=0, max=0):
    """Counts per bin between the given bounds by eager's histc formula,
    trunc((x - lo) * bins / (hi - lo)) in f32, the upper bound in the last
    bin: unlike torch.histogram, eager does not correct it against its
    edges, so values on or beside an edge may be counted in the bin next to
    it; the bounds are eager's (its linspace, computed when compiling)."""
    edges = _linspace_on_host(min, max, bins + 1, self.dtype)
    x = self.reshape(-1)
    width = (torch.tensor(edges[-1], dtype=self.dtype) - torch.tensor(edges[0], dtype=self.dtype))
    position = ((x - edges[0]) * float(bins) / width.item()).floor()  # x >= lo: floor is trunc
    bin_of = torch.where(position >= bins, bins - 1, position)
    return _bin_sums(x, bin_of, _inside(x, edges), bins)


def _histc_applies(self, bins=100, min=0, max=0):
    # Bounds from the data (min == max) would make the edges data too. f32
    # only: eager bins 16-bit values by its own 16-bit arithmetic, which
    # edge comparisons do not reproduce (measured: 23 of 100 bins off).
    n = self.numel() or 1
    return self.dtype == torch.float32 and min < max and bins * n <= MAX_COMPARISONS and \
        n < (1 << 24)


#: Edges beyond which eager's torch.linspace takes its vectorized path,
#: whose sums differ from its scalar formula (start + step * i in the first
#: half, end - step * (steps - 1 - i) in the second), reproduced below.
_SCALAR_LINSPACE_STEPS = 7


def _edges_from_data(x, bins):
    """Eager's edges for bounds from the data: its minimum and maximum (each
    side moved by 0.5 when they are equal), eager's linspace on the card.
    Eager raises for non-finite bounds: so does the host, after the card."""
    lo, hi = x.amin(), x.amax()
    host_checks.check(torch.isfinite(lo) & torch.isfinite(hi),
                      "torch.histogram: the range of the input is not finite")
    same = lo == hi
    lo, hi = torch.where(same, lo - 0.5, lo), torch.where(same, hi + 0.5, hi)
    step = (hi - lo) / bins
    i = torch.arange(bins + 1, dtype=x.dtype, device=x.device)
    return torch.where(i < (bins + 1) // 2, lo + step * i, hi - step * (bins - i))


def histogram(self, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) as eager: edges from the range (or [0, 1] for no
    elements) computed when compiling, else from the data on the card."""
    x = self.reshape(-1)
    if range is None and x.numel():
        edges = _edges_from_data(x, bins)
    else:
        lo, hi = range if range is not None else (0.0, 1.0)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _host_tensor(_linspace_on_host(lo, hi, bins + 1, self.dtype), self)
    # An element's bin is the number of inner edges at or below it, where
    # eager's search of its edges ends.
    bin_of = (x.unsqueeze(-1) >= edges[1:-1]).sum(-1, dtype=torch.int32)
    hist = _bin_sums(x, bin_of, _inside(x, edges), bins,
                     None if weight is None else weight.reshape(-1))
    if density:
        hist = hist / hist.sum() / (edges[1:] - edges[:-1])
    return hist, edges


def _histogram_applies(self, bins=100, *, range=None, weight=None, density=False):
    # Eager raises for bounds out of order or not finite. Bounds from the
    # data: only as many edges as eager computes by its scalar formula.
    if range is not None:
        if len(range) != 2 or not all(math.isfinite(r) for r in range) or range[0] > range[1]:
            return False
    elif self.numel() and bins + 1 > _SCALAR_LINSPACE_STEPS:
        return False
    n = self.numel() or 1
    return self.dtype == torch.float32 and bins > 0 and bins * n <= MAX_COMPARISONS and \
        n < (1 << 24) and (weight is None or weight.dtype == self.dtype)


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {
        aten.searchsorted.Tensor: (searchsorted, _searchsorted_applies),
        aten.bucketize.Tensor: (bucketize, _bucketize_applies),
        aten.histc.default: (histc, _histc_applies),
        aten.histogram.bin_ct: (histogram, _histogram_applies),
    }
