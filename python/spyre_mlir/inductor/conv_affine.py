"""A per-output-channel affine map after a convolution, folded into its
kernel (a post-grad pass, before convolution.fuse_epilogues).

An eval-mode BatchNorm reaches the post-grad graph as (y - mean) * invstd *
gamma + beta in f32 on the convolution's result y, cast back to y's dtype:
a kernel of its own that reads and writes the whole activation once more,
and that keeps a following ReLU out of the convolution's kernel. Any chain
of adds, subtractions and multiplications by per-channel values (or
scalars) is y * scale + shift per channel, which spyre.conv2d computes on
its f32 sums: `scale` is its per-channel operand, and bias * scale + shift
its bias, both in f32 as eager computes them (a tiny kernel computes the
two vectors: the statistics are graph inputs, not constants), when the
activation is large enough for that kernel to cost less than the pass it
saves.
"""

from __future__ import annotations

import numbers

import torch
import torch.fx

from ..simulator import default_arch
from .convolution import Emitter, _launcher, _signature, _unfused, op
from .extern_kernels import why_not

aten, prims = torch.ops.aten, torch.ops.prims


def _per_channel(value, channels: int) -> bool:
    """A number, or a float tensor that varies at most along the channels
    of an (N, C, H, W) result."""
    if isinstance(value, numbers.Number):
        return not isinstance(value, bool)
    meta = getattr(value, "meta", {}).get("val")
    if not isinstance(meta, torch.Tensor) or not meta.is_floating_point():
        return False
    shape = list(meta.shape)
    while shape and shape[0] == 1 and len(shape) > 3:
        shape.pop(0)
    return shape in ([], [1], [1, 1, 1], [channels, 1, 1])


def _step(user: torch.fx.Node, current: torch.fx.Node, channels: int):
    """(kind, operand) of `user` as a step of the affine chain on `current`,
    or None."""
    if user.target is prims.convert_element_type.default and user.args[0] is current:
        return "cast", user.args[1]
    if user.target not in (aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor) or \
            len(user.args) != 2 or user.kwargs.get("alpha", 1) != 1:
        return None
    first, second = user.args
    if user.target is aten.sub.Tensor:
        kind, other = ("sub", second) if first is current else (None, None)
    else:
        kind = "add" if user.target is aten.add.Tensor else "mul"
        other = second if first is current else first if second is current else None
    if kind is None or other is current or not _per_channel(other, channels):
        return None
    return kind, other


class _Emitter(Emitter):
    """convolution.Emitter with the per-channel vectors the fold builds."""

    def as_f32(self, value):
        """A per-channel operand as f32 of shape (C,) or (1,), or a number."""
        if isinstance(value, numbers.Number):
            return float(value)
        return self(aten.reshape.default, self(prims.convert_element_type.default, value,
                                               torch.float32), [-1])

    def per_channel(self, value, channels: int, device):
        """A contiguous f32 vector (C,) of `value` (a number, or f32 of shape
        (1,) or (C,))."""
        if isinstance(value, float):
            value = self(aten.full.default, [channels], value, dtype=torch.float32,
                         device=device)
        return self(aten.clone.default, self(aten.expand.default, value, [channels]))

    def combine(self, target, a, b):
        if isinstance(a, float) and isinstance(b, float):
            return {aten.add.Tensor: a + b, aten.sub.Tensor: a - b, aten.mul.Tensor: a * b}[target]
        return self(target, a, b)


def _affine(emit: _Emitter, steps):
    """(scale, shift) of the chain's steps, y * scale + shift per channel
    (None: 1 and 0)."""
    scale = shift = None
    for kind, operand in steps:
        v = emit.as_f32(operand)
        if kind == "mul":
            scale = v if scale is None else emit.combine(aten.mul.Tensor, scale, v)
            shift = None if shift is None else emit.combine(aten.mul.Tensor, shift, v)
        elif shift is None:
            shift = v if kind == "add" else emit.combine(aten.mul.Tensor, v, -1.0)
        else:
            shift = emit.combine(aten.add.Tensor if kind == "add" else aten.sub.Tensor, shift, v)
    return scale, shift


def _pays(out: torch.Tensor) -> bool:
    """Whether folding saves time: it saves the chain's pass over the
    activation (its bytes read and written) and costs the kernel of the two
    vectors, whose time is its transfers' latencies (a load and a store per
    vector), whatever the channels: small activations (a few KB) keep their
    own pass."""
    arch = default_arch()
    round_trip = 2 * out.numel() * out.element_size() / arch.device_bytes_per_cycle
    return round_trip > 4 * arch.dma_latency_cycles


def fold_channel_affine(graph: torch.fx.Graph) -> None:
    """Folds into each spyre.conv2d (with nothing folded in yet) a chain of
    per-channel adds, subtractions and multiplications that alone uses its
    result, up to a cast back to its dtype, when the card compiles the
    convolution so extended."""
    for node in list(graph.nodes):
        unfused = _unfused(node)
        if unfused is None or unfused[-1] is not None:  # a scale folded in already
            continue
        x, weight, bias, stride, padding, dilation, groups, _ = unfused
        out = node.meta.get("val")
        if not isinstance(out, torch.Tensor) or out.dim() != 4:
            continue
        steps, chain = [], [node]
        while len(chain[-1].users) == 1:
            user = next(iter(chain[-1].users))
            step = _step(user, chain[-1], out.shape[1])
            # Widening to f32 is exact (the kernel's sums are f32); a cast
            # back to the result's dtype ends the chain.
            if step is None or (step[0] == "cast" and step[1] not in (out.dtype, torch.float32)):
                break
            chain.append(user)
            if step[0] == "cast":
                if step[1] == out.dtype:
                    break
                continue
            steps.append(step)
        last = chain[-1]
        end = last.meta.get("val")
        if not steps or not isinstance(end, torch.Tensor) or end.dtype != out.dtype or \
                end.shape != out.shape:
            continue
        if not _pays(out):
            continue
        emit = _Emitter(graph, last, out.fake_mode)
        scale, shift = _affine(emit, steps)
        total = None if bias is None else emit(prims.convert_element_type.default, bias,
                                                torch.float32)
        if total is not None and scale is not None:
            total = emit(aten.mul.Tensor, total, scale)
        if shift is not None:
            total = shift if total is None else emit(aten.add.Tensor, total, shift)
        new_bias = None if total is None else emit.per_channel(total, out.shape[1], out.device)
        new_scale = None if scale is None else emit.per_channel(scale, out.shape[1], out.device)
        metas = [None if a is None else a.meta["val"] for a in (x, weight, new_bias, new_scale)]
        signature = _signature(metas[0], metas[1], metas[2], stride, padding, dilation, groups,
                               None, False, metas[3])
        if why_not(_launcher(signature).mlir) is not None:
            continue  # what was emitted is dead code, removed below
        folded = emit(op, x, weight, new_bias, stride, padding, dilation, groups, None, False,
                      new_scale)
        # Inductor checks a custom op's recorded eager inputs against its
        # arguments, which changed.
        folded.meta = {k: v for k, v in node.meta.items() if k != "eager_input_vals"}
        last.replace_all_uses_with(folded)
        for dead in reversed(chain):
            graph.erase_node(dead)
    graph.eliminate_dead_code()
