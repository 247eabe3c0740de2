"""What compiled graphs did: the counters (spyre_mlir.inductor.counters), CPU
fallbacks, and the warnings given once per process whose repeats are only
counted."""

from __future__ import annotations

import collections
import contextlib
import threading
import warnings
from dataclasses import dataclass, field


@dataclass
class Counters:
    """What compiled graphs did since the last reset()."""
    kernels_run: int = 0
    simulated_cycles: float = 0.0
    cycles_per_kernel: collections.Counter = field(default_factory=collections.Counter)
    cycles_per_graph: collections.Counter = field(default_factory=collections.Counter)
    fallbacks: collections.Counter = field(default_factory=collections.Counter)
    compiles: int = 0
    cache_hits: int = 0
    #: Cache entries found corrupt (or written for another kernel) and recompiled.
    corrupt_cache_entries: int = 0
    #: Finite values that became infinities when the card rounded them to
    #: DLFloat16 (stored in a DLFloat16 buffer, or fed to the matrix unit).
    dlfloat16_overflows: int = 0
    #: Bytes converted to the card's element types on the way in (f16 to
    #: DLFloat16, int64 to int32); unchanged read-only tensors are converted once.
    converted_bytes: int = 0
    #: Host seconds spent inside the simulator: a caller's wall time minus
    #: this is what the runtime and the graph cost on the host.
    simulation_seconds: float = 0.0
    #: Bytes the kernels moved over the card's device-memory bus, each way
    #: (whole sticks; a broadcast read once for all the cores it reached).
    bus_read_bytes: float = 0.0
    bus_write_bytes: float = 0.0
    #: Collectives between cards (spyre_mlir.distributed, its clock.py):
    #: transfer time the card stood still for, time it waited for a slower
    #: card, transfer time hidden behind its own kernels, and calls by kind.
    collective_cycles: float = 0.0
    collective_wait_cycles: float = 0.0
    collective_overlapped_cycles: float = 0.0
    collectives: collections.Counter = field(default_factory=collections.Counter)
    #: Per launcher run (the report's rows): ProgramLauncher -> [calls, cycles].
    per_kernel: dict = field(default_factory=dict)
    #: Per launcher: engine ("pt", "sfu", "dma") -> cycles its busiest core
    #: kept that engine busy, summed over the runs (what paces the kernel).
    busy_per_kernel: dict = field(default_factory=dict)

    #: How many times reset() ran: work in flight across a reset (a
    #: collective issued before it) is not charged to the new counts.
    generation: int = 0

    def reset(self) -> None:
        generation = self.generation + 1
        self.__init__()
        self.generation = generation


counters = Counters()
# Kernels may run on several threads at once.
_lock = threading.Lock()


class DLFloat16OverflowWarning(RuntimeWarning):
    """A kernel produced infinities from finite values beyond DLFloat16's range."""


class SpecializationLimitWarning(UserWarning):
    """A graph compiled with dynamic shapes met more shapes than it compiles
    versions for (backend.MAX_SPECIALIZATIONS): later ones run on the CPU."""


def ran(launcher, stats: dict, seconds: float) -> None:
    """Counts one run of `launcher` with the simulator's `stats`, which took
    `seconds` of host time."""
    with _lock:
        counters.kernels_run += 1
        counters.simulation_seconds += seconds
        counters.simulated_cycles += stats["cycles"]
        counters.bus_read_bytes += stats["bus_read_bytes"]
        counters.bus_write_bytes += stats["bus_write_bytes"]
        counters.cycles_per_kernel[launcher.name] += stats["cycles"]
        counters.cycles_per_graph[launcher.graph] += stats["cycles"]
        counters.dlfloat16_overflows += stats["overflows"]
        runs = counters.per_kernel.setdefault(launcher, [0, 0.0])
        runs[0] += 1
        runs[1] += stats["cycles"]
        busy = counters.busy_per_kernel.setdefault(launcher, collections.Counter())
        for engine in stats["cores"][0]["engines"] if stats["cores"] else ():
            busy[engine] += max(core["engines"][engine]["busy_cycles"] for core in stats["cores"])
    if stats["overflows"]:
        warn_once("overflow", f"kernel {launcher.name} turned {stats['overflows']} finite "
                  "values beyond DLFloat16's range into infinities (the matrix unit rounds "
                  "its operands to DLFloat16; f16 tensors are DLFloat16 on the card); further "
                  "ones are counted in counters.dlfloat16_overflows, not warned about",
                  DLFloat16OverflowWarning)


def fallback(names: list[str], reason: str) -> None:
    """Called by compiled graphs where part of them runs on the CPU."""
    from . import state
    if state.strict:
        raise state.SpyreFallbackError(
            f"{', '.join(names)} would run on the CPU: {reason} (strict mode)")
    with _lock:
        for name in names:
            counters.fallbacks[name] += 1


#: The prefix of eager ops in `counters.fallbacks`.
EAGER = "eager "

_host_side = threading.local()


def eager_fallback(op: str) -> None:
    """Called by the spyre device (device/spyre_device.cpp) before an eager
    op on spyre tensors runs through PyTorch's CPU fallback: counted as
    "eager <op>" (or refused in strict mode). Not counted: the runtime's
    host work (host_side()) and ops evaluated while compiling (Inductor
    folds constants such as a `torch.full` on the device), which make the
    graph rather than run the model."""
    import torch
    if getattr(_host_side, "depth", 0) or torch.compiler.is_compiling():
        return
    fallback([EAGER + op], "an eager op on spyre tensors, run by PyTorch's CPU fallback")


@contextlib.contextmanager
def host_side():
    """The runtime's own host work on spyre tensors (checking a graph's int64
    inputs, binding a kernel's buffers): the host's part of running on the
    card, not an op the card runs instead, so not counted as a fallback."""
    _host_side.depth = getattr(_host_side, "depth", 0) + 1
    try:
        yield
    finally:
        _host_side.depth -= 1


# Warnings given once per process, by kind.
_warned: set[str] = set()


def warn_once(kind: str, message: str, category) -> None:
    if kind not in _warned:
        _warned.add(kind)
        # stacklevel: the caller of the function that warns.
        warnings.warn(message, category, stacklevel=3)
