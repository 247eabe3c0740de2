"""Device-conditional lowerings: while a spyre compile runs, matrix products
become Inductor reductions (a sum over K of products) instead of extern
kernel calls, so that they reach our Scheduling; export.py recognises them
and emits `spyre.matmul`. Outside a spyre compile the original lowerings run.
"""

from __future__ import annotations

import torch
from torch._inductor import ir
from torch._inductor.lowering import lowerings
from torch._inductor.virtualized import ops

from .state import active

aten = torch.ops.aten


def _product(a, b, batched: bool):
    a_load, b_load = a.make_loader(), b.make_loader()
    *lead, m, k = a.get_size()
    n = b.get_size()[-1]

    def inner_fn(index, reduction_index):
        (r,) = reduction_index
        *bi, i, j = index
        x = ops.to_dtype(a_load([*bi, i, r]), torch.float32)
        y = ops.to_dtype(b_load([*bi, r, j]), torch.float32)
        return ops.mul(x, y)

    result = ir.Reduction.create(
        device=a.get_device(), dst_dtype=a.get_dtype(), src_dtype=torch.float32,
        inner_fn=inner_fn, ranges=[*lead, m, n], reduction_ranges=[k], reduction_type="sum")
    result.realize()  # as Inductor's own reductions: a buffer, not an inlinable loader
    return result


def _scaled(x, factor):
    return x if factor == 1 else lowerings[aten.mul.Tensor](x, factor)


def mm(a, b):
    return _product(a, b, False)


def bmm(a, b):
    return _product(a, b, True)


def addmm(bias, a, b, *, beta=1, alpha=1):
    out = _scaled(_product(a, b, False), alpha)
    return out if beta == 0 else lowerings[aten.add.Tensor](out, _scaled(bias, beta))


def baddbmm(bias, a, b, *, beta=1, alpha=1):
    out = _scaled(_product(a, b, True), alpha)
    return out if beta == 0 else lowerings[aten.add.Tensor](out, _scaled(bias, beta))


OURS = {aten.mm: mm, aten.bmm: bmm, aten.addmm: addmm, aten.baddbmm: baddbmm}
_installed = False


def install() -> None:
    """Wraps Inductor's lowerings of the ops in OURS (idempotent)."""
    global _installed
    if _installed:
        return
    for packet, ours in OURS.items():
        for key in (packet, packet.default):
            original = lowerings.get(key)
            if original is None:
                continue

            def dispatch(*args, _ours=ours, _original=original, **kwargs):
                return _ours(*args, **kwargs) if active() else _original(*args, **kwargs)
            lowerings[key] = dispatch
    _installed = True
