"""The "spyre" device: ``model.to("spyre")`` then ``torch.compile(model)``.

PrivateUse1 renamed "spyre", with a small C++ extension (built with the
package, see spyre_mlir.cpp_extensions) whose allocator hands out the
simulated card's device memory. Compiled graphs on spyre tensors use our
Inductor Scheduling and bind the tensors to the simulator without copies;
eager ops run through PyTorch's CPU fallback, counted in
``counters.fallbacks`` as "eager <op>" (refused in strict mode).
"""

from __future__ import annotations

import os
import types

import torch

_loaded = False


def register() -> None:
    """Makes "spyre" a torch device (idempotent)."""
    global _loaded
    if _loaded:
        return
    from .. import cpp_extensions
    module = cpp_extensions.load("spyre_device",
                                 os.path.join(os.path.dirname(__file__), "spyre_device.cpp"))
    # Eager ops that run through the CPU fallback are counted like a compiled
    # graph's (counters.fallbacks, "eager <op>"), or refused in strict mode.
    from ..inductor import counting
    module.set_fallback_hook(counting.eager_fallback)
    torch.utils.rename_privateuse1_backend("spyre")
    torch._register_device_module("spyre", _device_module())
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    from . import interface
    interface.register()
    _loaded = True


class _OneCard:
    """torch.spyre.device(d): with one card there is nothing to switch
    (torch.load restores storages inside it)."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def _device_module() -> types.ModuleType:
    module = types.ModuleType("torch.spyre")
    module.device = _OneCard
    # torch.autocast("spyre", dtype=...) (the casts: spyre_device.cpp).
    module.get_amp_supported_dtype = lambda: [torch.float16, torch.bfloat16]
    module.is_available = lambda: True
    module.is_initialized = lambda: True  # asked by torch.distributed's DeviceMesh
    module.device_count = lambda: 1
    module.current_device = lambda: 0
    module.set_device = lambda device: None
    module.synchronize = lambda device=None: None
    module._is_in_bad_fork = lambda: False
    module.manual_seed_all = lambda seed: None
    module.get_rng_state = lambda device=None: torch.empty(0, dtype=torch.uint8)
    module.set_rng_state = lambda state, device=None: None
    return module
