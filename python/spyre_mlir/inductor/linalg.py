"""Small dense linear algebra (LU with partial pivoting, determinants,
solves, inverses, Cholesky, triangular solves) as decompositions the card
runs, used in spyre compiles (decompositions.py registers them).

Inductor calls LAPACK on the CPU for these. Here each factorization is
unrolled over the columns of a matrix whose size is known when compiling:
step j picks its pivot (the first largest magnitude, as LAPACK), swaps rows
and updates the trailing matrix with an outer product, every step being
elementwise ops, masks and row reductions over whole matrices in f32 (the
vector unit: no DLFloat16 rounding as on the matrix unit). Results match
LAPACK's up to the order of f32 operations. The unrolled steps are bounded
(MAX_ORDER); larger matrices stay on the CPU, counted. `info` is computed as
LAPACK's (the first zero pivot, the first minor that is not positive
definite), so that the linalg functions raise on the host as eager does.
"""

from __future__ import annotations

import torch

#: Columns unrolled beyond which LAPACK on the CPU is the better place.
MAX_ORDER = 32


def _arange(n, like):
    # int32, the card's integers: positions never need more.
    return torch.arange(n, dtype=torch.int32, device=like.device)


def _offsets(m, n, like):
    """column - row of each position of an m x n matrix. tril, triu and eye
    are comparisons of these here: Inductor's own use uint8 iotas, which the
    card does not hold."""
    return _arange(n, like) - _arange(m, like).unsqueeze(-1)


def _eye(m, n, like):
    return (_offsets(m, n, like) == 0).to(like.dtype)


def _tril(a, diagonal=0):
    return torch.where(_offsets(*a.shape[-2:], a) <= diagonal, a, 0)


def _triu(a, diagonal=0):
    return torch.where(_offsets(*a.shape[-2:], a) >= diagonal, a, 0)


def _pick_row(a, p):
    """Row p[...] of a (..., m, n): one chosen term per column, summed."""
    chosen = _arange(a.shape[-2], a).unsqueeze(-1) == p[..., None, None]
    return torch.where(chosen, a, 0).sum(-2)


def _lu(a, pivot=True):
    """(LU, pivots (1-based, int32), sign of the row permutation, info) of
    a (..., m, n), as LAPACK's getrf."""
    m, n = a.shape[-2:]
    rows, cols = _arange(m, a).unsqueeze(-1), _arange(n, a)
    batch = a.shape[:-2]
    sign = torch.ones(batch, dtype=a.dtype, device=a.device)
    info = torch.zeros(batch, dtype=torch.int32, device=a.device)
    pivots = []
    for j in range(min(m, n)):
        if pivot:
            candidates = torch.where(_arange(m, a) >= j, a[..., :, j].abs(), -1)
            largest = candidates.amax(-1, keepdim=True)
            p = torch.where(candidates == largest, _arange(m, a), m).amin(-1)
            row_j, row_p = a[..., j, :], _pick_row(a, p)
            a = torch.where(rows == j, row_p.unsqueeze(-2),
                            torch.where(rows == p[..., None, None], row_j.unsqueeze(-2), a))
            sign = torch.where(p != j, -sign, sign)
            pivots.append(p + 1)
        else:
            pivots.append(torch.full(batch, j + 1, device=a.device))
        diagonal = a[..., j, j]
        info = torch.where((info == 0) & (diagonal == 0), j + 1, info)
        below = rows > j
        # LAPACK leaves a column under a zero pivot as it is (all zeros when
        # pivoting).
        column = torch.where(diagonal.unsqueeze(-1) != 0, a[..., :, j] / diagonal.unsqueeze(-1),
                             a[..., :, j])
        update = a - column.unsqueeze(-1) * a[..., j, :].unsqueeze(-2)
        a = torch.where(below & (cols > j), update,
                        torch.where(below & (cols == j), column.unsqueeze(-1), a))
    pivots = torch.stack(pivots, -1).to(torch.int32) if pivots else \
        torch.zeros(*batch, 0, dtype=torch.int32, device=a.device)
    return a, pivots, sign, info


def _permutation(pivots, m):
    """perm (..., m): row i of P^T A is row perm[i] of A, for LAPACK's
    1-based row swaps `pivots`."""
    positions = _arange(m, pivots)
    perm = positions.expand(*pivots.shape[:-1], m)
    for j in range(pivots.shape[-1]):
        # Compared with 1-based positions: pivots - 1 could leave int32.
        swapped = positions + 1 == pivots[..., j].unsqueeze(-1)
        at_p = torch.where(swapped, perm, -1).amax(-1, keepdim=True)
        at_j = perm[..., j:j + 1]
        perm = torch.where(positions == j, at_p, torch.where(swapped, at_j, perm))
    return perm


