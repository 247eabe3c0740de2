"""Decompositions used in spyre compiles, added to Inductor's own table (so
that its FX graph cache still knows how to key the table). Each one applies
to spyre compiles and spyre tensors only and otherwise does what the table
did before (decline, or the original decomposition)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import attention, convolution, linalg, losses, scans, scatters, searches, state
from . import causal_masks, experts, folds, host_checks, pooling
from .extern_kernels import ELEMENT
from .picks import pick_last

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
    classes = self.shape[1]
    host_checks.check(~valid | ((target >= 0) & (target < classes)),
                      f"nll_loss: a target is out of bounds for {classes} classes", "IndexError")
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



# --------------------------------------------------------------------------
# Attention as matrix products and a softmax. On the CPU, Inductor's graphs
# reach scaled_dot_product_attention as the CPU flash-attention kernel (and,
# in training, its backward): both would be extern calls. Computations are in
# f32, as the CPU kernel accumulates.


def _card_floats(*args, **kwargs) -> bool:
    """Whether every floating-point tensor argument has a type the card
    computes (f64 would be narrowed to f32)."""
    return all(a.dtype in ELEMENT for a in (*args, *kwargs.values())
               if isinstance(a, torch.Tensor) and a.is_floating_point())


def _grouped(x, kv_heads):
    """x (B, H, L, E) as (B, kv_heads, H // kv_heads * L, E): the query heads
    that share a key/value head (grouped-query attention) as one matrix, so
    that products with that head need no repeated copy of it."""
    b, h, length, e = x.shape
    return x.reshape(b, kv_heads, h // kv_heads * length, e)


def _product_f32(a, b):
    """a @ b in f32, for operands with the same batch dimensions. 16-bit
    operands reach the matrix unit as they are (it multiplies 16-bit values
    and sums in f32): an f32 copy of each, a key/value cache above all,
    would be written to and read back from device memory."""
    if a.dtype == b.dtype and a.dtype in (torch.float16, torch.bfloat16) and \
            a.shape[:-2] == b.shape[:-2]:
        result = torch.ops.aten.bmm.dtype(a.reshape(-1, *a.shape[-2:]),
                                          b.reshape(-1, *b.shape[-2:]), torch.float32)
        return result.reshape(*a.shape[:-1], b.shape[-1])
    return torch.matmul(a.float(), b.float())


def _scores(query, key, attn_mask, is_causal, scale):
    """Scaled query-key products (B, H, L, S) in f32, -inf where masked."""
    kv_heads = key.shape[1]
    scores = _product_f32(_grouped(query, kv_heads), key.transpose(-2, -1))
    scores = scores.reshape(*query.shape[:-1], key.shape[-2]) * scale
    if is_causal:  # aligned at the top left, as eager's
        rows = torch.arange(query.shape[-2], device=query.device).unsqueeze(1)
        keep = rows >= torch.arange(key.shape[-2], device=query.device)
        scores = torch.where(keep, scores, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = torch.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask.float()
    return scores


def _softmax(scores):
    """Softmax over the last dimension and its log-sum-exp. A row with every
    position masked gets zeros, as from eager attention, not NaN."""
    top = scores.amax(-1, keepdim=True)
    top = torch.where(top == -math.inf, 0.0, top)
    exp = torch.exp(scores - top)
    total = exp.sum(-1, keepdim=True)
    probs = exp / torch.where(total == 0, 1.0, total)
    return probs, (torch.log(total) + top).squeeze(-1)


def _laid_out_as(x, like):
    """x with the memory order of `like`, as the CPU kernel returns its result
    (callers may view the result in ways only that order allows)."""
    order = sorted(range(like.dim()), key=lambda d: -like.stride(d))
    inverse = sorted(range(like.dim()), key=lambda d: order[d])
    return x.permute(order).contiguous().permute(inverse)


def _scale(query, scale):
    return 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale


def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                    scale=None):
    scale = _scale(query, scale)
    if not any(t.requires_grad for t in (query, key, value)) or not torch.is_grad_enabled():
        out = attention.fused(query, key, value, attn_mask, is_causal, scale)
        if out is not None:
            # The fused kernel does not keep the log-sum-exp, which only the
            # backward reads (and graphs with a backward take the decomposed
            # path): NaN, so that any other use shows.
            logsumexp = torch.full(query.shape[:-1], math.nan, dtype=torch.float32,
                                   device=query.device)
            return _laid_out_as(out, query), logsumexp
    probs, logsumexp = _softmax(_scores(query, key, attn_mask, is_causal, scale))
    # The matrix unit rounds f32 operands to DLFloat16, as the card stores
    # 16-bit floats: probabilities in the value's type are the same operand,
    # and need no f32 copy of the values.
    if value.dtype in (torch.float16, torch.bfloat16):
        probs = probs.to(value.dtype)
    if query.dtype == value.dtype == probs.dtype:
        # Summed in f32 and rounded once to the result's type either way:
        # no f32 result in device memory to convert afterwards.
        out = torch.matmul(_grouped(probs, key.shape[1]), value)
    else:
        out = _product_f32(_grouped(probs, key.shape[1]), value)
    out = out.reshape(*query.shape[:-1], value.shape[-1]).to(query.dtype)
    return _laid_out_as(out, query), logsumexp


def convolution_forward(x, weight, bias, stride, padding, dilation, transposed,
                        output_padding, groups):
    """One implicit-GEMM kernel where the card takes the convolution; else
    Inductor lowers it (lowerings.convolution: im2col and a product). The
    kernel has no autograd formula of its own: AOTAutograd has taken the
    backward from aten.convolution before this decomposition runs. A 16-bit
    convolution whose gradient is needed takes it too (a 64 -> 128 3 x 3 /
    2 forward on 2 x 64 x 56 x 56: 405.6 -> 38.7 us): its products are the
    im2col's, 16-bit operands summed in f32 (the same gradients). An f32
    one keeps im2col, whose result was measured exact to 1e-7 where the
    implicit GEMM's matrix unit rounds f32 operands to DLFloat16 (7e-4, as
    an f32 product on the card), an error a training BatchNorm's backward
    amplifies (a ResNet block's gradients 7e-4 -> 1.4e-1 off)."""
    sixteen_bits = x.dtype in (torch.float16, torch.bfloat16)
    if sixteen_bits or not torch.is_grad_enabled() or not any(
            t is not None and t.requires_grad for t in (x, weight, bias)):
        out = convolution.fused(x, weight, bias, stride, padding, dilation, transposed, groups)
        if out is not None:
            return out
    return NotImplemented


def _patches_backward(grad_output, input, weight):
    """The gradients (input, weight) of a convolution whose patches do not
    overlap (stride = kernel, no padding: ViT's patch embedding, 1 x 1
    convolutions): the patches are a view of the input, so both are products
    with their matrix. Rows and columns no patch covers get zero."""
    n, ci, h, w = input.shape
    co, _, kh, kw = weight.shape
    ho, wo = grad_output.shape[2:]
    rows = grad_output.permute(0, 2, 3, 1).reshape(n * ho * wo, co)
    patches = torch.mm(rows, weight.reshape(co, ci * kh * kw))
    grad_input = patches.reshape(n, ho, wo, ci, kh, kw).permute(0, 3, 1, 4, 2, 5) \
        .reshape(n, ci, ho * kh, wo * kw)
    if (ho * kh, wo * kw) != (h, w):
        grad_input = F.pad(grad_input, (0, w - wo * kw, 0, h - ho * kh))
    patches = input[:, :, :ho * kh, :wo * kw].reshape(n, ci, ho, kh, wo, kw) \
        .permute(0, 2, 4, 1, 3, 5).reshape(n * ho * wo, ci * kh * kw)
    return grad_input, torch.mm(rows.t(), patches).reshape(weight.shape)


def _zeros_between(x, stride, rows, cols):
    """x [n, c, h, w] with stride - 1 zeros after each element along both
    image axes, cut to rows x cols: a strided convolution's output gradient
    laid out on its input's grid (a pad and views, no scatter)."""
    (sh, sw), (n, c, h, w) = stride, x.shape
    spread = F.pad(x.reshape(n, c, h, 1, w, 1), (0, sw - 1, 0, 0, 0, sh - 1))
    return spread.reshape(n, c, h * sh, w * sw)[:, :, :rows, :cols]


def _shifted_slices_backward(grad_output, input, weight, stride, padding, dilation, groups):
    """The gradients (input, weight) of a convolution with any stride,
    dilation and groups (ResNet's 3 x 3 and strided 1 x 1, ConvNeXt's
    depthwise 7 x 7).
    The input's: a convolution (the card's implicit GEMM) of the output's
    gradient, spread on the input's grid when strided, with the flipped
    weight, each group's transposed. The weight's: a product of the output's
    gradient with the padded input's shifted slices, every stride-th row and
    column (affine reads; F.unfold's indices would be gathered element by
    element), group by group; a depthwise one a sum of elementwise products."""
    n, ci, h, w = input.shape
    co, cig, kh, kw = weight.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    ho, wo = grad_output.shape[2:]
    cog = co // groups
    # The rows and columns a window spans.
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    # A strided output's size was rounded down: the transposed
    # convolution's output padding (h - reach, under the stride; 0 at
    # stride 1) makes the input's gradient as large as the input.
    reach_h, reach_w = (ho - 1) * sh + eh - 2 * ph, (wo - 1) * sw + ew - 2 * pw
    spread = grad_output if (sh, sw) == (1, 1) else _zeros_between(
        grad_output, (sh, sw), (ho - 1) * sh + 1 + h - reach_h, (wo - 1) * sw + 1 + w - reach_w)
    flipped = weight.reshape(groups, cog, cig, kh, kw).transpose(1, 2) \
        .reshape(ci, cog, kh, kw).flip(2, 3)
    grad_input = F.conv2d(spread, flipped, padding=(eh - 1 - ph, ew - 1 - pw),
                          dilation=(dh, dw), groups=groups)
    patches = folds.im2col(input, (kh, kw), (dh, dw), (ph, pw), (sh, sw))
    if cog == 1 and cig == 1:
        patches = patches.reshape(n, ci, kh * kw, ho, wo)
        grad_weight = (grad_output.unsqueeze(2) * patches).sum((0, 3, 4))
    else:
        rows = grad_output.reshape(n, groups, cog, ho * wo)
        patches = patches.reshape(n, groups, cig * kh * kw, ho * wo)
        grad_weight = torch.matmul(rows, patches.transpose(2, 3)).sum(0)
    return grad_input, grad_weight.reshape(weight.shape)


def _disjoint_patches(stride, padding, weight) -> bool:
    return list(stride) == list(weight.shape[2:]) and not any(padding)


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """aten.convolution_backward of a 2-D convolution, as products and
    convolutions the card runs (eager's would be an extern call)."""
    if groups == 1 and all(d == 1 for d in dilation) and \
            _disjoint_patches(stride, padding, weight):
        grad_input, grad_weight = _patches_backward(grad_output, input, weight)
    else:
        grad_input, grad_weight = _shifted_slices_backward(grad_output, input, weight, stride,
                                                           padding, dilation, groups)
    grad_bias = grad_output.sum((0, 2, 3)) if output_mask[2] else None
    return (grad_input if output_mask[0] else None,
            grad_weight if output_mask[1] else None, grad_bias)


def _convolution_backward_applies(grad_output, input, weight, bias_sizes, stride, padding,
                                  dilation, transposed, output_padding, groups,
                                  output_mask) -> bool:
    # A padding as wide as the window would read only zeros at the edge
    # (the flipped convolution's padding would be negative).
    return (not transposed and input.dim() == 4 and weight.dim() == 4 and
            len(stride) == len(padding) == len(dilation) == 2 and
            all(0 <= p < d * (k - 1) + 1
                for p, d, k in zip(padding, dilation, weight.shape[2:])) and
            _card_floats(grad_output, input, weight))


def causal_attention(query, key, value, mask, scale, enable_gqa):
    """spyre::causal_attention: its mask masks every key after its query,
    so causal attention with the mask computes the same."""
    return flash_attention(query, key, value, 0.0, True, attn_mask=mask,
                           scale=_scale(query, scale))[0]


def flash_attention_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal,
                             *, attn_mask=None, scale=None):
    # The probabilities are recomputed from the scores rather than from
    # `logsumexp`, which is -inf in fully masked rows.
    scale = _scale(query, scale)
    probs, _ = _softmax(_scores(query, key, attn_mask, is_causal, scale))
    kv_heads = key.shape[1]
    grad_out = grad_out.float()
    grad_grouped = _grouped(grad_out, kv_heads)
    # Products over grouped query heads sum the gradients of a shared head.
    grad_value = torch.matmul(_grouped(probs, kv_heads).transpose(-2, -1), grad_grouped)
    grad_probs = torch.matmul(grad_grouped, value.float().transpose(-2, -1)).reshape(probs.shape)
    # Softmax backward: sum_j P_ij dP_ij is sum_e dO_ie O_ie.
    row = (grad_out * out.float()).sum(-1, keepdim=True)
    grad_scores = _grouped(probs * (grad_probs - row) * scale, kv_heads)
    grad_query = torch.matmul(grad_scores, key.float()).reshape(query.shape)
    grad_key = torch.matmul(grad_scores.transpose(-2, -1), _grouped(query.float(), kv_heads))
    return grad_query.to(query.dtype), grad_key.to(key.dtype), grad_value.to(value.dtype)


