"""Attention written out by hand as scaled_dot_product_attention.

Models that spell attention as products and a softmax (Hugging Face's
"eager" attention, nanoGPT-style code):

    scores = q @ k.transpose(-2, -1) * scale        # or / sqrt(d), or no scale
    scores = scores + mask                           # or .masked_fill(m, -inf)
                                                     # or (q @ k^T + mask) / 2^n
    probs = softmax(scores, dim=-1[, dtype=f32])[.to(q.dtype)]
    probs = dropout(probs, p, training=False)        # identity
    out = probs @ v

compute what scaled_dot_product_attention computes. q and k may be cast to
float32 first (GPT-J's and CodeGen's "keep the attention weights in fp32"):
from 16-bit tensors that is what the card's product does anyway, 16-bit
operands accumulated in f32, so the casts go. A scale applied after the mask
scales the mask too, only by a power of two (exact: another factor would
round the mask once more than eager does). This pass, run on
Dynamo's graph before AOTAutograd (Inductor's pre-grad slot), rewrites such
chains into one scaled_dot_product_attention call, which the card runs as a
fused kernel (attention.py) whose scores never reach device memory. It only
rewrites chains whose intermediate values nothing else reads, in inference
(no input requiring a gradient). One difference is kept deliberately: a row
whose every key is masked gives zeros, as scaled_dot_product_attention and
the card do, where the hand-written softmax gives NaN.
"""

from __future__ import annotations

import math
import operator

import torch
import torch.nn.functional as F
from torch._inductor.custom_graph_pass import CustomGraphPass

_MATMUL = (torch.matmul, operator.matmul)
_SOFTMAX = (torch.softmax, F.softmax, torch.Tensor.softmax)
_FLOATS = (torch.float16, torch.bfloat16, torch.float32)


def _value(node):
    value = node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def _call(node, functions=(), methods=()) -> bool:
    if not isinstance(node, torch.fx.Node):
        return False
    if node.op == "call_function":
        return node.target in functions
    return node.op == "call_method" and node.target in methods


def _arg(node, index, name, default=None):
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def _only_user(node, user) -> bool:
    return isinstance(node, torch.fx.Node) and list(node.users) == [user]


def _matmul_operands(node):
    if _call(node, _MATMUL, ("matmul", "__matmul__")):
        return node.args[0], node.args[1]
    return None


def _last_two_swapped(node, rank) -> torch.fx.Node | None:
    """x if node is x.transpose(-2, -1) (any spelling of the last two)."""
    if not _call(node, (torch.transpose,), ("transpose",)):
        return None
    dims = {d % rank for d in (_arg(node, 1, "dim0"), _arg(node, 2, "dim1"))
            if isinstance(d, int)}
    return node.args[0] if dims == {rank - 2, rank - 1} else None


def _through_identities(node):
    """The producer of node past casts and inference dropout, and the nodes
    skipped."""
    skipped = []
    while True:
        if _call(node, (F.dropout,), ("dropout",)) and \
                (_arg(node, 2, "training", True) is False or _arg(node, 1, "p", 0.5) == 0):
            pass
        elif _call(node, (), ("to", "type", "half", "float", "bfloat16")) and \
                _value(node) is not None and _value(node.args[0]) is not None and \
                _value(node).device == _value(node.args[0]).device:
            pass
        else:
            return node, skipped
        skipped.append(node)
        node = node.args[0]


def _upcast_source(node):
    """x if node casts a 16-bit float tensor x to float32 on its device."""
    if not _call(node, (), ("to", "float")):
        return None
    source, value = node.args[0], _value(node)
    before = _value(source)
    if value is None or before is None or value.dtype != torch.float32 or \
            before.dtype not in (torch.float16, torch.bfloat16) or value.device != before.device:
        return None
    return source


def _softmax_input(node, rank):
    if not _call(node, _SOFTMAX, ("softmax",)):
        return None
    dim = _arg(node, 1, "dim")
    if not isinstance(dim, int) or dim % rank != rank - 1:
        return None
    return node.args[0]


def _is_power_of_two(x) -> bool:
    return isinstance(x, (int, float)) and x > 0 and math.frexp(x)[0] == 0.5


def _constant_factor(node):
    """(x, f) if node is x * f, f * x or x / c for a finite nonzero number
    (f = 1 / c), else None."""
    if not (_call(node, (operator.mul, operator.truediv, torch.mul, torch.div),
                  ("mul", "div", "__mul__", "__truediv__")) and len(node.args) == 2):
        return None
    a, c = node.args
    multiply = node.target in (operator.mul, torch.mul, "mul", "__mul__")
    if isinstance(a, (int, float)) and multiply:
        a, c = c, a
    if not isinstance(c, (int, float)) or not math.isfinite(c) or c == 0:
        return None
    return a, (float(c) if multiply else 1.0 / c)


