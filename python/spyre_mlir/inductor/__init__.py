"""PyTorch integration: the "spyre" torch.compile backend.

``torch.compile(model, backend="spyre")`` works without importing this
package (it is registered through the ``torch_dynamo_backends`` entry
point). ``counters`` tells what ran on the simulator and what fell back to
the CPU; set ``strict = True`` (or SPYRE_STRICT=1) to raise on any fallback.
"""

from __future__ import annotations

from . import state
from .counting import DLFloat16OverflowWarning, SpecializationLimitWarning, counters  # noqa: F401
from .kernel_cache import CacheWarning  # noqa: F401

_registered = False


def register() -> None:
    """Hooks our Scheduling and lowerings into Inductor (idempotent). They act
    only while a spyre compile runs. Called by every spyre compile, which also
    adds the decompositions of ops other libraries have defined since."""
    global _registered
    from . import decompositions
    if not _registered:
        from torch._inductor.codegen.common import (get_wrapper_codegen_for_device,
                                                    init_backend_registration,
                                                    register_backend_for_device)

        from .. import logs
        from . import lowerings
        from .scheduling import make_scheduling
        logs.register()  # when torch's autoload of our entry point is off
        init_backend_registration()
        register_backend_for_device("cpu", make_scheduling, get_wrapper_codegen_for_device("cpu"))
        lowerings.install()
        decompositions.install()
        _registered = True
    decompositions.install_late()


def set_strict(value: bool) -> None:
    state.strict = value
