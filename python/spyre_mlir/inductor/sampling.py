"""Grid sampling (grid_sampler_2d, grid_sampler_3d) and antialiased
bilinear resizing as decompositions the card runs, used in spyre compiles
(decompositions.py registers them).

Inductor's own decomposition of grid_sampler_2d converts unbounded float
coordinates to int64 (which the card holds as int32: the range checks refuse
it), multiplies masked-off weights by the input's first element (NaN or inf
there leaks into the result), and takes reflection parities from an int8
conversion that wraps: it is not eager's result for every input. Here the
CPU kernels' formulas are followed instead, in float throughout: an input
element is picked by comparing the integer-valued coordinates with every
position (picks.py), so a coordinate outside the input, infinite or NaN
picks nothing, which is the zeros padding of the kernels. The 2-d CPU kernel
is vectorized (GridSamplerKernel.cpp) and the 3-d one scalar
(GridSampler.cpp), and they treat NaN and out-of-range coordinates
differently: each is followed as it is.
"""

from __future__ import annotations

import math

import torch

from . import decompositions  # its pick budget, read at each call: tests lower it
from .picks import pick_last

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2
#: The cubic convolution's constant, as in the CPU kernel.
A = -0.75


def _materialized(coordinates):
    """The coordinate tensors, read back from one buffer that holds them all:
    a concatenation is a copy into slices of a buffer, which Inductor never
    inlines. Otherwise each coordinate's expression (padding, reflection,
    clipping) is inlined into every pick's reduction, and Inductor lowers
    its shared subexpressions as a tree: a 3-d grid sample with reflection
    of a 3x4x5 input took ~50 s to compile (Inductor's CPU backend 3 s)."""
    return torch.stack(coordinates).unbind(0)


def _picker(a, n_dim):
    """pick(coords): a[n, c, coords] for float coordinates (N, *out) of the
    last n_dim dimensions, 0 where any coordinate is not a position."""
    sizes = list(a.shape[2:])
    n, c = a.shape[:2]
    values = a.reshape(n, c, *([1] * n_dim), math.prod(sizes))

    def pick(coords):
        # Negative coordinates would count from the end: make them `size`,
        # which names no position either (NaN fails the test too).
        coords = [torch.where(x >= 0, x, size).unsqueeze(1) for x, size in zip(coords, sizes)]
        return pick_last(values, coords, sizes)
    return pick


# --------------------------------------------------------------------------
# 2-d: the vectorized CPU kernel (ComputeLocation, ApplyGridSample).


def _clip_2d(x, size):
    # The kernel's clamp takes NaN to 0 (its max keeps the second operand).
    return torch.where(x > 0, x, 0.0).clamp_max(size - 1)


def _reflect_2d(x, size, align_corners):
    if align_corners:
        if size <= 1:
            return torch.zeros_like(x)
        low, twice_span = 0.0, 2.0 * (size - 1)
    else:
        low, twice_span = -0.5, 2.0 * size
    distance = (x - low).abs()
    extra = distance - (distance / twice_span).trunc() * twice_span
    return torch.minimum(extra, twice_span - extra) + low


def _padded_2d(x, size, padding, align_corners):
    if padding == BORDER:
        return _clip_2d(x, size)
    if padding == REFLECTION:
        return _clip_2d(_reflect_2d(x, size, align_corners), size)
    return x


def _unnormalize_2d(x, size, align_corners):
    if align_corners:
        return (x + 1) * ((size - 1) / 2)
    return (x + 1) * (size / 2) - 0.5


