"""Scans (cumsum, cumprod, cummax, cummin, logcumsumexp) and sorts (sort,
topk, kthvalue, median, nanmedian) as decompositions the card runs, used in
spyre compiles (decompositions.py registers them).

Inductor calls library kernels for all of these on the CPU. Here each one is
a masked reduction over an n x n square per row of the scanned dimension:
position i of a scan reduces the positions j <= i, and a sort ranks each
element by counting the elements that go before it, then picks, for each
output position, the element of that rank. That is n^2 work per row, but
every step is an elementwise op or a row reduction of the vector unit, in
f32 (no DLFloat16 rounding of operands as on the matrix unit), so results
are those of a sequential scan up to the order of f32 additions, and sorts
are exact. The work is bounded (MAX_SQUARE): a scan whose rows are too long
for one square is scanned in blocks of about sqrt(n) (n^1.5 work, bounded by
MAX_BLOCKED_SCAN). Beyond that budget a floating cumsum of many lines is a
product with a triangle of ones on the matrix unit (_cumsum_by_product,
bounded by MAX_PRODUCT_SCAN); other long scans, and sorts of long rows, stay
on the CPU.
"""

from __future__ import annotations

import math

import torch
from torch._prims_common import is_non_overlapping_and_dense_or_false

from .ranges import integer_limits

#: Elements of the n x n squares beyond which the CPU's n log n is better.
MAX_SQUARE = 1 << 22
#: Elements of a blocked scan's squares (its blocks' and their totals'):
#: many rows of a few hundred elements fit (a small Mamba2's chunked segment
#: sums: 8 heads, 4096 rows of 256, 17.8M; with 128 heads, 285M, they stay
#: on the CPU).
MAX_BLOCKED_SCAN = 1 << 25
#: Multiply-accumulates of a floating cumsum beyond MAX_BLOCKED_SCAN run as
#: a product with a triangle of ones on the matrix unit (_cumsum_by_product):
#: Granite 4.0's hybrid layers' segment sums, 128 heads of 256 x 256 in
#: three parts, are 6.4G of them, 1.1 ms on the card.
MAX_PRODUCT_SCAN = 1 << 35


def _square_fits(x, dim) -> bool:
    if x.dim() == 0:
        return True
    n = x.shape[dim]
    return x.numel() > 0 and x.numel() * n <= MAX_SQUARE


def _floating_or_int(x) -> bool:
    return x.is_floating_point() or x.dtype in (torch.int32, torch.int64, torch.int16,
                                                torch.int8, torch.uint8)


def _last(x, dim):
    """x with `dim` last (a 0-d tensor as one element)."""
    return x.reshape(1) if x.dim() == 0 else x.movedim(dim, -1)


def _back(y, x, dim):
    """y, computed with `dim` last, in x's shape and layout (_as_laid_out)."""
    return y.reshape(()) if x.dim() == 0 else _as_laid_out(y.movedim(-1, dim), x)


def _as_laid_out(y, x):
    """y laid out as x where x is contiguous, as eager returns it: with its
    scanned dimension only moved back, an in-place scan (`x.cumsum_(0)`)
    left x laid out transposed as far as functionalization knew, so that
    `x.t().contiguous()` was x itself and saw x's later updates. Contiguous
    too where x is not dense (expanded), as eager lays that result out: a
    view of the scan of an expanded input failed on the strides."""
    dense = is_non_overlapping_and_dense_or_false(x)
    return y.contiguous() if x.is_contiguous() or not dense else y


def _positions(n, device):
    # int32 (the card's integers): int64 values must be proven to fit int32,
    # which Inductor's range analysis does not do through where and max.
    return torch.arange(n, dtype=torch.int32, device=device)


def _lower_triangle(n, device):
    """keep[i, j]: position j is part of the scan at position i."""
    p = _positions(n, device)
    return p.unsqueeze(1) >= p


def _lowest(dtype):
    """What no element is below: -inf, or for integers their type's least
    value on the card."""
    return -math.inf if dtype.is_floating_point else integer_limits(dtype)[0]


def _highest(dtype):
    return math.inf if dtype.is_floating_point else integer_limits(dtype)[1]


