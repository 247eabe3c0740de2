"""Grouped-query attention without repeated key/value heads.

Hugging Face models (and others following Llama's code) repeat each
key/value head for its query heads before calling
scaled_dot_product_attention whenever they pass a mask:

    x[:, :, None, :, :].expand(b, kv_heads, n_rep, s, d).reshape(b, kv_heads * n_rep, s, d)

and other models write the same as `x.repeat_interleave(n_rep, dim=1)`.
The reshape of an expanded view is a copy (so is repeat_interleave), so every layer writes n_rep
copies of its whole key/value cache to device memory and reads them back,
once per decode step. This pass, run on Dynamo's graph before AOTAutograd,
gives attention the unrepeated heads with `enable_gqa=True`, which means the
same thing (query head h attends with key/value head h // n_rep); the
attention decomposition then multiplies each key/value head with its group
of query heads as one matrix (decompositions._grouped).
"""

from __future__ import annotations

import operator

import torch

_ATTENTION = (torch._C._nn.scaled_dot_product_attention,
              torch.nn.functional.scaled_dot_product_attention)
_FULL = slice(None)


def _shape(node):
    value = node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None
    return tuple(value.shape) if isinstance(value, torch.Tensor) else None


def _is_head_axis_insert(node: torch.fx.Node) -> bool:
    """x[:, :, None] (any trailing full slices or an ellipsis) or x.unsqueeze(2)."""
    if node.op == "call_function" and node.target is operator.getitem:
        index = node.args[1]
        if not isinstance(index, tuple) or len(index) < 3:
            return False
        rest = index[3:]
        return index[:3] == (_FULL, _FULL, None) and \
            all(i == _FULL or i is Ellipsis for i in rest)
    if node.op == "call_method" and node.target == "unsqueeze" or \
            node.op == "call_function" and node.target is torch.unsqueeze:
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        return dim in (2, -3) and len(_shape(node) or ()) == 5
    return False


def _interleaved(node) -> tuple[torch.fx.Node, int] | None:
    """(x, n_rep) if `node` is x.repeat_interleave(n_rep, dim=1) of a
    (b, h, s, d) x (n_rep an int); None otherwise."""
    if not (isinstance(node, torch.fx.Node) and (
            node.op == "call_method" and node.target == "repeat_interleave" or
            node.op == "call_function" and node.target is torch.repeat_interleave)):
        return None
    args = list(node.args) + [None] * (3 - len(node.args))
    source, repeats = args[0], args[1] if args[1] is not None else node.kwargs.get("repeats")
    dim = args[2] if args[2] is not None else node.kwargs.get("dim")
    if not isinstance(source, torch.fx.Node) or type(repeats) is not int or \
            dim not in (1, -3) or node.kwargs.get("output_size") is not None:
        return None
    src, out = _shape(source), _shape(node)
    if src is None or out is None or len(src) != 4 or \
            out != (src[0], src[1] * repeats, *src[2:]):
        return None
    return source, repeats


def _chain_start(node: torch.fx.Node) -> torch.fx.Node:
    """The first node of a repeat `_repeated` matched."""
    if node.target in ("reshape", "view"):
        return node.args[0].args[0]  # the head axis insert
    return node


def _repeated(node) -> tuple[torch.fx.Node, int] | None:
    """(x, n_rep) if `node` is x (b, h, s, d) with each head repeated n_rep
    times in place, as repeat_kv or repeat_interleave(n_rep, dim=1) does;
    None otherwise."""
    if (interleaved := _interleaved(node)) is not None:
        return interleaved
    if not (isinstance(node, torch.fx.Node) and node.op == "call_method" and
            node.target in ("reshape", "view")):
        return None
    expand = node.args[0]
    if not (isinstance(expand, torch.fx.Node) and expand.op == "call_method" and
            expand.target == "expand"):
        return None
    insert = expand.args[0]
    if not (isinstance(insert, torch.fx.Node) and _is_head_axis_insert(insert)):
        return None
    source = insert.args[0]
    shapes = [_shape(n) for n in (source, insert, expand, node)]
    if any(s is None for s in shapes):
        return None
    src, ins, exp, out = shapes
    if len(src) != 4 or ins != src[:2] + (1,) + src[2:]:
        return None
    b, heads, s, d = src
    n_rep = exp[2]
    if exp != (b, heads, n_rep, s, d) or out != (b, heads * n_rep, s, d):
        return None
    return source, n_rep


def _key_value(node: torch.fx.Node):
    args = list(node.args) + [None] * (3 - len(node.args))
    return (args[1] if args[1] is not None else node.kwargs.get("key"),
            args[2] if args[2] is not None else node.kwargs.get("value"))


