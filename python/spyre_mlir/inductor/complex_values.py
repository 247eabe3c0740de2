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

import math

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
    if t in (aten._fft_r2c.default, aten._fft_c2c.default):
        return _dft_fits(node)
    if t is prims.convert_element_type.default:  # a real tensor made complex
        source = node.args[0].meta.get("val")
        return isinstance(source, torch.Tensor) and source.dtype == _REAL[node.args[1]]
    if t in (aten.mul.Tensor, aten.add.Tensor, aten.sub.Tensor):
        # Both complex, or a complex times a real tensor or number.
        operands = node.args[:2]
        if any(isinstance(x, complex) for x in operands) or len(node.args) > 2 or node.kwargs:
            return False
        kinds = [isinstance(x, fx.Node) and _complex(x.meta.get("val")) for x in operands]
        return all(kinds) or (t is aten.mul.Tensor and any(kinds))
    return False


#: Ops on a complex value with a real result, and theirs on the two parts.
_REAL_RESULTS = {aten.abs.default: aten.hypot.default, aten.angle.default: aten.atan2.default}

#: Multiply-adds beyond which a transform is left to the CPU's FFT: the card
#: computes a discrete Fourier transform as products with n x n matrices.
MAX_DFT_PRODUCTS = 1 << 24


def _dft_fits(node: fx.Node) -> bool:
    value = node.args[0].meta.get("val")
    if not isinstance(value, torch.Tensor) or value.dtype not in (torch.float32, torch.complex64):
        return False
    dims = [d % value.dim() for d in node.args[1]]
    work = sum(value.numel() * value.shape[d] for d in dims)
    return all(isinstance(s, int) for s in value.shape) and 0 < work <= MAX_DFT_PRODUCTS


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
                                       user.target not in _REAL_RESULTS and
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
        if node.op == "call_function" and node.target in _REAL_RESULTS and \
                node.args[0] in twin:
            pair = twin[node.args[0]]
            with graph.inserting_before(node):
                re, im = (_add(graph, mode, aten.select.int, pair, -1, k) for k in (0, 1))
                result = _add(graph, mode, _REAL_RESULTS[node.target],
                              *((re, im) if node.target is aten.abs.default else (im, re)))
            node.replace_all_uses_with(result)
            graph.erase_node(node)
        elif node.op == "call_function" and node.target is aten.view_as_real.default and \
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

    def part(z, which):  # the real (0) or imaginary (1) part, with a trailing 1
        return add(aten.unsqueeze.default, add(aten.select.int, twin[z], -1, which), -1)

    def per_lane(real, imag):
        return _per_lane(add, value.device, real, imag)

    def real_pair(x):  # a real tensor as a complex one: a zero imaginary part
        zero = add(aten.full.default, [1], 0.0, dtype=_REAL[value.dtype], device=value.device,
                   pin_memory=False)
        return per_lane(add(aten.unsqueeze.default, x, -1), zero)

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
    if t is aten._fft_r2c.default:
        x, dims, normalization, onesided = node.args
        return _dft(add, real_pair(x), dims, normalization, True, onesided, value.device)
    if t is prims.convert_element_type.default:
        return real_pair(node.args[0])
    if t is aten._fft_c2c.default:
        z, dims, normalization, forward = node.args
        return _dft(add, twin[z], dims, normalization, forward, False, value.device)
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


def _per_lane(add, device, real, imag):
    """`real` in the trailing dimension's first lane, `imag` in its second
    (both broadcast over a trailing dimension of 1)."""
    lane = add(prims.iota.default, 2, start=0, step=1, dtype=torch.int32, device=device,
               requires_grad=False)
    return add(aten.where.self, add(aten.eq.Scalar, lane, 0), real, imag)


def _dft(add, pair, dims, normalization, forward, onesided, device):
    """The discrete Fourier transform of a complex twin (..., 2) over `dims`,
    one dimension at a time, as products with the n x n cosine and sine
    matrices: (zr + i zi)(C -+ i S). Graph-built products are not ones the
    program asked for, so in f32 they run as f32 sums on the vector unit
    (export._matmul_spec), as precise as the CPU's transform up to the
    order of additions. `normalization` is ATen's: 0 none, 1 by sqrt(n),
    2 by n, n being the product of the transformed sizes; `onesided` keeps
    the first n // 2 + 1 frequencies of the last dimension (rfft)."""
    rank = pair.meta["val"].dim() - 1
    dims = [d % rank for d in dims]
    sign = 1.0 if forward else -1.0
    total = 1
    for d in dims:
        shape = list(pair.meta["val"].shape)
        n = shape[d]
        total *= n
        # dimension d next to the trailing 2: (rows, n) per part
        order = [k for k in range(rank) if k != d] + [d, rank]
        moved = add(aten.permute.default, pair, order)
        rows = 1
        for k in order[:-2]:
            rows *= shape[k]
        parts = [add(aten.reshape.default, add(aten.select.int, moved, -1, which), [rows, n])
                 for which in (0, 1)]
        i = add(prims.iota.default, n, start=0, step=1, dtype=torch.int64, device=device,
                requires_grad=False)
        jk = add(aten.remainder.Scalar, add(aten.mul.Tensor, add(aten.unsqueeze.default, i, 1),
                                            add(aten.unsqueeze.default, i, 0)), n)
        angle = add(aten.mul.Tensor, add(prims.convert_element_type.default, jk, torch.float32),
                    2 * math.pi / n)
        cos, sin = add(aten.cos.default, angle), add(aten.sin.default, angle)
        zr_c, zi_c = (add(aten.mm.default, p, cos) for p in parts)
        zr_s, zi_s = (add(aten.mm.default, p, sin) for p in parts)
        real = add(aten.add.Tensor, zr_c, add(aten.mul.Tensor, zi_s, sign))
        imag = add(aten.sub.Tensor, zi_c, add(aten.mul.Tensor, zr_s, sign))
        both = _per_lane(add, device, add(aten.unsqueeze.default, real, -1),
                         add(aten.unsqueeze.default, imag, -1))
        both = add(aten.reshape.default, both, [shape[k] for k in order[:-2]] + [n, 2])
        back = [order.index(k) for k in range(rank + 1)]
        pair = add(aten.permute.default, both, back)
    if onesided:
        last = dims[-1]
        pair = add(aten.slice.Tensor, pair, last, 0, pair.meta["val"].shape[last] // 2 + 1)
    if normalization:
        pair = add(aten.mul.Tensor, pair,
                   1.0 / (math.sqrt(total) if normalization == 1 else total))
    return pair


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
