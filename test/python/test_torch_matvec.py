"""Vector-matrix and matrix-vector products (decode GEMVs): Inductor drops the
output's dimension of size 1, and the export still hands them to the matrix
unit as (1 x K) @ (K x N) instead of a vector-unit reduction."""

import pytest
import torch
import torch.nn.functional as F

from eager_compare import compiled_and_eager
from test_torch_ops import rand, tolerance



CASES = {
    "x @ W": (lambda x, w: x @ w, lambda d: (rand(1, 300, dtype=d), rand(300, 130, dtype=d))),
    "x @ W.T": (lambda x, w: x @ w.T, lambda d: (rand(1, 300, dtype=d), rand(130, 300, dtype=d))),
    "W @ v": (lambda w, v: w @ v, lambda d: (rand(130, 300, dtype=d), rand(300, 1, dtype=d))),
    "mv": (torch.mv, lambda d: (rand(130, 300, dtype=d), rand(300, dtype=d))),
    "vector @ W": (lambda x, w: x @ w, lambda d: (rand(300, dtype=d), rand(300, 130, dtype=d))),
    "linear, one token": (lambda x, w: F.linear(x, w),
                          lambda d: (rand(1, 1, 300, dtype=d), rand(130, 300, dtype=d))),
    # K over several steps: the few lhs rows are loaded whole, once per core,
    # and each step reads its K columns of them (rows halved on the last step).
    "long K, x @ W.T": (lambda x, w: x @ w.T,
                        lambda d: (rand(1, 2500, dtype=d), rand(130, 2500, dtype=d))),
    "long K, three rows": (lambda x, w: x @ w.T,
                           lambda d: (rand(3, 2500, dtype=d), rand(130, 2500, dtype=d))),
    "long K, x.T @ W": (lambda x, w: x.T @ w,
                        lambda d: (rand(2500, 3, dtype=d), rand(2500, 130, dtype=d))),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("name", CASES)
def test_vector_products_run_on_the_matrix_unit(name, dtype, kernels):
    fn, inputs = CASES[name]
    args = inputs(dtype)
    actual, expected = compiled_and_eager(fn, *args)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    depth = max(max(a.shape) for a in args)  # K is the longest dimension
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(dtype, depth))
    assert any("spyre.matmul" in source for source in kernels), kernels


def test_a_dot_product_of_one_vector_with_itself_stays_a_reduction(kernels):
    # One buffer as both operands cannot be two kernel arguments: the
    # product is not a matmul, and it still matches eager.
    x = rand(1, 300)
    actual, expected = compiled_and_eager(lambda x: x @ x.T, x)
    torch.testing.assert_close(actual, expected, **tolerance(torch.float32, 300))