#: The operator module's functions that write their first operand.
_OPERATORS_IN_PLACE = frozenset({
    operator.setitem, operator.delitem, operator.iadd, operator.isub, operator.imul,
    operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow, operator.imatmul,
    operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift})


def _may_mutate(node: torch.fx.Node) -> bool:
    """Whether `node` may write a tensor in place (conservatively). The
    operator module's and_, or_, not_ and the like are not in place."""
    if node.op == "call_module":
        return True
    if node.op == "call_method":
        return node.target.endswith("_") and not node.target.startswith("__")
    if node.op == "call_function":
        if getattr(node.target, "__module__", None) in ("_operator", "operator"):
            return node.target in _OPERATORS_IN_PLACE
        name = getattr(node.target, "__name__", "")
        return "out" in node.kwargs or (name.endswith("_") and not name.startswith("__"))
    return False


#: Methods and functions whose result may share its input's storage.
_VIEW_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "expand", "expand_as", "unsqueeze", "squeeze",
    "transpose", "permute", "t", "T", "mT", "to", "type", "type_as", "contiguous", "flatten",
    "unflatten", "narrow", "select", "as_strided", "detach", "unbind", "split", "chunk",
    "movedim", "swapaxes", "diagonal", "real", "imag", "__getitem__"})
_VIEW_FUNCTIONS = frozenset({
    operator.getitem, getattr, torch.reshape, torch.transpose, torch.permute, torch.squeeze,
    torch.unsqueeze, torch.flatten, torch.narrow, torch.select, torch.movedim, torch.swapaxes,
    torch.unbind, torch.split, torch.chunk, torch.diagonal, torch.t, torch.as_strided,
    torch.detach})


def aliases(node: torch.fx.Node) -> list[torch.fx.Node]:
    """`node` and every node that may be a view of it (conservatively)."""
    found, stack = [node], [node]
    while stack:
        for user in stack.pop().users:
            if user not in found and (
                    user.op == "call_method" and user.target in _VIEW_METHODS or
                    user.op == "call_function" and user.target in _VIEW_FUNCTIONS):
                found.append(user)
                stack.append(user)
    return found


def written_in_place(node: torch.fx.Node) -> bool:
    """Whether a node may write `node`'s tensor in place, itself or through a
    view of it."""
    return any(_may_mutate(user) for alias in aliases(node) for user in alias.users)


def _unchanged_until(chain_start: torch.fx.Node, attention: torch.fx.Node) -> bool:
    """The repeat is a copy: attention reads the values of the moment it was
    made. Reading the source at the attention instead is the same only if
    nothing may change it in place in between."""
    node = chain_start.next
    while node is not attention:
        if _may_mutate(node):
            return False
        node = node.next
    return True


def _erase_if_unused(node: torch.fx.Node) -> None:
    """The repeat chain, only its own nodes: a general dead-code pass would
    also drop in-place ops whose results nothing reads (the cache updates)."""
    while isinstance(node, torch.fx.Node) and not node.users and \
            node.op in ("call_method", "call_function"):
        parent = node.args[0]
        node.graph.erase_node(node)
        node = parent


def ungroup_repeated_heads(graph: torch.fx.Graph) -> int:
    """Rewrites attention over repeated key/value heads to enable_gqa over
    the unrepeated ones; returns how many it rewrote."""
    rewritten = 0
    order = {n: i for i, n in enumerate(graph.nodes)}  # erasing keeps the others' order
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _ATTENTION or \
                node.kwargs.get("enable_gqa", False):
            continue
        key, value = _key_value(node)
        k, v = _repeated(key), _repeated(value)
        if k is None or v is None or k[1] != v[1]:
            continue
        # Query heads and the position of each head's group: n_rep query
        # heads per key/value head, as enable_gqa pairs them.
        query = _shape(node.args[0] if node.args else node.kwargs.get("query"))
        if query is None or len(query) != 4 or query[1] != _shape(k[0])[1] * k[1]:
            continue
        starts = [_chain_start(key), _chain_start(value)]
        if not _unchanged_until(min(starts, key=order.__getitem__), node):
            continue
        args = list(node.args)
        kwargs = dict(node.kwargs)
        for i, name, source in ((1, "key", k[0]), (2, "value", v[0])):
            if len(args) > i:
                args[i] = source
            else:
                kwargs[name] = source
        kwargs["enable_gqa"] = True
        node.args, node.kwargs = tuple(args), kwargs
        _erase_if_unused(key)
        if value is not key:
            _erase_if_unused(value)
        rewritten += 1
    return rewritten

