"""Device-conditional lowerings: while a spyre compile runs, matrix products
become Inductor reductions (a sum over K of products) instead of extern
kernel calls, so that they reach our Scheduling; export.py recognises them
and emits `spyre.matmul`. Outside a spyre compile the original lowerings run.
"""

from __future__ import annotations

import math
from unittest.mock import patch

import torch
from torch._inductor import ir
from torch._inductor.lowering import lowerings
from torch._inductor.virtualized import V, ops

from ..simulator import default_arch
from . import random as _random
from .convolution import per_dimension
from .extern_kernels import ELEMENT
from .state import active as _compiling_for_spyre


def active(*args) -> bool:
    """Our lowerings apply in a spyre compile of CPU tensors and to tensors on
    the spyre device."""
    if _compiling_for_spyre():
        return True
    for a in args:
        get_device = getattr(a, "get_device", None)
        device = get_device() if get_device else None
        if device is not None and device.type == "spyre":
            return True
    return False

aten = torch.ops.aten


def _matrix(x):
    """`x` as a buffer the matrix unit can read: realized (not a pointwise
    computation inlined into the product's body) and, per batch, a dense
    matrix stored by rows or by columns; anything else is copied first."""
    x = ir.ExternKernel.realize_input(x)
    try:
        size = [int(s) for s in x.get_size()]
        stride = [int(s) for s in x.get_stride()]
        offset = int(x.get_layout().offset)
    except (TypeError, AttributeError, NotImplementedError):
        return ir.ExternKernel.require_contiguous(x)
    rows, cols = size[-2], size[-1]
    dense = (stride[-1] == 1 and stride[-2] == cols) or (stride[-2] == 1 and stride[-1] == rows)
    if len(size) == 3:
        dense = dense and stride[0] == rows * cols
    if dense and offset == 0:
        return x
    return ir.ExternKernel.require_contiguous(x)


def _product(a, b, batched: bool, dtype=None):
    """a @ b summed in f32 and stored as `dtype` (default: a's type)."""
    *lead, m, k = a.get_size()
    n = b.get_size()[-1]
    dtype = dtype or a.get_dtype()
    # The card's element types only: the matrix unit multiplies 16-bit
    # values and sums in f32, which would lose f64's precision and would not
    # wrap around as integer products do (int8 results were wrong). Others
    # take Inductor's lowering, on the CPU and counted.
    if any(t not in ELEMENT for t in (a.get_dtype(), b.get_dtype(), dtype)):
        raise NotImplementedError(f"a {a.get_dtype()} product")
    known_zero = V.graph.sizevars.statically_known_equals
    # A sum of no products, or no result at all (whose zero-size operands
    # Inductor cannot make contiguous).
    if known_zero(k, 0) or any(known_zero(s, 0) for s in (*lead, m, n)):
        return lowerings[aten.full.default]([*lead, m, n], 0, dtype=dtype,
                                            device=a.get_device())
    a, b = _matrix(a), _matrix(b)
    a_load, b_load = a.make_loader(), b.make_loader()

    def inner_fn(index, reduction_index):
        (r,) = reduction_index
        *bi, i, j = index
        x = ops.to_dtype(a_load([*bi, i, r]), torch.float32)
        y = ops.to_dtype(b_load([*bi, r, j]), torch.float32)
        return ops.mul(x, y)

    result = ir.Reduction.create(
        device=a.get_device(), dst_dtype=dtype, src_dtype=torch.float32,
        inner_fn=inner_fn, ranges=[*lead, m, n], reduction_ranges=[k], reduction_type="sum")
    result.realize()  # as Inductor's own reductions: a buffer, not an inlinable loader
    return result


def _scaled(x, factor):
    return x if factor == 1 else lowerings[aten.mul.Tensor](x, factor)


def mm(a, b):
    return _product(a, b, False)


def bmm(a, b):
    return _product(a, b, True)


# mm and bmm with an output type (16-bit operands, f32 result): the matrix
# unit multiplies 16-bit values and sums in f32, so the operands need no f32
# copy in device memory (decompositions.py asks for them).
def mm_dtype(a, b, out_dtype):
    return _product(a, b, False, out_dtype)