def _cubic_coefficients(t):
    """The four cubic convolution weights of offsets -1..2 at fraction t."""
    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def grid_sampler_2d(a, grid, interpolation_mode, padding_mode, align_corners):
    _, _, height, width = a.shape
    pick = _picker(a, 2)
    gx, gy = grid[..., 0], grid[..., 1]
    if interpolation_mode == BICUBIC:
        x, y = _unnormalize_2d(gx, width, align_corners), _unnormalize_2d(gy, height,
                                                                          align_corners)
        x0, y0 = x.floor(), y.floor()
        cx, cy = _cubic_coefficients(x - x0), _cubic_coefficients(y - y0)
        cx = [c.unsqueeze(1) for c in cx]
        # The four columns and rows the taps read, in one buffer (see
        # _materialized).
        taps = _materialized(
            [_padded_2d(x0 + d, width, padding_mode, align_corners).trunc() for d in range(-1, 3)] +
            [_padded_2d(y0 + d, height, padding_mode, align_corners).trunc() for d in range(-1, 3)])
        xs, ys = taps[:4], taps[4:]

        def value(dx, dy):
            return pick([ys[dy + 1], xs[dx + 1]])
        rows = []
        for dy in range(-1, 3):
            row = cx[0] * value(-1, dy)
            for k in range(1, 4):
                row = row + cx[k] * value(k - 1, dy)
            rows.append(row)
        out = cy[0].unsqueeze(1) * rows[0]
        for k in range(1, 4):
            out = out + cy[k].unsqueeze(1) * rows[k]
        return out
    x = _padded_2d(_unnormalize_2d(gx, width, align_corners), width, padding_mode,
                   align_corners)
    y = _padded_2d(_unnormalize_2d(gy, height, align_corners), height, padding_mode,
                   align_corners)
    x, y = _materialized([x, y])
    if interpolation_mode == NEAREST:
        return pick([y.round(), x.round()])
    x0, y0 = x.floor(), y.floor()
    w = x - x0
    e = 1 - w
    n = y - y0
    s = 1 - n
    corners = (((x0, y0), s * e), ((x0 + 1, y0), s * w), ((x0, y0 + 1), n * e),
               ((x0 + 1, y0 + 1), n * w))
    out = None
    for (xs, ys), weight in corners:
        term = pick([ys, xs]) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


# --------------------------------------------------------------------------
# 3-d: the scalar CPU kernel (GridSampler.h's compute_source_index).


def _clip_3d(x, size):
    # std::max(x, 0) keeps NaN, then std::min(size - 1, NaN) is size - 1.
    x = torch.where(x < 0, 0.0, x)
    return torch.where(x < size - 1, x, float(size - 1))


def _reflect_3d(x, twice_low, twice_high):
    if twice_low == twice_high:
        return torch.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = (x - low).abs()
    extra = torch.fmod(distance, span)
    flips = (distance / span).floor()
    # int(flips) is INT_MIN (even) beyond int's range and for NaN.
    odd = (flips < 2.0 ** 31) & (torch.fmod(flips, 2) == 1)
    return torch.where(odd, span - extra + low, extra + low)


def _source_3d(x, size, padding, align_corners):
    if align_corners:
        x = ((x + 1) / 2) * (size - 1)
    else:
        x = ((x + 1) * size - 1) / 2
    if padding == BORDER:
        x = _clip_3d(x, size)
    elif padding == REFLECTION:
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        x = _clip_3d(_reflect_3d(x, *twice), size)
    # Coordinates beyond int's range and non-finite ones become -100 (no
    # position), as safe_downgrade_to_int_range does.
    keep = (x >= -2.0 ** 31) & (x <= 2.0 ** 31)
    return torch.where(keep, x, -100.0)


def grid_sampler_3d(a, grid, interpolation_mode, padding_mode, align_corners):
    sizes = a.shape[2:]  # depth, height, width
    pick = _picker(a, 3)
    # grid's last dimension is (x, y, z): width, height, depth.
    coords = [_source_3d(grid[..., 2 - d], sizes[d], padding_mode, align_corners)
              for d in range(3)]
    coords = _materialized(coords)
    if interpolation_mode == NEAREST:
        return pick([c.round() for c in coords])
    z, y, x = coords
    z0, y0, x0 = z.floor(), y.floor(), x.floor()
    # Distances to the far (1) and near (0) corner along each dimension.
    dx = {0: x0 + 1 - x, 1: x - x0}
    dy = {0: y0 + 1 - y, 1: y - y0}
    dz = {0: z0 + 1 - z, 1: z - z0}
    out = None
    for k in range(2):  # the kernel's order: tnw tne tsw tse bnw bne bsw bse
        for j in range(2):
            for i in range(2):
                weight = dx[i] * dy[j] * dz[k]
                term = pick([z0 + k, y0 + j, x0 + i]) * weight.unsqueeze(1)
                out = term if out is None else out + term
    return out


# --------------------------------------------------------------------------
# Antialiased bilinear resizing: separable, each axis a fixed linear map
# given the shapes. Its weights and taps are eager's own, computed while
# compiling by eager's kernel on the host: the weights from unit vectors, the
# taps (the inputs an output reads, zero weights included) from NaN vectors,
# as NaN times a zero weight is NaN in eager. The map is applied on the
# vector unit in f32 (a matrix product would round to DLFloat16).


