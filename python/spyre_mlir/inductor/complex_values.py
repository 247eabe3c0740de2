"""Complex values as pairs of reals: rotary embeddings written with
`view_as_complex`, a complex product and `view_as_real` (Meta's Llama code,
Llama 4, DeepSeek-V2) run on the card.

The card has no complex type, and Inductor falls back to ATen for every op on
a complex tensor. `real_pairs` gives each complex value of the post-grad
graph a real twin with a trailing dimension of 2 (real, imaginary), the
layout `view_as_real` has, and rewrites the ops on complex values as
elementwise ops on their twins: `view_as_complex(x)` is `x`,
`view_as_real(z)` is z's twin, views take the trailing 2 along, and products
and `polar` choose per lane of the trailing dimension. All or nothing: when
any complex value is produced or used by an op not listed here, or is an
output of the graph, the graph is left as it is (its complex ops run on the
CPU, counted as before).
"""

from __future__ import annotations

import torch
from torch import fx
from torch._guards import detect_fake_mode

from .rotate_half import _add

aten, prims = torch.ops.aten, torch.ops.prims

_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64,
         torch.complex32: torch.float16}

#: Views whose twin is the same view with the trailing dimension added.
_VIEWS = {aten.reshape.default, aten.view.default, aten.expand.default, aten.unsqueeze.default,
          aten.slice.Tensor, aten.permute.default, aten.squeeze.dim, aten.select.int,
          aten.transpose.int, aten.clone.default, aten.alias.default}


def _complex(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in _REAL


def _handled(node: fx.Node) -> bool:
    """Whether the rewrite knows how to give this complex node a twin."""
    if node.op == "placeholder":
        return True
    if node.op != "call_function":
        return False
    t = node.target
    if t in (aten.view_as_complex.default, aten.polar.default, aten.complex.default):
        return True
    if t in _VIEWS:
        return True
    if t in (aten.mul.Tensor, aten.add.Tensor, aten.sub.Tensor):
        # Both complex, or a complex times a real tensor or number.
        a, b = node.args[0], node.args[1]
        kinds = [_complex(x.meta.get("val")) if isinstance(x, fx.Node) else
                 ("complex" if isinstance(x, complex) else False) for x in (a, b)]
        if "complex" in kinds or len(node.args) > 2 or node.kwargs:
            return False
        return all(kinds) or (t is aten.mul.Tensor and any(kinds))
    return False


def real_pairs(graph: fx.Graph) -> int:
    """Rewrites the graph's complex values as real pairs; returns how many
    complex nodes were rewritten (0: the graph is unchanged)."""
    complex_nodes = [n for n in graph.nodes if _complex(n.meta.get("val"))]
    if not complex_nodes:
        return 0
    for node in complex_nodes:
        if not _handled(node):
            return 0
        for user in node.users:
            if user.op == "output" or (user.target is not aten.view_as_real.default and
                                       not _complex(user.meta.get("val"))):
                return 0
    mode = detect_fake_mode([n.meta["val"] for n in complex_nodes])
    if mode is None:
        return 0
    twin: dict[fx.Node, fx.Node] = {}
    for node in complex_nodes:
        insert = graph.inserting_after(node) if node.op == "placeholder" else \
            graph.inserting_before(node)
        with insert:
            twin[node] = _twin(graph, mode, node, twin)
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is aten.view_as_real.default and \
                node.args[0] in twin and twin[node.args[0]] is not node:
            node.replace_all_uses_with(twin[node.args[0]])
            graph.erase_node(node)
    for node in reversed(complex_nodes):
        if node.op != "placeholder" and not node.users:
            graph.erase_node(node)
    graph.eliminate_dead_code()
    return len(complex_nodes)


def _twin(graph: fx.Graph, mode, node: fx.Node, twin: dict) -> fx.Node:
    def add(target, *args, **kwargs):
        return _add(graph, mode, target, *args, **kwargs)

    value = node.meta["val"]

    def lanes():
        # The trailing dimension's lane: true for the real part.
        iota = add(prims.iota.default, 2, start=0, step=1, dtype=torch.int32,
                   device=value.device, requires_grad=False)
        return add(aten.eq.Scalar, iota, 0)

    def part(z, which):  # the real (0) or imaginary (1) part, with a trailing 1
        return add(aten.unsqueeze.default, add(aten.select.int, twin[z], -1, which), -1)

    def per_lane(real, imag):
        return add(aten.where.self, lanes(), real, imag)

    t = node.target
    if node.op == "placeholder":
        return add(aten.view_as_real.default, node)
    if t is aten.view_as_complex.default:
        return node.args[0]
    if t is aten.complex.default:
        re, im = (add(aten.unsqueeze.default, x, -1) for x in node.args[:2])
        return per_lane(re, im)
    if t is aten.polar.default:
        magnitude, angle = (add(aten.unsqueeze.default, x, -1) for x in node.args[:2])
        return per_lane(add(aten.mul.Tensor, magnitude, add(aten.cos.default, angle)),
                        add(aten.mul.Tensor, magnitude, add(aten.sin.default, angle)))
    if t in _VIEWS:
        return add(t, twin[node.args[0]], *_view_args(t, node.args[1:],
                                                      node.args[0].meta["val"].dim()))
    a, b = node.args[0], node.args[1]
    if t in (aten.add.Tensor, aten.sub.Tensor):
        return add(t, twin[a], twin[b])
    if not (isinstance(a, fx.Node) and a in twin):
        a, b = b, a
    if not (isinstance(b, fx.Node) and b in twin):  # complex times real
        if isinstance(b, fx.Node):
            b = add(aten.unsqueeze.default, b, -1)
        return add(aten.mul.Tensor, twin[a], b)
    ar, ai, br, bi = part(a, 0), part(a, 1), part(b, 0), part(b, 1)
    mul = aten.mul.Tensor
    return per_lane(add(aten.sub.Tensor, add(mul, ar, br), add(mul, ai, bi)),
                    add(aten.add.Tensor, add(mul, ar, bi), add(mul, ai, br)))


def _view_args(target, args, rank: int) -> tuple:
    """A view's arguments for the twin of a view of a complex value of rank
    `rank`: sizes gain the trailing 2, dimensions are made non-negative (a
    negative one would count from the trailing 2), and a permutation keeps
    the trailing dimension last."""
    def dim(d, of):
        return d % of

    if target in (aten.reshape.default, aten.view.default, aten.expand.default):
        return (list(args[0]) + [2], *args[1:])
    if target is aten.unsqueeze.default:
        return (dim(args[0], rank + 1),)
    if target is aten.permute.default:
        return ([dim(d, rank) for d in args[0]] + [rank],)
    if target is aten.transpose.int:
        return (dim(args[0], rank), dim(args[1], rank))
    if target in (aten.slice.Tensor, aten.squeeze.dim, aten.select.int):
        return (dim(args[0] if args else 0, rank), *args[1:])
    return tuple(args)
