"""Decompositions used in spyre compiles, added to Inductor's own table (so
that its FX graph cache still knows how to key the table). Each one applies
to spyre compiles and spyre tensors only and otherwise does what the table
did before (decline, or the original decomposition)."""

from __future__ import annotations

import torch

from . import state

aten = torch.ops.aten


def _for_spyre(args) -> bool:
    return state.active() or any(isinstance(a, torch.Tensor) and a.device.type == "spyre"
                                 for a in args)


def _pick(self, target, ignore_index):
    """One-hot of the target classes (N x C, false for ignored rows): what
    gather and scatter along the class dimension select, as a comparison the
    card computes (it has no scatter, and gathers whole rows)."""
    classes = torch.arange(self.shape[1], device=self.device)
    valid = target != ignore_index
    return (classes.unsqueeze(0) == target.unsqueeze(1)) & valid.unsqueeze(1), valid


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    onehot, valid = _pick(self, target, ignore_index)
    picked = torch.where(onehot, self, torch.zeros((), dtype=self.dtype)).sum(1)
    total = valid.sum().to(self.dtype)
    if reduction == 0:  # none
        return -picked, total.new_zeros(())
    loss = -picked.sum()
    return (loss / total if reduction == 1 else loss), total


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    onehot, _ = _pick(self, target, ignore_index)
    if reduction == 0:
        grad = grad_output.unsqueeze(1)
    else:
        grad = grad_output / total_weight if reduction == 1 else grad_output
    return torch.where(onehot, -grad, torch.zeros((), dtype=self.dtype))


def install() -> None:
    from torch._decomp import decomposition_table
    from torch._inductor import decomposition

    def wrap(ours, original, applies=lambda *args: True):
        def decompose(*args, **kwargs):
            if _for_spyre(args) and applies(*args, **kwargs):
                return ours(*args, **kwargs)
            return NotImplemented if original is None else original(*args, **kwargs)
        return decompose

    flash = aten._scaled_dot_product_flash_attention_for_cpu.default
    # 2-D inputs without class weights; the rest keeps the original gather.
    plain = lambda self, target, weight, *rest: weight is None and self.dim() == 2  # noqa: E731
    plain_backward = lambda grad, self, target, weight, *rest: (  # noqa: E731
        weight is None and self.dim() == 2)
    entries = {
        # Attention as matrix products and a softmax: the CPU flash-attention
        # kernel would be an extern call.
        flash: wrap(decomposition_table[flash], None),
        aten.nll_loss_forward.default: wrap(
            nll_loss_forward, decomposition.decompositions[aten.nll_loss_forward.default], plain),
        aten.nll_loss_backward.default: wrap(
            nll_loss_backward, decomposition.decompositions[aten.nll_loss_backward.default],
            plain_backward),
    }
    for table in (decomposition.decompositions, decomposition.fast_random_decomps()):
        table.update(entries)  # the second is a cached copy of the first
