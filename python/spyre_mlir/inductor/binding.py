"""Torch tensors bound to a program's buffers, the one place that decides
which tensor each buffer is and whether the kernel writes it (the launcher
and check mode both ask here).

f32 tensors are bound without a copy; tensors whose device type differs
(16-bit floats are DLFloat16 on the card, int64 is int32) are converted on
the way in and, when the kernel writes them, on the way out: only the
elements the kernel writes, which may be a few of a buffer (a slice of a
concatenation) whose other elements earlier kernels wrote.
"""

from __future__ import annotations

import collections
import ctypes
import weakref
from dataclasses import dataclass

import numpy as np
import torch

from .. import simulator as sim
from .counting import counters


def arguments(program: sim.Program, names: list[str]) -> list[tuple[int, dict, int]]:
    """(buffer index, buffer, argument position) of every buffer the host
    provides, the argument being the tensor of that name in `names`."""
    position = {name: k for k, name in enumerate(names)}
    return [(index, buf, position[buf["name"]]) for index, buf in sim.host_buffers(program)]


def written(program: sim.Program, names: list[str]) -> list[int]:
    """The argument positions the kernel writes, in order."""
    return sorted(k for _, buf, k in arguments(program, names) if sim.writes(buf))


@dataclass
class Result:
    """A kernel's output that lives in a converted copy, to copy back."""
    tensor: torch.Tensor
    device: np.ndarray
    dtype: sim.DType
    written: list | None  # export.partial_writes boxes; None: all of it


def bind(program: sim.Program, names: list[str], tensors, partial: dict,
         arch: sim.Arch, uninitialized=frozenset()
         ) -> tuple[list[tuple[int, np.ndarray]], list[Result]]:
    """The device arrays to bind (buffer index, array) for `tensors`, the
    kernel's arguments named `names`, and the results to write back after
    the run. `partial`: the arguments the kernel writes only in part, with
    the elements it writes (export.partial_writes). `uninitialized`: the
    arguments nothing wrote before the kernel (torch.empty), whose int64
    garbage the kernel reads only to discard (a where over an index_put
    into an empty tensor) or leaves as it is (a scatter's rows not written)."""
    bound = [(index, buf, tensors[k]) for index, buf, k in arguments(program, names)]
    arrays, results = [], []
    aliased = set()
    for group in _converted_alias_groups(bound):
        _bind_aliases(group, arch, partial, arrays, results)
        aliased.update(index for index, _, _ in group)
    for index, buf, tensor in bound:
        if index in aliased:
            continue
        kind = buf["kind"]
        shape = tuple(buf["shape"])
        numel = int(np.prod(shape))
        flat = tensor.as_strided((numel,), (1,)) if numel else tensor.new_empty(0)
        part = partial.get(buf["name"])  # None: all of it, if any
        if part is not None and not _same_type(flat.dtype, buf["dtype"]):
            # Elements the kernel does not write keep their values, which
            # it may read; garbage among them is never written back.
            device, copied = _to_device(flat, buf["dtype"], arch, strict=False)
        elif kind == sim.BufferKind.output and not _same_type(flat.dtype, buf["dtype"]):
            # Written whole before read: no need to convert (possibly
            # garbage) content.
            device, copied = sim.device_zeros(numel, buf["dtype"]), True
        elif kind != sim.BufferKind.output and buf["name"] in uninitialized:
            # Read (an input, or a scatter's table) but never written: garbage
            # the kernel discards, or leaves where eager leaves it.
            device, copied = _to_device(flat, buf["dtype"], arch, strict=False)
        elif kind == sim.BufferKind.input:
            device, copied = _converted_input(tensor, flat, buf["dtype"], arch)
        else:
            device, copied = _to_device(flat, buf["dtype"], arch)
        arrays.append((index, device.reshape(shape)))
        if copied and sim.writes(buf):
            results.append(Result(tensor, device, buf["dtype"], part))
    return arrays, results


def write_back(results: list[Result], arch: sim.Arch) -> None:
    """Copies a kernel's results from the converted device arrays into the
    tensors: only the elements the kernel wrote, or when it wrote all,
    through the tensor's own view, as the flat extent also spans elements
    of other views of the storage."""
    for r in results:
        host = torch.from_numpy(np.asarray(sim.from_device(r.device, r.dtype, arch))).reshape(-1)
        if r.written is None:
            r.tensor.copy_(host.as_strided(r.tensor.shape, r.tensor.stride()).to(r.tensor.dtype))
            continue
        flat = r.tensor.as_strided((host.numel(),), (1,))
        for offset, sizes, strides in r.written:
            flat.as_strided(sizes, strides, flat.storage_offset() + offset).copy_(
                host.as_strided(sizes, strides, offset))


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


def _bind_aliases(group, arch, partial, arrays, results) -> None:
    """Views of one storage bound to slices of one converted device array
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
        device = sim.device_zeros(hi - lo, dtype)
    else:
        device, _ = _to_device(span, dtype, arch, strict=not some_partial)
    for index, buf, tensor in group:
        at = tensor.storage_offset() - lo
        part = device[at:at + _extent(buf)]
        arrays.append((index, part.reshape(tuple(buf["shape"]))))
        if sim.writes(buf):
            results.append(Result(tensor, part, dtype, partial.get(buf["name"])))


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
            _same_bytes(entry[2], host):
        return entry[3], True
    device, copied = _to_device(flat, dtype, arch)
    counters.converted_bytes += device.nbytes
    ident = id(tensor)
    ref = weakref.ref(tensor, lambda _, ident=ident: _converted.pop(ident, None))
    _converted[ident] = (ref, dtype, host.copy(), device)
    return device, copied


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two 1-D contiguous arrays hold the same bytes, compared eight
    at a time (torch.equal on int64 views, where both are 8-byte aligned):
    every parameter is compared on every call, and comparing 16-bit
    elements one by one took most of a 1B model's host time per decode
    step outside the simulator."""
    a, b = a.view(np.uint8), b.view(np.uint8)
    if a.shape != b.shape:
        return False
    whole = a.size // 8 * 8 if a.ctypes.data % 8 == b.ctypes.data % 8 == 0 else 0
    return torch.equal(torch.from_numpy(a[:whole].view(np.int64)),
                       torch.from_numpy(b[:whole].view(np.int64))) and \
        np.array_equal(a[whole:], b[whole:])


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

