"""Check mode: each kernel of a compiled graph runs on the card and then
through Inductor's CPU code for the same scheduled nodes, from the same
inputs; the first kernel whose results differ beyond DLFloat16-aware
tolerance raises, naming the kernel and the aten ops it came from. It is
how a wrong kernel is found in a big model.

The generated wrapper calls, per kernel:
    check = KernelCheck(launcher, ops, [buffers])   # snapshot of the buffers
    launcher(buffers)                               # on the card
    check.card_done()                               # keep its results, restore
    <Inductor's CPU code for the same nodes>
    check.compare()                                 # raise if they differ
The CPU results are kept, so each kernel is checked from correct inputs.
"""

from __future__ import annotations

import torch

from . import binding

#: A few DLFloat16 roundings (9 fraction bits), relative to the largest
#: value of the result: sums of rounded terms cancel.
RTOL = ATOL = 2.0 ** -6


class SpyreCheckError(AssertionError):
    """A kernel's results on the card differ from Inductor's CPU code."""


class KernelCheck:
    def __init__(self, launcher, ops: list[str], tensors: list[torch.Tensor]):
        self.launcher, self.ops, self.tensors = launcher, ops, tensors
        self.before = [t.clone() for t in tensors]

    def card_done(self) -> None:
        self.written = binding.written(self.launcher.program(), self.launcher.buffers)
        self.card = {k: self.tensors[k].clone() for k in self.written}
        for tensor, before in zip(self.tensors, self.before):
            tensor.copy_(before)

    def compare(self) -> None:
        for k in self.written:
            why = difference(self.card[k], self.tensors[k])
            if why:
                raise SpyreCheckError(
                    f"check mode: kernel {self.launcher.name} ({self.launcher.graph}; from "
                    f"{', '.join(self.ops)}) differs from Inductor's CPU code in "
                    f"{self.launcher.buffers[k]}: {why}")


def difference(card: torch.Tensor, cpu: torch.Tensor) -> str | None:
    if not cpu.is_floating_point():
        bad = card != cpu
        if not bad.any():
            return None
        at = int(bad.flatten().nonzero()[0])
        return (f"{int(bad.sum())} of {bad.numel()} elements, first at flat index {at} "
                f"(card {card.flatten()[at].item()}, cpu {cpu.flatten()[at].item()})")
    a, e = card.double(), cpu.double()
    finite = e[torch.isfinite(e)]
    scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
    error = (a - e).abs()
    same = (error <= RTOL * e.abs() + ATOL * scale) | (torch.isnan(a) & torch.isnan(e)) | (a == e)
    if bool(same.all()):
        return None
    error = torch.where(same, torch.zeros_like(error), error.nan_to_num(float("inf")))
    at = int(error.flatten().argmax())
    return (f"{int((~same).sum())} of {same.numel()} elements, worst at flat index {at} "
            f"(card {a.flatten()[at].item():.6g}, cpu {e.flatten()[at].item():.6g})")
