"""The Spyre card simulator from Python.

    from spyre_mlir import simulator as sim
    arch = sim.default_arch()
    b = sim.ProgramBuilder(arch, num_cores=1)
    ...                                   # buffers and instructions
    program = b.finish()
    out = sim.run(program, {"x": x}, arch=arch)   # numpy in, numpy out

``run`` converts host arrays to the device element types (f16 and bf16
become DLFloat16, int64 is narrowed to int32) and back. Arrays already in the
device type (f32, int32, int8, bool, and uint16 holding DLFloat16 bits) are
bound without a copy through ``Simulator.bind``. ``launch`` is the step both
``run`` and compiled torch graphs (spyre_mlir.inductor.binding) take: device
arrays bound by buffer index, then the run.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

from . import _simulator
from ._simulator import (  # noqa: F401
    INSTRUCTION_BYTES,
    LX,
    NUM_SEMAPHORES,
    Arch,
    BinaryFunc,
    BufferKind,
    Collective,
    DType,
    HostDType,
    Operand,
    Program,
    ProgramBuilder,
    ProgramError,
    ReduceFunc,
    SimulationError,
    Simulator,
    StreamBuilder,
    Sync,
    UnaryFunc,
    collective_time,
)
from .dlfloat16 import DLFloat16

_DEVICE_NUMPY = {DType.f32: np.float32, DType.i32: np.int32, DType.i8: np.int8,
                 DType.u8: np.uint8, DType.dl16: np.uint16}
_HOST_NUMPY = {HostDType.f16: np.float16, HostDType.f32: np.float32, HostDType.i32: np.int32,
               HostDType.i64: np.int64, HostDType.i8: np.int8, HostDType.bool: np.bool_}


def arch_path() -> str:
    """The compiler's own lookup (C++ Arch::lookupPath): $SPYRE_ARCH if set,
    else the description installed with the package."""
    return Arch.lookup_path()


def arch_digest(path: str | None = None) -> str:
    """The sha256 of the description's content (default: at arch_path()).
    Caches of compiled kernels key on it, so that another card, even under
    the same path, never reuses programs built for the previous one. Every
    kernel launch asks: the file is read again only when its inode, size or
    modification time changed."""
    path = path or arch_path()
    st = os.stat(path)
    stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    known = _digests.get(path)
    if known is None or known[0] != stamp:
        with open(path, "rb") as f:
            known = (stamp, hashlib.sha256(f.read()).hexdigest())
        _digests[path] = known
    return known[1]


_digests: dict[str, tuple[tuple, str]] = {}


# The last description default_arch() loaded, with its digest.
_default_arch: tuple[str, Arch] | None = None


def default_arch() -> Arch:
    """The description at arch_path(), loaded again when its content changes
    (SPYRE_ARCH switched to another card, or the file edited)."""
    global _default_arch
    path = arch_path()
    digest = arch_digest(path)
    if _default_arch is None or _default_arch[0] != digest:
        _default_arch = (digest, Arch.load(path))
    return _default_arch[1]


def dtype_bytes(dtype: DType) -> int:
    return np.dtype(_DEVICE_NUMPY[dtype]).itemsize


def to_device(array, dtype: DType, arch: Arch | None = None) -> np.ndarray:
    """A C-contiguous array holding `array` in the device element type."""
    arch = arch or default_arch()
    a = np.asarray(array)
    if dtype == DType.dl16 and a.dtype == np.float16:
        return _simulator.dl16_from_f16(np.ascontiguousarray(a).view(np.uint16), arch)
    if dtype == DType.dl16:
        return np.ascontiguousarray(_simulator.dl16_from_f32(a.astype(np.float32), arch))
    if dtype == DType.i32 and a.dtype == np.int64:
        if a.size and (a.max() > np.iinfo(np.int32).max or a.min() < np.iinfo(np.int32).min):
            raise ValueError("int64 values do not fit the card's int32")
    return np.ascontiguousarray(a.astype(_DEVICE_NUMPY[dtype], copy=False))


def from_device(array: np.ndarray, dtype: DType, arch: Arch | None = None) -> np.ndarray:
    """Device-typed data as host values (DLFloat16 becomes f32)."""
    if dtype == DType.dl16:
        return _simulator.dl16_to_f32(array, arch or default_arch())
    return array


@dataclass
class Result:
    outputs: dict[str, np.ndarray]
    stats: dict = field(default_factory=dict)

    @property
    def cycles(self) -> float:
        return self.stats["cycles"]


def host_buffers(program: Program) -> list[tuple[int, dict]]:
    """The buffers the host provides memory for, with their indices: the
    simulator allocates scratch buffers and the program carries constants."""
    return [(index, buf) for index, buf in enumerate(program.buffers)
            if buf["kind"] not in (BufferKind.scratch, BufferKind.constant)]


def writes(buf: dict) -> bool:
    """Whether the program writes the buffer, so the host reads it back."""
    return buf["kind"] in (BufferKind.output, BufferKind.inout)


def device_zeros(shape, dtype: DType) -> np.ndarray:
    """Memory for a buffer the program writes before it reads."""
    return np.zeros(shape, _DEVICE_NUMPY[dtype])


def launch(program: Program, arch: Arch, arrays: Iterable[tuple[int, np.ndarray]],
           trace: bool = False) -> dict:
    """Loads `program`, binds the device-typed `arrays` (buffer index, array)
    without copies and runs; returns the run's counters. `arrays` is consumed
    after the load, so a program for another card is refused first."""
    simulator = Simulator(arch)
    simulator.load(program)
    for index, array in arrays:
        simulator.bind(index, array)
    return simulator.run(trace)


def run(program: Program | bytes, inputs: Mapping[str, object], arch: Arch | None = None,
        trace: bool = False) -> Result:
    """Runs a program: inputs by buffer name (numpy arrays or anything
    np.asarray takes, torch tensors included); returns the outputs (and
    inout buffers) by name, in their host types, with the run's counters."""
    arch = arch or default_arch()
    if isinstance(program, (bytes, bytearray)):
        program = Program.parse(bytes(program))
    device: dict[str, np.ndarray] = {}

    def arrays():
        for index, buf in host_buffers(program):
            name, shape = buf["name"], tuple(buf["shape"])
            if buf["kind"] == BufferKind.output:
                data = device_zeros(shape, buf["dtype"])
            else:
                data = _input(name, inputs, buf, arch)
            device[name] = data
            yield index, data
        unknown = set(inputs) - {buf["name"] for buf in program.buffers}
        if unknown:
            raise ValueError(f"no buffers named {sorted(unknown)}")

    stats = launch(program, arch, arrays(), trace)
    outputs = {}
    for _, buf in host_buffers(program):
        if writes(buf):
            value = from_device(device[buf["name"]], buf["dtype"], arch)
            host = _HOST_NUMPY.get(buf["host_dtype"])
            if host is not None and buf["dtype"] != DType.dl16:
                value = value.astype(host, copy=False)
            outputs[buf["name"]] = value
    return Result(outputs, stats)


def _input(name: str, inputs: Mapping[str, object], buf: dict, arch: Arch) -> np.ndarray:
    if name not in inputs:
        raise ValueError(f"input '{name}' is missing")
    value = np.asarray(inputs[name])
    if np.iscomplexobj(value):  # astype would drop the imaginary part
        raise ValueError(f"input '{name}' is complex ({value.dtype}); the card has "
                         "no complex types")
    data = to_device(value, buf["dtype"], arch)
    if data.shape != tuple(buf["shape"]):
        raise ValueError(f"input '{name}' has shape {data.shape}, expected "
                         f"{tuple(buf['shape'])}")
    if not data.flags.writeable:  # bind takes writable memory (memory-mapped inputs)
        data = data.copy()
    return data


def dl16() -> DLFloat16:
    """The numpy reference of the default architecture's DLFloat16."""
    return DLFloat16.for_arch(default_arch())
