"""Errors eager raises from the values of its inputs, raised on the host
after the card computed the condition: `check` is kept in the graph (it has
a side effect) and runs as an extern call that scheduling.py does not count
as a fallback, as linalg's error checks."""

from __future__ import annotations

import torch


@torch.library.custom_op("spyre::check", mutates_args=())
def _check(ok: torch.Tensor, message: str) -> None:
    if not bool(ok.all()):
        raise RuntimeError(message)


@_check.register_fake
def _(ok, message):
    return None


check = torch.ops.spyre.check.default
torch.fx.node.has_side_effect(check)
