"""Max pooling with indices (max_pool1d/2d/3d reach it, with or without
indices) and average pooling as decompositions the card runs, used in spyre
compiles (decompositions.py registers them).

Inductor's own lowering takes the window's argmax as an offset and turns it
into an input position through indirect indexing, and reads padding through
masks on sums of an output and a window loop; the card has neither. Here the
outputs of the pooled dimensions but the last are cut into regions whose
windows lie inside the input or reach the padding at known positions, the
last dimension's padding reads -inf, and the window is unrolled: each window
offset is a strided view of the input, and an elementwise running maximum keeps the
value and its input position, which is a function of the output position
only (an iota, int32). The update rule is the CPU kernel's
(MaxPoolKernel.cpp): take an element if it is greater than the maximum so
far or NaN, so ties keep the first position in window order and NaN the
last NaN; padding (-inf) is never taken. Before any element is taken the
position is the window's first one inside the input, as in eager (a window
of -inf reports that position). Values are only compared and moved: exact.
"""

from __future__ import annotations

import itertools
import math

import torch
from torch._meta_registrations import pooling_output_shape

#: Window elements beyond which the unrolled window stays on the CPU (each
#: is a load and a compare of the one kernel).
MAX_WINDOW = 64


def _listed(v, n_dim):
    v = [v] if isinstance(v, int) else list(v)
    return v * n_dim if len(v) == 1 else v


def _arguments(x, kernel_size, stride, padding, dilation, ceil_mode, n_dim):
    kernel = _listed(kernel_size, n_dim)
    stride = _listed(stride, n_dim) if stride else kernel  # empty: the kernel size
    padding, dilation = _listed(padding, n_dim), _listed(dilation, n_dim)
    inputs = list(x.shape[-n_dim:])
    outputs = [pooling_output_shape(i, k, p, s, d, ceil_mode)
               for i, k, p, s, d in zip(inputs, kernel, padding, stride, dilation)]
    return kernel, stride, padding, dilation, inputs, outputs


