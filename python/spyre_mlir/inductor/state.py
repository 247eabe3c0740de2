"""Whether a spyre compile is running (Inductor's registries are global; our
Scheduling and lowerings act only inside one), and the user's options."""

from __future__ import annotations

import contextlib
import os
import threading

_state = threading.local()

#: Raise instead of running any operation on the CPU (env: SPYRE_STRICT=1).
strict = os.environ.get("SPYRE_STRICT", "") not in ("", "0")

#: Check mode (env: SPYRE_CHECK=1), read when a graph is compiled: every
#: kernel also runs through Inductor's CPU code on the same inputs, and the
#: first kernel whose results differ raises check.SpyreCheckError.
check = os.environ.get("SPYRE_CHECK", "") not in ("", "0")

#: Run a multilayer perceptron's two products and their epilogues as one
#: kernel, a chain (env: SPYRE_CHAINS=0 keeps them two kernels, to compare),
#: read when a graph is compiled.
chains = os.environ.get("SPYRE_CHAINS", "1") != "0"


def active() -> bool:
    return getattr(_state, "active", False)


@contextlib.contextmanager
def activated():
    previous = active()
    _state.active = True
    try:
        yield
    finally:
        _state.active = previous


class SpyreFallbackError(RuntimeError):
    """Strict mode: part of a graph would run on the CPU."""