def _keep(mask, mask_type, batch):
    """The positions a fast-path mask lets attend, broadcastable to (B, H, L, S):
    nonzero entries are masked out whatever the dtype, as in eager; mask type 1
    is a key padding mask (B, S)."""
    keep = mask == 0
    return keep.reshape(batch, 1, 1, -1) if mask_type == 1 else keep


def native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
                                proj_weight, proj_bias, mask=None, need_weights=True,
                                average_attn_weights=True, mask_type=None):
    """nn.MultiheadAttention's fast path (eval, batch first) as its slow path
    computes it: projections, attention, output projection."""
    batch, length, _ = query.shape
    q_w, k_w, v_w = qkv_weight.chunk(3)
    q_b, k_b, v_b = qkv_bias.chunk(3)

    def heads(x, w, b):
        return F.linear(x, w, b).reshape(batch, -1, num_head, embed_dim // num_head).transpose(1, 2)

    q, k, v = heads(query, q_w, q_b), heads(key, k_w, k_b), heads(value, v_w, v_b)
    keep = None if mask is None else _keep(mask, mask_type, batch)
    probs, _ = _softmax(_scores(q, k, keep, False, _scale(q, None)))
    context = torch.matmul(probs, v.float()).to(query.dtype)
    out = F.linear(context.transpose(1, 2).reshape(batch, length, embed_dim), proj_weight,
                   proj_bias)
    if not need_weights:
        return out, query.new_empty(0)  # as the fake implementation the graph was traced with
    weights = probs.to(query.dtype)
    return out, weights.mean(1) if average_attn_weights else weights


def transformer_encoder_layer(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                              proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1,
                              norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2,
                              ffn_bias_2, mask=None, mask_type=None):
    """nn.TransformerEncoderLayer's fast path (eval): as its forward() computes
    it outside the fast path."""
    def norm1(x):
        return F.layer_norm(x, (embed_dim,), norm_weight_1, norm_bias_1, eps)

    def norm2(x):
        return F.layer_norm(x, (embed_dim,), norm_weight_2, norm_bias_2, eps)

    def attention(x):
        return native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias,
                                           proj_weight, proj_bias, mask, False, True,
                                           mask_type)[0]

    def feed_forward(x):
        hidden = F.linear(x, ffn_weight_1, ffn_bias_1)
        hidden = F.gelu(hidden) if use_gelu else F.relu(hidden)
        return F.linear(hidden, ffn_weight_2, ffn_bias_2)

    if norm_first:
        x = src + attention(norm1(src))
        return x + feed_forward(norm2(x))
    x = norm1(src + attention(src))
    return norm2(x + feed_forward(x))


