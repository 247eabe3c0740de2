"""Convolutions as one `spyre.conv2d` kernel: implicit GEMM, with no patch
matrix (im2col) in device memory (lib/Dialect/Spyre/Transforms/ConvPlan.cpp).

As fused attention (attention.py), Inductor's scheduler sees it as one
extern call, `torch.ops.spyre.conv2d`, whose implementation runs the kernel
on the card through a ProgramLauncher (each run counted with its simulated
cycles, not as a CPU fallback). The convolution decomposition
(decompositions.convolution) calls it through `fused` for the 2-D
convolutions the card takes (grouped and depthwise ones too), outside
autograd; the others keep the im2col lowering (lowerings.convolution).
After Inductor's own passes, `fuse_epilogues` folds a ReLU and a residual
add that follow such a convolution into its kernel, and `pointwise_products`
makes one image's 1x1 convolutions products.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import torch
from torch._prims_common import suggest_memory_format

from .extern_kernels import ELEMENT, as_read, buffer_type, kernel, static_sizes, why_not


def output_shape(x_shape, w_shape, stride, padding, dilation) -> tuple:
    """(N, Co, Ho, Wo) of a convolution; `padding` (rows, columns) on both
    sides, or (before rows, before columns, after rows, after columns)."""
    (n, _, *sizes), (co, _, *taps) = x_shape, w_shape
    after = padding[2:] if len(padding) == 4 else padding
    return (n, co, *((size + p + q - d * (k - 1) - 1) // s + 1
                     for size, k, s, p, q, d in zip(sizes, taps, stride, padding, after,
                                                    dilation)))


def kernel_mlir(x_shape, w_shape, has_bias: bool, dtype: torch.dtype, stride, padding,
                dilation, groups: int = 1, has_residual: bool = False,
                relu: bool = False, has_scale: bool = False,
                vector_dtype: torch.dtype | None = None, relu_max: float | None = None) -> str:
    """The kernel-level IR of one convolution: x (N, C, H, W), the weight
    (Co, C / groups, KH, KW), an optional bias (Co), an optional residual,
    an optional scale (Co) and out (N, Co, Ho, Wo); the bias and the scale
    hold `vector_dtype` (default: x's); with `relu`, results above
    `relu_max` (if given) become it."""
    element = ELEMENT[dtype]
    vector = ELEMENT[vector_dtype or dtype]
    co = w_shape[0]
    out = output_shape(x_shape, w_shape, stride, padding, dilation)
    types = [buffer_type(x_shape, element), buffer_type(w_shape, element)]
    if has_bias:
        types.append(buffer_type((co,), vector))
    out_type = buffer_type(out, element)
    extra = [out_type] * has_residual + [buffer_type((co,), vector)] * has_scale
    clauses = f" residual(%a{len(types)} : {out_type})" if has_residual else ""
    if has_scale:
        clauses += f" scale(%a{len(types) + len(extra) - 1} : {extra[-1]})"
    strides = f" stride = [{stride[0]}, {stride[1]}]" if tuple(stride) != (1, 1) else ""
    return kernel("conv2d", types, out_type,
                  f"{strides} padding = [{', '.join(str(int(p)) for p in padding)}]"
                  f" dilation = [{dilation[0]}, {dilation[1]}]"
                  f"{f' groups = {groups}' if groups != 1 else ''}{' relu' if relu else ''}"
                  f"{f' relu_max = {float(relu_max)!r}' if relu_max is not None else ''}",
                  extra_inputs=extra, clauses=clauses)


class _Signature(NamedTuple):
    """What a convolution kernel depends on: kernel_mlir's arguments."""
    x_shape: tuple
    w_shape: tuple
    has_bias: bool
    dtype: torch.dtype
    stride: tuple
    padding: tuple
    dilation: tuple
    groups: int
    has_residual: bool
    relu: bool
    has_scale: bool
    vector_dtype: torch.dtype
    relu_max: float | None


def _signature(x, weight, bias, stride, padding, dilation, groups=1, residual=None,
               relu=False, scale=None, relu_max=None):
    return _Signature(tuple(x.shape), tuple(weight.shape), bias is not None, x.dtype,
                      tuple(int(s) for s in stride), tuple(int(p) for p in padding),
                      tuple(int(d) for d in dilation), int(groups), residual is not None,
                      bool(relu), scale is not None,
                      (bias if bias is not None else scale if scale is not None else x).dtype,
                      None if relu_max is None else float(relu_max))


@functools.lru_cache(maxsize=256)
def _launcher(signature: _Signature):
    from .launcher import ProgramLauncher
    mlir = kernel_mlir(*signature)
    names = [f"arg{i}" for i in range(3 + signature.has_bias + signature.has_residual +
                                      signature.has_scale)]
    # A scale is the multiplication of a folded BatchNorm or per-channel map.
    ops = (["aten.convolution"] + ["aten.mul.Tensor"] * signature.has_scale +
           ["aten.add.Tensor"] * signature.has_residual +
           ["aten.relu"] * signature.relu +
           ["aten.clamp_max"] * (signature.relu_max is not None))
    return ProgramLauncher("conv2d", mlir, names, graph="extern", ops=ops)


# The kernel reads its operands dense and row-major: Inductor lays them out
# so (a card kernel copies them where a producer's layout differs).
@torch.library.custom_op("spyre::conv2d", mutates_args=(),
                         tags=(torch.Tag.needs_contiguous_strides,))
def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
           stride: list[int], padding: list[int], dilation: list[int], groups: int = 1,
           residual: torch.Tensor | None = None, relu: bool = False,
           scale: torch.Tensor | None = None, relu_max: float | None = None) -> torch.Tensor:
    """F.conv2d(x, weight, None, stride, padding, dilation, groups) on the
    card, times `scale` per output channel if given, plus `bias` and
    `residual` if given, then ReLU'd if `relu` (and clamped to `relu_max`
    if given: ReLU6); the result is NCHW."""
    launcher = _launcher(_signature(x, weight, bias, stride, padding, dilation, groups, residual,
                                    relu, scale, relu_max))
    # The card reads and writes NCHW (`fused` gives the result eager's layout).
    out = x.new_empty(output_shape(x.shape, weight.shape, stride, padding, dilation))
    inputs = [as_read("spyre.conv2d", t) for t in (x, weight, bias, residual, scale)
              if t is not None]
    launcher(*inputs, out)
    return out