def _scores(node):
    """(q, k, scale, mask, nodes) if node computes q @ k^T [* or / a number]
    [+ mask or masked_fill(cond, -inf)] [/ or * a power of two]: mask is an
    additive tensor node, (mask node, factor) when a scale follows it,
    ("keep", cond node) for masked_fill, or None; nodes are the chain's, from
    node to the transpose of k."""
    scaled = _constant_factor(node)
    if scaled is not None and _call(scaled[0], (operator.add, torch.add, torch.masked_fill),
                                    ("add", "__add__", "masked_fill")):
        inner, factor = scaled
        found = _scores(inner)
        if found is None or not _is_power_of_two(factor):
            return None
        q, k, scale, mask, nodes = found
        if isinstance(mask, torch.fx.Node):
            mask = (mask, factor)
        elif mask is None or isinstance(mask[0], torch.fx.Node):
            return None  # already scaled once
        return q, k, scale * factor, mask, [node, *nodes]
    mask, chain, found = None, [], None
    if _call(node, (operator.add, torch.add), ("add", "__add__")) and len(node.args) == 2:
        chain.append(node)
        for scores, other in (node.args, reversed(node.args)):
            found = _matmul_like(scores)
            if found is not None and isinstance(other, torch.fx.Node):
                mask = other
                break
        else:
            return None
    elif _call(node, (torch.masked_fill,), ("masked_fill",)):
        fill = _arg(node, 2, "value")
        if not (isinstance(fill, float) and fill == -math.inf):
            return None
        chain.append(node)
        mask = ("keep", node.args[1])
        found = _matmul_like(node.args[0])
    else:
        found = _matmul_like(node)
    if found is None:
        return None
    q, k, scale, nodes = found
    return q, k, scale, mask, chain + nodes


def _matmul_like(node):
    """(q, k, scale, nodes) for q @ k^T, (q @ k^T) * c or (q @ k^T) / c."""
    scale, nodes = 1.0, []
    scaled = _constant_factor(node)
    if scaled is not None:
        nodes.append(node)
        node, scale = scaled
    operands = _matmul_operands(node)
    if operands is None:
        return None
    q, kt = operands
    qv = _value(q)
    if qv is None or qv.dim() < 3:
        return None
    k = _last_two_swapped(kt, qv.dim())
    if k is None:
        return None
    return q, k, scale, nodes + [node, kt]


def _inference_operands(first, *others) -> bool:
    """Whether the tensors share one floating type the fused kernel takes and
    none needs a gradient (the fused kernel has no backward here)."""
    return first.dtype in _FLOATS and all(t.dtype == first.dtype for t in others) and \
        not any(t.requires_grad for t in (first, *others))


def _erase_unused(graph: torch.fx.Graph, nodes) -> None:
    """Erases those of `nodes`, in order, that nothing reads any more."""
    for node in nodes:
        if not node.users:
            graph.erase_node(node)


def fuse_manual_attention(graph: torch.fx.Graph) -> int:
    """Rewrites hand-written attention into scaled_dot_product_attention;
    returns how many it rewrote."""
    rewritten = 0
    for node in list(graph.nodes):
        if _alibi_attention(graph, node):
            rewritten += 1
            continue
        operands = _matmul_operands(node)
        if operands is None:
            continue
        probs, value = operands
        softmax, casts = _through_identities(probs)
        out, v = _value(node), _value(value)
        if out is None or v is None:
            continue
        rank = out.dim()
        if rank < 2:  # attention has rows of queries and of features at least
            continue
        scores = _softmax_input(softmax, rank)
        if scores is None:
            continue
        found = _scores(scores)
        if found is None:
            continue
        q, k, scale, mask, score_nodes = found
        casts_of_qk = []
        if _upcast_source(q) is not None and _upcast_source(k) is not None:
            casts_of_qk = [q, k]
            q, k = _upcast_source(q), _upcast_source(k)
        qv, kv = _value(q), _value(k)
        if qv is None or kv is None or not (qv.dim() == kv.dim() == v.dim() == rank) or \
                qv.shape[:-2] != kv.shape[:-2] or kv.shape[:-2] != v.shape[:-2] or \
                kv.shape[-2] != v.shape[-2] or not _inference_operands(qv, kv, v, out):
            continue
        # Every intermediate is read only by the next one in the chain.
        chain = [*casts, softmax, *score_nodes]
        users = [node, *casts, softmax, *score_nodes[:-1]]
        if not all(_only_user(n, u) for n, u in zip(chain, users)):
            continue
        kwargs = {"scale": scale}
        with graph.inserting_before(node):
            if isinstance(mask, tuple) and mask[0] == "keep":  # masked_fill(cond, -inf)
                kwargs["attn_mask"] = graph.call_function(torch.logical_not, (mask[1],))
            elif mask is not None:
                mask, factor = mask if isinstance(mask, tuple) else (mask, 1.0)
                mv = _value(mask)
                # The mask in q's type: a wider one would be narrowed.
                if mv is None or mv.dtype != qv.dtype:
                    continue
                kwargs["attn_mask"] = mask if factor == 1.0 else \
                    graph.call_function(operator.mul, (mask, factor))
            fused = graph.call_function(F.scaled_dot_product_attention, (q, k, value), kwargs)
        node.replace_all_uses_with(fused)
        _erase_unused(graph, [node, *chain, *casts_of_qk])
        rewritten += 1
    return rewritten


