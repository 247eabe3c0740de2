"""Boolean attention masks that are causal, run as causal attention.

Hugging Face models with a static key/value cache (and any model whose mask
also hides padding) never call scaled_dot_product_attention with
`is_causal=True`: they build a boolean mask whose terms include

    kv_idx <= q_idx      # kv_idx = arange(Lk)[None, None, None, :]
                         # q_idx  = arange(Lq)[None, None, :, None]

and pass that. The fused kernel then computes every query-key block and
adds the mask, where a causal kernel skips the blocks above the diagonal,
about half of a prefill's work (a 1B Llama layer's attention, 512 queries
over 514 cached keys: 188.2 us with the mask, 116.4 with the mask and the
blocks skipped).

This pass, run on Dynamo's graph before AOTAutograd, proves from the
mask's construction that every key after its query is masked, and then
calls `spyre::causal_attention` instead: the same attention, with the mask,
that the card runs as causal. It only looks at masks made of `and`s of
terms, broadcasts and device moves; a term it cannot read leaves the call
as it is. Eagerly (on the CPU), the op is scaled_dot_product_attention with
the mask: the skipped blocks are all masked, so both give the same values.
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F

from .grouped_attention import ungroup_repeated_heads, written_in_place
from .manual_attention import _arg, _call, _value

_ATTENTION = (torch._C._nn.scaled_dot_product_attention, F.scaled_dot_product_attention)
_AND = (operator.and_, torch.logical_and, torch.bitwise_and)
_AND_METHODS = ("__and__", "logical_and", "bitwise_and")
# (functions, methods) of a comparison `a op b`, and what it bounds
# `a - b` by: a <= b is a - b <= 0, a < b is a - b <= -1.
_LESS = {((operator.le, torch.le), ("le", "__le__")): 0,
         ((operator.lt, torch.lt), ("lt", "__lt__")): -1}
_GREATER = {((operator.ge, torch.ge), ("ge", "__ge__")): 0,
            ((operator.gt, torch.gt), ("gt", "__gt__")): -1}


@torch.library.custom_op("spyre::causal_attention", mutates_args=())
def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor,
                     scale: float | None, enable_gqa: bool) -> torch.Tensor:
    """scaled_dot_product_attention(q, k, v, attn_mask=mask) for a boolean
    `mask` that masks every key after its query (key j for query i, j > i):
    the card skips those keys' blocks (decompositions.causal_attention)."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale,
                                          enable_gqa=enable_gqa)


@causal_attention.register_fake
def _(q, k, v, mask, scale, enable_gqa):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale,
                                          enable_gqa=enable_gqa)


op = torch.ops.spyre.causal_attention.default


def _int(x) -> int | None:
    return x if type(x) is int else None


def _plus_int(node):
    """(x, c) when `node` is x + c or c + x for an int c; None otherwise."""
    if _call(node, (operator.add,), ("add", "__add__", "__radd__")) and len(node.args) == 2 \
            and not node.kwargs:  # alpha scales the int
        a, b = node.args
        if isinstance(b, torch.fx.Node):
            a, b = b, a
        if isinstance(a, torch.fx.Node) and _int(b) is not None:
            return a, b
    return None


def _arange(node, seen) -> tuple[int, int] | None:
    """(c, n) when `node` is arange(n) + c (step 1, c an int); None
    otherwise. The nodes read are added to `seen`."""
    seen.add(node)
    if (plus := _plus_int(node)) is not None:
        base = _arange(plus[0], seen)
        return None if base is None else (base[0] + plus[1], base[1])
    if not _call(node, (torch.arange,)):
        return None
    args = [_int(a) for a in node.args]
    if node.kwargs.get("step", 1) != 1 or None in args or not 1 <= len(args) <= 3 or \
            "start" in node.kwargs or "end" in node.kwargs or len(args) == 3 and args[2] != 1:
        return None
    start, end = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    return start, max(0, end - start)


def _position(node, seen) -> tuple[int, int, int] | None:
    """(axis counted from the last, c, n) when `node` is arange(n) + c with
    None (new axes) around it, x[None, None, :, None] as masks write it, c
    added before or after. The nodes read are added to `seen`."""
    seen.add(node)
    if (plus := _plus_int(node)) is not None:
        inner = _position(plus[0], seen)
        return None if inner is None else (inner[0], inner[1] + plus[1], inner[2])
    if not _call(node, (operator.getitem,)) or not isinstance(node.args[1], tuple):
        return None
    index = node.args[1]
    full = [i for i, x in enumerate(index) if isinstance(x, slice)]
    if len(full) != 1 or index[full[0]] != slice(None) or \
            any(x is not None for i, x in enumerate(index) if i != full[0]):
        return None
    arange = _arange(node.args[0], seen)
    return None if arange is None else (len(index) - 1 - full[0], *arange)


def _bound(node, seen):
    """(a, b, d) for a comparison that holds only where a - b <= d, a and b
    `_position`s."""
    if not isinstance(node, torch.fx.Node) or len(node.args) != 2:
        return None
    for table, swap in ((_LESS, False), (_GREATER, True)):
        for (functions, methods), d in table.items():
            if _call(node, functions, methods):
                a, b = (_position(x, seen) for x in node.args)
                if a is None or b is None:
                    return None
                return (b, a, d) if swap else (a, b, d)
    return None