def _memory_format(x, weight):
    """The layout eager's CPU convolution gives its result: channels-last
    when the input or the weight is."""
    channels_last = any(suggest_memory_format(t) == torch.channels_last for t in (x, weight))
    return torch.channels_last if channels_last else torch.contiguous_format


@conv2d.register_fake
def _(x, weight, bias, stride, padding, dilation, groups=1, residual=None, relu=False,
      scale=None, relu_max=None):
    return x.new_empty(output_shape(x.shape, weight.shape, stride, padding, dilation))


op = torch.ops.spyre.conv2d.default


def per_dimension(values, spatial: int) -> list[int]:
    """aten.convolution's stride, padding or dilation, one value per spatial
    dimension: a single value stands for all of them (padding="valid"
    reaches aten as [0])."""
    values = [int(v) for v in values]
    return values * spatial if len(values) == 1 else values


def _one_row(x, weight, stride, padding, dilation) -> bool:
    """Whether a 1-D convolution runs as a 2-D one of one row (the implicit
    GEMM) rather than im2col: a depthwise one (one input channel per group:
    im2col's products are each group's taps by its positions, a product per
    channel; Mamba's 4-tap convolution over 8192 channels and 128 positions
    858.0 -> 67.0 us, ConvBERT's 9-tap one 51.4 -> 6.5), or one whose kernel
    is longer than its output and whose im2col matrix, written and read back,
    would move more bytes than its input, weights and output (HuBERT's
    positional convolution, 128 taps over 49 frames in 16 groups: 630.9 ->
    122.3 us; SEW's, at stride 2: 371.4 -> 107.4). The one-row plan keeps a
    row's positions on one core, so dense convolutions over long outputs keep
    im2col: Whisper's first (3 taps over 3000 frames) 129.4 us, 3126.1 as one
    row; wav2vec 2.0's first (one input channel, 10 taps at stride 5 over
    16000 samples) 37.8, 146.3 as one row; a SEW layer with its feature
    extractor's 3-tap stride-2 layers as one row too, 1922.3 us, 987.3
    without them."""
    (n, c, _), (co, per_group, taps) = x.shape, weight.shape
    if per_group == 1 and c > 1:
        return True
    positions = output_shape(x.shape, weight.shape, stride, padding, dilation)[2]
    columns = 2 * n * c * taps * positions
    return taps > positions and columns > x.numel() + weight.numel() + n * co * positions


