"""Running exported kernels: compile through the C++ pipeline (cached on
disk by content and compiler version), bind torch tensors to the simulated
device memory, run, and count what ran where.

f32 tensors are bound without a copy; tensors whose device type differs
(16-bit floats are DLFloat16 on the card, int64 is int32) are converted on
the way in and, when the kernel writes them, on the way out: only the
elements the kernel writes, which may be a few of a buffer (a slice of a
concatenation) whose other elements earlier kernels wrote.
"""

from __future__ import annotations

import collections
import ctypes
import hashlib
import logging
import os
import tempfile
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, field

import numpy as np
import torch

from .. import __version__, compiler
from .. import simulator as sim
from . import cache_size

log = logging.getLogger(__name__)


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
    #: Per kernel object run (the report's rows): SpyreKernel -> [calls, cycles].
    per_kernel: dict = field(default_factory=dict)

    def reset(self) -> None:
        self.__init__()


counters = Counters()
_lock = threading.Lock()


def compiler_version() -> str:
    """Changes whenever the compiler (its native libraries) or the content of
    the architecture description changes: SPYRE_ARCH switched to another
    card in the same process is another version."""
    global _version
    if _version is None:
        h = hashlib.sha256(__version__.encode())
        root = os.path.dirname(os.path.dirname(__file__))
        # The native libraries (passes, simulator) and the export's Python code.
        # followlinks: development installs link the sources into site-packages.
        for dirpath, _, files in sorted(os.walk(root, followlinks=True)):
            for f in sorted(files):
                if f.endswith(".so") or f.endswith(".py"):
                    st = os.stat(os.path.join(dirpath, f))
                    h.update(f"{f}:{st.st_size}:{st.st_mtime_ns}".encode())
        _version = h.hexdigest()[:16]
    return hashlib.sha256((_version + sim.arch_digest()).encode()).hexdigest()[:16]


_version: str | None = None


