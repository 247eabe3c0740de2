"""A graph input updated by the compiled graph (a static KV cache's
`index_copy_`) is written where its new value is computed.

Functionalization leaves such an update as `copy_(input, new)` at the end of
the post-grad graph, and the graph's other readers of the new value read
`new`. The card has no row scatter, so a cache update is a one-hot rewrite of
every position (decompositions.py); when `new` has another reader (the
attention after it), Inductor realizes it into a buffer of its own and copies
that buffer into the input at the end: the whole cache written, read back
and written again on every decode step.

`write_updates_in_place` moves each such `copy_` to just after `new` and has
`new`'s other readers read the `copy_` (the input, updated) instead. `new` is
then read only by the `copy_`, and Inductor computes it straight into the
input's storage. That is the same program when nothing reads the input's old
value after `new` is computed, which is checked (through views of the input
too); otherwise the update is left as it is. Whether `new` can be computed
in place (it reads the old value only where it writes it, and no op mutates
it after it is computed) is the copy_ lowering's to decide
(lowerings._written_in_place): it knows what Inductor realized.
"""

from __future__ import annotations

import torch
from torch import fx


def _aliases(op) -> bool:
    """Whether `op`'s result may be a view of an argument."""
    schema = getattr(op, "_schema", None)
    return schema is None or any(r.alias_info is not None for r in schema.returns)


def _readers(node: fx.Node) -> set[fx.Node]:
    """The nodes that read `node`'s storage: its users and, through ops whose
    result may be a view of it, theirs."""
    readers, todo = set(), [node]
    while todo:
        for user in todo.pop().users:
            if user not in readers:
                readers.add(user)
                if user.op == "call_function" and _aliases(user.target):
                    todo.append(user)
    return readers


def _same_layout(a: fx.Node, b: fx.Node) -> bool:
    va, vb = a.meta.get("val"), b.meta.get("val")
    return isinstance(va, torch.Tensor) and isinstance(vb, torch.Tensor) and \
        va.shape == vb.shape and va.dtype == vb.dtype and va.device == vb.device and \
        va.stride() == vb.stride()


def write_updates_in_place(graph: fx.Graph) -> int:
    """Moves each final `copy_(input, new)` of a graph input to just after
    `new` where that reads no old value late (above); returns how many."""
    copy_ = torch.ops.aten.copy_.default
    copies = [n for n in graph.nodes if n.target is copy_ and not n.users]
    targets = [c.args[0] for c in copies]
    order = {n: i for i, n in enumerate(graph.nodes)}
    moved = 0
    for copy in copies:
        dst, new = copy.args[0], copy.args[1]
        if not isinstance(dst, fx.Node) or dst.op != "placeholder" or \
                targets.count(dst) != 1 or len(copy.args) != 2 or copy.kwargs or \
                not isinstance(new, fx.Node) or new.op != "call_function" or \
                _aliases(new.target) or not _same_layout(dst, new):
            continue
        # Every reader of the old value (but the copy itself) comes no later
        # than `new`, which the copy then follows.
        if any(order[r] > order[new] for r in _readers(dst) if r is not copy):
            continue
        # Inductor's reinplacing, after this pass, computes an op such as
        # index_put(dst, ...) into dst where dst is copied into afterwards,
        # taking that copy for the graph's last: with the copy moved, readers
        # of the op's result after it would read `new` instead (an
        # index_copy_ into an input read after a matmul's result replaced
        # that input: another input's copy of it came back as the product).
        if any(u.args and u.args[0] is dst and u is not new and
               any(order[r] > order[new] for r in _readers(u))
               for u in dst.users if u is not copy):
            continue
        others = [u for u in new.users if u is not copy]
        if not others:
            continue  # Inductor writes the input directly already
        # A graph output (or a view of one) would then be the input's storage
        # where the program returns a tensor of its own.
        if any(r.op == "output" for r in _readers(new)):
            continue
        new.append(copy)
        order[copy] = order[new]
        for user in others:
            user.replace_input_with(new, copy)
        moved += 1
    if moved:
        graph.lint()
    return moved