def _permutation_matrix(perm, dtype):
    """P with A = P (P^T A): P[perm[i], i] = 1."""
    m = perm.shape[-1]
    return (_arange(m, perm).unsqueeze(-1) == perm.unsqueeze(-2)).to(dtype)


def _unpack(lu):
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = _tril(lu[..., :, :k], -1) + _eye(m, k, lu)
    upper = _triu(lu[..., :k, :])
    return lower, upper


def _solve_triangular(t, b, upper, unit=False):
    """X with T X = B, T (..., n, n) triangular, B (..., n, r): substitution
    row by row, each solved row taken out of the rows still to solve."""
    n = t.shape[-1]
    rows = _arange(n, t).unsqueeze(-1)
    solved = [None] * n
    for i in (reversed(range(n)) if upper else range(n)):
        x = b[..., i, :] if unit else b[..., i, :] / t[..., i, i].unsqueeze(-1)
        solved[i] = x
        rest = rows < i if upper else rows > i
        b = torch.where(rest, b - t[..., :, i].unsqueeze(-1) * x.unsqueeze(-2), b)
    if n == 0:
        return b
    return torch.stack(solved, -2)


def _batch_broadcast(a, b):
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:])


def _lu_solve(lu, pivots, b, left=True, adjoint=False):
    """X with A X = B (A^H X = B with adjoint; X A = B unless left) for A's
    LU factors."""
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _lu_solve(lu, pivots, b.mT, True, not adjoint).mT
    lu, b = _batch_broadcast(lu, b)
    perm = _permutation(pivots.expand(*lu.shape[:-2], pivots.shape[-1]), lu.shape[-2])
    p = _permutation_matrix(perm, b.dtype)
    if adjoint:  # U^T L^T P^T X = B
        y = _solve_triangular(lu.mT, b, upper=False)
        z = _solve_triangular(lu.mT, y, upper=True, unit=True)
        return _reordered(p, z)
    y = _solve_triangular(lu, _reordered(p.mT, b), upper=False, unit=True)
    return _solve_triangular(lu, y, upper=True)


def _reordered(p, b):
    """p @ b for a permutation matrix p, exactly: one chosen term per sum."""
    return torch.where(p.unsqueeze(-1) != 0, b.unsqueeze(-3), 0).sum(-2)


# --------------------------------------------------------------------------
# The aten ops.


def linalg_lu_factor_ex(a, *, pivot=True, check_errors=False):
    lu, pivots, _, info = _lu(a, pivot)
    return lu, pivots, info


def linalg_lu(a, *, pivot=True):
    lu, pivots, _, _ = _lu(a, pivot)
    lower, upper = _unpack(lu)
    m = a.shape[-2]
    p = _permutation_matrix(_permutation(pivots, m), a.dtype) if pivot else \
        a.new_zeros(*a.shape[:-2], 0, 0)
    return p, lower, upper


def lu_unpack(lu, pivots, unpack_data=True, unpack_pivots=True):
    lower, upper = _unpack(lu) if unpack_data else (lu.new_empty(0), lu.new_empty(0))
    p = _permutation_matrix(_permutation(pivots, lu.shape[-2]), lu.dtype) if unpack_pivots \
        else lu.new_empty(0)
    return p, lower, upper


def _linalg_det(a):
    lu, pivots, sign, _ = _lu(a)
    return sign * lu.diagonal(0, -2, -1).prod(-1), lu, pivots


def _linalg_slogdet(a):
    lu, pivots, sign, _ = _lu(a)
    diagonal = lu.diagonal(0, -2, -1)
    return sign * diagonal.sign().prod(-1), diagonal.abs().log().sum(-1), lu, pivots


def linalg_lu_solve(lu, pivots, b, *, left=True, adjoint=False):
    return _lu_solve(lu, pivots, b, left, adjoint)


def _vector_case(a, b):
    return b.dim() == 1 or (a.dim() - 1 == b.dim() and b.shape == a.shape[:-1])


def _linalg_solve_ex(a, b, *, left=True, check_errors=False):
    lu, pivots, _, info = _lu(a)
    vector = _vector_case(a, b)
    b = b.unsqueeze(-1) if vector else b
    x = _lu_solve(lu, pivots, b, left)
    return (x.squeeze(-1) if vector else x), lu, pivots, info


