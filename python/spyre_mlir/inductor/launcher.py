"""What Inductor's wrapper calls for each kernel of a compiled graph: a
ProgramLauncher holds the kernel-level IR, compiles it (kernel_cache.py),
binds the call's tensors (binding.py), runs the program on the simulator
and counts the run (counting.py)."""

from __future__ import annotations

import time

import torch

from .. import simulator as sim
from .. import tuning
from . import binding, counting, kernel_cache


class ProgramLauncher:
    """One kernel of a compiled graph, called with its buffers."""

    def __init__(self, name: str, mlir: str, buffers: list[str], graph: str = "",
                 partial: dict | None = None, ops: list[str] | None = None,
                 sources: list[str] | None = None, uninitialized: list[str] | None = None):
        self.name, self.mlir, self.buffers, self.graph = name, mlir, buffers, graph
        # The aten ops the kernel computes and the user's lines they come
        # from (file:line), for the report (spyre_mlir.report).
        self.ops, self.sources = ops or [], sources or []
        # The arguments the kernel writes only in part, with the elements it
        # writes (export.partial_writes). The C++ pipeline calls such an
        # argument an `output` when a write comes first, however few
        # elements it covers: its other elements still matter.
        self.partial = partial or {}
        # The arguments no node wrote before this kernel (binding.bind).
        self.uninitialized = frozenset(uninitialized or ())
        # The program, with the digest of the description it was built for.
        self._program: tuple[str, sim.Program] | None = None
        # Tuned as the graph was compiled (SPYRE_TUNE, or torch.compile's
        # mode="max-autotune" for this graph alone): the program is built
        # at the first call, after that compile.
        self._tuned = tuning.enabled()

    def program(self) -> sim.Program:
        digest = sim.arch_digest()
        if self._program is None or self._program[0] != digest:
            self._program = (digest, kernel_cache.compile_cached(self.mlir, self._tuned))
        return self._program[1]

    def __call__(self, *tensors: torch.Tensor) -> None:
        if not torch.autograd.profiler._is_profiler_enabled:
            self._run(tensors, trace=False)
            return
        # The host's side of the launch, as torch.profiler records CPU ops;
        # profiler.py adds the simulated device time to it.
        from . import profiler
        with torch.profiler.record_function(profiler.launch_name(self)):
            stats = self._run(tensors, trace=True)
        profiler.record(self, stats)

    def _run(self, tensors, trace: bool) -> dict:
        program = self.program()
        arch = sim.default_arch()
        # Moving buffers in and out is the host's part of a launch, even where
        # it takes torch ops on spyre tensors: not counted as eager fallbacks.
        with counting.host_side():
            arrays, results = binding.bind(program, self.buffers, tensors, self.partial, arch,
                                           self.uninitialized)
        start = time.perf_counter()
        stats = sim.launch(program, arch, arrays, trace)
        seconds = time.perf_counter() - start
        with counting.host_side():
            binding.write_back(results, arch)
        counting.ran(self, stats, seconds)
        return stats