# --------------------------------------------------------------------------
# Gathers of single elements (torch.gather, advanced indexing other than a
# row lookup) as comparisons of each index with every position it may pick,
# summed: the card gathers whole rows only. They cost a comparison per
# position, so they are bounded.

#: Beyond this many comparisons the simulated time is better spent on the CPU.
MAX_PICK_COMPARISONS = 1 << 24


def _gathers_whole_rows(self, dim, index) -> bool:
    """Whether self.gather(dim, index) looks up whole rows: the index takes
    every position of the dimensions after `dim` and is the same along them
    (an expanded index, `torch.gather(x, 1, ids.unsqueeze(-1).expand(...))`,
    stride 0), and all of the dimensions before it."""
    dim = dim % self.dim()
    return (self.dim() == index.dim() and dim < self.dim() - 1 and
            all(isinstance(n, int) for n in (*self.shape, *index.shape)) and
            all(index.shape[d] == self.shape[d] and
                (index.stride(d) == 0 or index.shape[d] == 1)
                for d in range(dim + 1, self.dim())) and
            all(index.shape[d] == self.shape[d] for d in range(dim)))


def _rows_gather(self, dim, index):
    """self.gather(dim, index) for an index the same along the dimensions
    after `dim`: a lookup of whole rows (the card's row gather, each row
    read once) rather than a pick, which compares every index with every
    position (GPT-J's rotary table at its positions)."""
    dim = dim % self.dim()
    batch, positions = math.prod(self.shape[:dim]), self.shape[dim]
    ids = index[(slice(None),) * (dim + 1) + (0,) * (self.dim() - dim - 1)]
    ids = ids.reshape(batch, -1)
    if batch > 1:
        # One table of every batch's rows; an index outside its own batch's
        # becomes -1, which the gather refuses as eager does, rather than a
        # row of the next batch.
        inside = (ids >= 0) & (ids < positions)
        offsets = torch.arange(batch, device=ids.device).unsqueeze(1) * positions
        ids = torch.where(inside, ids + offsets, -1)
    rows = self.reshape(batch * positions, -1)
    return F.embedding(ids, rows).reshape(*index.shape[:dim + 1], *self.shape[dim + 1:])