def _terms(node, seen):
    """The terms whose `and` is the mask, through broadcasts, contiguous
    copies and moves to a device (each keeps positions where they were).
    The nodes read are added to `seen`."""
    seen.add(node)
    if _call(node, _AND, _AND_METHODS) and len(node.args) == 2 and not node.kwargs:
        for x in node.args:
            yield from _terms(x, seen)
    elif _call(node, (), ("expand", "contiguous")) or (
            _call(node, (), ("to",)) and _value(node.args[0]) is not None and
            _value(node.args[0]).dtype == torch.bool):
        yield from _terms(node.args[0], seen)
    else:
        yield node


def masks_later_keys(mask: torch.fx.Node) -> bool:
    """Whether the boolean `mask` (..., Lq, Lk) is false for key j of query i
    whenever j > i: one of its terms is kv + ck <= q + cq (or <, or the same
    as >=, >) with kv = arange(Lk) along the last axis, q = arange(Lq) (or
    one position) along the one before, and cq - ck <= 0; and nothing writes
    the mask or what it is made of in place afterwards."""
    value = _value(mask)
    if value is None or value.dtype != torch.bool or value.dim() < 2:
        return False
    keys, queries = value.shape[-1], value.shape[-2]
    seen: set = set()
    found = False
    for term in _terms(mask, seen):
        bound = _bound(term, seen)
        if bound is None:
            continue
        (key_axis, ck, key_count), (query_axis, cq, query_count), d = bound
        # key_axis 0 is the last (keys), query_axis 1 the one before.
        found |= key_axis == 0 and query_axis == 1 and key_count == keys and \
            query_count in (queries, 1) and cq - ck + d <= 0
    return found and not any(written_in_place(n) for n in seen)


def _attention_args(node: torch.fx.Node):
    """(q, k, v, mask, scale, enable_gqa) of an attention call that would run
    causal if its mask masks every later key: a boolean mask node as wide as
    the keys, as tall as the queries or one row, no dropout, not already
    causal, nothing that needs a gradient; None for any other node."""
    if not _call(node, _ATTENTION):
        return None
    q, k, v = (_arg(node, i, name) for i, name in enumerate(("query", "key", "value")))
    mask = _arg(node, 3, "attn_mask")
    if not isinstance(mask, torch.fx.Node) or _arg(node, 4, "dropout_p", 0.0) != 0 or \
            _arg(node, 5, "is_causal", False):
        return None
    values = [_value(x) for x in (q, k, v, mask)]
    if any(x is None or x.requires_grad for x in values):
        return None
    queries, keys, masks = values[0], values[1], values[3]
    if masks.dtype != torch.bool or masks.dim() < 2 or masks.shape[-1] != keys.shape[-2] or \
            masks.shape[-2] not in (queries.shape[-2], 1):
        return None
    scale, gqa = _arg(node, 6, "scale"), _arg(node, 7, "enable_gqa", False)
    if type(scale) is int:
        scale = float(scale)
    if not (scale is None or type(scale) is float) or type(gqa) is not bool:
        return None
    return q, k, v, mask, scale, gqa


def _run_causal(graph: torch.fx.Graph, node: torch.fx.Node, args) -> None:
    with graph.inserting_before(node):
        call = graph.call_function(op, args)
    call.meta.update(node.meta)
    node.replace_all_uses_with(call)
    graph.erase_node(node)


def use_causal_attention(graph: torch.fx.Graph) -> None:
    """Attention calls with a causal boolean mask as spyre::causal_attention
    (module docstring). Inference only: the op has no backward."""
    for node in list(graph.nodes):
        args = _attention_args(node)
        if args is not None and masks_later_keys(args[3]):
            _run_causal(graph, node, args)


def attentions_masked_by(placeholder: torch.fx.Node) -> list[torch.fx.Node]:
    """The attention calls that take the input `placeholder` itself as their
    mask and would run causal if it masks every later key."""
    return [user for user in placeholder.users
            if (args := _attention_args(user)) is not None and args[3] is placeholder]


def hides_later_keys(mask: torch.Tensor) -> bool:
    """Whether the boolean `mask` (..., Lq, Lk) is false for key j of query i
    whenever j > i (one query row: for every key but the first)."""
    return not torch.triu(mask, diagonal=1).any()


def run_causal_on(graph: torch.fx.Graph, placeholder: torch.fx.Node) -> None:
    """The attention calls of `attentions_masked_by(placeholder)` as
    spyre::causal_attention: for a graph compiled for inputs that
    `hides_later_keys` (mask_inputs.py checks them on every call). Key and
    value heads repeated for the query heads are given to attention
    unrepeated first, as AttentionGraphPasses does before it looks for
    causal masks: spyre::causal_attention hides the repeat from that pass."""
    ungroup_repeated_heads(graph)
    for node in attentions_masked_by(placeholder):
        _run_causal(graph, node, _attention_args(node))
