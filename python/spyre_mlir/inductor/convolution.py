"""Convolutions as one `spyre.conv2d` kernel: implicit GEMM, with no patch
matrix (im2col) in device memory (lib/Dialect/Spyre/Transforms/ConvPlan.cpp).

As fused attention (attention.py), Inductor's scheduler sees it as one
extern call, `torch.ops.spyre.conv2d`, whose implementation runs the kernel
on the card through a ProgramLauncher (each run counted with its simulated
cycles, not as a CPU fallback). The convolution decomposition
(decompositions.convolution) calls it through `fused` for 2-D convolutions
of stride 1 without groups that the card takes, outside autograd; the
others keep the im2col lowering (lowerings.convolution).
"""

from __future__ import annotations

import functools

import torch

from .extern_kernels import ELEMENT, buffer_type, kernel, static_sizes, why_not


def kernel_mlir(x_shape, w_shape, has_bias: bool, dtype: torch.dtype, padding,
                dilation) -> str:
    """The kernel-level IR of one convolution: x (N, C, H, W), the weight
    (Co, C, KH, KW), an optional bias (Co), out (N, Co, Ho, Wo)."""
    element = ELEMENT[dtype]
    (n, _, h, w), (co, _, kh, kw) = x_shape, w_shape
    out = (n, co, h + 2 * padding[0] - dilation[0] * (kh - 1),
           w + 2 * padding[1] - dilation[1] * (kw - 1))
    types = [buffer_type(x_shape, element), buffer_type(w_shape, element)]
    if has_bias:
        types.append(buffer_type((co,), element))
    return kernel("conv2d", types, buffer_type(out, element),
                  f" padding = [{padding[0]}, {padding[1]}]"
                  f" dilation = [{dilation[0]}, {dilation[1]}]")


def _signature(x, weight, bias, padding, dilation):
    return (tuple(x.shape), tuple(weight.shape), bias is not None, x.dtype,
            tuple(int(p) for p in padding), tuple(int(d) for d in dilation))


@functools.lru_cache(maxsize=256)
def _launcher(signature):
    from .launcher import ProgramLauncher
    x_shape, w_shape, has_bias, dtype, padding, dilation = signature
    mlir = kernel_mlir(x_shape, w_shape, has_bias, dtype, padding, dilation)
    names = [f"arg{i}" for i in range(3 + has_bias)]
    return ProgramLauncher("conv2d", mlir, names, graph="extern", ops=["aten.convolution"])


@torch.library.custom_op("spyre::conv2d", mutates_args=())
def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
           padding: list[int], dilation: list[int]) -> torch.Tensor:
    """F.conv2d(x, weight, bias, stride 1, padding, dilation) on the card."""
    launcher = _launcher(_signature(x, weight, bias, padding, dilation))
    out = _output(x, weight, padding, dilation)
    inputs = [x.contiguous(), weight.contiguous()]
    if bias is not None:
        inputs.append(bias.contiguous())
    launcher(*inputs, out)
    return out


def _output(x, weight, padding, dilation):
    (n, _, h, w), (co, _, kh, kw) = x.shape, weight.shape
    return x.new_empty((n, co, h + 2 * padding[0] - dilation[0] * (kh - 1),
                        w + 2 * padding[1] - dilation[1] * (kw - 1)))


@conv2d.register_fake
def _(x, weight, bias, padding, dilation):
    return _output(x, weight, padding, dilation)


op = torch.ops.spyre.conv2d.default


def fused(x, weight, bias, stride, padding, dilation, transposed, groups):
    """aten.convolution as one spyre.conv2d kernel, or None when the card's
    implicit GEMM does not take it (the caller keeps the im2col lowering)."""
    if transposed or groups != 1 or weight.dim() != 4 or x.dim() != 4:
        return None
    if any(s != 1 for s in stride) or x.dtype not in ELEMENT or weight.dtype != x.dtype or \
            (bias is not None and bias.dtype != x.dtype):
        return None
    if not static_sizes(x, weight, bias):
        return None
    padding, dilation = [int(p) for p in padding], [int(d) for d in dilation]
    if why_not(_launcher(_signature(x, weight, bias, padding, dilation)).mlir) is not None:
        return None
    return conv2d(x, weight, bias, padding, dilation)
