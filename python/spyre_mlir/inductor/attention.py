"""Fused attention: scaled_dot_product_attention as one `spyre.attention`
kernel, whose scores and probabilities never reach device memory
(lib/Dialect/Spyre/Transforms/AttentionPlan.cpp).

Inductor's scheduler sees attention as one extern call, as it sees a GPU's
flash-attention library call: `torch.ops.spyre.attention`, whose
implementation runs the kernel on the card through a ProgramLauncher (so
each run is counted with its simulated cycles, not as a CPU fallback). The
attention decomposition (decompositions.flash_attention) calls it through
`fused` when `compiles` says the card takes the shapes; otherwise attention
is decomposed into products and a softmax, as before.
"""

from __future__ import annotations

import functools
import math

import torch

from .extern_kernels import ELEMENT, as_read, buffer_type, kernel, static_sizes, why_not


def _stored_shape(q_shape, v_shape, batch: int) -> tuple:
    """The shape the kernel writes: (heads, Lq, Dv), or with `batch`
    (batch, Lq, heads / batch, Dv), each query row with its heads, as a model
    reads it back."""
    heads, length, dv = q_shape[0], q_shape[1], v_shape[2]
    return (heads, length, dv) if not batch else (batch, length, heads // batch, dv)


def _shape(t: torch.Tensor) -> tuple:
    """An operand's shape as the kernel sees it, (heads, L, D): a (batch,
    heads, L, D) operand has its batches' heads one after the other."""
    if t.dim() not in (3, 4):
        raise ValueError("spyre.attention takes q, k and v as (heads, L, D) or (batch, heads, "
                         f"L, D), not a tensor of shape {tuple(t.shape)}")
    return tuple(t.shape) if t.dim() == 3 else (t.shape[0] * t.shape[1], *t.shape[2:])


def _layout(t: torch.Tensor) -> tuple | None:
    """How the kernel reads a (heads, L, D) or (batch, heads, L, D) operand
    in place: None when it is row-major, else (heads, L, D, head stride, row
    stride), with (heads per batch, batch stride) after them for a batch
    whose stride is not a whole number of heads; its rows' elements are
    consecutive (a projection's heads viewed from its rows: `query_layout`
    of spyre.attention). `READ_AS_COPY` when the kernel cannot (a row's
    elements apart)."""
    shape = _shape(t)  # the rank checked first
    if t.is_contiguous():
        return None
    *_, length, size = t.shape
    if size > 1 and t.stride(-1) != 1:
        return READ_AS_COPY
    heads = t.shape[-3]
    # A dimension of one element has no stride that matters.
    strides = (t.stride(-3) if heads > 1 else 0, t.stride(-2) if length > 1 else 0)
    if t.dim() == 3 or t.shape[0] == 1 or t.stride(0) == heads * strides[0]:
        return (*shape, *strides)
    return (*shape, *strides, heads, t.stride(0))


#: `_layout` of an operand the kernel reads only after a dense copy.
READ_AS_COPY = "copy"


def _span(layout) -> int:
    """The elements from a view's first to its last, as spyre.attention's
    verifier counts them."""
    heads, length, size, head_stride, row_stride = layout[:5]
    if not (heads and length and size):
        return 0
    per_batch, batch_stride = layout[5:] or (heads, 0)
    last_head = (heads - 1) // per_batch * batch_stride + (heads - 1) % per_batch * head_stride
    return last_head + (length - 1) * row_stride + size


def kernel_mlir(q_shape, k_shape, v_shape, mask_shape, dtype: torch.dtype,
                mask_dtype: torch.dtype | None, scale: float, causal: bool,
                batch: int = 0, layouts=(None, None, None)) -> str:
    """The kernel-level IR of one attention: q (heads, Lq, D), k (kv_heads,
    Lk, D), v (kv_heads, Lk, Dv), each row-major or read through its
    `_layout`; an optional additive mask (batch, 1 or Lq, Lk); out as
    `_stored_shape`."""
    element = ELEMENT[dtype]
    out_shape = _stored_shape(q_shape, v_shape, batch)
    types = [buffer_type((_span(layout),) if layout else shape, element)
             for shape, layout in zip((q_shape, k_shape, v_shape), layouts)]
    if mask_shape is not None:
        types.append(buffer_type(mask_shape, ELEMENT[mask_dtype]))
    views = ", ".join(f"{name}_layout = array<i64: {', '.join(map(str, layout))}>"
                      for name, layout in zip(("key", "query", "value"),
                                              (layouts[1], layouts[0], layouts[2]))
                      if layout)
    return kernel("attention", types, buffer_type(out_shape, element),
                  f" scale = {float(scale)!r}{' causal' if causal else ''}"
                  + (f" {{{views}}}" if views else ""))


def _signature(q, k, v, mask, scale, causal, batch):
    shapes = [_shape(t) for t in (q, k, v)]  # the ranks checked first
    mask_part = None if mask is None else (tuple(mask.shape), mask.dtype)
    # An operand read after a copy is row-major by then.
    layouts = tuple(None if layout == READ_AS_COPY else layout
                    for layout in map(_layout, (q, k, v)))
    return (*shapes, mask_part, q.dtype, float(scale),
            bool(causal), int(batch), layouts)


@functools.lru_cache(maxsize=256)
def _launcher(signature):
    from .launcher import ProgramLauncher
    q_shape, k_shape, v_shape, mask_part, dtype, scale, causal, batch, layouts = signature
    mask_shape, mask_dtype = mask_part if mask_part is not None else (None, None)
    mlir = kernel_mlir(q_shape, k_shape, v_shape, mask_shape, dtype, mask_dtype, scale, causal,
                       batch, layouts)
    names = [f"arg{i}" for i in range(4 + (mask_part is not None))]
    return ProgramLauncher("attention", mlir, names, graph="extern",
                           ops=["aten.scaled_dot_product_attention"])


def compiles(q, k, v, mask, scale, causal, batch=0) -> str | None:
    """None if the card runs this attention (compiling it now, so the run
    finds it in the kernel cache), else why not."""
    if q.dtype not in ELEMENT or k.dtype != q.dtype or v.dtype != q.dtype:
        return f"attention on {q.dtype}, {k.dtype}, {v.dtype}"
    if mask is not None and mask.dtype not in ELEMENT:
        return f"a mask of {mask.dtype}"
    if not static_sizes(q, k, v, mask):
        return "dynamic sizes"
    if not math.isfinite(scale):
        return f"scale {scale}"
    return why_not(_launcher(_signature(q, k, v, mask, scale, causal, batch)).mlir)


def _output(q, v, batch, empty):
    """The output, and the buffer the kernel writes (`_stored_shape`): with
    `batch`, the output (batch, heads / batch, Lq, Dv) is a view of it whose
    transpose(1, 2) (a model merging its heads) is contiguous and needs no
    copy."""
    stored = empty(_stored_shape(_shape(q), _shape(v), batch))
    return (stored.permute(0, 2, 1, 3) if batch else stored), stored


@torch.library.custom_op("spyre::attention", mutates_args=())
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
              scale: float, causal: bool, batch: int = 0) -> torch.Tensor:
    """softmax(scale * q @ k^T + mask) @ v per head on the card: q (heads,
    Lq, D), k and v (kv_heads, Lk, D / Dv), each possibly with its heads in
    batches, (batch, heads / batch, L, D), query head h attending with
    key/value head h // (heads // kv_heads), mask (batch, 1 or Lq, Lk) added
    for head h from batch h // (heads // batch); `causal` masks key j for
    query i when j > i. Rows with every key masked give zeros. The output is
    (heads, Lq, Dv), or with `batch` > 0 (batch, heads / batch, Lq, Dv) laid
    out as (batch, Lq, heads / batch, Dv) (`_output`)."""
    # Operands the kernel reads in place (`_layout`) are bound as they are;
    # only the others are re-laid.
    q, k, v = (as_read("spyre.attention", t).reshape(_shape(t)) if _layout(t) == READ_AS_COPY
               else t for t in (q, k, v))
    launcher = _launcher(_signature(q, k, v, mask, scale, causal, batch))
    out, stored = _output(q, v, batch,
                          lambda shape: torch.empty(shape, dtype=q.dtype, device=q.device))
    inputs = [q, k, v]
    if mask is not None:
        inputs.append(as_read("spyre.attention", mask))
    launcher(*inputs, stored)
    return out