def gather(self, dim, index, sparse_grad=False):
    if _gathers_whole_rows(self, dim, index):
        return _rows_gather(self, dim, index)
    dim = dim % self.dim()
    # The other dimensions of the result are those of the index.
    source = self
    for d in range(self.dim()):
        if d != dim and index.shape[d] != self.shape[d]:
            source = source.narrow(d, 0, index.shape[d])
    host_checks.check_positions([index], [self.shape[dim]], "gather", negatives=False,
                                error="RuntimeError")
    picked = pick_last(source.movedim(dim, -1).unsqueeze(-2), [index.movedim(dim, -1)],
                        [self.shape[dim]])
    # Contiguous, as eager returns it: with the picked dimension only moved
    # back, a reader took its transposed order and the graph's output
    # differed from eager's strides (x - gather(v, 0, i): view(-1) failed).
    return picked.movedim(-1, dim).contiguous()


def _gather_applies(self, dim, index, sparse_grad=False):
    # Whole rows at any size: beyond the pick's budget Inductor's own
    # lowering loads each element through its index, which ran a batch of
    # two on the CPU and was a little faster where it ran (GPT-J's table of
    # 2048 positions: a layer 778.0 us against 788.0 as rows).
    return self.dim() > 0 and (_gathers_whole_rows(self, dim, index) or
                               index.numel() * self.shape[dim] <= MAX_PICK_COMPARISONS)


def _evenly_stepping_constant(self, indices):
    """(dimension, start, step) when the only index tensor is a constant of
    the graph whose values step evenly upwards, else None. FakeTensors keep
    the values of one-element constants only: `x[..., [-2], :]`, as Falcon
    splits its fused key and value, is a slice; `x[:, [0, 2, 4]]` a pick."""
    positions = [d for d, i in enumerate(indices) if i is not None]
    if len(positions) != 1:
        return None
    (d,) = positions
    values = getattr(indices[d], "constant", None)
    if indices[d].dtype not in (torch.int64, torch.int32):
        return None  # a boolean mask
    size = self.shape[d]
    if values is None or values.numel() == 0 or not isinstance(size, int):
        return None
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    with unset_fake_temporarily():
        values = values.reshape(-1).tolist()
    if any(not -size <= v < size for v in values):
        return None  # eager raises: so does the pick's range check
    values = [v % size for v in values]
    step = values[1] - values[0] if len(values) > 1 else 1
    if step < 1 or any(b - a != step for a, b in zip(values, values[1:])):
        return None
    return d, values[0], step


def index(self, indices):
    """self[indices] for adjacent integer index tensors (None for the
    dimensions taken whole): a slice where the indices are a constant that
    steps evenly, else a pick from those dimensions flattened."""
    progression = _evenly_stepping_constant(self, indices)
    if progression is not None:
        d, start, step = progression
        shape = indices[d].shape
        taken = self[(slice(None),) * d + (slice(start, start + step * (shape.numel() - 1) + 1,
                                                 step),)]
        return taken.reshape(*self.shape[:d], *shape, *self.shape[d + 1:])
    first = next(d for d, i in enumerate(indices) if i is not None)
    tensors = [i for i in indices if i is not None]
    sizes = self.shape[first:first + len(tensors)]
    host_checks.check_positions(tensors, sizes, "index")  # (before they are broadcast)
    before, after = self.shape[:first], self.shape[first + len(tensors):]
    shape = torch.broadcast_shapes(*(i.shape for i in tensors))
    # values: before + [1] * len(shape) + after + [positions]
    # The flattened size spelled out: -1 is ambiguous when `before` is empty.
    values = self.reshape(*before, math.prod(sizes), *after).movedim(first, -1)
    values = values.reshape(*before, *([1] * len(shape)), *after, values.shape[-1])
    tensors = [i.expand(shape).reshape(*([1] * len(before)), *shape, *([1] * len(after)))
               for i in tensors]
    return pick_last(values, tensors, sizes)