def fused(x, weight, bias, stride, padding, dilation, transposed, groups):
    """aten.convolution as one spyre.conv2d kernel, or None when the card's
    implicit GEMM does not take it (the caller keeps the im2col lowering).
    A 1-D one runs as a 2-D one of one row where that is the cheaper
    (`_one_row`)."""
    if not transposed and weight.dim() == 3 and x.dim() == 3 and static_sizes(x, weight, bias):
        stride, padding, dilation = (per_dimension(v, 1) for v in (stride, padding, dilation))
        if not _one_row(x, weight, stride, padding, dilation):
            return None
        out = fused(x.unsqueeze(2), weight.unsqueeze(2), bias, [1, *stride], [0, *padding],
                    [1, *dilation], False, groups)
        return None if out is None else out.squeeze(2)
    if transposed or weight.dim() != 4 or x.dim() != 4:
        return None
    if x.dtype not in ELEMENT or weight.dtype != x.dtype or \
            (bias is not None and bias.dtype != x.dtype):
        return None
    if not static_sizes(x, weight, bias):
        return None
    stride, padding, dilation = (per_dimension(v, 2) for v in (stride, padding, dilation))
    signature = _signature(x, weight, bias, stride, padding, dilation, groups)
    if why_not(_launcher(signature).mlir) is not None:
        return None
    # The kernel reads and writes NCHW: a channels-last input or weight is
    # re-laid, and the result given eager's layout, here in the traced
    # graph, so that the copies run on the card and are timed.
    layout = _memory_format(x, weight)
    out = conv2d(x.contiguous(), weight.contiguous(),
                 None if bias is None else bias.contiguous(), stride, padding, dilation,
                 int(groups))
    return out.contiguous(memory_format=layout)


def fold_zero_padding(graph: torch.fx.Graph) -> None:
    """A spyre.conv2d of an explicitly zero-padded input (HF MobileNet's and
    EfficientNet's TF-style `F.pad` before a convolution, one more row and
    column after than before for a stride of 2) pads in LX instead: it reads
    the unpadded tensor with the padding added to its own, so the padded
    copy never reaches device memory (it is dead if nothing else reads it),
    where the card compiles the kernel so padded."""
    pad = torch.ops.aten.constant_pad_nd.default
    for node in list(graph.nodes):
        unfused = _unfused(node)
        if unfused is None or not isinstance(node.args[0], torch.fx.Node) or \
                node.args[0].target is not pad:
            continue
        x, weight, bias, stride, padding, dilation, groups, scale = unfused
        source, widths = x.args[0], [int(w) for w in x.args[1]]
        value = x.args[2] if len(x.args) > 2 else x.kwargs.get("value", 0)
        inner = getattr(source, "meta", {}).get("val")
        if value != 0 or len(widths) != 4 or min(widths) < 0 or \
                not isinstance(inner, torch.Tensor) or not inner.is_contiguous():
            continue
        # F.pad's widths run (left, right, top, bottom); the kernel's padding
        # (rows, columns), or (before rows, before columns, after both).
        left, right, top, bottom = widths
        after = padding[2:] if len(padding) == 4 else padding
        padded = [int(padding[0]) + top, int(padding[1]) + left,
                  int(after[0]) + bottom, int(after[1]) + right]
        if padded[:2] == padded[2:]:
            padded = padded[:2]
        if not _compiles(source, weight, bias, stride, padded, dilation, groups, scale=scale):
            continue
        node.args = (source, weight, bias, stride, padded, *node.args[5:])
        if not x.users:
            graph.erase_node(x)


