"""Kernel-level IR to a program, through the C++ pipeline, cached on disk.

The key is the IR with the compiler version: the package's native libraries
and Python code and the content of the card description, so another card
(even under the same path) never reuses programs built for the previous one.

An entry is a header (magic, the key it was written for, the sha256 of the
binary) and the program binary, so that a truncated or damaged entry, or a
valid binary of another kernel (a copied or mixed-up file), is recompiled
rather than run. Writers replace entries atomically. A directory that
cannot be used does not stop a compile: kernels compile uncached.

The cache is bounded (without a bound one OpInfo run wrote tens of GB and
filled a disk): least recently used entries go first. A hit refreshes its
entry's modification time; when the bytes this process wrote since the last
look pass a sixteenth of the bound, the cache is measured and the oldest
entries removed until it is under 80% of the bound. Entries larger than an
eighth of the bound are not kept. Other processes sharing the directory do
the same; a file they remove meanwhile is a miss, recompiled.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time

from .. import __version__, compiler, tuning
from .. import simulator as sim
from .counting import counters, warn_once
from .dumps import collect

log = logging.getLogger(__name__)

#: Default bound in bytes; $SPYRE_CACHE_MAX_BYTES overrides it (0: no disk cache).
DEFAULT_MAX_BYTES = 2 << 30


class CompileError(RuntimeError):
    """The C++ pipeline refused a kernel; the message has its diagnostics."""


class CacheWarning(UserWarning):
    """The kernel cache could not be used as it should (a corrupt entry, a
    directory that cannot be written); kernels still compile and run."""


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


def compile_cached(mlir: str, tuned: bool | None = None) -> sim.Program:
    """The program of `mlir`, from the disk cache when a valid entry exists,
    tuned by simulated time if `tuned` (default: tuning.enabled()). A cache
    that cannot be read or written is warned about once and the kernel
    compiled without it."""
    collect(mlir)
    tuned = tuning.enabled() if tuned is None else tuned
    # A tuned program is another program of the same IR (spyre_mlir.tuning).
    mode = "tuned\0" if tuned else ""
    key = hashlib.sha256((compiler_version() + "\0" + mode + mlir).encode()).hexdigest()
    path = os.path.join(cache_dir(), key[:2], key + ".spyre")
    if key in _unwritten:
        counters.cache_hits += 1
        log.debug("kernel cache hit (in memory) %s", key[:16])
        return sim.Program.parse(_unwritten[key])
    try:
        program = _read_entry(path, key)
        if program is not None:
            _touch(path)
            counters.cache_hits += 1
            log.debug("kernel cache hit %s", key[:16])
            return program
    except ValueError as e:
        counters.corrupt_cache_entries += 1
        warn_once("corrupt", f"corrupt kernel cache entry {path} ({e}): recompiled "
                             "(further corrupt entries are counted in "
                             "counters.corrupt_cache_entries, not warned about)", CacheWarning)
    except OSError as e:
        warn_once("unusable", f"kernel cache {cache_dir()} cannot be used ({e}): "
                              "kernels are compiled uncached", CacheWarning)
    binary = _compile(mlir, key, tuned)
    entry = _entry(key, binary)
    if not keeps(len(entry)):
        log.debug("kernel cache: %s not kept (%d bytes, over an eighth of "
                  "SPYRE_CACHE_MAX_BYTES)", key[:16], len(entry))
        return sim.Program.parse(binary)
    try:
        _write_entry(path, entry)
        _wrote(cache_dir(), len(entry))
    except OSError as e:
        warn_once("unusable", f"kernel cache {cache_dir()} cannot be used ({e}): "
                              "kernels are compiled uncached", CacheWarning)
        # Kept in memory: kernels are looked up again when graphs run.
        _unwritten[key] = binary
    return sim.Program.parse(binary)


# Binaries that could not be written to the disk cache, by key.
_unwritten: dict[str, bytes] = {}


def _compile(mlir: str, key: str, tuned: bool) -> bytes:
    from ..ir import MLIRError
    start = time.perf_counter()
    try:
        binary = (tuning.compile_tuned(mlir, compiler_version()) if tuned
                  else compiler.compile_kernel(mlir))
    except (MLIRError, ValueError) as e:
        log.debug("kernel cache miss %s: the pipeline refused it: %s", key[:16],
                  str(e).splitlines()[0] if str(e) else "")
        raise CompileError(str(e)) from None
    counters.compiles += 1
    log.debug("kernel cache miss %s: compiled in %.2f s (%d bytes)", key[:16],
              time.perf_counter() - start, len(binary))
    return binary


# The entry format.
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


def _write_entry(path: str, data: bytes) -> None:
    """Concurrent writers replace the file atomically: a reader sees a whole
    entry or none."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


# The size bound.
_written_since_check = 0


def max_bytes() -> int:
    text = os.environ.get("SPYRE_CACHE_MAX_BYTES")
    if text is None:
        return DEFAULT_MAX_BYTES
    try:
        return max(0, int(text))
    except ValueError:
        raise ValueError(f"SPYRE_CACHE_MAX_BYTES={text!r} is not a number of bytes") from None


def keeps(size: int) -> bool:
    """Whether an entry of `size` bytes goes to the disk cache."""
    return size <= max_bytes() // 8


def _touch(path: str) -> None:
    try:
        os.utime(path)
    except OSError:
        pass  # removed by another process meanwhile, or read-only: still a hit


def _wrote(directory: str, size: int) -> None:
    global _written_since_check
    _written_since_check += size
    limit = max_bytes()
    if _written_since_check < limit // 16:
        return
    _written_since_check = 0
    trim(directory, limit)


def trim(directory: str, limit: int) -> int:
    """Removes the least recently used entries of `directory` until it holds at
    most 80% of `limit` bytes, if it holds more than `limit`; returns the
    bytes removed."""
    entries = []
    total = 0
    for sub in _scandir(directory):
        if not sub.is_dir(follow_symlinks=False):
            continue
        for entry in _scandir(sub.path):
            if entry.name.endswith(".spyre") and entry.is_file(follow_symlinks=False):
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                entries.append((st.st_mtime_ns, st.st_size, entry.path))
                total += st.st_size
    if total <= limit:
        return 0
    removed = 0
    for _, size, path in sorted(entries):
        if total - removed <= limit * 0.8:
            break
        try:
            os.unlink(path)
            removed += size
        except OSError:
            pass
    return removed


def _scandir(path: str):
    try:
        return list(os.scandir(path))
    except OSError:
        return []