def _axis_map(n_in, n_out, align_corners, scale):
    """(weights, taps) as (n_out, n_in) lists, of one axis resized from n_in
    to n_out; None for the identity (eager skips that pass)."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing
    with unset_fake_temporarily(), disable_proxy_modes_tracing():
        eye = torch.eye(n_in)

        def run(x):  # the rows of x as channels, resized along the width
            out = torch.ops.aten._upsample_bilinear2d_aa(x.reshape(1, n_in, 1, n_in),
                                                        [1, n_out], align_corners, None, scale)
            return out.reshape(n_in, n_out).T
        weights = run(eye)
        taps = run(torch.where(eye == 1, math.nan, 0.0)).isnan()
        if n_in == n_out and torch.equal(weights, eye) and torch.equal(taps, eye == 1):
            return None
        return weights.tolist(), taps.tolist()


def _axis_applies(n_in, n_out, align_corners, scale):
    """A scale that does not give the output size (both are arguments of
    the op) places windows beyond the input, where eager's kernel reads
    past the row (found so: NaN taps outside any window): declined. So are
    outputs that read nothing or a broken range."""
    if scale is not None and math.floor(n_in * scale) != n_out:
        return False
    axis_map = _axis_map(n_in, n_out, align_corners, scale)
    for row in ([] if axis_map is None else axis_map[1]):
        read = [k for k, tap in enumerate(row) if tap]
        if not read or read[-1] - read[0] + 1 != len(read):
            return False
    return True


def _resized(x, dim, axis_map):
    if axis_map is None:
        return x
    weights, taps = axis_map
    weights = torch.tensor(weights, dtype=x.dtype, device=x.device)
    taps = torch.tensor(taps, device=x.device)
    rows = x.movedim(dim, -1).unsqueeze(-2)  # (..., 1, n_in)
    zero = torch.zeros((), dtype=x.dtype, device=x.device)
    return torch.where(taps, rows * weights, zero).sum(-1).movedim(-1, dim)


def upsample_bilinear2d_aa(x, output_size, align_corners, scales_h=None, scales_w=None):
    (h, w), (out_h, out_w) = x.shape[-2:], output_size
    # Along the width first, as eager's kernel (its intermediate is rounded).
    x = _resized(x, -1, _axis_map(w, out_w, align_corners, scales_w))
    return _resized(x, -2, _axis_map(h, out_h, align_corners, scales_h))


def _aa_applies(x, output_size, align_corners, scales_h=None, scales_w=None):
    (h, w), (out_h, out_w) = x.shape[-2:], output_size
    rows = math.prod(x.shape[:-2])
    work = rows * h * out_w * w + rows * out_h * out_w * h
    # Eager's kernel resizes the height of a one-column result to copies of
    # its first row (measured, torch 2.13): declined rather than copied.
    if out_w == 1 and _axis_map(h, out_h, align_corners, scales_h) is not None:
        return False
    return x.dtype == torch.float32 and x.dim() == 4 and \
        0 < work <= decompositions.MAX_PICK_COMPARISONS and \
        _axis_applies(w, out_w, align_corners, scales_w) and \
        _axis_applies(h, out_h, align_corners, scales_h)


#: Input elements each output element is compared with, per mode.
_PICKS = {BILINEAR: 4, NEAREST: 1, BICUBIC: 16}


def _applies(n_dim):
    def applies(a, grid, interpolation_mode, padding_mode, align_corners):
        picks = _PICKS.get(interpolation_mode, 0) * (2 if n_dim == 3 and
                                                     interpolation_mode == BILINEAR else 1)
        comparisons = picks * a.shape[0] * a.shape[1] * math.prod(grid.shape[1:-1]) * \
            math.prod(a.shape[2:])
        # 16-bit kernels round differently; other dtypes stay with eager.
        return a.dtype == grid.dtype == torch.float32 and padding_mode in (0, 1, 2) and \
            0 < comparisons <= decompositions.MAX_PICK_COMPARISONS and a.dim() == n_dim + 2
    return applies


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {
        aten.grid_sampler_2d.default: (grid_sampler_2d, _applies(2)),
        aten.grid_sampler_3d.default: (grid_sampler_3d, _applies(3)),
        aten._upsample_bilinear2d_aa.default: (upsample_bilinear2d_aa, _aa_applies),
    }