def fuse_epilogues(graph: torch.fx.Graph) -> None:
    """Folds into each spyre.conv2d a residual add that alone uses its result
    (an operand of the output's shape and type) and a ReLU or ReLU6 that
    alone uses that, where the card compiles the kernel so extended: the
    result then leaves the cores once, not once per op."""
    aten = torch.ops.aten
    for node in list(graph.nodes):
        unfused = _unfused(node)
        if unfused is None:
            continue
        x, weight, bias, stride, padding, dilation, groups, scale = unfused
        value = node.meta.get("val")
        residual, chain = None, [node]
        users = list(node.users)
        if len(users) == 1 and users[0].target is aten.add.Tensor and \
                users[0].kwargs.get("alpha", 1) == 1 and len(users[0].args) == 2:
            add = users[0]
            other = add.args[1] if add.args[0] is node else add.args[0]
            other_value = getattr(other, "meta", {}).get("val")
            if other is not node and isinstance(other_value, torch.Tensor) and \
                    value is not None and other_value.shape == value.shape and \
                    other_value.dtype == value.dtype and other_value.is_contiguous():
                residual = other
                chain.append(add)
        activation = _activation(chain[-1], value)
        relu, relu_max = activation[0] if activation else (False, None)
        if activation:
            chain += activation[1]
        if len(chain) == 1:
            continue
        if not _compiles(x, weight, bias, stride, padding, dilation, groups, residual, relu,
                         scale, relu_max):
            continue
        last = chain[-1]
        with graph.inserting_before(last):
            fused = graph.call_function(op, (x, weight, bias, stride, padding, dilation, groups,
                                             residual, relu, scale,
                                             *([] if relu_max is None else [relu_max])))
        fused.meta = dict(last.meta)
        last.replace_all_uses_with(fused)
        for dead in reversed(chain):
            graph.erase_node(dead)


def _activation(node: torch.fx.Node, value):
    """((True, relu_max), the nodes) of a ReLU (relu_max None) or a ReLU6
    (clamp_min 0 then clamp_max, within a widening to f32 and the narrowing
    back, as Inductor decomposes a 16-bit ReLU6) that alone reads `node`,
    whose traced value is `value`; else None."""
    aten, convert = torch.ops.aten, torch.ops.prims.convert_element_type.default

    def only_user(n, target):
        users = list(n.users)
        return users[0] if len(users) == 1 and users[0].target is target else None

    relu = only_user(node, aten.relu.default)
    if relu is not None:
        return (True, None), [relu]
    nodes = []
    widened = only_user(node, convert)
    if widened is not None:
        nodes.append(widened)
    low = only_user(nodes[-1] if nodes else node, aten.clamp_min.default)
    if low is None or len(low.args) != 2 or low.args[1] != 0:
        return None
    nodes.append(low)
    high = only_user(low, aten.clamp_max.default)
    bound = high.args[1] if high is not None and len(high.args) == 2 else None
    if isinstance(bound, (int, float)) and 0 < bound < float("inf"):
        nodes.append(high)
    else:
        bound = None
    if widened is not None:
        narrowed = only_user(nodes[-1], convert)
        if narrowed is None or value is None or narrowed.args[1] != value.dtype:
            return None
        nodes.append(narrowed)
    return (True, None if bound is None else float(bound)), nodes


def _compiles(x, weight, bias, stride, padding, dilation, groups, residual=None, relu=False,
              scale=None, relu_max=None) -> bool:
    """Whether the card compiles spyre.conv2d of these graph nodes (their
    traced values known)."""
    operands = (x, weight, bias, residual, scale)
    meta = [getattr(a, "meta", {}).get("val") for a in operands]
    if any(m is None for m, a in zip(meta, operands) if a is not None):
        return False
    signature = _signature(meta[0], meta[1], meta[2], stride, padding, dilation, groups,
                           meta[3], relu, meta[4], relu_max)
    return why_not(_launcher(signature).mlir) is None