def bmm_dtype(a, b, out_dtype):
    return _product(a, b, True, out_dtype)


def addmm(bias, a, b, *, beta=1, alpha=1):
    out = _scaled(_product(a, b, False), alpha)
    return out if beta == 0 else lowerings[aten.add.Tensor](out, _scaled(bias, beta))


def baddbmm(bias, a, b, *, beta=1, alpha=1):
    out = _scaled(_product(a, b, True), alpha)
    return out if beta == 0 else lowerings[aten.add.Tensor](out, _scaled(bias, beta))


def _zeros(like, size):
    return lowerings[aten.full.default](size, 0.0, dtype=like.get_dtype(), device=like.get_device())


def _pad_by_concat(x, pads, value=0.0):
    """Constant padding by concatenation: each piece is copied into its slice
    of the result with plain stores, where Inductor's padded loads would need
    masks. `pads` is (before, after) per dimension from the last one, as
    torch.nn.functional.pad takes them."""
    size = [int(s) for s in x.get_size()]
    for k, (before, after) in enumerate(pads):
        dim = len(size) - 1 - k
        if before < 0 or after < 0:
            raise NotImplementedError("cropping")
        pieces = []
        for width in (before, after):
            shape = size[:dim] + [width] + size[dim + 1:]
            pieces.append(lowerings[aten.full.default](shape, value, dtype=x.get_dtype(),
                                                       device=x.get_device()) if width else None)
        parts = [p for p in (pieces[0], x, pieces[1]) if p is not None]
        if len(parts) > 1:
            x = ir.TensorBox(ir.ConcatKernel.create(parts, dim))
            size[dim] += before + after
    return x


def _pad_or_crop(x, pairs):
    """x padded with zeros (positive) or cropped (negative) by (before,
    after) per spatial dimension, the first spatial dimension being 2."""
    for k, (before, after) in enumerate(pairs):
        dim = 2 + k
        size = int(x.get_size()[dim])
        if before < 0 or after < 0:
            x = lowerings[aten.slice.Tensor](x, dim, max(-before, 0), size + min(after, 0))
    pads = [(max(b, 0), max(a, 0)) for b, a in reversed(pairs)]
    return _pad_by_concat(ir.ExternKernel.require_contiguous(x), pads)


def constant_pad_nd(x, pad, value=0.0):
    pairs = [(int(pad[i]), int(pad[i + 1])) for i in range(0, len(pad), 2)]
    return _pad_by_concat(x, pairs, value)


def _interleaved(x, strides):
    """x with stride - 1 zeros after each element along each spatial
    dimension (what a transposed convolution convolves), by concatenating
    zeros along a new last dimension and folding it in."""
    for k, s in enumerate(strides):
        if s == 1:
            continue
        dim = 2 + k
        size = [int(d) for d in x.get_size()]
        x = lowerings[aten.unsqueeze.default](x, dim + 1)
        x = _pad_by_concat(ir.ExternKernel.require_contiguous(x),
                           [(0, 0)] * (len(size) - dim - 1) + [(0, s - 1)])
        x = lowerings[aten.reshape.default](x, size[:dim] + [size[dim] * s] + size[dim + 1:])
    return x


def _direct_weight(weight, groups):
    """A transposed convolution's weight (in, out / groups, *k) as the weight
    of the direct convolution that computes it: (out, in / groups, *k),
    flipped along every spatial dimension."""
    cin, cog, *ks = [int(s) for s in weight.get_size()]
    cig = cin // groups
    load = weight.make_loader()

    def flipped(index):
        g, o, i, *k = index
        return load([g * cig + i, o, *[n - 1 - j for n, j in zip(ks, k)]])

    w = ir.Pointwise.create(device=weight.get_device(), dtype=weight.get_dtype(),
                            inner_fn=flipped, ranges=[groups, cog, cig, *ks])
    w.realize()
    return lowerings[aten.reshape.default](w, [groups * cog, cig, *ks])


def convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """1-, 2- and 3-D convolutions, grouped or not, as im2col and a matrix
    product on the matrix unit (a batch of products, one per group). A
    transposed convolution is the direct convolution, with the flipped
    kernel, of its input with zeros interleaved."""
    spatial = len(weight.get_size()) - 2
    if spatial not in (1, 2, 3):
        raise NotImplementedError(f"{spatial}-D convolution")
    stride, padding, dilation, output_padding = (
        per_dimension(v, spatial) for v in (stride, padding, dilation, output_padding))
    groups = int(groups)
    if transposed:
        ks = [int(k) for k in weight.get_size()[2:]]
        x = _interleaved(ir.ExternKernel.require_contiguous(x), stride)
        # The interleaving left stride - 1 zeros after the last element too.
        pairs = [(d * (k - 1) - p, d * (k - 1) - p + int(o) - (s - 1))
                 for k, s, p, d, o in zip(ks, stride, padding, dilation, output_padding)]
        weight, stride = _direct_weight(weight, groups), [1] * spatial
    else:
        pairs = [(p, p) for p in padding]
    ks = [int(k) for k in weight.get_size()[2:]]
    padded = [int(i) + b + a for i, (b, a) in zip(x.get_size()[2:], pairs)]
    out = [(i - d * (k - 1) - 1) // s + 1 for i, k, s, d in zip(padded, ks, stride, dilation)]
    if min(out) <= 0:
        raise NotImplementedError("an empty convolution")
    # Unit strides: the columns of one tap are a single run of the flattened
    # padded input, `out[0]` rows of the padded width (and depth) long, so the
    # card gathers one long row per tap and input channel; the product then
    # has `padded - out` columns too many in each inner spatial dimension,
    # dropped afterwards. The last taps' runs reach past the end of the
    # padded image by up to `overrun` elements: extra rows of padding at the
    # end of the first spatial dimension keep them inside the buffer.
    wide = spatial >= 2 and all(s == 1 for s in stride)
    pitch = [math.prod(padded[i + 1:]) for i in range(spatial)]
    if wide:
        # A run is rounded up to whole sticks, so that the columns' rows
        # start stick aligned for the product (int64 is int32 on the card).
        stick = default_arch().stick_bytes // min(x.get_dtype().itemsize, 4)
        run = -(-out[0] * pitch[0] // stick) * stick
        overrun = (sum((k - 1) * d * q for k, d, q in zip(ks[1:], dilation[1:], pitch[1:]))
                   + run - out[0] * pitch[0])
        pairs = [(pairs[0][0], pairs[0][1] + -(-overrun // pitch[0])), *pairs[1:]]
    x = _pad_or_crop(ir.ExternKernel.require_contiguous(x), pairs)
    n, c, *size = [int(s) for s in x.get_size()]
    co, cig = [int(s) for s in weight.get_size()[:2]]
    cog = co // groups

    # The columns are laid out (groups, taps, batch, points): the output
    # positions, along which the input is read at a fixed stride, are
    # innermost, so the card gathers rows of whole output widths rather than
    # rows of one kernel width, and the product (cog x taps) @ (taps x points)
    # comes out with the channels outermost, as NCHW wants them.
    if wide:
        load = lowerings[aten.reshape.default](x, [n, c, math.prod(size)]).make_loader()
        per_image = [run]

        def column(index):
            g, ch, *rest = index
            k, (b, p) = rest[:spatial], rest[spatial:]
            return load([b, g * cig + ch,
                         sum(j * d * q for j, d, q in zip(k, dilation, pitch)) + p])
    else:
        load = x.make_loader()
        per_image = out

        def column(index):
            g, ch, *rest = index
            k, (b, *o) = rest[:spatial], rest[spatial:]
            return load([b, g * cig + ch, *[i * s + j * d for i, j, s, d in
                                            zip(o, k, stride, dilation)]])

    cols = ir.Pointwise.create(device=x.get_device(), dtype=x.get_dtype(), inner_fn=column,
                               ranges=[groups, cig, *ks, n, *per_image])
    cols.realize()
    points, taps = n * math.prod(per_image), cig * math.prod(ks)
    w = lowerings[aten.reshape.default](weight, [groups, cog, taps])
    if groups == 1:
        cols = lowerings[aten.reshape.default](cols, [taps, points])
        result = _product(lowerings[aten.reshape.default](w, [cog, taps]), cols, False)
    else:
        cols = lowerings[aten.reshape.default](cols, [groups, taps, points])
        result = _product(w, cols, True)  # (groups, cog, points)
    if wide:
        result = lowerings[aten.slice.Tensor](
            lowerings[aten.reshape.default](result, [groups, cog, n, run]), 3, 0,
            out[0] * pitch[0])
        result = lowerings[aten.reshape.default](result, [groups, cog, n, out[0], *padded[1:]])
        for i in range(1, spatial):
            result = lowerings[aten.slice.Tensor](result, 3 + i, 0, out[i])
    else:
        result = lowerings[aten.reshape.default](result, [groups, cog, n, *out])
    if bias is not None:
        result = lowerings[aten.add.Tensor](
            result, lowerings[aten.reshape.default](bias, [groups, cog, 1, *[1] * spatial]))
    if n > 1:
        result = lowerings[aten.permute.default](  # (n, groups, cog, *out)
            result, [2, 0, 1, *range(3, spatial + 3)])
    return lowerings[aten.reshape.default](result, [n, co, *out])


def _realized(original):
    """The original lowering, with its result realized into a buffer: an
    indirect load (embedding) or an iota then reaches our Scheduling as a node
    of its own rather than inlined into consumers, where the card's gather
    could not express it."""
    def lower(*args, **kwargs):
        result = original(*args, **kwargs)
        result.realize()
        return result
    return lower


def _dense_indices(original):
    """Embedding, realized, with its indices and its table dense buffers
    (copied if the indices are, say, broadcast over the batch, or if the
    table is computed or a permuted view, as the keys a static KV cache
    gathers from): the card's gather reads one index per row it gathers, and
    whole rows of a stored table."""
    lower = _realized(original)

    def embedding(weight, indices, *args, **kwargs):
        return lower(ir.ExternKernel.require_contiguous(weight),
                     ir.ExternKernel.require_contiguous(indices), *args, **kwargs)
    return embedding


#: Ops that make a broadcast producer worth computing once: the SFU takes
#: a pass per op per element, and Inductor inlines a producer into every
#: element of a consumer that broadcasts it. Rotary embeddings' cos and sin
#: of (position x frequency) were evaluated once per head, in every layer.
RECOMPUTED_AT_A_COST = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sigmoid", "tanh", "erf", "erfc",
    "erfinv", "cos", "sin", "tan", "acos", "asin", "atan", "atan2", "cosh", "sinh", "acosh",
    "asinh", "atanh", "pow", "sqrt", "rsqrt", "lgamma", "digamma"})


def _bytes_read(name, at_most, unknown):
    """Bytes of buffer `name` that a loop over `at_most` elements can read
    (`unknown` if Inductor does not know the buffer)."""
    buffer = V.graph.try_get_buffer(name)
    if buffer is None:
        return unknown
    numel = V.graph.sizevars.optimization_hint(ir.sympy_product(buffer.get_size()), fallback=0)
    return min(numel, at_most) * buffer.get_dtype().itemsize


def _realize_broadcast(original):
    """StorageBox.should_realize_on_reuse, also realizing (in a spyre compile)
    a pointwise producer that a consumer broadcasts (loop reuse, not graph
    fanout, so softmax's exp stays inlined into its sum and its division)
    when it evaluates a transcendental and evaluating it again for every
    broadcast copy costs the card's SFUs more than the buffer's round trip
    through device memory (less the loads of the producer's inputs that the
    round trip saves). The buffer holds the producer's dtype, as eager's
    tensor does."""
    def should_realize_on_reuse(self, users, *, graph_reuse=True):
        if original(self, users, graph_reuse=graph_reuse):
            return True
        if graph_reuse or users < 2 or not isinstance(self.data, ir.Pointwise) or \
                not active(self.data):
            return False
        # A value per row (a norm's rsqrt of the row's mean) is computed once
        # per row by the card's row tiles already.
        size = self.data.get_size()
        if not size or V.graph.sizevars.statically_known_equals(size[-1], 1):
            return False
        count = self.data.inner_fn_opcount()
        if not count.used_ops & RECOMPUTED_AT_A_COST:
            return False
        numel = V.graph.sizevars.optimization_hint(ir.sympy_product(size), fallback=0)
        arch = default_arch()
        # Loads are the DMA engine's work, not the SFUs'. The SFU computes in
        # f32: an op streams an f32 operand and its f32 result through LX at
        # least (a 16-bit table's rows streamed two bytes an element less and
        # ran faster than the card does).
        ops = count.num_ops - len(count.read_buffers)
        costly = len(count.used_ops & RECOMPUTED_AT_A_COST)
        f32_bytes = 2 * 4
        cycles_per_element = (ops - costly) / arch.sfu_rate(f32_bytes, False, False) + \
            costly / arch.sfu_rate(f32_bytes, False, True)
        recomputed = (users - 1) * numel * cycles_per_element / arch.cores
        # Either way the consumer's tiles (which do not span the broadcast
        # dimension) load something per broadcast copy: the buffer, realized;
        # the producer's own inputs, inlined (a rotary table's few
        # frequencies, or a tensor as large as the buffer).
        realized_bytes = numel * self.data.get_dtype().itemsize
        inputs_bytes = sum(_bytes_read(name, numel, realized_bytes)
                           for name in dict.fromkeys(count.read_buffers))
        # Realized: written once, its inputs read once, in a phase of its own.
        extra_traffic = realized_bytes + inputs_bytes + \
            users * (realized_bytes - inputs_bytes)
        round_trip = 2 * arch.dma_latency_cycles + extra_traffic / arch.device_bytes_per_cycle
        return recomputed > round_trip
    return should_realize_on_reuse


OURS = {aten.mm: mm, aten.bmm: bmm, aten.addmm: addmm, aten.baddbmm: baddbmm,
        aten.convolution: convolution, aten.constant_pad_nd: constant_pad_nd}
#: Realized rather than inlined into consumers: lookups and iotas (see
#: _realized), and slice/select scatters (`pe[:, :h] = sin(...)`), whose
#: result is a choice by index range: inlined into a reduction over that
#: dimension (Pegasus-X's sinusoidal positions into a LayerNorm, ViT-MAE's
#: mask into a one-hot gather) it is an index affine only piecewise in a
#: reduction loop, which the card's generics cannot split.
REALIZED = [aten.embedding, aten.index, aten.index_select, torch.ops.prims.iota, aten.arange,
            aten.slice_scatter, aten.select_scatter]


def _reads_only_where_it_writes(dst, src) -> bool:
    """Whether `src`, written into `dst`, reads each element of `dst` only
    at the index it writes (a one-hot row update does; `x.flip(0) + x` does
    not, and computed in place it would read elements already written)."""
    from torch._inductor.dependencies import MemoryDep, extract_read_writes
    name, indexer = dst.get_name(), dst.get_layout().make_indexer()
    # Only the indices into `dst` (an input: its layout is fixed) are
    # compared; other buffers' layouts may still be flexible, and their
    # indices are read as Inductor's own get_reads does.
    try:
        loader = src.make_loader()
        with patch.object(ir.FlexibleLayout, "allow_indexing", True):
            rw = extract_read_writes(lambda index: ops.store(name, indexer(index), loader(index)),
                                     src.get_size())
    except AssertionError:  # Inductor could not tell what it reads: unknown
        return False
    writes = [d for d in rw.writes if d.name == name]
    return len(writes) == 1 and all(
        isinstance(d, MemoryDep) and d.index == writes[0].index and
        d.var_names == writes[0].var_names for d in rw.reads if d.name == name)


def _computable_elsewhere(computed):
    """What `computed` (a StorageBox's data) computes, if it may still be
    computed into another buffer's storage: a pointwise node not realized
    yet, which runs where the copy_ is (after every reader of the input's
    old value, which realize_into realizes first). Not a buffer already
    realized, which runs where it was made: Gemma 2's rolled sliding-window
    cache, updated after it was computed, was read by the attention before
    the new key was written into it; and a graph that swaps two inputs
    through a computed value (`t = c * 2; c.copy_(a); a.copy_(t)`) wrote a
    before c's copy read it."""
    return computed if isinstance(computed, ir.Pointwise) else None


def _written_in_place(original):
    """`copy_(input, new)` where nothing else reads `new` (inplace_updates.py
    arranges that for updated graph inputs): `new` is computed into the
    input's storage where that reads no element it has already written.
    Inductor's own lowering computes it into a buffer of its own and copies
    that (it cannot know that no later mutation of the input is visible to
    other readers of `new`: here there are none)."""
    def lower(dst, src, non_blocking=False):
        node = V.graph.current_node
        args = node.args if node is not None else ()
        new = args[1] if len(args) == 2 else None
        data = src.data if isinstance(src, ir.TensorBox) else src
        if not isinstance(new, torch.fx.Node) or len(new.users) != 1 or \
                not isinstance(args[0], torch.fx.Node) or args[0].op != "placeholder" or \
                not isinstance(data, ir.StorageBox) or not isinstance(dst, ir.TensorBox) or \
                not dst.data.is_input_buffer() or \
                list(src.get_size()) != list(dst.get_size()) or \
                src.get_dtype() != dst.get_dtype() or src.get_device() != dst.get_device():
            return original(dst, src, non_blocking)
        body = _computable_elsewhere(data.data)
        if body is None or not _reads_only_where_it_writes(dst, body):
            return original(dst, src, non_blocking)
        # The input's other pending readers first: realize_into realizes
        # every reader of the input in the order they were made, `new` too
        # if it reads the input (c.add_(c) beside t = p + c): computed into
        # the input before t read it, t would read the sum.
        for user in V.graph.name_to_users.get(dst.get_name(), ()):
            if getattr(user, "data", None) is not data:
                user.realize()
        ir.MutationLayoutSHOULDREMOVE.realize_into(data, dst.data, unsafe_alias=True)
        return dst
    return lower


def _eager_floor_division(original):
    """Floor division of floating-point values as eager computes it (from
    fmod, c10's div_floor_floating: body.op_floordiv), not as Inductor's
    floor(a / b), which differs where the quotient is an infinity or
    rounds to zero: 1 // -inf is -1 in eager (Python's), -0 as floor(a / b);
    inf // 2 is nan, not inf."""
    from torch._inductor.lowering import floordiv, is_integer_type, transform_args
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND

    def lower(a, b, rounding_mode=None):
        if rounding_mode != "floor" or (is_integer_type(a) and is_integer_type(b)):
            return original(a, b, rounding_mode=rounding_mode)
        (a, b), _ = transform_args([a, b], {}, True, ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT,
                                   False)
        return floordiv(a, b)
    return lower


_installed = False


def _dispatch(key, make_ours) -> None:
    """Replaces the lowering of `key` by one that runs ours (built from the
    original) for spyre, else the original."""
    original = lowerings.get(key)
    if original is None:
        return
    ours = make_ours(original)

    def dispatch(*args, **kwargs):
        if active(*args):
            try:
                return ours(*args, **kwargs)
            except NotImplementedError:
                pass  # Inductor's lowering; its extern call is counted as a fallback
        return original(*args, **kwargs)
    lowerings[key] = dispatch


def install() -> None:
    """Wraps Inductor's lowerings of the ops in OURS and REALIZED, and its
    choice of what to realize on reuse (idempotent)."""
    global _installed
    if _installed:
        return
    for packet, ours in OURS.items():
        for key in (packet, packet.default):
            _dispatch(key, lambda original, ours=ours: ours)
    for key, ours in ((aten.mm.dtype, mm_dtype), (aten.bmm.dtype, bmm_dtype)):
        _dispatch(key, lambda original, ours=ours: ours)
    for key, ours in _random.lowerings().items():  # random numbers in loop bodies
        _dispatch(key, lambda original, ours=ours: ours)
    _dispatch(aten.copy_.default, _written_in_place)
    for key in (aten.div.Tensor_mode, aten.div.Scalar_mode):
        _dispatch(key, _eager_floor_division)
    for packet in REALIZED:
        for key in [packet, *(getattr(packet, o) for o in packet.overloads())]:
            _dispatch(key, _dense_indices if packet is aten.embedding else _realized)
    ir.StorageBox.should_realize_on_reuse = _realize_broadcast(
        ir.StorageBox.should_realize_on_reuse)
    _installed = True