# --------------------------------------------------------------------------
# Scans: row i of the square holds x[j] for j <= i and the identity beyond.


def _scan_rows(v, identity, reduce):
    """The scan of each row of v along its last dimension, as one square."""
    keep = _lower_triangle(v.shape[-1], v.device)
    return reduce(torch.where(keep, v.unsqueeze(-2), identity))  # (..., i, j) -> (..., i)


def _block(n: int) -> int:
    """The block length of a scan too long for one square: a power of two
    near sqrt(n), so that the blocks' squares and the square of their
    totals are both about n^1.5."""
    return 1 << max(0, math.ceil(math.log2(n) / 2))


def _scan(x, dim, identity, reduce, combine):
    """A scan along `dim`; a row too long for one square is scanned in
    blocks (each its own square), then each block is combined with the scan
    of the totals of the blocks before it."""
    v = _last(x, dim)
    n = v.shape[-1]
    if _square_fits(x, dim) or n <= 2:
        return _back(_scan_rows(v, identity, reduce), x, dim)
    b = _block(n)
    m = -(-n // b)
    padded = torch.nn.functional.pad(v, (0, m * b - n), value=identity)
    inner = _scan_rows(padded.reshape(*v.shape[:-1], m, b), identity, reduce)  # (..., m, b)
    totals = inner[..., -1]
    before = torch.cat([torch.full_like(totals[..., :1], identity),
                        _scan(totals, -1, identity, reduce, combine)[..., :-1]], -1)
    out = combine(inner, before.unsqueeze(-1)).reshape(*v.shape[:-1], m * b)[..., :n]
    return _back(out, x, dim)


def _blocked_fits(x, dim) -> bool:
    """Whether a blocked scan's squares (the blocks', then their totals')
    stay within MAX_BLOCKED_SCAN."""
    if _square_fits(x, dim):
        return True
    n = x.shape[dim]
    b = _block(n)
    rows, m = x.numel() // n, -(-n // b)
    return rows * m * b * b + rows * m * m <= MAX_BLOCKED_SCAN


def _product_parts(dtype) -> int:
    """8-bit parts that hold a cumsum's element for its result type: three
    for f32 (24 significant bits), two for 16-bit types (a result rounded to
    11 bits)."""
    return 2 if dtype.itemsize == 2 else 3


def _parts(v, count: int, axis: int):
    """`count` parts of f32 `v` stacked along a new `axis`, summing to `v`
    (to 24 bits), each of at most 8 significant bits, so exact in bf16 and
    in the card's DLFloat16: Veltkamp's split in f32 arithmetic (c = v *
    (2^16 + 1), high = c - (c - v) keeps v's top 8 bits). Not a cast to 16
    bits and back: inside one kernel neither Inductor nor the card rounds
    such a pair of casts. One elementwise expression of `v` over the parts'
    index: a concatenation would compute `v` once per part, or store it."""
    shape = list(v.shape)
    shape.insert(axis % (v.dim() + 1), count)
    left = v.unsqueeze(axis).expand(shape)
    which = _positions(count, v.device).reshape([-1 if d == axis % len(shape) else 1
                                                 for d in range(len(shape))])
    out = torch.zeros_like(left)
    for k in range(count - 1):
        spread = left * 65537.0
        high = spread - (spread - left)
        out = torch.where(which == k, high, out)
        left = left - high
    return torch.where(which == count - 1, left, out)


#: The exponent a scanned line's largest element is scaled to.
_TOP_EXPONENT = 30.0


def _cumsum_by_product(x, dim):
    """cumsum of floating `x` along `dim` as a product with a triangle of
    ones on the matrix unit, which multiplies 16-bit values and sums in f32.

    Each line scanned is scaled by a power of two that brings its largest
    finite element to [2^30, 2^31) (the card's DLFloat16 holds 2^-30 to
    2^32), then split into parts of 8 significant bits (_parts): every
    product by one is exact, and the result is a sequential f32 scan's up to
    the order of additions, for elements down to 2^-44 of the line's
    largest (a smaller one loses its last parts below DLFloat16's range).
    The parts stacked along the product's depth, against as many triangles,
    make it one product. Non-finite elements are left out of it (the
    triangle's zeros times an infinity would be NaN everywhere): where each
    kind first appears in its line sets eager's inf, -inf or NaN from there
    on.

    Lines along the last dimension are the lhs (rows @ upper, upper[j, i] =
    j <= i); otherwise the scanned dimension is moved first, as the parts
    are written, and the triangle is the lhs (lower @ columns), so that no
    operand is transposed element by element."""
    dim = dim % x.dim()
    n = x.shape[dim]
    count = _product_parts(x.dtype)
    rows = math.prod(x.shape[dim + 1:]) == 1
    moved = x if rows else x.movedim(dim, 0)
    axis = 1 if rows else 0
    v = moved.reshape((-1, n) if rows else (n, -1)).to(torch.float32)
    finite = torch.isfinite(v)
    clean = torch.where(finite, v, 0.0)
    top = clean.abs().amax(axis, keepdim=True)
    exponent = torch.where(top > 0, torch.floor(torch.log2(top)), 0.0).clamp(min=-96)
    shift = _TOP_EXPONENT - exponent  # at most 126: exp2 of it is finite
    parts = _parts(clean * torch.exp2(shift), count, axis)
    p = _positions(n, x.device)
    if rows:
        upper = (p.unsqueeze(1) <= p).to(torch.bfloat16)
        sums = torch.ops.aten.mm.dtype(parts.reshape(v.shape[0], count * n).to(torch.bfloat16),
                                       torch.cat([upper] * count), torch.float32)
    else:
        lower = (p.unsqueeze(1) >= p).to(torch.bfloat16)
        sums = torch.ops.aten.mm.dtype(torch.cat([lower] * count, 1),
                                       parts.reshape(count * n, -1).to(torch.bfloat16),
                                       torch.float32)
    sums = sums * torch.exp2(-shift)
    # Where each kind of non-finite element first appears in its line (n if
    # nowhere): from there on eager's sums are inf, -inf, or NaN (a NaN, or
    # both infinities).
    at = p.reshape((1, n) if rows else (n, 1))

    def first(where):
        return torch.where(where, at, n).amin(axis, keepdim=True)

    pos, neg = at >= first(v == math.inf), at >= first(v == -math.inf)
    out = torch.where((at >= first(torch.isnan(v))) | (pos & neg), math.nan,
                      torch.where(pos, math.inf, torch.where(neg, -math.inf, sums)))
    if rows:
        return out.reshape(moved.shape).to(x.dtype)
    return _as_laid_out(out.reshape(moved.shape).movedim(0, dim).to(x.dtype), x)


def _by_product(x, dim, dtype) -> bool:
    """Whether a cumsum of `x` as `dtype` beyond the vector unit's budget
    runs on the matrix unit: floating, with at least as many rows as its
    length (the triangle, n x n, is read once for all of them)."""
    if dtype not in (torch.float32, torch.float16, torch.bfloat16) or x.dim() == 0 or \
            x.numel() == 0 or _blocked_fits(x, dim):
        return False
    n = x.shape[dim]
    rows = x.numel() // n
    return rows >= n and _product_parts(dtype) * rows * n * n <= MAX_PRODUCT_SCAN


def cumsum(self, dim, *, dtype=None):
    x = self if dtype is None else self.to(dtype)
    if dtype is None and not x.is_floating_point():
        x = x.to(torch.int64)  # as eager: integer sums are int64 unless a dtype is given
    if _by_product(x, dim, x.dtype):
        return _cumsum_by_product(x, dim)
    return _scan(x, dim, 0, lambda s: s.sum(-1, dtype=x.dtype), torch.add)


def cumprod(self, dim, *, dtype=None):
    x = self if dtype is None else self.to(dtype)
    if dtype is None and not x.is_floating_point():
        x = x.to(torch.int64)
    return _scan(x, dim, 1, lambda s: s.prod(-1, dtype=x.dtype), torch.mul)


def _cumulative_extreme(self, dim, largest):
    """cummax/cummin: the running extreme (NaN from the first NaN on) and,
    as eager's kernel, the last position j <= i holding it (for NaN, the
    last NaN)."""
    v = _last(self, dim)
    n = v.shape[-1]
    keep = _lower_triangle(n, v.device)
    spread = v.unsqueeze(-2)
    if largest:
        values = torch.where(keep, spread, _lowest(v.dtype)).amax(-1)
    else:
        values = torch.where(keep, spread, _highest(v.dtype)).amin(-1)
    holds = spread == values.unsqueeze(-1)
    if v.is_floating_point():
        holds = holds | torch.isnan(spread)
    positions = _positions(n, v.device)
    indices = torch.where(keep & holds, positions, -1).amax(-1).to(torch.int64)
    return _back(values, self, dim), _back(indices, self, dim)


def cummax(self, dim):
    return _cumulative_extreme(self, dim, True)


def cummin(self, dim):
    return _cumulative_extreme(self, dim, False)


def logcumsumexp(self, dim):
    """log(sum_{j<=i} exp(x_j)) with the running maximum taken out of each
    sum (as softmax takes it), in f32."""
    v = _last(self, dim).float()
    keep = _lower_triangle(v.shape[-1], v.device)
    spread = v.unsqueeze(-2)
    top = torch.where(keep, spread, -math.inf).amax(-1, keepdim=True)
    top = torch.where(torch.isinf(top), 0.0, top)  # all -inf, or an inf: no shift
    total = torch.where(keep, torch.exp(spread - top), 0.0).sum(-1)
    out = torch.log(total) + top.squeeze(-1)
    return _back(out.to(self.dtype), self, dim)


def _scan_applies(self, dim, *args, **kwargs):
    return self.numel() > 0 and _blocked_fits(self, dim) and \
        (_floating_or_int(self) or self.dtype == torch.bool)


def _cumsum_applies(self, dim, *, dtype=None):
    return _scan_applies(self, dim) or _by_product(self, dim, dtype or self.dtype)


def _float_scan_applies(self, dim, *args, **kwargs):
    return _square_fits(self, dim) and self.is_floating_point()


def _extreme_applies(self, dim):
    return _square_fits(self, dim) and _floating_or_int(self)


# --------------------------------------------------------------------------
# Sorts: an element's rank is how many elements go before it: those that
# order before it, and equal ones at earlier positions (a stable sort). NaN
# orders after every number ascending, before them descending, as in eager.


def _ranks(v, descending):
    """rank (..., n) of each element of v (..., n) along the last dimension."""
    n = v.shape[-1]
    me, other = v.unsqueeze(-1), v.unsqueeze(-2)  # (..., i, 1), (..., 1, j)
    before = other > me if descending else other < me
    tie = other == me
    if v.is_floating_point():
        me_nan, other_nan = torch.isnan(me), torch.isnan(other)
        nan_first = other_nan & ~me_nan if descending else me_nan & ~other_nan
        before = before | nan_first
        tie = tie | (me_nan & other_nan)
    p = _positions(n, v.device)
    earlier = p.unsqueeze(-1) > p  # [i, j]: j is before i
    # Counted in f32, exact up to 2^24 (MAX_SQUARE keeps n below): the card
    # sums in f32, and integer sums must be proven to stay exact there.
    return (before | (tie & earlier)).sum(-1, dtype=torch.float32)


def _select(v, ranks, wanted):
    """For each rank in `wanted` (..., k), the value of v (..., n) of that
    rank and its position: a one-hot comparison and a max over the row."""
    onehot = ranks.unsqueeze(-2) == wanted.unsqueeze(-1)  # (..., k, n)
    values = torch.where(onehot, v.unsqueeze(-2), _lowest(v.dtype)).amax(-1)
    positions = _positions(v.shape[-1], v.device)
    indices = torch.where(onehot, positions, -1).amax(-1)  # int32: see _positions
    return values.to(v.dtype), indices


def _sorted(self, dim, descending, count=None):
    v = _last(self, dim)
    ranks = _ranks(v, descending)
    wanted = _positions(v.shape[-1] if count is None else count, v.device)
    values, indices = _select(v, ranks, wanted)
    return _back(values, self, dim), _back(indices.to(torch.int64), self, dim)


def sort_stable(self, *, stable=None, dim=-1, descending=False):
    return _sorted(self, dim, descending)


def sort(self, dim=-1, descending=False):
    return _sorted(self, dim, descending)


def _sort_stable_applies(self, *, stable=None, dim=-1, descending=False):
    return _square_fits(self, dim) and _floating_or_int(self)


def _sort_applies(self, dim=-1, descending=False):
    return _square_fits(self, dim) and _floating_or_int(self)


def topk(self, k, dim=-1, largest=True, sorted=True):
    return _sorted(self, dim, largest, k)


def _topk_applies(self, k, dim=-1, largest=True, sorted=True):
    # With sorted=False PyTorch leaves the order unspecified (the CPU's and
    # CUDA's kernels differ): the card returns the elements sorted, which is
    # one such order (DeepSeek-V2's group-limited routing asks for it).
    return _square_fits(self, dim) and _floating_or_int(self)


def _pick_rank(self, dim, keepdim, rank):
    """The element of rank `rank` (ascending, a tensor broadcastable to the
    rows) along `dim` and its position."""
    v = _last(self, dim)
    values, indices = _select(v, _ranks(v, False), rank.unsqueeze(-1))
    values, indices = values.squeeze(-1), indices.squeeze(-1).to(torch.int64)
    if keepdim and self.dim() > 0:
        values, indices = values.unsqueeze(dim), indices.unsqueeze(dim)
    return values, indices


def kthvalue(self, k, dim=-1, keepdim=False):
    rank = torch.full((), k - 1, dtype=torch.int32, device=self.device)
    return _pick_rank(self, dim, keepdim, rank)


def _kthvalue_applies(self, k, dim=-1, keepdim=False):
    return _square_fits(self, dim) and _floating_or_int(self)


def _median(self, dim, keepdim, ignore_nan):
    """The lower median: rank (count - 1) // 2 among the numbers. NaNs rank
    after the numbers, in order, so the first NaN of a row has rank `count`:
    eager's median is that NaN (value and position) when a row has one, and
    nanmedian of a row of NaNs its first."""
    v = _last(self, dim)
    n = v.shape[-1]
    if v.is_floating_point():
        count = (~torch.isnan(v)).sum(-1, dtype=torch.float32).to(torch.int32)
        if ignore_nan:
            rank = torch.where(count > 0, (count - 1) // 2, 0)
        else:
            rank = torch.where(count < n, count, (n - 1) // 2)
    else:
        rank = torch.full(v.shape[:-1], (n - 1) // 2, dtype=torch.int32, device=v.device)
    values, indices = _select(v, _ranks(v, False), rank.unsqueeze(-1))
    values, indices = values.squeeze(-1), indices.squeeze(-1).to(torch.int64)
    if keepdim and self.dim() > 0:
        values, indices = values.unsqueeze(dim), indices.unsqueeze(dim)
    return values, indices


def median_dim(self, dim, keepdim=False):
    return _median(self, dim, keepdim, False)


def nanmedian_dim(self, dim, keepdim=False):
    return _median(self, dim, keepdim, True)


def median(self):
    return _median(self.reshape(-1), 0, False, False)[0]


def nanmedian(self):
    return _median(self.reshape(-1), 0, False, True)[0]


def _median_dim_applies(self, dim, keepdim=False):
    return _square_fits(self, dim) and _floating_or_int(self)


def _median_applies(self):
    return self.numel() > 0 and self.numel() ** 2 <= MAX_SQUARE and _floating_or_int(self)


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {
        aten.cumsum.default: (cumsum, _cumsum_applies),
        aten.cumprod.default: (cumprod, _scan_applies),
        aten.cummax.default: (cummax, _extreme_applies),
        aten.cummin.default: (cummin, _extreme_applies),
        aten.logcumsumexp.default: (logcumsumexp, _float_scan_applies),
        aten.sort.default: (sort, _sort_applies),
        aten.sort.stable: (sort_stable, _sort_stable_applies),
        aten.topk.default: (topk, _topk_applies),
        aten.kthvalue.default: (kthvalue, _kthvalue_applies),
        aten.median.default: (median, _median_applies),
        aten.median.dim: (median_dim, _median_dim_applies),
        aten.nanmedian.default: (nanmedian, _median_applies),
        aten.nanmedian.dim: (nanmedian_dim, _median_dim_applies),
    }