def cache_dir() -> str:
    return os.environ.get("SPYRE_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "spyre_mlir", "kernels")


class CompileError(RuntimeError):
    """The C++ pipeline refused a kernel; the message has its diagnostics."""


class CacheWarning(UserWarning):
    """The kernel cache could not be used as it should (a corrupt entry, a
    directory that cannot be written); kernels still compile and run."""


class DLFloat16OverflowWarning(RuntimeWarning):
    """A kernel produced infinities from finite values beyond DLFloat16's range."""


# Warnings given once per process, by kind.
_warned: set[str] = set()


def _warn_once(kind: str, message: str, category=CacheWarning) -> None:
    if kind not in _warned:
        _warned.add(kind)
        warnings.warn(message, category, stacklevel=3)


# An entry is this header and the program binary: the header names the key
# the entry was written for and the binary's hash, so that a valid binary of
# another kernel (a copied or mixed-up file) is not run.
_MAGIC = b"SPYRE-KERNEL-CACHE-1\n"
_KEY_BYTES = 64  # hex sha256
_HASH_BYTES = 32


def _entry(key: str, binary: bytes) -> bytes:
    return _MAGIC + key.encode() + hashlib.sha256(binary).digest() + binary


def _read_entry(path: str, key: str) -> sim.Program | None:
    """The program of the entry at `path`, None if there is none; raises
    ValueError if the entry is not a whole entry written for `key`."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    header = len(_MAGIC) + _KEY_BYTES + _HASH_BYTES
    if len(data) < header or not data.startswith(_MAGIC):
        raise ValueError("not a cache entry")
    stored_key = data[len(_MAGIC):len(_MAGIC) + _KEY_BYTES].decode(errors="replace")
    digest, binary = data[header - _HASH_BYTES:header], data[header:]
    if stored_key != key:
        raise ValueError(f"written for key {stored_key}")
    if hashlib.sha256(binary).digest() != digest:
        raise ValueError("the binary does not match its hash")
    try:
        return sim.Program.parse(binary)
    except sim.ProgramError as e:
        raise ValueError(str(e)) from None


def compile_cached(mlir: str) -> sim.Program:
    """The program of `mlir`, from the disk cache when a valid entry exists.
    A corrupt entry (or one written for another kernel) is recompiled;
    concurrent writers replace the file atomically, so a reader sees a whole
    entry or none. A cache that cannot be read or written is warned about
    once and the kernel compiled without it."""
    key = hashlib.sha256((compiler_version() + "\0" + mlir).encode()).hexdigest()
    path = os.path.join(cache_dir(), key[:2], key + ".spyre")
    if key in _unwritten:
        counters.cache_hits += 1
        log.debug("kernel cache hit (in memory) %s", key[:16])
        return sim.Program.parse(_unwritten[key])
    try:
        program = _read_entry(path, key)
        if program is not None:
            cache_size.touch(path)
            counters.cache_hits += 1
            log.debug("kernel cache hit %s", key[:16])
            return program
    except ValueError as e:
        counters.corrupt_cache_entries += 1
        _warn_once("corrupt", f"corrupt kernel cache entry {path} ({e}): recompiled "
                              "(further corrupt entries are counted in "
                              "counters.corrupt_cache_entries, not warned about)")
    except OSError as e:
        _warn_once("unusable", f"kernel cache {cache_dir()} cannot be used ({e}): "
                               "kernels are compiled uncached")
    from ..ir import MLIRError
    start = time.perf_counter()
    try:
        binary = compiler.compile_kernel(mlir)
    except (MLIRError, ValueError) as e:
        log.debug("kernel cache miss %s: the pipeline refused it: %s", key[:16],
                  str(e).splitlines()[0] if str(e) else "")
        raise CompileError(str(e)) from None
    counters.compiles += 1
    log.debug("kernel cache miss %s: compiled in %.2f s (%d bytes)", key[:16],
              time.perf_counter() - start, len(binary))
    entry = _entry(key, binary)
    if not cache_size.keeps(len(entry)):
        log.debug("kernel cache: %s not kept (%d bytes, over an eighth of "
                  "SPYRE_CACHE_MAX_BYTES)", key[:16], len(entry))
        return sim.Program.parse(binary)
    try:
        _write_entry(path, entry)
        cache_size.wrote(cache_dir(), len(entry))
    except OSError as e:
        _warn_once("unusable", f"kernel cache {cache_dir()} cannot be used ({e}): "
                               "kernels are compiled uncached")
        # Kept in memory: kernels are looked up again when graphs run.
        _unwritten[key] = binary
    return sim.Program.parse(binary)


# Binaries that could not be written to the disk cache, by key.
_unwritten: dict[str, bytes] = {}


def _write_entry(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


class SpyreKernel:
    """One exported kernel, called by Inductor's wrapper with its buffers."""

    def __init__(self, name: str, mlir: str, buffers: list[str], graph: str = "",
                 partial: dict | None = None, ops: list[str] | None = None,
                 sources: list[str] | None = None):
        self.name, self.mlir, self.buffers, self.graph = name, mlir, buffers, graph
        # The aten ops the kernel computes and the user's lines they come
        # from (file:line), for the report (spyre_mlir.report).
        self.ops, self.sources = ops or [], sources or []
        # The arguments the kernel writes only in part, with the elements it
        # writes (export.partial_writes). The C++ pipeline calls such an
        # argument an `output` when a write comes first, however few
        # elements it covers: its other elements still matter.
        self.partial = partial or {}
        # The program, with the digest of the description it was built for.
        self._program: tuple[str, sim.Program] | None = None

    def program(self) -> sim.Program:
        digest = sim.arch_digest()
        if self._program is None or self._program[0] != digest:
            self._program = (digest, compile_cached(self.mlir))
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
        simulator = sim.Simulator(arch)
        simulator.load(program)
        by_name = dict(zip(self.buffers, tensors))
        bound = [(index, buf, by_name[buf["name"]]) for index, buf in enumerate(program.buffers)
                 if buf["kind"] not in (sim.BufferKind.scratch, sim.BufferKind.constant)]
        write_back = []
        aliased = set()
        for group in _converted_alias_groups(bound):
            _bind_aliases(simulator, group, arch, write_back, self.partial)
            aliased.update(index for index, _, _ in group)
        for index, buf, tensor in bound:
            if index in aliased:
                continue
            kind = buf["kind"]
            shape = tuple(buf["shape"])
            numel = int(np.prod(shape))
            flat = tensor.as_strided((numel,), (1,)) if numel else tensor.new_empty(0)
            written = self.partial.get(buf["name"])  # None: all of it, if any
            if written is not None and not _same_type(flat.dtype, buf["dtype"]):
                # Elements the kernel does not write keep their values, which
                # it may read; garbage among them is never written back.
                device, copied = _to_device(flat, buf["dtype"], arch, strict=False)
            elif kind == sim.BufferKind.output and not _same_type(flat.dtype, buf["dtype"]):
                # Written whole before read: no need to convert (possibly
                # garbage) content.
                device, copied = np.zeros(numel, sim._DEVICE_NUMPY[buf["dtype"]]), True
            elif kind == sim.BufferKind.input:
                device, copied = _converted_input(tensor, flat, buf["dtype"], arch)
            else:
                device, copied = _to_device(flat, buf["dtype"], arch)
            simulator.bind(index, device.reshape(shape))
            if copied and kind in (sim.BufferKind.output, sim.BufferKind.inout):
                write_back.append((tensor, device, buf["dtype"], written))
        stats = simulator.run(trace)
        for tensor, device, dtype, written in write_back:
            _write_back(tensor, device, dtype, written, arch)
        with _lock:
            counters.kernels_run += 1
            counters.simulated_cycles += stats["cycles"]
            counters.cycles_per_kernel[self.name] += stats["cycles"]
            counters.cycles_per_graph[self.graph] += stats["cycles"]
            counters.dlfloat16_overflows += stats["overflows"]
            runs = counters.per_kernel.setdefault(self, [0, 0.0])
            runs[0] += 1
            runs[1] += stats["cycles"]
        if stats["overflows"]:
            _warn_once("overflow", f"kernel {self.name} turned {stats['overflows']} finite values "
                       "beyond DLFloat16's range into infinities (the matrix unit rounds its "
                       "operands to DLFloat16; f16 tensors are DLFloat16 on the card); further "
                       "ones are counted in counters.dlfloat16_overflows, not warned about",
                       DLFloat16OverflowWarning)
        return stats


def _extent(buf) -> int:
    return int(np.prod(tuple(buf["shape"])))


def _converted_alias_groups(bound) -> list[list]:
    """Arguments that are views of one storage (the inputs of a
    concatenation written into slices of its result, and the result) and
    need converting: they must share one device copy, as they share memory
    when bound without a copy."""
    groups = collections.defaultdict(list)
    for member in bound:
        _, buf, tensor = member
        if _extent(buf) and not _same_type(tensor.dtype, buf["dtype"]):
            groups[tensor.untyped_storage().data_ptr()].append(member)
    return [g for g in groups.values() if len(g) > 1]


def _write_back(tensor, device, dtype, written, arch) -> None:
    """Copies a kernel's results from the converted device array into the
    tensor: only the elements the kernel wrote (`written`, boxes of the flat
    buffer), or when it wrote all, through the tensor's own view, as the
    flat extent also spans elements of other views of the storage."""
    host = torch.from_numpy(np.asarray(sim.from_device(device, dtype, arch))).reshape(-1)
    if written is None:
        tensor.copy_(host.as_strided(tensor.shape, tensor.stride()).to(tensor.dtype))
        return
    flat = tensor.as_strided((host.numel(),), (1,))
    for offset, sizes, strides in written:
        flat.as_strided(sizes, strides, flat.storage_offset() + offset).copy_(
            host.as_strided(sizes, strides, offset))


def _bind_aliases(simulator, group, arch, write_back, partial) -> None:
    """Binds views of one storage to slices of one converted device array
    covering all of them; outputs are written back through their own views
    (only the elements written, for those in `partial`)."""
    lo = min(t.storage_offset() for _, _, t in group)
    hi = max(t.storage_offset() + _extent(buf) for _, buf, t in group)
    tensor0, dtype = group[0][2], group[0][1]["dtype"]
    if any(buf["dtype"] != dtype for _, buf, _ in group):
        raise RuntimeError("views of one tensor with different device types")
    span = tensor0.as_strided((hi - lo,), (1,), lo)
    some_partial = any(buf["name"] in partial for _, buf, _ in group)
    if all(buf["kind"] == sim.BufferKind.output for _, buf, _ in group) and not some_partial:
        device = np.zeros(hi - lo, sim._DEVICE_NUMPY[dtype])
    else:
        device, _ = _to_device(span, dtype, arch, strict=not some_partial)
    for index, buf, tensor in group:
        at = tensor.storage_offset() - lo
        part = device[at:at + _extent(buf)]
        simulator.bind(index, part.reshape(tuple(buf["shape"])))
        if buf["kind"] in (sim.BufferKind.output, sim.BufferKind.inout):
            write_back.append((tensor, part, dtype, partial.get(buf["name"])))


def dump_dir() -> str | None:
    """Where each kernel's IR at every stage is written: $SPYRE_DUMP_DIR, or
    with TORCH_COMPILE_DEBUG=1 a `spyre` directory under torch's debug root."""
    if os.environ.get("SPYRE_DUMP_DIR"):
        return os.environ["SPYRE_DUMP_DIR"]
    if os.environ.get("TORCH_COMPILE_DEBUG", "") not in ("", "0"):
        import torch._dynamo.config as dynamo_config
        root = dynamo_config.debug_dir_root or os.path.join(os.getcwd(), "torch_compile_debug")
        return os.path.join(root, "spyre")
    return None


def dump(name: str, mlir: str) -> None:
    """Writes `name`.kernel.mlir and `name`.<stage>.mlir for every stage of
    the pipeline (docs/lowering.md), if dumping is on."""
    directory = dump_dir()
    if not directory:
        return
    from ..ir import Context, Module
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{name}.kernel.mlir"), "w") as f:
        f.write(mlir)
    # One run of the pipeline, the IR written after each stage.
    texts = {}
    with Context():
        for stage, result in compiler.compile_stages(Module.parse(mlir)):
            texts[stage] = result if isinstance(result, str) else (
                f"// stage {stage} failed:\n// " + str(result).replace("\n", "\n// "))
    for stage in compiler.STAGES:
        # Stages after a failing one did not run: their files say so.
        text = texts.get(stage, f"// stage {stage} did not run: an earlier stage failed\n")
        with open(os.path.join(directory, f"{name}.{stage}.mlir"), "w") as f:
            f.write(text)


def fallback(names: list[str], reason: str) -> None:
    """Called by compiled graphs where part of them runs on the CPU."""
    from . import state
    if state.strict:
        raise state.SpyreFallbackError(
            f"{', '.join(names)} would run on the CPU: {reason} (strict mode)")
    with _lock:
        for name in names:
            counters.fallbacks[name] += 1


# Read-only tensors (parameters above all) converted to the device type, by
# tensor, with a copy of the host bytes each conversion was made from: reused
# while the tensor holds the same bytes. The version counter is not enough:
# writes through `.data`, `.data = ...` and `.numpy()` do not bump it.
# (Keyed by id, with a weak reference that drops the entry with the tensor:
# tensors compare elementwise, so they cannot be dictionary keys.)
_converted: dict[int, tuple] = {}


def _converted_input(tensor: torch.Tensor, flat: torch.Tensor, dtype, arch):
    if _same_type(flat.dtype, dtype):
        return _host(flat), False
    host = _bits(flat)
    entry = _converted.get(id(tensor))
    if entry is not None and entry[0]() is tensor and entry[1] == dtype and \
            entry[2].shape == host.shape and np.array_equal(entry[2], host):
        return entry[3], True
    device, copied = _to_device(flat, dtype, arch)
    counters.converted_bytes += device.nbytes
    ident = id(tensor)
    ref = weakref.ref(tensor, lambda _, ident=ident: _converted.pop(ident, None))
    _converted[ident] = (ref, dtype, host.copy(), device)
    return device, copied


def _bits(flat: torch.Tensor) -> np.ndarray:
    """The bytes of a 1-D contiguous tensor as unsigned integers of the same
    size, so that equality is bitwise (NaN payloads and -0.0 included)."""
    host = _host(flat) if flat.dtype != torch.bfloat16 else _host(flat.view(torch.int16))
    return host.view(f"u{host.dtype.itemsize}")


def _same_type(host: torch.dtype, device) -> bool:
    return (host, device) in ((torch.float32, sim.DType.f32), (torch.int32, sim.DType.i32),
                              (torch.int8, sim.DType.i8))


def _host(flat: torch.Tensor) -> np.ndarray:
    """The memory of a 1-D contiguous tensor as a numpy array, without a copy:
    spyre-device memory is host memory."""
    if flat.device.type == "cpu":
        return flat.detach().numpy()
    dtype = torch.empty(0, dtype=flat.dtype).numpy().dtype
    if not flat.numel():
        return np.empty(0, dtype)
    buffer = (ctypes.c_byte * (flat.numel() * dtype.itemsize)).from_address(flat.data_ptr())
    return np.frombuffer(buffer, dtype=dtype)


def _to_device(flat: torch.Tensor, dtype, arch, strict: bool = True) -> tuple[np.ndarray, bool]:
    """A device-typed array for `flat`: the tensor's own memory when the types
    agree, else a converted copy (second result True). Not `strict`, int64
    values beyond int32 become 0 instead of raising: the elements of a
    buffer the kernel writes only in part that it does not write may be
    garbage, and those it reads fit (ranges.py refuses int64 the CPU
    computed; graph inputs are checked on every call)."""
    if _same_type(flat.dtype, dtype):
        return _host(flat), False
    host = flat.detach()
    if host.device.type != "cpu":
        host = host.cpu()
    if not strict and host.dtype == torch.int64:
        info = torch.iinfo(torch.int32)
        host = torch.where((host >= info.min) & (host <= info.max), host, 0)
    if host.dtype == torch.bfloat16:
        host = host.float()
    if host.dtype == torch.bool:
        host = host.to(torch.uint8)
    return sim.to_device(host.numpy(), dtype, arch), True
