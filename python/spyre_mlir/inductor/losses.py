"""F.linear_cross_entropy's chunked path (its custom ops) as one linear
layer and a cross entropy the card runs, used in spyre compiles
(decompositions.py registers them).

Eager runs the ops as a Python loop over batch chunks that writes into
buffers in place; the chunks only bound eager's memory, each row's loss is
the same whatever the chunk size, so here every row is computed at once.
Each row's loss is written as eager's is, log(sum exp(z - max z)) - (z[t] -
max z) times the row's class weight (0 for an ignored row), so that NaN and
infinite logits of ignored rows propagate as in eager (0 * NaN). The scalar
op also returns the gradients it precomputes when asked, from the same
softmax. Arguments eager refuses (label smoothing, unresolved accumulation
policy, ...) are declined: the custom op then runs and raises as in eager.
"""

from __future__ import annotations

import math

import torch


def _rows(input, linear_weight, target, linear_bias, weight, ignore_index, acc_dtype):
    """(shifted logits, row losses, row weights, one-hot targets, softmax
    denominators), in the accumulation dtype."""
    x = input.to(acc_dtype)
    logits = torch.mm(x, linear_weight.to(acc_dtype).t())
    if linear_bias is not None:
        logits = logits + linear_bias.to(acc_dtype)
    shifted = logits - logits.amax(1, keepdim=True)
    classes = linear_weight.shape[0]
    ignored = target == ignore_index
    # Eager reads class 0 for ignored rows when ignore_index names no class.
    if ignore_index < 0 or ignore_index >= classes:
        target = torch.where(ignored, 0, target)
    onehot = torch.arange(classes, device=target.device) == target.unsqueeze(1)
    zero = torch.zeros((), dtype=acc_dtype, device=x.device)
    at_target = torch.where(onehot, shifted, zero).sum(1)
    denominator = shifted.exp().sum(1)
    if weight is None:
        row_weight = (~ignored).to(acc_dtype)
    else:
        picked = torch.where(onehot, weight.to(acc_dtype), zero).sum(1)
        row_weight = torch.where(ignored, zero, picked)
    return shifted, denominator.log() - at_target, row_weight, onehot, denominator


def batch_chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                  label_smoothing, batch_chunk_size, acc_policy, acc_dtype, allow_retain_graph,
                  compute_input_grad, compute_linear_weight_grad, compute_linear_bias_grad):
    shifted, loss, row_weight, onehot, denominator = _rows(
        input, linear_weight, target, linear_bias, weight, ignore_index, acc_dtype)
    total = (row_weight * loss).sum()
    if reduction == "mean":
        # Eager scales every row by 1 / sum of the weights, NaN when that sum
        # is 0 (no rows, every row ignored, weights summing to 0).
        divisor = row_weight.sum()
        total = torch.where(divisor == 0, math.nan, total / divisor)
        scale = torch.where(divisor == 0, math.nan, row_weight / divisor)
    else:
        scale = row_weight
    dtype = input.dtype
    # Gradients not asked for are empty, as eager's.
    grads = [input.new_empty((0, 0)), input.new_empty((0, 0)), input.new_empty((0,))]
    if compute_input_grad or compute_linear_weight_grad or compute_linear_bias_grad:
        # d loss / d logits = scale * (softmax - onehot(target)).
        softmax = shifted.exp() / denominator.unsqueeze(1)
        grad_logits = scale.unsqueeze(1) * (softmax - onehot.to(softmax.dtype))
        if compute_input_grad:
            grads[0] = torch.mm(grad_logits, linear_weight.to(grad_logits.dtype)).to(dtype)
        if compute_linear_weight_grad:
            grads[1] = torch.mm(grad_logits.t(), input.to(grad_logits.dtype)).to(dtype)
        if compute_linear_bias_grad:
            grads[2] = grad_logits.sum(0).to(dtype)
    return (total.to(dtype), *grads)


def batch_chunked_no_reduction(input, linear_weight, target, linear_bias, weight, ignore_index,
                               batch_chunk_size, acc_policy, acc_dtype):
    _, loss, row_weight, _, _ = _rows(input, linear_weight, target, linear_bias, weight,
                                      ignore_index, acc_dtype)
    return (loss * row_weight).to(input.dtype)


def _accepted(input, linear_weight, target, linear_bias, acc_policy, acc_dtype):
    """What eager's chunk context accepts (otherwise it raises)."""
    if acc_policy == "auto" or acc_dtype is None or target.dtype != torch.int64 or \
            input.dim() != 2 or linear_weight.dim() != 2 or target.dim() != 1:
        return False
    if linear_bias is not None and linear_bias.shape != linear_weight.shape[:-1]:
        return False
    dtype = input.dtype
    return dtype == acc_dtype or (dtype in (torch.float16, torch.bfloat16) and
                                  acc_dtype == torch.float32)


def _batch_chunked_applies(input, linear_weight, target, linear_bias, weight, reduction,
                           ignore_index, label_smoothing, batch_chunk_size, acc_policy, acc_dtype,
                           *rest):
    return label_smoothing <= 0.0 and reduction in ("mean", "sum") and \
        _accepted(input, linear_weight, target, linear_bias, acc_policy, acc_dtype)


def _no_reduction_applies(input, linear_weight, target, linear_bias, weight, ignore_index,
                          batch_chunk_size, acc_policy, acc_dtype):
    return _accepted(input, linear_weight, target, linear_bias, acc_policy, acc_dtype)


def entries():
    """{custom op overload: (decomposition, whether it applies to the arguments)}"""
    import torch.nn.modules.linear_cross_entropy  # noqa: F401  (defines the ops)
    ops = torch.ops.torch_nn
    return {
        ops._linear_cross_entropy_batch_chunked.default: (batch_chunked,
                                                          _batch_chunked_applies),
        ops._linear_cross_entropy_batch_chunked_no_reduction.default: (
            batch_chunked_no_reduction, _no_reduction_applies),
    }
