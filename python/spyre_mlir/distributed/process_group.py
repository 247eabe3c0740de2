"""The process group of the "spyre" backend: gloo for the data, wrapped in
a C++ c10d backend (spyre_backend.cpp, built on first use with torch's
cpp_extension, then cached) that times every collective with clock.py."""

from __future__ import annotations

import os

_extension = None


def create(store, rank: int, size: int, timeout):
    from torch.distributed import ProcessGroupGloo
    # torch registers the backend for spyre tensors too: the device must exist.
    from .. import device
    device.register()
    from .clock import CollectiveTimer
    data = ProcessGroupGloo(store, rank, size, timeout)
    return _module().SpyreBackend(data, CollectiveTimer(data, size), rank, size)


def _module():
    global _extension
    if _extension is None:
        from torch.utils import cpp_extension
        source = os.path.join(os.path.dirname(__file__), "spyre_backend.cpp")
        _extension = cpp_extension.load(name="spyre_distributed", sources=[source],
                                        extra_cflags=["-O1"], verbose=False)
    return _extension
