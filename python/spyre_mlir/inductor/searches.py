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


def histc(self, bins=100, min=0, max=0):
    """Counts per bin between the given bounds. An element's bin is the
    number of inner bin edges at or below it: the edges are eager's own
    (torch.linspace of the bounds, computed when compiling), which its
    kernel's search ends on; the last bin includes the upper bound."""
    edges = _linspace_on_host(min, max, bins + 1, self.dtype)
    x = self.reshape(-1)
    inside = (x >= edges[0]) & (x <= edges[-1])
    inner = torch.tensor(edges[1:-1], dtype=torch.float32, device=self.device)
    bin_of = (x.unsqueeze(-1) >= inner).sum(-1, dtype=torch.int32)  # (n,)
    bins_ = torch.arange(bins, dtype=torch.int32, device=self.device).unsqueeze(-1)
    return ((bin_of == bins_) & inside).sum(-1, dtype=torch.int32).to(self.dtype)


def _histc_applies(self, bins=100, min=0, max=0):
    # Bounds from the data (min == max) would make the edges data too. f32
    # only: eager bins 16-bit values by its own 16-bit arithmetic, which
    # edge comparisons do not reproduce (measured: 23 of 100 bins off).
    n = self.numel() or 1
    return self.dtype == torch.float32 and min < max and bins * n <= MAX_COMPARISONS and \
        n < (1 << 24)


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {
        aten.searchsorted.Tensor: (searchsorted, _searchsorted_applies),
        aten.bucketize.Tensor: (bucketize, _bucketize_applies),
        aten.histc.default: (histc, _histc_applies),
    }
