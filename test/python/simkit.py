"""Helpers for hand-written simulator programs in tests."""

import numpy as np

from spyre_mlir import simulator as sim
from spyre_mlir.simulator import DType, Operand, Sync

NP = {DType.f32: np.float32, DType.i32: np.int32, DType.i8: np.int8, DType.u8: np.uint8,
      DType.dl16: np.uint16}
HOST = {DType.f32: sim.HostDType.f32, DType.i32: sim.HostDType.i32, DType.i8: sim.HostDType.i8,
        DType.u8: sim.HostDType.bool, DType.dl16: sim.HostDType.f16}


def esize(dtype):
    return np.dtype(NP[dtype]).itemsize


class OneCore:
    """A single-core program: inputs are DMAed into LX one after the other,
    one vector/matrix instruction runs, outputs are DMAed back.

    Each buffer gets its own LX region; `view(name)` is a rows x cols view
    of it for the instruction under test."""

    def __init__(self, arch=None):
        self.arch = arch or sim.default_arch()
        self.b = sim.ProgramBuilder(self.arch, 1)
        self.c = self.b.core(0)
        self.bufs = {}
        self.lx = 0
        self.loads = 0

    def _place(self, name, kind, dtype, shape):
        index = self.b.add_buffer(name, kind, dtype, HOST[dtype], list(shape))
        nbytes = int(np.prod(shape, dtype=np.int64)) * esize(dtype)
        self.bufs[name] = (index, dtype, shape, self.lx, nbytes)
        self.lx += -(-nbytes // 128) * 128
        return index

    def input(self, name, dtype, shape):
        index = self._place(name, sim.BufferKind.input, dtype, shape)
        _, _, _, off, nbytes = self.bufs[name]
        self.c.dma(Operand(offset=off, dtype=dtype), Operand(buffer=index, dtype=dtype), nbytes,
                   sync=Sync(signal_sem=0))
        self.loads += 1

    def output(self, name, dtype, shape):
        self._place(name, sim.BufferKind.output, dtype, shape)

    def view(self, name, row_stride=None, col_stride=None, dtype=None):
        _, dt, shape, off, _ = self.bufs[name]
        cols = shape[-1] if len(shape) > 1 else 1
        e = esize(dt)
        return Operand(offset=off, dtype=dtype or dt,
                       strides=(row_stride if row_stride is not None else cols * e,
                                col_stride if col_stride is not None else e, 0))

    def ready(self):
        """Sync for the instruction under test: after all loads; signals 1."""
        return Sync(wait_sem=0, wait_count=self.loads, signal_sem=1)

    def finish(self, inputs, trace=False):
        for name, (index, dt, shape, off, nbytes) in self.bufs.items():
            if name not in inputs:
                self.c.dma(Operand(buffer=index, dtype=dt), Operand(offset=off, dtype=dt), nbytes,
                           sync=Sync(wait_sem=1, wait_count=1))
        return sim.run(self.b.finish(), inputs, arch=self.arch, trace=trace)