def linalg_inv_ex(a, *, check_errors=False):
    lu, pivots, _, info = _lu(a)
    return _lu_solve(lu, pivots, _eye(*a.shape[-2:], a).expand(a.shape)), info


def _cholesky(a):
    """(L, info) of a (..., n, n), as LAPACK's potrf: right-looking, one
    column per step; info is the first minor that is not positive definite."""
    n = a.shape[-1]
    rows, cols = _arange(n, a).unsqueeze(-1), _arange(n, a)
    info = torch.zeros(a.shape[:-2], dtype=torch.int32, device=a.device)
    for j in range(n):
        pivot = a[..., j, j]
        info = torch.where((info == 0) & ~(pivot > 0), j + 1, info)
        column = a[..., :, j] / pivot.sqrt().unsqueeze(-1)  # rows >= j of L's column j
        update = a - column.unsqueeze(-1) * column.unsqueeze(-2)
        a = torch.where((rows > j) & (cols > j), update,
                        torch.where((cols == j) & (rows >= j), column.unsqueeze(-1), a))
    return _tril(a), info


def linalg_cholesky_ex(a, *, upper=False, check_errors=False):
    lower, info = _cholesky(a)
    return (lower.mH if upper else lower), info


def cholesky(a, upper=False):
    lower, _ = _cholesky(a)
    return lower.mH if upper else lower


def cholesky_solve(b, factor, upper=False):
    b, factor = _batch_broadcast(b, factor)
    lower = factor.mH if upper else factor
    return _solve_triangular(lower.mH, _solve_triangular(lower, b, upper=False), upper=True)


def cholesky_inverse(factor, upper=False):
    eye = _eye(*factor.shape[-2:], factor)
    return cholesky_solve(eye.expand(factor.shape), factor, upper)


def linalg_solve_triangular(a, b, *, upper, left=True, unitriangular=False):
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return linalg_solve_triangular(a.mT, b.mT, upper=not upper,
                                       unitriangular=unitriangular).mT
    a, b = _batch_broadcast(a, b)
    return _solve_triangular(_triu(a) if upper else _tril(a), b, upper, unitriangular)


def triangular_solve(b, a, upper=True, transpose=False, unitriangular=False):
    t = a.mT if transpose else a
    b, t = _batch_broadcast(b, t)
    x = _solve_triangular(_triu(t) if upper != transpose else _tril(t), b,
                          upper != transpose, unitriangular)
    return x, a.clone()


# --------------------------------------------------------------------------
# QR by Householder reflections, as LAPACK's geqr2/org2r/orm2r: reflector j
# is I - tau_j v_j v_j^T, v_j being 1 at row j, zero above and the factored
# matrix's column j below.


def _geqrf(a):
    m, n = a.shape[-2:]
    rows, cols = _arange(m, a), _arange(n, a)
    taus = []
    for j in range(min(m, n)):
        column = a[..., :, j]
        below = rows > j
        alpha = a[..., j, j]
        norm = torch.where(below, column * column, 0).sum(-1).sqrt()  # of the part below
        reflects = norm != 0
        beta = -torch.copysign((alpha * alpha + norm * norm).sqrt(), alpha)
        tau = torch.where(reflects, (beta - alpha) / beta, 0)
        scaled = torch.where(reflects.unsqueeze(-1), column / (alpha - beta).unsqueeze(-1), column)
        v = torch.where(rows == j, 1, torch.where(below, scaled, 0))
        w = (v.unsqueeze(-1) * a).sum(-2)  # v^T a
        update = a - (tau.unsqueeze(-1) * v).unsqueeze(-1) * w.unsqueeze(-2)
        new_column = torch.where(rows == j, torch.where(reflects, beta, alpha).unsqueeze(-1),
                                 torch.where(below, scaled, column))
        a = torch.where(cols > j, update,
                        torch.where(cols == j, new_column.unsqueeze(-1), a))
        taus.append(tau)
    tau = torch.stack(taus, -1) if taus else a.new_zeros(*a.shape[:-2], 0)
    return a, tau


def _reflector(a, j):
    """v_j of the factored matrix a (..., m, n)."""
    rows = _arange(a.shape[-2], a)
    return torch.where(rows == j, 1, torch.where(rows > j, a[..., :, j], 0))