@attention.register_fake
def _(q, k, v, mask, scale, causal, batch=0):
    return _output(q, v, batch, q.new_empty)[0]


op = torch.ops.spyre.attention.default


def _operands_in_place(node, *args, **kwargs):
    """Inductor's layout constraint for `op`: each operand with the strides
    it had when traced (which `compiles` checked), as for any custom op.
    Views of one unrealized result among q, k and v (the heads of one
    projection, with its bias add) are views of that result computed once:
    by default Inductor computes each view into a buffer of its own."""
    from torch._inductor import ir
    from torch._inductor.lowering import constrain_to_fake_tensor
    bases = [arg.data.unwrap_view() if isinstance(arg, ir.TensorBox) and
             isinstance(arg.data, ir.BaseView) else None for arg in args[:3]]
    for base in bases:
        if isinstance(base, ir.StorageBox) and sum(b is base for b in bases) > 1:
            base.realize()
    fakes = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in node.args]
    args = tuple(constrain_to_fake_tensor(arg, fake) if isinstance(fake, torch.Tensor) else arg
                 for arg, fake in zip(args, fakes)) + args[len(fakes):]
    return args, kwargs


def register_lowering() -> None:
    """`op` as an extern call (Inductor's fallback) with `_operands_in_place`."""
    from torch._inductor import lowering
    if op not in lowering.lowerings:
        lowering.make_fallback(op, layout_constraint=_operands_in_place, warn=False)


