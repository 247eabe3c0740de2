"""Hand-written programs for the simulator: what the compiler's emitter
produces, written out by hand. Tests, benchmarks and emitter authors use
them as worked examples of the ISA (docs/isa.md)."""

from __future__ import annotations

from . import simulator as sim
from .simulator import DType, Operand, Sync


def matmul_program(arch, m: int, k: int, n: int, grid: tuple[int, int]) -> sim.Program:
    """C = A @ B for f16 A (m x k), B (k x n) and C (m x n), on
    grid[0] x grid[1] cores. Core (i, j) loads the rows of A and the columns
    of B it needs, multiplies them with one PT instruction (f32
    accumulation, DLFloat16 result) and writes its block of C.
    """
    gm, gn = grid
    if m % gm or n % gn:
        raise ValueError("the grid must divide m and n")
    bm, bn = m // gm, n // gn
    e = 2  # bytes of a DLFloat16
    a_bytes, b_bytes, c_bytes = bm * k * e, k * bn * e, bm * bn * e
    if a_bytes + b_bytes + c_bytes > arch.lx_usable_bytes:
        raise ValueError("a core's blocks do not fit in LX: use a larger grid")
    b = sim.ProgramBuilder(arch, gm * gn)
    a_buf = b.add_buffer("a", sim.BufferKind.input, DType.dl16, sim.HostDType.f16, [m, k])
    b_buf = b.add_buffer("b", sim.BufferKind.input, DType.dl16, sim.HostDType.f16, [k, n])
    c_buf = b.add_buffer("c", sim.BufferKind.output, DType.dl16, sim.HostDType.f16, [m, n])
    lx_a, lx_b, lx_c = 0, a_bytes, a_bytes + b_bytes
    loaded, multiplied = 0, 1
    for i in range(gm):
        for j in range(gn):
            core = b.core(i * gn + j)
            # Rows i*bm.. of A are contiguous in device memory.
            core.dma(Operand(offset=lx_a), Operand(buffer=a_buf, offset=i * bm * k * e), a_bytes,
                     sync=Sync(signal_sem=loaded))
            # Columns j*bn.. of B: k rows of bn elements, n elements apart.
            core.dma(Operand(offset=lx_b, strides=(bn * e, 0, 0)),
                     Operand(buffer=b_buf, offset=j * bn * e, strides=(n * e, 0, 0)),
                     bn * e, counts=(k, 1, 1), sync=Sync(signal_sem=loaded))
            core.matmul(Operand(offset=lx_c, strides=(bn * e, 0, 0)),
                        Operand(offset=lx_a, strides=(k * e, 0, 0)),
                        Operand(offset=lx_b, strides=(bn * e, 0, 0)), bm, k, bn,
                        sync=Sync(wait_sem=loaded, wait_count=2, signal_sem=multiplied))
            core.dma(Operand(buffer=c_buf, offset=(i * bm * n + j * bn) * e, strides=(n * e, 0, 0)),
                     Operand(offset=lx_c, strides=(bn * e, 0, 0)), bn * e, counts=(bm, 1, 1),
                     sync=Sync(wait_sem=multiplied, wait_count=1))
    return b.finish()
