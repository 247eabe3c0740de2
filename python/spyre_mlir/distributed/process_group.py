"""The process group of the "spyre" backend: gloo for the data, wrapped in
a C++ c10d backend (spyre_backend.cpp, built with the package, see
spyre_mlir.cpp_extensions) that times every collective with clock.py."""

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
        from .. import cpp_extensions
        _extension = cpp_extensions.load(
            "spyre_distributed", os.path.join(os.path.dirname(__file__), "spyre_backend.cpp"))
    return _extension