def _apply_reflectors(a, tau, c, left=True, transpose=False):
    """Q c (Q^T c with transpose; c Q or c Q^T unless left) for Q = H_0 ...
    H_{k-1}, one reflector at a time."""
    k = tau.shape[-1]
    # Q c applies H_{k-1} first; Q^T c applies H_0 first; on the right the
    # other way round.
    order = range(k) if transpose == left else reversed(range(k))
    for j in order:
        v, t = _reflector(a, j), tau[..., j]
        if left:  # c - tau v (v^T c)
            w = (v.unsqueeze(-1) * c).sum(-2)
            c = c - (t.unsqueeze(-1) * v).unsqueeze(-1) * w.unsqueeze(-2)
        else:  # c - tau (c v) v^T
            w = (c * v.unsqueeze(-2)).sum(-1)
            c = c - (t.unsqueeze(-1) * w).unsqueeze(-1) * v.unsqueeze(-2)
    return c


def geqrf(a):
    return _geqrf(a)


def householder_product(a, tau):
    m, n = a.shape[-2:]
    eye = _eye(m, n, a).expand(*a.shape[:-2], m, n)
    return _apply_reflectors(a, tau, eye)


def ormqr(a, tau, c, left=True, transpose=False):
    return _apply_reflectors(a, tau, c, left, transpose)


def linalg_qr(a, mode="reduced"):
    m, n = a.shape[-2:]
    k = min(m, n)
    factored, tau = _geqrf(a)
    rows = m if mode == "complete" else k
    r = _triu(factored[..., :rows, :])
    if mode == "r":
        return a.new_empty(0), r
    eye = _eye(m, rows, a).expand(*a.shape[:-2], m, rows)
    return _apply_reflectors(factored, tau, eye), r


# --------------------------------------------------------------------------
# When they apply: real floating matrices of a bounded order.


def _small(*tensors) -> bool:
    return all(t.is_floating_point() and not t.is_complex() and t.dim() >= 2 and
               max(t.shape[-2:]) <= MAX_ORDER for t in tensors)


def _first_small(a, *args, pivot=True, **kwargs):
    # Without pivoting, LU is CUDA-only in eager: the CPU raises, so do we.
    return _small(a) and pivot


def _two_small(a, b, *args, **kwargs):
    return _small(a) and b.is_floating_point() and b.dim() >= 1


def _lu_solve_applies(lu, pivots, b, *, left=True, adjoint=False):
    return _small(lu, b)


def _lu_unpack_applies(lu, pivots, unpack_data=True, unpack_pivots=True):
    return _small(lu)


def _solve_triangular_applies(a, b, *args, **kwargs):
    return _small(a, b)


def _triangular_solve_applies(b, a, *args, **kwargs):
    return _small(a, b)


def _qr_applies(a, *args, **kwargs):
    return _small(a)


def _reflectors_apply(a, tau, *args, **kwargs):
    return _small(a) and tau.shape[-1] <= min(a.shape[-2:]) and \
        all(not isinstance(c, torch.Tensor) or _small(c) for c in args)


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {
        aten.geqrf.default: (geqrf, _qr_applies),
        aten.linalg_householder_product.default: (householder_product, _reflectors_apply),
        aten.ormqr.default: (ormqr, _reflectors_apply),
        aten.linalg_qr.default: (linalg_qr, _qr_applies),
        aten.linalg_lu_factor_ex.default: (linalg_lu_factor_ex, _first_small),
        aten.linalg_lu.default: (linalg_lu, _first_small),
        aten.lu_unpack.default: (lu_unpack, _lu_unpack_applies),
        aten._linalg_det.default: (_linalg_det, _first_small),
        aten._linalg_slogdet.default: (_linalg_slogdet, _first_small),
        aten.linalg_lu_solve.default: (linalg_lu_solve, _lu_solve_applies),
        aten._linalg_solve_ex.default: (_linalg_solve_ex, _two_small),
        aten.linalg_inv_ex.default: (linalg_inv_ex, _first_small),
        aten.linalg_cholesky_ex.default: (linalg_cholesky_ex, _first_small),
        aten.cholesky.default: (cholesky, _first_small),
        aten.cholesky_solve.default: (cholesky_solve, _triangular_solve_applies),
        aten.cholesky_inverse.default: (cholesky_inverse, _first_small),
        aten.linalg_solve_triangular.default: (linalg_solve_triangular,
                                               _solve_triangular_applies),
        aten.triangular_solve.default: (triangular_solve, _triangular_solve_applies),
    }
