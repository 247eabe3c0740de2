"""Small dense linear algebra with torch.compile(backend="spyre") against
eager (LAPACK), with zero CPU fallbacks (linalg.py): LU with partial
pivoting (pivots as LAPACK's, rectangular and batched), det/slogdet of
singular matrices, solve/inv (left and right, vector right-hand sides),
Cholesky, triangular solves; singular or indefinite inputs raise on the host
as in eager; matrices beyond MAX_ORDER run on the CPU, counted."""

import pytest
import torch

from eager_compare import compiled_and_eager
from spyre_mlir.inductor import linalg


def run(fn, *args, on_card=True, atol=1e-4):
    actual, expected = compiled_and_eager(fn, *args, on_card=on_card)
    torch.testing.assert_close(actual, expected, atol=atol, rtol=1e-4, equal_nan=True)
    return actual


def matrix(*shape, seed=0):
    torch.manual_seed(seed)
    return torch.randn(*shape)


def spd(n, batch=(), seed=0):
    a = matrix(*batch, n, n, seed=seed)
    return a @ a.mT + n * torch.eye(n)


@pytest.mark.parametrize("shape", [(6, 6), (2, 3, 5, 5), (4, 7), (7, 4), (12, 12)])
def test_lu_factor_matches_lapack_pivots(shape):
    run(lambda a: torch.linalg.lu_factor_ex(a), matrix(*shape))
    run(lambda a: torch.linalg.lu(a), matrix(*shape))


def test_det_and_slogdet_of_regular_and_singular_matrices():
    a = matrix(3, 6, 6)
    a[1, :, 2] = 0  # singular: a zero column
    a[2, 4] = a[2, 1] * 3  # singular: dependent rows
    run(torch.linalg.det, a)
    run(lambda x: torch.linalg.slogdet(x), a[:1])
    run(torch.linalg.det, torch.empty(0, 0))  # 1, as eager


@pytest.mark.parametrize("left", [True, False])
def test_solve_and_inverse(left):
    a, b = matrix(2, 9, 9), matrix(2, 9, 3, seed=1)
    run(lambda a, b: torch.linalg.solve(a, b if left else b.mT, left=left), a, b)
    run(lambda a, b: torch.linalg.solve(a, b[..., 0]), a, b)  # vector right-hand sides
    run(torch.linalg.inv, a)
    lu, pivots = torch.linalg.lu_factor(a)
    run(lambda lu, p, b: torch.linalg.lu_solve(lu, p, b, adjoint=True), lu, pivots, b)
    run(lambda lu, p: torch.lu_unpack(lu, p), lu, pivots)


def test_a_singular_matrix_raises_on_the_host_as_in_eager():
    a = torch.ones(4, 4)
    torch._dynamo.reset()
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv(a)
    with pytest.raises(torch.linalg.LinAlgError):
        torch.compile(torch.linalg.inv, backend="spyre")(a)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family(upper):
    a = spd(7, (2,))
    factor = run(lambda a: torch.linalg.cholesky(a, upper=upper), a)
    b = matrix(2, 7, 3, seed=1)
    run(lambda b, f: torch.cholesky_solve(b, f, upper=upper), b, factor)
    run(lambda f: torch.cholesky_inverse(f[0], upper=upper), factor)
    with pytest.raises(torch.linalg.LinAlgError):
        torch._dynamo.reset()
        torch.compile(torch.linalg.cholesky, backend="spyre")(-a)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
def test_triangular_solves(upper, left):
    a = matrix(5, 5) + 5 * torch.eye(5)
    b = matrix(5, 4, seed=1)
    run(lambda a, b: torch.linalg.solve_triangular(a, b if left else b.mT, upper=upper,
                                                   left=left), a, b)
    run(lambda a, b: torch.linalg.solve_triangular(a, b, upper=upper, unitriangular=True), a, b)
    run(lambda b, a: torch.triangular_solve(b, a, upper=upper, transpose=True), b, a)


def test_matrix_power_and_eye():
    a = matrix(4, 4) / 2
    run(lambda a: torch.linalg.matrix_power(a, 0), a)
    run(lambda a: torch.linalg.matrix_power(a, 3), a, atol=1e-2)  # matrix products: DLFloat16


def test_larger_matrices_run_on_the_cpu_counted(monkeypatch):
    monkeypatch.setattr(linalg, "MAX_ORDER", 4)
    run(torch.linalg.det, matrix(6, 6), on_card=False)


@pytest.mark.parametrize("shape", [(5, 5), (6, 4), (4, 6), (2, 5, 3)])
def test_qr_family_as_lapack(shape):
    a = matrix(*shape)
    for mode in ("reduced", "complete", "r"):
        run(lambda a: torch.linalg.qr(a, mode=mode), a)
    factored, tau = run(torch.geqrf, a)
    if shape[-2] >= shape[-1]:
        run(torch.linalg.householder_product, factored, tau)
    c = matrix(*shape[:-2], shape[-2], 3, seed=1)
    for left in (True, False):
        for transpose in (True, False):
            run(lambda f, t, c: torch.ormqr(f, t, c if left else c.mT, left, transpose),
                factored, tau, c)
