"""The backend's kernel cache: entries carry their key and a hash of their
binary, and a cache directory that cannot be used makes the backend warn
once and run uncached instead of failing."""

import glob
import os

import pytest
import torch

from spyre_mlir.inductor import CacheWarning, counters, counting, kernel_cache
from spyre_mlir.testing import softmax


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    # Warnings are given once per process; each test starts afresh.
    monkeypatch.setattr(counting, "_warned", set())
    monkeypatch.setattr(kernel_cache, "_unwritten", {})
    counters.reset()


def _entries(directory):
    return set(glob.glob(os.path.join(str(directory), "*", "*.spyre")))


def _run(fn, x):
    torch._dynamo.reset()
    return torch.compile(fn, backend="spyre")(x)


def _double(x):
    return x * 2


def _increment(x):
    return x + 1


def test_an_entry_of_another_kernel_is_not_run(monkeypatch, tmp_path):
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path))
    x = torch.randn(16, 32)
    _run(_double, x)
    (double,) = _entries(tmp_path)
    _run(_increment, x)
    (increment,) = _entries(tmp_path) - {double}
    # A valid binary, with the same buffers, of another kernel.
    with open(double, "rb") as src, open(increment, "wb") as dst:
        dst.write(src.read())
    counters.reset()
    with pytest.warns(CacheWarning, match="corrupt"):
        out = _run(_increment, x)
    torch.testing.assert_close(out, x + 1)
    assert counters.corrupt_cache_entries == 1 and counters.compiles == 1
    # The entry was rewritten: the next compile is a hit.
    counters.reset()
    torch.testing.assert_close(_run(_increment, x), x + 1)
    assert counters.cache_hits > 0 and counters.compiles == 0


def test_a_truncated_entry_is_recompiled(monkeypatch, tmp_path):
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path))
    source = softmax(4, 64)
    kernel_cache.compile_cached(source)
    (entry,) = _entries(tmp_path)
    data = open(entry, "rb").read()
    for size in (0, 10, len(data) - 1):
        open(entry, "wb").write(data[:size])
        counters.reset()
        with pytest.warns(CacheWarning) if size == 0 else _no_warning():
            kernel_cache.compile_cached(source)
        assert counters.compiles == 1 and counters.corrupt_cache_entries == 1
    assert open(entry, "rb").read() == data


class _no_warning:
    """Later corrupt entries are counted but not warned about again."""

    def __enter__(self):
        import warnings
        self._catch = warnings.catch_warnings(record=True)
        self._seen = self._catch.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)
        assert not [w for w in self._seen if issubclass(w.category, CacheWarning)]


def _compile_twice_uncached(x):
    """Two different graphs compile and run right, with one warning between them."""
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        torch.testing.assert_close(_run(_double, x), x * 2)
        torch.testing.assert_close(_run(_increment, x), x + 1)
    cache = [w for w in seen if issubclass(w.category, CacheWarning)]
    assert len(cache) == 1, [str(w.message) for w in seen]
    assert "uncached" in str(cache[0].message)
    # Each kernel compiled once (and kept in memory for when the graph runs).
    assert counters.compiles == 2
    return cache[0]


def test_a_file_where_the_cache_directory_should_be(monkeypatch, tmp_path):
    path = tmp_path / "kernels"
    path.write_text("not a directory")
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(path))
    _compile_twice_uncached(torch.randn(8, 8))
    assert path.read_text() == "not a directory"


def test_a_cache_directory_under_a_regular_file(monkeypatch, tmp_path):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path / "file" / "kernels"))
    _compile_twice_uncached(torch.randn(8, 8))


def test_an_entry_path_that_is_a_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path))
    x = torch.randn(8, 8)
    _run(_double, x)
    _run(_increment, x)
    for entry in _entries(tmp_path):
        os.remove(entry)
        os.mkdir(entry)
    counters.reset()
    _compile_twice_uncached(x)
    assert all(os.path.isdir(e) for e in _entries(tmp_path))
    assert not glob.glob(str(tmp_path / "*" / "*.tmp"))


def test_an_unwritable_cache_directory(monkeypatch, tmp_path):
    # Root may write to read-only directories (CAP_DAC_OVERRIDE): then make
    # writing fail as it would for anyone else.
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path))
    os.chmod(tmp_path, 0o500)

    def mkstemp(*args, **kwargs):
        raise PermissionError(13, "Permission denied", kwargs.get("dir"))

    try:
        open(tmp_path / "probe", "w").close()
        monkeypatch.setattr(kernel_cache.tempfile, "mkstemp", mkstemp)
    except PermissionError:
        pass  # the mode bits hold
    try:
        warning = _compile_twice_uncached(torch.randn(8, 8))
        assert "Permission denied" in str(warning.message)
    finally:
        os.chmod(tmp_path, 0o700)


def test_the_cache_stays_within_its_bound(monkeypatch, tmp_path):
    # Without a bound one OpInfo run wrote tens of GB. Each entry here is a
    # few KB: a bound of 12 entries' worth keeps the most recent ones.
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path))
    x = torch.randn(16, 32)
    _run(_double, x)
    (first,) = _entries(tmp_path)
    size = os.path.getsize(first)
    monkeypatch.setenv("SPYRE_CACHE_MAX_BYTES", str(12 * size))
    monkeypatch.setattr(kernel_cache, "_written_since_check", 0)
    for k in range(40):
        _run(lambda t, k=k: t * (k + 3), x)
    total = sum(os.path.getsize(p) for p in _entries(tmp_path))
    assert 0 < total <= 12 * size * 1.1
    assert first not in _entries(tmp_path)  # the least recently used went first
    # The most recent entry is still there.
    counters.reset()
    _run(lambda t: t * 42, x)
    assert counters.cache_hits >= 1 and counters.compiles == 0


def test_an_entry_over_an_eighth_of_the_bound_is_not_kept(monkeypatch, tmp_path):
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SPYRE_CACHE_MAX_BYTES", "1000")
    x = torch.randn(16, 32)
    torch.testing.assert_close(_run(_double, x), x * 2)
    assert _entries(tmp_path) == set()
    monkeypatch.setenv("SPYRE_CACHE_MAX_BYTES", "lots")
    with pytest.raises(ValueError, match="SPYRE_CACHE_MAX_BYTES"):
        kernel_cache.max_bytes()
