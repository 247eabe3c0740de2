"""Kernel-level IR for the end-to-end tests, written as text the way the
Inductor export will produce it, compiled by the C++ pipeline and run on the
simulator against numpy."""

from __future__ import annotations

import numpy as np

from spyre_mlir import compiler
from spyre_mlir import simulator as sim
from spyre_mlir.testing import amap, buf, generic, kernel, matmul, softmax  # noqa: F401


def rounded(x) -> np.ndarray:
    """What the card sees of a host array: 16-bit floats become DLFloat16."""
    x = np.asarray(x)
    if x.dtype in (np.float16,):
        return sim.dl16().round(x.astype(np.float32))
    return x


def run(source: str, inputs: dict, cores: int = 0):
    """Compiles `source` (one kernel) and runs it; returns (outputs, result)."""
    binary = compiler.compile_kernel(source, cores=cores)
    result = sim.run(binary, inputs)
    return result.outputs, result


def close(actual, expected, dtype: str = "f16", rtol=None, atol=None):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    # DLFloat16 keeps 9 fraction bits: one rounding is 2^-10 relative; a few
    # roundings of intermediates stay within 2^-7.
    rtol = rtol if rtol is not None else (2.0 ** -7 if dtype == "f16" else 1e-5)
    atol = atol if atol is not None else rtol
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)
