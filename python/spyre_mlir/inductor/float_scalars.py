"""Python floats that change between calls, passed to the card as f32.

A Python float argument that Dynamo sees take a second value (a temperature,
a learning rate, a scale) becomes a graph input: a 0-d f64 tensor read
through `.item()`, maybe with Python arithmetic on it (AdamW's
`1 - lr * weight_decay`). The card has no f64, so every kernel that read it
ran on the CPU (counted; a compiled AdamW step with a learning-rate
schedule ran there whole).

Eager PyTorch computes such Python arithmetic in f64, and an elementwise op
on tensors of the card's float types computes with its scalar converted to
f32 (the type those ops compute in, for f16 and bf16 too). So where every
use is of that kind, the scalars that meet tensors are computed here, on
the host, in f64 from each call's inputs, and reach the graph as 0-d f32
tensor inputs of their own: the same values as eager's. Anything else
(integer tensors, an f64 result, an op not known to convert its scalar)
keeps the f64 inputs on the CPU.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import torch

from .extern_kernels import ELEMENT

# Elementwise ops that convert a scalar operand to their float tensor
# operand's compute type (f32), or to their result's type through f32 (as
# PyTorch converts a Python float to f16 and bf16).
_FUNCTIONS = {operator.add, operator.sub, operator.mul, operator.truediv,
              operator.iadd, operator.isub, operator.imul, operator.itruediv,
              torch.add, torch.sub, torch.mul, torch.div, torch.true_divide,
              torch.clamp, torch.clip, torch.minimum, torch.maximum, torch.where}
_METHODS = {"add", "sub", "mul", "div", "true_divide", "clamp", "clip",
            "add_", "sub_", "mul_", "div_", "clamp_"}
# Comparisons: against an f32 tensor the scalar is converted to f32; an f16
# or bf16 tensor compares with it in its own type, which the card does not.
_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
                torch.lt, torch.le, torch.gt, torch.ge, torch.eq, torch.ne}
_COMPARISON_METHODS = {"lt", "le", "gt", "ge", "eq", "ne"}
# Python arithmetic Dynamo records on floats, computed here as eager does.
_SCALAR_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
               operator.pow, operator.abs, math.sqrt, math.exp, math.log, torch._sym_sqrt}


def _card_float(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in ELEMENT


def _converts_to_f32(use: torch.fx.Node, scalar: torch.fx.Node) -> bool:
    """`use` reads `scalar` as a scalar of an elementwise op on float tensors
    of the card's types and gives one (a boolean, for a comparison with f32
    tensors; torch.where's condition may be boolean)."""
    if use.op not in ("call_function", "call_method"):
        return False
    methods = use.op == "call_method"
    operands = [*use.args, *use.kwargs.values()]
    tensors = [a.meta.get("example_value") for a in operands
               if isinstance(a, torch.fx.Node) and a is not scalar]
    result = use.meta.get("example_value")
    if use.target in (_COMPARISON_METHODS if methods else _COMPARISONS):
        return bool(tensors) and all(isinstance(t, torch.Tensor) and t.dtype == torch.float32
                                     for t in tensors) and \
            isinstance(result, torch.Tensor) and result.dtype == torch.bool
    if use.target not in (_METHODS if methods else _FUNCTIONS):
        return False
    if use.target is torch.where and tensors and isinstance(tensors[0], torch.Tensor) and \
            tensors[0].dtype == torch.bool:
        tensors = tensors[1:]
    return bool(tensors) and all(_card_float(t) for t in tensors) and _card_float(result)


class Scalars(NamedTuple):
    """The f64 inputs computed on the host: their positions, the scalar
    nodes computed from them, and those that meet tensors (each becomes an
    f32 input), in order."""
    positions: list[int]
    nodes: frozenset
    boundary: list[torch.fx.Node]


def _is_arithmetic(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and node.target in _SCALAR_OPS and not node.kwargs and \
        isinstance(node.meta.get("example_value"), (torch.SymFloat, float))


def narrowable(gm: torch.fx.GraphModule, example_inputs) -> Scalars | None:
    """The 0-d f64 inputs and their scalars, if each such input is read only
    through `.item()` and Python arithmetic that elementwise ops on the
    card's float types read in the end; else None."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    positions = [i for i, (node, value) in enumerate(zip(placeholders, example_inputs))
                 if isinstance(value, torch.Tensor) and value.dtype == torch.float64 and
                 value.dim() == 0 and value.device.type == "cpu" and node.users]
    if not positions:
        return None
    inputs = {placeholders[i] for i in positions}
    scalars, boundary = set(), []
    for node in gm.graph.nodes:  # in order: a node's operands come first
        if node.op == "call_method" and node.target == "item" and node.args[0] in inputs:
            pass
        elif _is_arithmetic(node) and any(a in scalars for a in node.args) and all(
                a in scalars for a in node.args if isinstance(a, torch.fx.Node)):
            pass
        else:
            continue
        scalars.add(node)
    for node in inputs:
        if any(user not in scalars for user in node.users):
            return None
    for node in gm.graph.nodes:
        if node not in scalars:
            continue
        tensor_uses = [u for u in node.users if u not in scalars]
        if not all(_converts_to_f32(use, node) for use in tensor_uses):
            return None
        if tensor_uses:
            boundary.append(node)
    return Scalars(positions, frozenset(scalars), boundary) if boundary else None


def _recipe(node, position):
    """A function of a call's arguments that computes the scalar `node`
    computes, in f64 (made before the graph changes)."""
    if not isinstance(node, torch.fx.Node):
        return lambda args: node
    if node.op == "call_method":  # .item() of an input
        i = position[node.args[0]]
        return lambda args: float(args[i])
    target, parts = node.target, [_recipe(a, position) for a in node.args]
    return lambda args: target(*(part(args) for part in parts))


def narrowed(compile_graph, gm, example_inputs, scalars: Scalars):
    """`compile_graph` of a copy of `gm` (a dynamic graph compiles gm again
    per shape) in which each boundary scalar is an f32 0-d tensor input after
    the graph's own (a 0-d tensor promotes no type, as a Python float does
    not), and a callable that computes them at each call before running it."""
    from .mask_inputs import copied, module_of
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    position = {node: i for i, node in enumerate(placeholders)}
    recipes = [_recipe(node, position) for node in scalars.boundary]
    graph, values = copied(gm)
    fake = placeholders[scalars.positions[0]].meta.get("example_value")
    last = values[placeholders[-1]]
    copies = {values[node] for node in scalars.nodes}
    for k, node in enumerate(scalars.boundary):
        with graph.inserting_after(last):
            last = graph.placeholder(f"spyre_float_scalar_{k}")
        last._dynamo_source = None  # no user variable: computed here
        if isinstance(fake, torch.Tensor):
            last.meta["example_value"] = fake.to(torch.float32)
        for use in [u for u in values[node].users if u not in copies]:
            use.replace_input_with(values[node], last)
    for node in reversed(list(graph.nodes)):  # the scalars nothing reads now
        if node in copies and not node.users:
            graph.erase_node(node)
    rewritten = module_of(gm, graph)

    def extra(args):
        return [torch.tensor(recipe(args), dtype=torch.float32) for recipe in recipes]
    compiled = compile_graph(rewritten, [*example_inputs, *extra(example_inputs)])

    def run(*args):
        return compiled(*args, *extra(args))
    return run
