"""A hand-written multi-core matmul program gives the right result."""

import numpy as np
import pytest

from spyre_mlir import simulator as sim
from spyre_mlir.simulator_programs import matmul_program

ARCH = sim.default_arch()


def reference(a, b):
    r = sim.dl16()
    # Inputs arrive rounded to DLFloat16; products accumulate in f32.
    return r.round(a.astype(np.float32)).astype(np.float64) @ r.round(b.astype(np.float32))


@pytest.mark.parametrize("m, k, n, grid", [(64, 96, 32, (2, 2)), (1024, 1024, 1024, (4, 8))],
                         ids=["small", "1024-cubed-32-cores"])
def test_matmul_across_cores(m, k, n, grid):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    program = sim.Program.parse(matmul_program(ARCH, m, k, n, grid).serialize())
    result = sim.run(program, {"a": a, "b": b})
    c = result.outputs["c"]
    expected = reference(a, b)
    # One DLFloat16 rounding of the f32 result.
    np.testing.assert_allclose(c, expected, rtol=2 ** -9, atol=2 ** -9 * np.abs(expected).max())
    stats = result.stats
    assert sum(core["macs"] for core in stats["cores"]) == m * k * n
    assert len([t for t in stats["core_cycles"] if t > 0]) == grid[0] * grid[1]