def _arguments(node):
    """(x, weight, bias, stride, padding, dilation, groups, residual, relu,
    scale, relu_max) of a spyre.conv2d node, the defaults for those it
    omits, else None."""
    if node.target is not op or node.kwargs:
        return None
    return (*node.args, *[1, None, False, None, None][len(node.args) - 6:])


def _unfused(node):
    """(x, weight, bias, stride, padding, dilation, groups, scale) of a
    spyre.conv2d node with no residual and no ReLU folded in yet, else
    None."""
    args = _arguments(node)
    if args is None or args[7] is not None or args[8]:
        return None
    return (*args[:7], args[9])


def pointwise_products(graph: torch.fx.Graph) -> None:
    """One image's 1x1 convolution of stride 1 without padding, as
    spyre.conv2d after the folds above (a per-channel scale, bias, residual
    and ReLU or ReLU6), becomes the product (Co x C) @ (C x H*W) of the
    image's rows: the scale multiplies the weight's rows (a Co x C op), and
    the matmul planner tiles the product with the bias, the residual and the
    activation in its epilogue. The implicit GEMM paid a convolution's bands
    and halo set-up for a product: docs/lowering.md has the measurements."""
    aten, prims = torch.ops.aten, torch.ops.prims
    for node in list(graph.nodes):
        args = _arguments(node)
        if args is None:
            continue
        x, weight, bias, stride, padding, dilation, groups, residual, relu, scale, relu_max = args
        x_val, w_val = (getattr(a, "meta", {}).get("val") for a in (x, weight))
        if not isinstance(x_val, torch.Tensor) or not isinstance(w_val, torch.Tensor) or \
                x_val.shape[0] != 1 or tuple(w_val.shape[2:]) != (1, 1) or groups != 1 or \
                set(stride) != {1} or set(padding) != {0}:
            continue
        (_, c, h, w), co, dtype = x_val.shape, w_val.shape[0], x_val.dtype
        emit = Emitter(graph, node, x_val.fake_mode)
        rows = emit(aten.reshape.default, weight, [co, c])
        if scale is not None:
            rows = emit(aten.mul.Tensor, rows, emit(aten.reshape.default, scale, [co, 1]))
            rows = emit(prims.convert_element_type.default, rows, dtype)
        columns = emit(aten.reshape.default, x, [c, h * w])
        if bias is None:
            out = emit(aten.mm.default, rows, columns)
        else:
            # In the product (addmm), not an add after it: a folded
            # BatchNorm's bias is computed by a small kernel of its own,
            # which would otherwise join the epilogue's.
            bias = emit(aten.reshape.default, bias, [co, 1])
            if bias.meta["val"].dtype != dtype:
                bias = emit(prims.convert_element_type.default, bias, dtype)
            out = emit(aten.addmm.default, bias, rows, columns)
        if residual is not None:
            out = emit(aten.add.Tensor, out, emit(aten.reshape.default, residual, [co, h * w]))
        if relu:
            out = emit(aten.relu.default, out)
        if relu_max is not None:
            out = emit(aten.clamp_max.default, out, relu_max)
        out = emit(aten.reshape.default, out, [1, co, h, w])
        node.replace_all_uses_with(out)
        graph.erase_node(node)


class Emitter:
    """Calls inserted in `graph` before `anchor`, each with its traced value
    (Inductor lowers nodes by the values they trace)."""

    def __init__(self, graph: torch.fx.Graph, anchor: torch.fx.Node, fake_mode):
        self.graph, self.anchor, self.fake_mode = graph, anchor, fake_mode

    def __call__(self, target, *args, **kwargs):
        with self.graph.inserting_before(self.anchor):
            node = self.graph.call_function(target, args, kwargs)
        values = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args]
        with self.fake_mode:
            node.meta["val"] = target(*values, **kwargs)
        return node
