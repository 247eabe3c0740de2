"""A size bound for the kernel cache: without one it grows with every kernel
ever compiled (one OpInfo run wrote tens of GB and filled a disk).

Least recently used entries go first: a hit refreshes its entry's
modification time, and when the bytes written by this process since the
last look pass a sixteenth of the bound, the cache is measured and the
oldest entries removed until it is back under 80% of the bound. Entries
larger than an eighth of the bound are not kept at all. Other processes
sharing the directory do the same; a file they remove at the same time is
simply gone (a miss, recompiled).
"""

from __future__ import annotations

import os

#: Default bound in bytes; $SPYRE_CACHE_MAX_BYTES overrides it (0: no disk cache).
DEFAULT_MAX_BYTES = 2 << 30

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


def touch(path: str) -> None:
    try:
        os.utime(path)
    except OSError:
        pass  # removed by another process meanwhile, or read-only: still a hit


def wrote(directory: str, size: int) -> None:
    """Records an entry written to `directory`; trims the cache now and then."""
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
