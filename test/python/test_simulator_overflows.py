"""The simulator counts finite values that DLFloat16 rounding turned into
infinities (`stats["overflows"]`): stores of the vector unit, the matrix
unit's f32 operands and its DLFloat16 results."""

import numpy as np
import pytest

from spyre_mlir.simulator import BinaryFunc, DType
from simkit import OneCore


def _binary(a, b, out_dtype):
    p = OneCore()
    p.input("a", DType.f32, a.shape)
    p.input("b", DType.f32, b.shape)
    p.output("y", out_dtype, a.shape)
    p.c.binary(BinaryFunc.mul, p.view("y"), p.view("a"), p.view("b"), a.shape[0], a.shape[1],
               sync=p.ready())
    return p.finish({"a": a, "b": b})

def test_vector_stores_that_overflow_are_counted():
    a = np.array([[1e5, -1e5, 1.0, np.inf], [np.nan, 3e4, 2.0, 1e10]], np.float32)
    b = np.array([[1e5, 1e5, 1.0, 1.0], [1.0, 3e4, 2.0, 1.0]], np.float32)
    result = _binary(a, b, DType.dl16)
    # 1e10, -1e10, 9e8 (fits) and 1e10 overflow; inf and NaN were not finite.
    assert np.isinf(result.outputs["y"]).sum() == 4
    assert result.stats["overflows"] == 3
    assert result.stats["cores"][0]["overflows"] == 3
    # In f32 nothing is rounded: nothing to count.
    assert _binary(a, b, DType.f32).stats["overflows"] == 0

def _matmul(a, b, out_dtype):
    m, k = a.shape
    n = b.shape[1]
    p = OneCore()
    p.input("a", DType.f32, a.shape)
    p.input("b", DType.f32, b.shape)
    p.output("y", out_dtype, (m, n))
    p.c.matmul(p.view("y"), p.view("a"), p.view("b"), m, k, n, sync=p.ready())
    return p.finish({"a": a, "b": b})

@pytest.mark.parametrize("out_dtype", [DType.f32, DType.dl16])
def test_matmul_operands_that_overflow_are_counted(out_dtype):
    a = np.full((4, 8), 1e10, np.float32)
    b = np.ones((8, 2), np.float32)
    result = _matmul(a, b, out_dtype)
    assert np.isinf(result.outputs["y"]).all()
    # The operands overflowed; infinite results of infinite operands are not counted again.
    assert result.stats["overflows"] == a.size

def test_matmul_results_that_overflow_are_counted():
    a = np.full((4, 8), 1e5, np.float32)  # fits DLFloat16; the products do not
    b = np.full((8, 2), 1e5, np.float32)
    assert _matmul(a, b, DType.dl16).stats["overflows"] == 8
    assert _matmul(a, b, DType.f32).stats["overflows"] == 0