def _index_applies(self, indices):
    """Adjacent integer index tensors, but not a lookup of whole rows (one
    index tensor on the first dimension), which the card's gather does."""
    if _evenly_stepping_constant(self, indices) is not None:
        return True
    positions = [d for d, i in enumerate(indices) if i is not None]
    if positions == [0] and self.dim() >= 2:
        return False
    return _index_fits(self, indices)


def _index_fits(self, indices):
    """Adjacent integer index tensors whose pick stays within the budget."""
    positions = [d for d, i in enumerate(indices) if i is not None]
    tensors = [i for i in indices if i is not None]
    if not tensors or positions != list(range(positions[0], positions[0] + len(tensors))) \
            or any(i.dtype not in (torch.int64, torch.int32) for i in tensors):
        return False
    shape = torch.broadcast_shapes(*(i.shape for i in tensors))
    picks = math.prod(shape) * math.prod(self.shape[positions[0] + len(tensors):])
    return picks * math.prod(self.shape[d] for d in positions) <= MAX_PICK_COMPARISONS


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    """The gradient of an embedding table as a matrix product, one-hot rows
    of the indices times the gradients of the rows looked up: the card has no
    scatter-add."""
    flat = indices.reshape(-1)
    rows = torch.arange(num_weights, device=flat.device).unsqueeze(1)
    onehot = (flat == rows) & (flat != padding_idx)  # (num_weights, lookups)
    grad = grad_output.reshape(flat.shape[0], -1).float()
    out = torch.mm(onehot.float(), grad).to(grad_output.dtype)
    return out.reshape(num_weights, *grad_output.shape[indices.dim():])


def _embedding_backward_applies(grad_output, indices, num_weights, padding_idx,
                                scale_grad_by_freq):
    return not scale_grad_by_freq and indices.numel() * num_weights <= MAX_PICK_COMPARISONS


# --------------------------------------------------------------------------
# Random ops that Inductor would call as library kernels, as rand and randn,
# which run on the card (random.py).


def uniform(self, low=0.0, high=1.0, *, generator=None):
    return torch.rand_like(self) * (high - low) + low


def normal(shape, *, mean, std, dtype, device, requires_grad, generator=None):
    return torch.randn(shape, dtype=dtype, device=device) * std + mean


def _no_generator(*args, generator=None, **kwargs):
    return generator is None


def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """The sum over the batch of products as one product over the batch and
    the inner dimension together (Inductor calls a library kernel)."""
    b, n, p = batch1.shape
    if not batch1.is_floating_point():  # as eager: integer products take integer scalars
        alpha, beta = int(alpha), int(beta)
    product = torch.mm(batch1.transpose(0, 1).reshape(n, b * p), batch2.reshape(b * p, -1))
    product = product if alpha == 1 else product * alpha
    if beta == 0:  # self is ignored, NaN included
        return product
    return product + (self if beta == 1 else self * beta)


# --------------------------------------------------------------------------
# Small ops whose CPU forms the card cannot take as they are.


def eye(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=False):
    """As positions compared in int32: PyTorch's own eye compares uint8
    iotas, a type the card does not hold."""
    m = n if m is None else m
    rows = torch.arange(n, dtype=torch.int32, device=device).unsqueeze(-1)
    columns = torch.arange(m, dtype=torch.int32, device=device)
    return (rows == columns).to(dtype or torch.get_default_dtype())


_INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def linspace_integers(start, end, steps, *, dtype=None, layout=None, device=None,
                      pin_memory=False):
    """An integer linspace as eager's kernel computes it: start and end
    truncated to integers, the step and each value in double (the second
    half counted back from the end), each value truncated. Inductor's own
    decomposition keeps a fractional start and gives other values (4.3 to
    -3 in 50 steps: 7 differ). The values depend on the Python scalars
    only, and the card has no double: they are computed here, a constant of
    the graph."""
    import numpy as np
    first, last = int(start), int(end)
    if steps == 1:
        values = [first]
    else:
        position = np.arange(steps, dtype=np.float64)
        step = (float(last) - float(first)) / (steps - 1)
        values = np.where(position < steps // 2, first + step * position,
                          last - step * (steps - 1 - position))
        values = np.trunc(values).astype(np.int64).tolist()
    return torch.tensor(values, dtype=dtype, device=device)


def _linspace(original, scalar_bounds: bool):
    """aten.linspace (an overload) in spyre compiles: int32 and int64 of
    Python bounds as eager's kernel (linspace_integers), other integers and
    tensor bounds on eager's kernel (counted), floats as before."""
    def decompose(start, end, steps, *, dtype=None, **kwargs):
        if not _for_spyre((start, end)) or dtype not in _INTEGERS:
            return original(start, end, steps, dtype=dtype, **kwargs)
        if scalar_bounds and dtype in (torch.int32, torch.int64):
            return linspace_integers(start, end, steps, dtype=dtype, **kwargs)
        return NotImplemented
    return decompose


def normal_functional(self, mean=0.0, std=1.0, *, generator=None):
    return torch.randn_like(self) * std + mean