def _view_source(node):
    """x if node is x.view(...) or x.reshape(...)."""
    if _call(node, (torch.reshape,), ("view", "reshape")):
        return node.args[0]
    return None


def _alibi_attention(graph: torch.fx.Graph, node) -> bool:
    """BLOOM's attention over heads folded into the batch, with its ALiBi
    bias as baddbmm's input, rewritten into scaled_dot_product_attention
    with the bias (and the mask) as the additive mask; whether it was:

        scores = alibi.baddbmm(q, k.transpose(-1, -2), beta=beta, alpha=alpha)
        w = scores.view(b, h, l, s) [+ mask]
        probs = softmax(w, dim=-1[, dtype=f32])[.to(q.dtype)], inference dropout
        out = torch.bmm(probs.view(b * h, l, s), v)

    The bias needs no rounding (beta 1, or a power of two); the bias plus the
    mask is one 16-bit add where eager rounds the scores before adding the
    mask."""
    if not _call(node, (torch.bmm,), ("bmm",)) or len(node.args) != 2:
        return False
    probs3, value = node.args
    softmax, casts = _through_identities(_view_source(probs3))
    weights = _softmax_input(softmax, 4)
    if weights is None:
        return False
    mask = None
    if _call(weights, (operator.add, torch.add), ("add", "__add__")) and len(weights.args) == 2:
        view4, mask = weights.args
        if _view_source(view4) is None:
            view4, mask = mask, view4
    else:
        view4 = weights
    scores = _view_source(view4)
    if not _call(scores, (torch.baddbmm,), ("baddbmm",)):
        return False
    alibi = scores.args[0]
    batch1 = _arg(scores, 1, "batch1")
    batch2 = _arg(scores, 2, "batch2")
    beta, alpha = scores.kwargs.get("beta", 1), scores.kwargs.get("alpha", 1)
    if len(scores.args) > 3 or not _is_power_of_two(beta) or \
            not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha == 0:
        return False
    key = _last_two_swapped(batch2, 3)
    values = [_value(n) for n in (batch1, key, value, alibi, view4, node)]
    if any(t is None for t in values) or not (isinstance(mask, torch.fx.Node) or mask is None):
        return False
    q, k, v, bias, w4, out = values
    mv = _value(mask) if mask is not None else None
    if q.dim() != 3 or k.dim() != 3 or v.dim() != 3 or w4.dim() != 4 or \
            not _inference_operands(q, k, v, bias, out) or \
            (mask is not None and (mv is None or mv.dtype != q.dtype)):
        return False
    # The batch, the heads, the head size and the bias's rows as numbers:
    # the views below name them; positions may be symbolic (generation
    # compiles the decode step for any cache length), and are left to -1.
    if bias.dim() != 3:
        return False
    b, h, d, bias_rows = w4.shape[0], w4.shape[1], q.shape[-1], bias.shape[1]
    if not all(type(n) is int for n in (b, h, d, bias_rows)) or q.shape[0] != b * h or \
            bias.shape[0] != b * h:
        return False
    # Every intermediate is read only by the next one in the chain.
    chain = [probs3, *casts, softmax] + ([weights] if mask is not None else []) + \
        [view4, scores, batch2]
    if not all(_only_user(n, u) for n, u in zip(chain, [node, *chain[:-1]])):
        return False
    with graph.inserting_before(node):
        def heads(x):
            return graph.call_method("view", (x, b, h, -1, d))
        attn_mask = graph.call_method("view", (alibi, b, h, bias_rows, -1))
        if beta != 1:
            attn_mask = graph.call_function(operator.mul, (attn_mask, float(beta)))
        if mask is not None:
            attn_mask = graph.call_function(operator.add, (attn_mask, mask))
        fused = graph.call_function(F.scaled_dot_product_attention,
                                    (heads(batch1), heads(key), heads(value)),
                                    {"attn_mask": attn_mask, "scale": float(alpha)})
        folded = graph.call_method("reshape", (fused, b * h, -1, d))
    node.replace_all_uses_with(folded)
    _erase_unused(graph, [node, *chain])
    return True


class AttentionGraphPasses(CustomGraphPass):
    """Inductor's pre-grad custom pass: hand-written attention as
    scaled_dot_product_attention, then attention over repeated key/value
    heads as grouped-query attention (grouped_attention.py), then attention
    with a causal boolean mask as causal attention (causal_masks.py); and a
    gather's index repeated along its rows as expanded (repeated_indices.py,
    GPT-J's rotary table)."""

    def __call__(self, graph: torch.fx.Graph) -> None:
        from .causal_masks import use_causal_attention
        from .grouped_attention import ungroup_repeated_heads
        from .repeated_indices import expand_repeated_gather_indices
        fuse_manual_attention(graph)
        ungroup_repeated_heads(graph)
        use_causal_attention(graph)
        expand_repeated_gather_indices(graph)

    def uuid(self):
        from .kernel_cache import compiler_version
        return "spyre-attention-graph-passes-" + compiler_version()
