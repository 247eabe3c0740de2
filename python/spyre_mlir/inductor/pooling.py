"""Max pooling with indices (max_pool1d/2d/3d reach it, with or without
indices) as a decomposition the card runs, used in spyre compiles
(decompositions.py registers it).

Inductor's own lowering takes the window's argmax as an offset and turns it
into an input position through indirect indexing, and reads padding through
masks on sums of an output and a window loop; the card has neither. Here the
input's last pooled dimension is padded with -inf, the outputs of the others
are cut into regions whose windows lie inside the input or reach the padding
at known positions, and the window is unrolled: each window offset is a
strided slice of the input, and an elementwise running maximum keeps the
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
    kernel, stride, padding, dilation, inputs, outputs = _arguments(
        x, kernel_size, stride, padding, dilation, ceil_mode, n_dim)
    # The last pooled dimension is padded with -inf, so that every window
    # position of every output reads an element: `padding` on the left, on
    # the right up to the last window's end (more than `padding` with
    # ceil_mode). The others are not: their outputs are cut into regions
    # (_regions) whose windows skip the positions outside the input, each
    # computed into its slice of the result. Padding them too copied the
    # input once more per dimension through device memory (ResNet's stem:
    # 83 us for a pool whose bytes need 18; 52 now). The last one stays
    # padded: cut, its border regions are a column, an element per row,
    # each written as a stick (82.5 us).
    last = n_dim - 1
    i, k, p, s, d, o = (inputs[last], kernel[last], padding[last], stride[last],
                        dilation[last], outputs[last])
    end = (o - 1) * s + (k - 1) * d + 1  # of the padded dimension
    padded = torch.constant_pad_nd(x, [p, max(end - p - i, 0)], -math.inf)
    regions = [_regions(*args) for args in zip(inputs, kernel, padding, stride, dilation,
                                                 outputs)][:last] + [[(0, o)]]

    def box(ranges):
        return _pool_box(x, padded, ranges, kernel, stride, padding, dilation, inputs, n_dim)

    def assemble(d, prefix):
        if d == n_dim:
            return box(prefix)
        parts = [assemble(d + 1, prefix + [r]) for r in regions[d]]
        if len(parts) == 1:
            return parts[0]
        dim = x.dim() - n_dim + d
        return (torch.cat([v for v, _ in parts], dim), torch.cat([j for _, j in parts], dim))

    value, index = assemble(0, [])
    return value, index.to(torch.int64).expand(value.shape).contiguous()


def _pool_box(x, padded, ranges, kernel, stride, padding, dilation, inputs, n_dim):
    """(value, int32 index) of the outputs in `ranges` ([a, b) per pooled
    dimension), the window unrolled over the positions inside the input
    (and the last dimension's -inf padding in `padded`)."""
    last = n_dim - 1
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

    def inside(d, t):
        """Whether window offset t of every output of the range lies inside
        the input along dim d (always, along the padded last one)."""
        a, b = ranges[d]
        first = a * stride[d] - padding[d] + t * dilation[d]
        return d == last or (first >= 0 and first + (b - a - 1) * stride[d] < inputs[d])

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
    for offset in itertools.product(*(range(k) for k in kernel)):
        if not all(inside(d, t) for d, t in enumerate(offset)):
            continue  # padding: never taken
        window = padded
        for d in range(n_dim):
            a, b = ranges[d]
            # Into the input, or into `padded` along the last dimension.
            start = a * stride[d] + offset[d] * dilation[d] - (padding[d] if d < last else 0)
            window = window.narrow(x.dim() - n_dim + d, start, (sizes[d] - 1) * stride[d] + 1)
            window = window[(Ellipsis, slice(None, None, stride[d])) + (slice(None),) *
                            (n_dim - 1 - d)]
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
# Average pooling whose one window covers the whole plane (EfficientNet's
# pooler, AvgPool2d(hidden, ceil_mode=True) on its last map): through
# Inductor's lowering, inside that model, it reached us with an index that
# is not affine in a reduction loop (strict mode's reason) and ran on the
# CPU; standalone the same call did not. With no padding the window clipped
# to the input is the plane, so the average is its mean (its sum over
# divisor_override), accumulated in f32 as the CPU kernel does.


def avg_pool2d(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if divisor_override:
        return (x.sum((-2, -1), keepdim=True, dtype=torch.float32) / divisor_override).to(x.dtype)
    return x.mean((-2, -1), keepdim=True)


def _avg_applies(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
    if not x.is_floating_point() or x.dim() not in (3, 4):
        return False
    kernel, _, padding, _, inputs, outputs = _arguments(x, kernel_size, stride, padding, 1,
                                                        ceil_mode, 2)
    return all(p == 0 for p in padding) and all(o == 1 for o in outputs) and \
        all(k >= i for k, i in zip(kernel, inputs))


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {
        aten._adaptive_avg_pool3d.default: (adaptive_avg_pool3d, _adaptive_applies),
        aten.avg_pool2d.default: (avg_pool2d, _avg_applies),
        aten.max_pool2d_with_indices.default: (max_pool2d_with_indices, _applies(2)),
        aten.max_pool3d_with_indices.default: (max_pool3d_with_indices, _applies(3)),
    }