def _p_norms(diff, p):
    """The p-norms of the last dimension as the CPU's distance kernels
    compute them (counts of nonzeros for p = 0, the largest for p = inf)."""
    diff = diff.abs()
    if diff.shape[-1] == 0:  # (a maximum of nothing would raise)
        return diff.new_zeros(diff.shape[:-1])
    if p == 0:
        return (diff != 0).sum(-1, dtype=diff.dtype)
    if p == math.inf:
        return diff.amax(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    return diff.pow(p).sum(-1).pow(1.0 / p)


def cdist(x1, x2, p, compute_mode=None):
    """Distances of every pair of rows, from their differences (the CPU's
    kernel for p = 2 may use a matrix product, which the card would round to
    DLFloat16 and cancel in)."""
    return _p_norms(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)  # (..., r1, r2, c)


def pdist(self, p=2):
    """Distances of the rows i < j, in eager's order: the pairs' rows looked
    up by index lists known when compiling (the card's row gather)."""
    n = self.shape[0]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    first = torch.tensor([i for i, _ in pairs], dtype=torch.int64, device=self.device)
    second = torch.tensor([j for _, j in pairs], dtype=torch.int64, device=self.device)
    if self.shape[1] == 1:  # rows of one element are no lookup the card's gather takes
        return _p_norms(index(self, [first]) - index(self, [second]), p)
    return _p_norms(self[first] - self[second], p)


def _pdist_applies(self, p=2):
    # Eager refuses other shapes and negative p.
    n = self.shape[0] if self.dim() == 2 else 0
    return self.dim() == 2 and self.is_floating_point() and p >= 0 and \
        n * (n - 1) // 2 * self.shape[1] <= MAX_PICK_COMPARISONS


def euclidean_dist(x1, x2):
    """cdist's matrix-product mode (`use_mm_for_euclid_dist`, and eager's
    default for more than 25 rows), from the differences too: the product
    form sqrt(|x|^2 + |y|^2 - 2 x.y) cancels, and the card's product rounds
    its inputs to DLFloat16 (a distance of 0.528 between points near 6.5
    came out 0.328)."""
    return cdist(x1, x2, 2.0)


def _euclidean_dist_applies(x1, x2):
    return _cdist_applies(x1, x2, 2.0)


def _cdist_applies(x1, x2, p, compute_mode=None):
    pairs = x1.shape[-2] * x2.shape[-2] * x1.shape[-1]
    batch = math.prod(torch.broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
    return x1.is_floating_point() and p >= 0 and batch * pairs <= MAX_PICK_COMPARISONS


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The lookup of one index (0-d, or a single element), which the card's
    row gather does not take once Inductor has made its index a scalar: a
    pick among the rows of a small table; from a large one (a language
    model's vocabulary in a decode step) the row gathered twice, which keeps
    the gather's index a tensor, and one copy kept."""
    if weight.numel() <= MAX_PICK_COMPARISONS:
        return index(weight, [indices])
    rows = aten.embedding(weight, indices.reshape(1).expand(2))
    return rows[:1].reshape(*indices.shape, *weight.shape[1:])


def _embedding_applies(weight, indices, *args, **kwargs):
    return indices.numel() == 1


def unsafe_masked_index(self, mask, indices, fill):
    """self[indices] where the mask holds, else fill; masked-off indices may
    be out of range, so they are clamped into it before the pick (the mask
    has the result's shape, not the indices')."""
    indices = [None if i is None else i.clamp(-self.shape[d], self.shape[d] - 1)
               for d, i in enumerate(indices)]
    return torch.where(mask, index(self, indices), fill)


def _unsafe_masked_index_applies(self, mask, indices, fill):
    # Even a row lookup: its masked form is not one the card's gather takes.
    return _index_fits(self, indices)


def _largest_kept_finite() -> float:
    """The largest fp16 value the card's 16-bit storage keeps finite on its
    way back to fp16: fp16's 65504 is a tie between DLFloat16's 65472 and
    65536, which rounds up and then overflows fp16."""
    from ..simulator import default_arch
    fraction_bits = default_arch().dlfloat16_fraction_bits
    largest = torch.finfo(torch.float16).max
    return min(largest, (2 - 2.0 ** -fraction_bits) * 2.0 ** 15)


def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    """fp16 nan_to_num whose infinities stay finite: eager gives +-65504, and
    the card's DLFloat16 of 65504 would come back as infinity. Replacements
    finite in fp16 but beyond the largest value kept finite are that value,
    a rounding of DLFloat16's 9 fraction bits (one beyond fp16 is infinity
    in eager too)."""
    largest = _largest_kept_finite()

    def kept(value, default):
        if value is None:
            return default
        finite = math.isfinite(float(torch.tensor(value, dtype=torch.float16)))
        return max(-largest, min(largest, value)) if finite else value
    nan = 0.0 if nan is None else nan
    posinf, neginf = kept(posinf, largest), kept(neginf, -largest)
    return torch.where(torch.isnan(self), nan,
                       torch.where(self == math.inf, posinf,
                                   torch.where(self == -math.inf, neginf, self)))


def _nan_to_num_applies(self, nan=0.0, posinf=None, neginf=None):
    return self.dtype == torch.float16


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """nn.functional.bilinear's kernel by its definition: the three operands
    broadcast against each other, multiplied and summed over `sumdim`, on
    the vector unit in f32 (a matrix product would round to DLFloat16)."""
    def expanded(x, dims):
        for d in sorted(dims):
            x = x.unsqueeze(d)
        return x
    product = expanded(i1, expand1) * expanded(i2, expand2) * expanded(i3, expand3)
    return product.sum(list(sumdim)) if sumdim else product


def _trilinear_applies(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    shapes = [list(x.shape) for x in (i1, i2, i3)]
    for shape, dims in zip(shapes, (expand1, expand2, expand3)):
        for d in sorted(dims):
            shape.insert(d, 1)
    try:
        size = math.prod(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        return False
    return i1.is_floating_point() and size <= MAX_PICK_COMPARISONS


def var_mean(self, dim=None, *, correction=None, keepdim=False):
    """Of an empty input, as var and mean apart: Inductor's var_mean
    lowering reduces nothing to the Welford initial state, whose mean is 0
    where eager's (0 / 0) is nan."""
    return (aten.var.correction(self, dim, correction=correction, keepdim=keepdim),
            aten.mean.dim(self, dim, keepdim=keepdim))


def _var_mean_applies(self, *args, **kwargs):
    return self.numel() == 0


def roll(self, shifts, dims=()):
    """Each rolled dimension as the concatenation of its two slices.
    Inductor's own decomposition is an index_select by (start + i) % size,
    a gather the card runs as a one-hot sum over the dimension: Swin's
    shifted windows (56 x 56 x 64 f16, rolled by 3 along both spatial
    dimensions) took 357k cycles, as slices 30k."""
    if not dims:
        return roll(self.flatten(), shifts, (0,)).view(self.shape)
    result = self
    for shift, dim in zip(shifts, dims):
        size = self.shape[dim]
        shift %= size
        if shift:
            result = torch.cat([result.narrow(dim, size - shift, shift),
                                result.narrow(dim, 0, size - shift)], dim)
    return self.clone() if result is self else result


def _roll_applies(self, shifts, dims=()):
    # Static sizes and shifts, one shift per dimension (or one for the
    # flattened tensor); the rest as Inductor decomposes it, or raises.
    sizes = (self.numel(),) if not dims else tuple(self.shape[d] for d in dims)
    return all(isinstance(v, int) for v in (*sizes, *shifts)) and all(sizes) and \
        len(shifts) == max(len(dims), 1)


def _declined_to_eager(op) -> None:
    """The fallback kernel Inductor would create for `op` when it first met
    it without a lowering, created now: once `op` is in the decomposition
    table, Inductor refuses to create it (inputs a decomposition declines
    would fail to compile)."""
    from torch._inductor import decomposition, lowering
    from torch._library.utils import get_layout_constraint_tag
    if op in lowering.lowerings or op in decomposition.decompositions:
        return
    constraint = lowering.tag_to_layout_constraint(get_layout_constraint_tag(op))
    lowering.make_fallback(op, layout_constraint=constraint, warn=False)


def _negative_indices(original, counted: bool):
    """index_fill counts a negative index from the end; index_select,
    index_add and index_copy refuse it, and their decompositions (into
    index, index_put and, for index_fill, index_copy) would count it: it is
    counted here, or becomes the dimension's size, refused in turn."""
    def decompose(self, dim, index, *args, **kwargs):
        size = self.shape[dim] if self.dim() else 1
        index = torch.where(index < 0, index + size if counted else size, index)
        return original(self, dim, index, *args, **kwargs)
    return decompose


def _take_over(op):
    """Takes `op` out of Inductor's decomposition tables, so that where ours
    declines eager's own kernel runs (counted); returns the decomposition it
    had."""
    from torch._inductor import decomposition
    original = decomposition.decompositions.get(op)
    for table in (decomposition.decompositions, decomposition.fast_random_decomps()):
        table.pop(op, None)
    _declined_to_eager(op)
    return original


def wrap(ours, original, applies=lambda *args, **kwargs: True):
    """`ours` in spyre compiles where it `applies`, else `original` (None:
    decline, the op runs as it is)."""
    def decompose(*args, **kwargs):
        if _for_spyre(args) and applies(*args, **kwargs):
            return ours(*args, **kwargs)
        return NotImplemented if original is None else original(*args, **kwargs)
    return decompose


def _add(entries) -> None:
    from torch._inductor import decomposition
    for table in (decomposition.decompositions, decomposition.fast_random_decomps()):
        table.update(entries)  # the second is a cached copy of the first


_installed_late = set()


def install_late() -> None:
    """Decompositions of ops that other libraries define when they are
    imported (transformers' MoE grouped product, experts.py): checked at
    every spyre compile, added once their op exists."""
    from torch._inductor import decomposition
    late = {op: wrap(ours, decomposition.decompositions.get(op), applies)
            for op, (ours, applies) in experts.entries().items()
            if op not in _installed_late}
    if late:
        _add(late)
        _installed_late.update(late)


def install() -> None:
    from torch._inductor import decomposition

    flash = aten._scaled_dot_product_flash_attention_for_cpu.default
    flash_backward = aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    # Dropout keeps the original: the CPU kernel (counted as a fallback). So
    # does f64 attention, which the decomposition would compute in f32.
    no_dropout = lambda q, k, v, dropout_p=0.0, *rest, **kw: (  # noqa: E731
        dropout_p == 0 and _card_floats(q, k, v))
    no_dropout_backward = lambda *args, **kw: args[6] == 0 and _card_floats(*args)  # noqa: E731
    # 2-D inputs without class weights; the rest keeps the original gather.
    plain = lambda self, target, weight, *rest: weight is None and self.dim() == 2  # noqa: E731
    plain_backward = lambda grad, self, target, weight, *rest: (  # noqa: E731
        weight is None and self.dim() == 2)
    entries = {
        # Attention as matrix products and a softmax: the CPU flash-attention
        # kernel would be an extern call.
        flash: wrap(flash_attention, None, no_dropout),
        flash_backward: wrap(flash_attention_backward, None, no_dropout_backward),
        causal_masks.op: wrap(causal_attention, None, _card_floats),
        # The fast paths of nn.MultiheadAttention and nn.TransformerEncoderLayer
        # (eval mode) are single CPU kernels. They are decomposed here rather
        # than avoided: Dynamo picks the fast path while it traces the module,
        # before any backend is involved, and turning it off process-wide would
        # change eager runs too.
        aten._native_multi_head_attention.default: wrap(native_multi_head_attention, None,
                                                        _card_floats),
        aten.convolution.default: wrap(convolution_forward, None),
        aten.convolution_backward.default: wrap(
            convolution_backward,
            decomposition.decompositions.get(aten.convolution_backward.default),
            _convolution_backward_applies),
        aten._transformer_encoder_layer_fwd.default: wrap(transformer_encoder_layer, None,
                                                          _card_floats),
        aten.gather.default: wrap(gather, decomposition.decompositions.get(aten.gather.default),
                                  _gather_applies),
        aten.embedding_dense_backward.default: wrap(
            embedding_dense_backward,
            decomposition.decompositions.get(aten.embedding_dense_backward.default),
            _embedding_backward_applies),
        aten.index.Tensor: wrap(index, decomposition.decompositions.get(aten.index.Tensor),
                                _index_applies),
        aten.nll_loss_forward.default: wrap(
            nll_loss_forward, decomposition.decompositions[aten.nll_loss_forward.default], plain),
        aten.nll_loss_backward.default: wrap(
            nll_loss_backward, decomposition.decompositions[aten.nll_loss_backward.default],
            plain_backward),
    }
    entries[aten.uniform.default] = wrap(uniform, decomposition.decompositions.get(
        aten.uniform.default), _no_generator)
    prims_normal = torch.ops.prims.normal.default
    entries[prims_normal] = wrap(normal, decomposition.decompositions.get(prims_normal),
                                 _no_generator)
    entries[aten.addbmm.default] = wrap(addbmm, decomposition.decompositions.get(
        aten.addbmm.default))
    # Max pooling with indices, its window unrolled (pooling.py).
    for op, (ours, applies) in pooling.entries().items():
        entries[op] = wrap(ours, decomposition.decompositions.get(op), applies)
    for op, ours, applies in (
            (aten.eye.default, eye, None), (aten.eye.m, eye, None),
            (aten.normal_functional.default, normal_functional, _no_generator),
            (aten._cdist_forward.default, cdist, _cdist_applies),
            (aten._euclidean_dist.default, euclidean_dist, _euclidean_dist_applies),
            (aten._pdist_forward.default, pdist, _pdist_applies),
            (aten.embedding.default, embedding, _embedding_applies),
            (aten._unsafe_masked_index.default, unsafe_masked_index,
             _unsafe_masked_index_applies),
            (aten._trilinear.default, trilinear, _trilinear_applies),
            (aten.nan_to_num.default, nan_to_num, _nan_to_num_applies),
            (aten.var_mean.correction, var_mean, _var_mean_applies),
            (aten.roll.default, roll, _roll_applies),
            (aten._assert_async.msg, host_checks.assert_async, host_checks.single_value),
            (aten._assert_async.default, host_checks.assert_async, host_checks.single_value)):
        entries[op] = wrap(ours, decomposition.decompositions.get(op),
                           applies or (lambda *args, **kwargs: True))
    for op, counted in ((aten.index_select.default, False), (aten.index_add.default, False),
                        (aten.index_copy.default, False), (aten.index_fill.int_Scalar, True),
                        (aten.index_fill.int_Tensor, True)):
        original = decomposition.decompositions.get(op)
        if original is not None:
            entries[op] = wrap(_negative_indices(original, counted), original)
    # Scans and sorts as masked reductions over n x n squares (scans.py).
    # Scatters as one-hot reductions over indices by positions (scatters.py).
    # Small dense linear algebra, unrolled over the columns (linalg.py).
    # Binary searches unrolled over their steps (searches.py).
    # F.linear_cross_entropy's chunked custom ops as one linear layer (losses.py).
    # F.unfold and F.fold as strided slices of the padded image (folds.py).
    for op, (ours, applies) in {**scans.entries(), **scatters.entries(),
                                **linalg.entries(), **searches.entries(),
                                **losses.entries(), **folds.entries()}.items():
        entries[op] = wrap(ours, decomposition.decompositions.get(op), applies)
    # Grid sampling by the CPU kernels' formulas, picks by comparison (sampling.py).
    from . import sampling  # after this module: it uses the pick budget
    for op, (ours, applies) in sampling.entries().items():
        # Where ours declines, eager's own kernel runs (counted), not
        # Inductor's decomposition of grid_sampler_2d: that one differs from
        # eager on non-finite coordinates and reflects huge ones wrongly.
        _take_over(op)
        entries[op] = wrap(ours, None, applies)
    # Integer linspaces need double arithmetic (linspace_integers).
    for op in (aten.linspace.default, aten.linspace.Tensor_Tensor, aten.linspace.Tensor_Scalar,
               aten.linspace.Scalar_Tensor):
        entries[op] = _linspace(_take_over(op), op is aten.linspace.default)
    _add(entries)
    attention.register_lowering()
