"""Python floats that change between calls, passed to the card as f32.

A Python float argument that Dynamo sees take a second value (a temperature,
a learning rate, a scale) becomes a graph input: a 0-d f64 tensor read
through `.item()`. The card has no f64, so every kernel that read it ran on
the CPU (counted; a compiled AdamW step with a changing learning rate ran
there whole). Where the value only meets tensors of the card's float types
in elementwise arithmetic, eager PyTorch computes with it converted to f32
(the type those ops compute in, for f16 and bf16 too), so the graph takes
it as a 0-d f32 tensor, converted on the host at each call: the same values
as eager's. Any other use (integer tensors, Python arithmetic on the value,
an f64 result) keeps the f64 input.
"""

from __future__ import annotations

import operator

import torch

_CARD_FLOATS = (torch.float16, torch.bfloat16, torch.float32)

# Elementwise ops that convert a scalar operand to their float tensor
# operand's compute type (f32).
_FUNCTIONS = {operator.add, operator.sub, operator.mul, operator.truediv,
              operator.iadd, operator.isub, operator.imul, operator.itruediv,
              torch.add, torch.sub, torch.mul, torch.div, torch.true_divide,
              torch.clamp, torch.clip, torch.minimum, torch.maximum, torch.where}
_METHODS = {"add", "sub", "mul", "div", "true_divide", "clamp", "clip",
            "add_", "sub_", "mul_", "div_", "clamp_"}


def _card_float(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in _CARD_FLOATS


def _converts_to_f32(use: torch.fx.Node, item: torch.fx.Node) -> bool:
    """`use` reads `item` as a scalar of an elementwise op on float tensors
    of the card's types and gives one."""
    if use.op == "call_function":
        known = use.target in _FUNCTIONS
    elif use.op == "call_method":
        known = use.target in _METHODS
    else:
        return False
    operands = [*use.args, *use.kwargs.values()]
    tensors = [a.meta.get("example_value") for a in operands
               if isinstance(a, torch.fx.Node) and a is not item]
    return known and bool(tensors) and all(_card_float(t) for t in tensors) and \
        _card_float(use.meta.get("example_value"))


def narrowable(gm: torch.fx.GraphModule, example_inputs) -> list[int]:
    """Positions of 0-d f64 inputs that only elementwise arithmetic on the
    card's float types reads, through `.item()`."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    positions = []
    for i, (node, value) in enumerate(zip(placeholders, example_inputs)):
        if not (isinstance(value, torch.Tensor) and value.dtype == torch.float64 and
                value.dim() == 0 and value.device.type == "cpu") or not node.users:
            continue
        items = list(node.users)
        if all(u.op == "call_method" and u.target == "item" and u.users and
               all(_converts_to_f32(use, u) for use in u.users) for u in items):
            positions.append(i)
    return positions


def narrowed(compile_graph, gm, example_inputs, positions):
    """`compile_graph(gm, inputs)` for the inputs at `positions` as 0-d f32
    tensors that the ops read in place of their `.item()` (a 0-d tensor
    promotes no type, as a Python float does not), and a callable that
    converts them at each call before running it."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    inputs = list(example_inputs)
    for i in positions:
        node = placeholders[i]
        for item in list(node.users):
            item.replace_all_uses_with(node)
            gm.graph.erase_node(item)
        inputs[i] = inputs[i].to(torch.float32)
        example = node.meta.get("example_value")
        if isinstance(example, torch.Tensor):
            node.meta["example_value"] = example.to(torch.float32)
    gm.recompile()
    compiled = compile_graph(gm, inputs)

    def run(*args):
        args = list(args)
        for i in positions:
            args[i] = args[i].to(torch.float32)
        return compiled(*args)
    return run