def _in_bounds(i, k, p, s, d, o):
    """The outputs [lo, hi] along a dimension whose windows lie inside the
    input (lo > hi: none)."""
    lo = -(-p // s)
    hi = min(o - 1, (i - 1 + p - (k - 1) * d) // s)
    return lo, hi


def _regions(i, k, p, s, d, o):
    """A split dimension's outputs as ranges [a, b): each border output
    alone (its window reaches the padding, which differs by output) and
    the outputs between as one."""
    lo, hi = _in_bounds(i, k, p, s, d, o)
    if lo > hi:
        return [(q, q + 1) for q in range(o)]
    return [(q, q + 1) for q in range(lo)] + [(lo, hi + 1)] + \
        [(q, q + 1) for q in range(hi + 1, o)]


def _max_pool_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode, n_dim):
    geometry = _arguments(x, kernel_size, stride, padding, dilation, ceil_mode, n_dim)
    value, index = _pooled(x, geometry, n_dim, -math.inf, _max_box)
    return value, index.to(torch.int64).expand(value.shape).contiguous()


def _pooled(x, geometry, n_dim, fill, box):
    """The pooling of x by `box(x, ranges, offsets, windows, geometry)`, a
    tuple of results for the outputs in `ranges` given each window offset
    they read as a tensor of their shape (positions in the padding `fill`),
    computed region by region and concatenated."""
    kernel, stride, padding, dilation, inputs, outputs = geometry
    # The pooled dimensions but the last are cut into regions (_regions)
    # whose windows skip the positions outside the input, each computed into
    # its slice of the result: padding them copied the input once more per
    # dimension through device memory (ResNet's stem: 83 us for a pool whose
    # bytes need 18). The last one is not cut (its border regions would be a
    # column, an element per row, each written as a stick: 82.5 us) but read
    # whole: a window offset is one strided view of the input whose
    # positions in the padding read the row before or after, replaced by
    # `fill` (_strided_window). Only a region whose view would leave the
    # input (its first or last row) reads a padded copy of its rows:
    # padding the whole input cost its copy and the padding written an
    # element per row (the stem's pool 52.0 us; in place 28.3, 17.8 with its
    # taps' shared runs, GenericPlan::shareRuns).
    last = n_dim - 1
    regions = [_regions(*args) for args in zip(inputs, kernel, padding, stride, dilation,
                                                 outputs)][:last] + [[(0, outputs[last])]]
    x = x.contiguous()
    largest = [max(r, key=lambda ab: ab[1] - ab[0]) for r in regions]
    extent = None
    if any(_view(x, largest, t, stride, padding, dilation, n_dim) is None
           for t in _offsets(largest, geometry, n_dim)):
        x, extent = _extended(x, regions, geometry, n_dim, fill)

    def assemble(d, prefix):
        if d == n_dim:
            offsets, windows = _windows(x, prefix, extent, geometry, n_dim, fill)
            return box(x, prefix, offsets, windows, geometry)
        parts = [assemble(d + 1, prefix + [r]) for r in regions[d]]
        if len(parts) == 1:
            return parts[0]
        dim = x.dim() - n_dim + d
        return tuple(torch.cat(list(results), dim) for results in zip(*parts))

    return assemble(0, [])


def _extended(x, regions, geometry, n_dim, fill):
    """(x as a view of a copy with as many elements more before its first
    and after its last as the regions' views read there, the storage
    positions of that copy). When the largest region reads past x's ends (a
    stride-1 window's right padding on the last row), every region reads
    such a copy: one run, its extra elements at its two ends. (A copy of x
    padded row by row took 37 of the 53.7 us of PoolFormer's 3 x 3 / 1
    average over 64 x 56 x 56, its padding written an element per row;
    copies of the first and last rows' regions only, or of the first and
    last planes only, were slower still: docs/lowering.md, "Pooling".)"""
    stride, padding, dilation = geometry[1:4]
    reads = [_view(x, r, t, stride, padding, dilation, n_dim, bounded=False)
             for r in itertools.product(*regions) for t in _offsets(r, geometry, n_dim)]
    first, end = x.storage_offset(), x.storage_offset() + x.numel()
    before = max(0, first - min(start for _, _, start, _ in reads))
    after = max(0, max(last for _, _, _, last in reads) + 1 - end)
    extended = torch.constant_pad_nd(x.reshape(-1), [before, after], fill)
    return extended.as_strided(x.shape, x.stride(), before), (0, extended.numel())


def _view(x, ranges, offset, stride, padding, dilation, n_dim, extent=None, bounded=True):
    """(sizes, strides, storage offset) of window offset `offset` of the
    outputs in `ranges` as a strided view of x (contiguous), the last
    dimension's padding positions reading the row before or after; None
    when such a position lies outside `extent` (storage positions [start,
    end), by default x's own). Not `bounded`: (sizes, strides, first and
    last storage position read)."""
    lead = x.dim() - n_dim
    sizes = list(x.shape[:lead]) + [b - a for a, b in ranges]
    strides = list(x.stride()[:lead]) + [x.stride(lead + d) * stride[d] for d in range(n_dim)]
    start = x.storage_offset() + sum(
        x.stride(lead + d) * (a * stride[d] - padding[d] + offset[d] * dilation[d])
        for d, (a, _) in enumerate(ranges))
    end = start + sum((n - 1) * t for n, t in zip(sizes, strides))
    if not bounded:
        return sizes, strides, start, end
    low, high = extent or (x.storage_offset(), x.storage_offset() + x.numel())
    if not low <= start <= end < high:
        return None
    return sizes, strides, start


def _strided_window(x, view, ranges, offset, stride, padding, dilation, n_dim, fill):
    """Window offset `offset` as the strided view `view` (_view), its
    positions in the last dimension's padding `fill`."""
    window = x.as_strided(*view)
    (a, b), last, width = ranges[-1], n_dim - 1, x.shape[-1]
    first = a * stride[last] - padding[last] + offset[last] * dilation[last]
    if first < 0 or first + (b - a - 1) * stride[last] >= width:
        column = torch.arange(b - a, device=x.device) * stride[last] + first
        window = torch.where((column < 0) | (column >= width),
                             torch.full((), fill, dtype=x.dtype, device=x.device), window)
    return window


def _padded_rows(x, ranges, geometry, n_dim, fill):
    """(the rows of x that the outputs in `ranges` read along the pooled
    dimensions but the last, padded with `fill` along the last: `padding`
    on the left, on the right up to the last window's end, more with
    ceil_mode; their first position along each pooled dimension)."""
    kernel, stride, padding, dilation = geometry[:4]
    lead, last = x.dim() - n_dim, n_dim - 1
    origin = []
    for d, (a, b) in enumerate(ranges[:last]):
        lo = max(a * stride[d] - padding[d], 0)
        hi = min((b - 1) * stride[d] - padding[d] + (kernel[d] - 1) * dilation[d],
                 x.shape[lead + d] - 1)
        x = x.narrow(lead + d, lo, hi - lo + 1)
        origin.append(lo)
    width, p = x.shape[-1], padding[last]
    end = (ranges[last][1] - 1) * stride[last] + (kernel[last] - 1) * dilation[last] + 1
    return torch.constant_pad_nd(x, [p, max(end - p - width, 0)], fill), origin + [-p]


def _padded_window(padded, ranges, offset, stride, padding, dilation, n_dim):
    """Window offset `offset` of the outputs in `ranges` as strided slices
    of `padded` (_padded_rows: the copy and its origin)."""
    padded, origin = padded
    window, lead = padded, padded.dim() - n_dim
    for d, (a, b) in enumerate(ranges):
        start = a * stride[d] - padding[d] + offset[d] * dilation[d] - origin[d]
        window = window.narrow(lead + d, start, (b - a - 1) * stride[d] + 1)
        window = window[(Ellipsis, slice(None, None, stride[d])) + (slice(None),) *
                        (n_dim - 1 - d)]
    return window


def _offsets(ranges, geometry, n_dim):
    """The window offsets that the outputs in `ranges` ([a, b) per pooled
    dimension) read inside the input: along the last dimension some of
    them (the others read the padding's value), along the others all
    (regions of _regions), as the offsets that read only padding add
    nothing."""
    kernel, stride, padding, dilation, inputs = geometry[:5]

    def inside(d, t):
        a, b = ranges[d]
        first = a * stride[d] - padding[d] + t * dilation[d]
        final = first + (b - a - 1) * stride[d]
        if d == n_dim - 1:
            position = max(first, first % stride[d])  # the first one inside, if any
            return position <= final and position < inputs[d]
        return first >= 0 and final < inputs[d]
    return [t for t in itertools.product(*(range(k) for k in kernel))
            if all(inside(d, v) for d, v in enumerate(t))]


def _windows(x, ranges, extent, geometry, n_dim, fill):
    """(the window offsets that the outputs in `ranges` read inside the
    input (_offsets), each as a tensor of their shape): strided views of x
    (within `extent`, _view), or, when a view would leave it (the left
    padding of its first row, the right padding of its last), slices of a
    copy of the rows they read padded with `fill`. (Cut as the others, the
    last dimension's border outputs came out of a concatenation whose layout
    Inductor chose channels-last, copied again: 1566 us.)"""
    stride, padding, dilation = geometry[1:4]
    offsets = _offsets(ranges, geometry, n_dim)
    views = [_view(x, ranges, t, stride, padding, dilation, n_dim, extent) for t in offsets]
    if any(v is None for v in views):
        padded = _padded_rows(x, ranges, geometry, n_dim, fill)
        return offsets, [_padded_window(padded, ranges, t, stride, padding, dilation, n_dim)
                         for t in offsets]
    return offsets, [_strided_window(x, v, ranges, t, stride, padding, dilation, n_dim, fill)
                     for v, t in zip(views, offsets)]


def _max_box(x, ranges, offsets, windows, geometry):
    """(value, int32 index) of the outputs in `ranges` ([a, b) per pooled
    dimension), the window unrolled over `windows`, the views of the window
    offsets `offsets` (_windows)."""
    kernel, stride, padding, dilation, inputs, _ = geometry
    n_dim = len(ranges)
    sizes = [b - a for a, b in ranges]

    # The input position (flattened over the pooled dimensions, as eager's
    # indices) of window offset `offset` for each output position: int32
    # aranges, broadcast over the outputs.
    def along(d, first):
        """Input coordinate along pooled dim d of each output position, the
        window starting at window offset `first`, shaped to broadcast."""
        o = torch.arange(ranges[d][0], ranges[d][1], dtype=torch.int32, device=x.device)
        shape = [1] * n_dim
        shape[d] = sizes[d]
        return (o * stride[d] - padding[d] + first).reshape(shape)

    def flattened(coords):
        position, size = 0, 1
        for d in reversed(range(n_dim)):
            position = position + coords[d] * size
            size *= inputs[d]
        return position

    # The window's first position inside the input: the CPU kernel steps a
    # start in the left padding forward by the dilation.
    # (Steps as selects, at most ceil(padding / dilation) of them: a floor
    # division of the iota trips Inductor's index simplification.)
    firsts = []
    for d in range(n_dim):
        first = along(d, 0)
        for _ in range(-(-padding[d] // dilation[d])):
            first = torch.where(first < 0, first + dilation[d], first)
        firsts.append(first)
    index = flattened(firsts).expand(sizes)
    value = torch.full((), -math.inf, dtype=x.dtype, device=x.device)
    for offset, window in zip(offsets, windows):
        # The value as a NaN-propagating maximum, which the update rule
        # amounts to: without the indices (nn.MaxPool2d) each step then reads
        # the last one once, and Inductor keeps the window in one kernel
        # rather than realizing a partial maximum every few positions.
        take = (window > value) | torch.isnan(window)
        value = torch.maximum(value, window)
        position = flattened([along(d, offset[d] * dilation[d]) for d in range(n_dim)])
        index = torch.where(take, position, index)
    shape = x.shape[:x.dim() - n_dim] + tuple(sizes)
    return value.expand(shape), index.expand(shape)


def max_pool2d_with_indices(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode, 2)


def max_pool3d_with_indices(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode, 3)


def _applies(n_dim):
    def applies(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        if not x.is_floating_point() or x.numel() == 0:
            return False  # integer windows start at 0 in eager (-inf as an integer)
        kernel = _listed(kernel_size, n_dim)
        return math.prod(kernel) <= MAX_WINDOW
    return applies


# --------------------------------------------------------------------------
# Adaptive average pooling in 3-d (Inductor calls the CPU kernel): output
# position i of a dimension averages input positions [floor(i * n / m),
# ceil((i + 1) * n / m)), known when compiling; the box is averaged one
# dimension at a time, each window a slice's mean on the vector unit.


def _adaptive_means(x, dim, out_size):
    n = x.shape[dim]
    windows = [(i * n // out_size, -(-(i + 1) * n // out_size)) for i in range(out_size)]
    return torch.cat([x.narrow(dim, lo, hi - lo).mean(dim, keepdim=True) for lo, hi in windows],
                     dim)


def adaptive_avg_pool3d(x, output_size):
    for k, size in enumerate(output_size):
        x = _adaptive_means(x, x.dim() - 3 + k, size)
    return x


def _adaptive_applies(x, output_size):
    return x.is_floating_point() and sum(output_size) <= MAX_WINDOW


# --------------------------------------------------------------------------
# Average pooling (PoolFormer's token mixer: 3 x 3, stride 1, padding 1,
# count_include_pad=False). Inductor's lowering reads the padding through
# masked loads, which pieces.py cut into nine pieces whose side columns were
# written an element per row (64 x 56 x 56 f16: 65.9 us). Here the window is
# unrolled over the regions and strided views of max pooling (_pooled), the
# padding reading 0, and the sum, in the window's order and at the CPU
# kernel's precision (f32 for 16-bit inputs), is divided by the CPU
# kernel's divisor: the window's positions inside the input and its
# padding, or inside the input only, or `divisor_override`.
#
# One window covering the whole plane (EfficientNet's pooler,
# AvgPool2d(hidden, ceil_mode=True) on its last map) is the plane's mean
# (its sum over divisor_override): through Inductor's lowering, inside that
# model, it reached us with an index that is not affine in a reduction loop.


def avg_pool2d(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    geometry = _arguments(x, kernel_size, stride, padding, 1, ceil_mode, 2)
    if _whole_plane(geometry):
        if divisor_override:
            return (x.sum((-2, -1), keepdim=True, dtype=torch.float32) /
                    divisor_override).to(x.dtype)
        return x.mean((-2, -1), keepdim=True)
    kernel, stride, padding, _, inputs, _ = geometry
    accumulate = torch.float32 if x.element_size() < 4 else x.dtype

    def counts(d, a, b):
        """The divisor's factor along pooled dim d of each output in [a, b):
        the CPU kernel's window clipped to the padded input, or to the
        input."""
        starts = [o * stride[d] - padding[d] for o in range(a, b)]
        if count_include_pad:
            return [min(t + kernel[d], inputs[d] + padding[d]) - t for t in starts]
        return [min(t + kernel[d], inputs[d]) - max(t, 0) for t in starts]

    def box(x, ranges, offsets, windows, geometry):
        total = None
        for window in windows:
            window = window.to(accumulate)
            total = window if total is None else total + window
        if divisor_override:
            return ((total / divisor_override).to(x.dtype),)
        # Known when compiling: one factor for a region's rows (_regions:
        # their windows all lie inside, or it is one row), one per column,
        # a constant of the graph where they differ. (Computed from an iota
        # on the card, the counts made the sum's expression so long that
        # Inductor stored it in f32 and converted it in another pass.)
        rows, = set(counts(0, *ranges[0]))
        columns = [rows * c for c in counts(1, *ranges[1])]
        if len(set(columns)) == 1:
            divisor = columns[0]
        else:
            divisor = torch.tensor(columns, dtype=accumulate, device=x.device)
        return ((total / divisor).to(x.dtype),)

    value, = _pooled(x, geometry, 2, 0.0, box)
    return value


def _whole_plane(geometry):
    kernel, _, padding, _, inputs, outputs = geometry
    return all(p == 0 for p in padding) and all(o == 1 for o in outputs) and \
        all(k >= i for k, i in zip(kernel, inputs))


def _avg_applies(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
    if not x.is_floating_point() or x.dim() not in (3, 4) or x.numel() == 0:
        return False
    geometry = _arguments(x, kernel_size, stride, padding, 1, ceil_mode, 2)
    return _whole_plane(geometry) or math.prod(geometry[0]) <= MAX_WINDOW


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {
        aten._adaptive_avg_pool3d.default: (adaptive_avg_pool3d, _adaptive_applies),
        aten.avg_pool2d.default: (avg_pool2d, _avg_applies),
        aten.max_pool2d_with_indices.default: (max_pool2d_with_indices, _applies(2)),
        aten.max_pool3d_with_indices.default: (max_pool3d_with_indices, _applies(3)),
    }
