"""Runs a function through torch.compile(backend="spyre") and in eager on
the same inputs, checking our counters: shared by the op test files."""

import torch

from spyre_mlir.inductor import counters


def compiled_and_eager(fn, *args, on_card=True, eager_args=None):
    """(compiled result, eager result). With `on_card`, nothing may fall
    back and a kernel must have run; without, something must have fallen
    back (counted). `eager_args` are eager's inputs when they differ (16-bit
    inputs as the card holds them)."""
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        actual = torch.compile(fn, backend="spyre")(*args)
        expected = fn(*(args if eager_args is None else eager_args))
    if on_card:
        assert not counters.fallbacks, dict(counters.fallbacks)
        assert counters.kernels_run > 0
    else:
        assert sum(counters.fallbacks.values()) > 0
    return actual, expected


def kernel_runs(name: str) -> int:
    """How many times kernels named `name` ran since the counters' reset
    ("attention": the fused attention kernel)."""
    return sum(calls for launcher, (calls, _) in counters.per_kernel.items()
               if launcher.name == name)
