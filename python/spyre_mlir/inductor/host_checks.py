"""Errors eager raises from the values of its inputs, raised on the host
after the card computed the condition: `check` is kept in the graph (it has
a side effect) and runs as an extern call that scheduling.py does not count
as a fallback, as linalg's error checks."""

from __future__ import annotations

import torch

#: The exceptions a check may raise, by name (a custom op's arguments are
#: tensors, numbers and strings), as eager raises them.
ERRORS = {"RuntimeError": RuntimeError, "IndexError": IndexError}


@torch.library.custom_op("spyre::check", mutates_args=())
def _check(ok: torch.Tensor, message: str, error: str = "RuntimeError") -> None:
    if not bool(ok.all()):
        raise ERRORS[error](message)


@_check.register_fake
def _(ok, message, error="RuntimeError"):
    return None


check = torch.ops.spyre.check.default
torch.fx.node.has_side_effect(check)


def check_positions(indices, sizes, op: str, *, negatives: bool = True,
                    error: str = "IndexError") -> None:
    """Raises as eager does where an index names no position of its
    dimension (`negatives`: those from -size count from the end). A pick
    compares each index with every position: one outside them would pick
    nothing, a silent zero or a lost write."""
    for i, size in zip(indices, sizes):
        inside = (i >= (-size if negatives else 0)) & (i < size)
        check(inside, f"{op}: index out of range for a dimension of size {size}", error)


def assert_async(condition, message="Expected Tensor with single nonzero value, but got zero"):
    """aten._assert_async, as a check: Inductor lowers it to a device
    assert our kernels do not have, which sent it (and what computes its
    condition: one_hot's range checks) to the CPU."""
    check(condition != 0, message)


def single_value(condition, *args, **kwargs) -> bool:
    """Eager refuses a condition of several values before asserting it."""
    return condition.numel() == 1