def _heads(t: torch.Tensor) -> torch.Tensor:
    """(batch, heads, L, D) as (batch x heads, L, D) where that is a view;
    else as it is, a batch of strided heads the kernel reads in place
    (`_layout`), rather than a copy."""
    batch, heads = t.shape[:2]
    if batch == 1 or heads == 1 or t.stride(0) == heads * t.stride(1):
        return t.view(_shape(t))
    return t


def fused(query, key, value, attn_mask, is_causal: bool, scale: float):
    """scaled_dot_product_attention of (batch, heads, L, D) tensors as one
    spyre.attention kernel, or None when the card does not take it (the
    caller decomposes it). A boolean mask becomes an additive one (0 or
    -inf); heads are flattened into the batch."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        return None
    b, h, length, _ = query.shape
    kv_heads, keys = key.shape[1], key.shape[2]
    if key.shape[0] != b or value.shape[:3] != key.shape[:3] or h % kv_heads:
        return None
    mask = None
    if attn_mask is not None:
        if attn_mask.dim() > 4:
            return None
        m = attn_mask.reshape((1,) * (4 - attn_mask.dim()) + tuple(attn_mask.shape))
        if m.dtype == torch.bool:
            m = torch.where(m, 0.0, -math.inf).to(query.dtype)
        mb, mh, mrows, _ = m.shape
        if mb not in (1, b) or mh not in (1, h) or mrows not in (1, length):
            return None
        if mh == h and mb == 1 and b > 1:
            mb = b
        m = m.expand(mb, mh, mrows, keys)
        mask = m.reshape(mb * mh, mrows, keys)
    group = h // kv_heads
    # One query row per head (decoding) with a mask that does not depend on
    # the head: the query heads sharing a key/value head are the rows of one
    # block, which reads that head's keys and values once, not once each.
    stacked = length == 1 and group > 1 and not is_causal and \
        (mask is None or mask.shape[0] in (1, b))
    if stacked:
        q3 = query.reshape(b * kv_heads, group, query.shape[-1])
    else:
        q3 = _heads(query)
    k3, v3 = _heads(key), _heads(value)
    # The result is laid out as the query (as the CPU kernel's): a query
    # whose rows hold their heads (a model's projection viewed as heads,
    # then transposed) gets an output written that way, which the model's
    # transpose(1, 2) that merges the heads then reads without a copy.
    rows_hold_heads = length > 1 and not stacked and h > 1 and \
        query.stride(1) < query.stride(2)
    batch = b if rows_hold_heads else 0
    # The kernel reads a projection's heads where they are, strided views of
    # its rows (`_layout`). An operand it cannot read so is copied here, in
    # the traced graph, so that the copy runs on the card and is timed.
    q3, k3, v3 = (t.contiguous() if _layout(t) == READ_AS_COPY else t for t in (q3, k3, v3))
    if mask is not None:
        mask = mask.contiguous()
    if compiles(q3, k3, v3, mask, scale, is_causal, batch) is not None:
        # Read in place, each operand spans its whole projection: a batch
        # of large ones can span more than a core addresses, where dense
        # copies do not.
        dense = [t.contiguous() for t in (q3, k3, v3)]
        if all(_layout(t) is None for t in (q3, k3, v3)) or \
                compiles(*dense, mask, scale, is_causal, batch) is not None:
            return None
        q3, k3, v3 = dense
    out = attention(q3, k3, v3, mask, scale, is_causal, batch)
    return out if batch else out.reshape(b, h, length, value.shape[-1])
