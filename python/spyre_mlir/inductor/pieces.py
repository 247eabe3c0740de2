"""Splitting a trace's domain into pieces where its indexing is affine.

Inductor indexes with functions of the loop variables that the card's affine
maps cannot express: Abs (reflection padding), Min/Max (replication padding,
clamped interpolation indices), ModularIndexing with an offset (roll, cross,
fftshift), FloorDiv of a product (adaptive pooling), and indices computed as
values from the loop variables and loaded through (nearest and linear
interpolation). It also masks loads that would leave a buffer (padded
pooling, concatenation) with conditions on the loop variables.

All of these are functions of one loop variable each, and piecewise affine.
Each is tabulated over its variable and the variable's range cut into
segments on which every such function is affine (or, for a periodic pattern
such as nearest upsampling, affine after splitting the segment into two
loops, v = q * hi + lo) and every mask condition is constant. Each piece is
then a plain trace: one spyre.generic each, writing disjoint parts of the
outputs. Masked loads whose condition is false in a piece are dropped there,
so nothing reads outside a buffer.

Only parallel loops are cut: a piece must compute whole reductions.
"""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import sympy
import torch

from .trace import _INDEXED, TV, Instr, Trace, Unsupported

#: More pieces than this cost more in per-op overhead than the CPU saves.
MAX_PIECES = 64
#: Largest period tried for periodic segments (the upsampling factor).
MAX_PERIOD = 16
#: Largest box of loop values a function is tabulated over.
MAX_TABLE = 1 << 22


class Table(sympy.Function):
    """tables[k][e]: an index Inductor computed as a value from one loop
    variable (interpolation), tabulated at compile time."""
    nargs = 2
    is_integer = True


_tables: list[np.ndarray] = []


def _table(values: np.ndarray) -> int:
    _tables.append(values)
    return len(_tables) - 1


# --------------------------------------------------------------------------
# Numeric evaluation of index expressions


def evaluate(expr, env: dict[str, np.ndarray]):
    """`expr` at the loop values of `env` (by variable name), broadcasting."""
    from torch.utils._sympy.functions import (CleanDiv, FloorDiv, ModularIndexing, PythonMod,
                                              TruncToInt)
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return np.int64(int(expr))
    if isinstance(expr, sympy.Symbol):
        if expr.name not in env:
            raise Unsupported(f"index {expr} depends on a value loaded at run time")
        return env[expr.name]
    args = [evaluate(a, env) for a in expr.args] if not isinstance(expr, Table) else None
    if isinstance(expr, sympy.Add):
        return sum(args[1:], args[0])
    if isinstance(expr, sympy.Mul):
        if any(not (a.is_Integer or a.free_symbols) for a in expr.args):
            raise Unsupported(f"index {expr} has a non-integer coefficient")
        return math.prod(args[1:], start=args[0])
    if isinstance(expr, (FloorDiv, CleanDiv)):
        return np.floor_divide(*args)
    if isinstance(expr, ModularIndexing):
        return np.mod(np.floor_divide(args[0], args[1]), args[2])
    if isinstance(expr, (PythonMod, sympy.Mod)):
        return np.mod(*args)
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and expr.exp > 0:
        return args[0] ** int(expr.exp)
    if type(expr).__name__ == "Min":  # sympy's or Inductor's
        return np.minimum.reduce(np.broadcast_arrays(*args))
    if type(expr).__name__ == "Max":
        return np.maximum.reduce(np.broadcast_arrays(*args))
    if isinstance(expr, sympy.Abs):
        return np.abs(args[0])
    if isinstance(expr, Table):
        values = _tables[int(expr.args[0])]
        position = evaluate(expr.args[1], env)
        if np.any(position < 0) or np.any(position >= len(values)):
            raise Unsupported(f"index {expr} outside its table")
        return values[position]
    if isinstance(expr, TruncToInt):
        return np.trunc(args[0]).astype(np.int64)
    raise Unsupported(f"index {expr} uses {type(expr).__name__}")


# --------------------------------------------------------------------------
# Values computed from the loop variables alone (masks, computed indices)

TORCH_OPS = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "truediv": torch.true_divide,
    "div": torch.true_divide, "minimum": torch.minimum, "maximum": torch.maximum,
    "floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc, "round": torch.round,
    "neg": torch.neg, "abs": torch.abs, "where": torch.where,
    "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge, "eq": torch.eq,
    "ne": torch.ne, "and_": torch.logical_and, "or_": torch.logical_or,
    "logical_and": torch.logical_and, "logical_or": torch.logical_or,
    "logical_not": torch.logical_not,
    "floordiv": lambda a, b: torch.div(a, b, rounding_mode="floor"),
}


class _Cone:
    """The instructions a value depends on, if they use the loop variables
    only (no loads): such a value is computed exactly as Inductor's CPU code
    would, with torch on the CPU, at compile time."""

    def __init__(self, trace: Trace, value: TV):
        by_result = {i.result: i for i in trace.instrs if isinstance(i.result, TV)}
        self.instrs, self.exprs, seen = [], [], set()

        def visit(v):
            if v in seen:
                return True
            seen.add(v)
            instr = by_result.get(v)
            if instr is None or (instr.op not in TORCH_OPS and
                                 instr.op not in ("index_expr", "constant", "to_dtype")):
                return False
            if instr.op == "index_expr":
                self.exprs.append(sympy.sympify(instr.args[0]))
            if not all(visit(a) for a in instr.args if isinstance(a, TV)):
                return False
            self.instrs.append(instr)
            return True

        self.ok = visit(value)
        self.value = value

    def variables(self) -> set[str]:
        return {s.name for e in self.exprs for s in e.free_symbols}

    def evaluate(self, env) -> torch.Tensor:
        values = {}
        for instr in self.instrs:
            a = [values[x] if isinstance(x, TV) else x for x in instr.args]
            if instr.op == "index_expr":
                r = torch.as_tensor(evaluate(instr.args[0], env)).to(a[1])
            elif instr.op == "constant":
                r = torch.tensor(a[0], dtype=a[1])
            elif instr.op == "to_dtype":
                r = a[0].to(a[1])
            else:
                r = TORCH_OPS[instr.op](*a)
            values[instr.result] = r
        return values[self.value]


# --------------------------------------------------------------------------
# What a piece must make affine or constant


def _functions(expr) -> list:
    """The outermost subexpressions of `expr` that are not sums or products
    (Abs, Min, FloorDiv, tables, ...)."""
    expr = sympy.sympify(expr)
    if expr.is_Integer or isinstance(expr, sympy.Symbol):
        return []
    if isinstance(expr, (sympy.Add, sympy.Mul)) or \
            (isinstance(expr, sympy.Pow) and expr.exp.is_Integer and expr.exp > 0):
        return [f for a in expr.args for f in _functions(a)]
    return [expr]


def _box(names: list[str], trace: Trace) -> dict[str, np.ndarray]:
    """The loop values of `names`, one axis each."""
    sizes = dict(zip((v.name for v in trace.variables), trace.sizes + trace.reduction_sizes))
    if math.prod(sizes[n] for n in names) > MAX_TABLE:
        raise Unsupported("an index tabulated over too many loop values")
    env = {}
    for k, n in enumerate(names):
        shape = [1] * len(names)
        shape[k] = sizes[n]
        env[n] = np.arange(sizes[n], dtype=np.int64).reshape(shape)
    return env


def _affine_form(term, trace: Trace):
    """`term` as base + sum(d * v) over the piece's loops, or None."""
    names = sorted(s.name for s in term.free_symbols)
    env = _box(names, trace)
    values = np.broadcast_to(evaluate(term, env), [e.size for e in env.values()])
    zero = (0,) * len(names)
    base = int(values[zero]) if names else int(values)
    form = sympy.Integer(base)
    predicted = np.full(values.shape, base, dtype=np.int64)
    for k, n in enumerate(names):
        if values.shape[k] > 1:
            step = int(values[tuple(1 if j == k else 0 for j in range(len(names)))]) - base
            form += step * sympy.Symbol(n, integer=True, nonnegative=True)
            predicted = predicted + step * env[n]
    return form if np.array_equal(values, predicted) else None


def _mask_leaves(cone: _Cone) -> list[Instr]:
    """The comparisons a mask combines."""
    return [i for i in cone.instrs if i.op in ("lt", "le", "gt", "ge", "eq", "ne")]


def _constant_mask(cone: _Cone, trace: Trace):
    """True or False if the mask is constant over the piece, else None."""
    names = sorted(cone.variables())
    env = _box(names, trace)
    values = cone.evaluate(env)
    if values.dtype != torch.bool:
        values = values != 0
    if bool(values.all()):
        return True
    if not bool(values.any()):
        return False
    return None


# --------------------------------------------------------------------------
# Cutting a loop into segments


def _segments(arrays: list[tuple[np.ndarray, bool]], n: int) -> list[tuple[int, int, int]]:
    """[start, stop) with period q covering range(n): on each, every array is
    affine in v (constant where flagged), or with q > 1 periodic in v with
    period q and affine within the period."""
    segments, pos = [], 0
    while pos < n:
        best = None
        for q in range(1, min(MAX_PERIOD, n - pos) + 1):
            length = n - pos
            for a, constant in arrays:
                a = a[pos:]
                within = a[:q] - a[0]
                step = within[1] if q > 1 else (a[1] - a[0] if len(a) > 1 else 0)
                if constant:
                    step = 0
                if q > 1 and not np.array_equal(within, step * np.arange(q)):
                    length = 0
                    break
                if q == 1:
                    bad = np.nonzero(np.diff(a) != step)[0]
                    length = min(length, int(bad[0]) + 1 if len(bad) else len(a))
                else:
                    shift = a[q:] - a[:-q]
                    bad = np.nonzero(shift != (0 if constant else shift[0]))[0] \
                        if len(shift) else []
                    run = int(bad[0]) + q if len(bad) else len(a)
                    length = min(length, run // q * q)
            if q > 1 and length < 2 * q:
                continue
            if best is None or length > best[1] - best[0]:
                best = (pos, pos + length, q)
        segments.append(best)
        pos = best[1]
    return segments


_fresh = itertools.count()


def _cut(trace: Trace, v: sympy.Symbol, start: int, stop: int, q: int) -> Trace:
    """The piece of `trace` where start <= v < stop, over new loops."""
    piece = copy.copy(trace)
    piece.instrs = [copy.copy(i) for i in trace.instrs]
    position = trace.variables.index(v)
    k = next(_fresh)
    if q == 1:
        new = [sympy.Symbol(f"{v.name}_{k}", integer=True, nonnegative=True)]
        sizes, value = [stop - start], start + new[0]
    else:
        new = [sympy.Symbol(f"{v.name}_{k}h", integer=True, nonnegative=True),
               sympy.Symbol(f"{v.name}_{k}l", integer=True, nonnegative=True)]
        sizes, value = [(stop - start) // q, q], start + q * new[0] + new[1]
    piece.variables = trace.variables[:position] + new + trace.variables[position + 1:]
    piece.sizes = trace.sizes[:position] + sizes + trace.sizes[position + 1:]
    for instr in piece.instrs:
        if instr.op in _INDEXED:
            k_ = _INDEXED[instr.op]
            expr = sympy.sympify(instr.args[k_])
            expr = expr.xreplace({s: value for s in expr.free_symbols if s.name == v.name})
            instr.args = instr.args[:k_] + (expr,) + instr.args[k_ + 1:]
    return piece


# --------------------------------------------------------------------------
# Resolving a piece


def _index_exprs(trace: Trace):
    for instr in trace.instrs:
        if instr.op in _INDEXED:
            yield instr, _INDEXED[instr.op]


def _variable_names(trace: Trace) -> set[str]:
    return {v.name for v in trace.variables}


def _resolve(trace: Trace, dtype_of) -> list[Trace] | None:
    """Makes `trace` affine and mask-free in place, or returns the pieces to
    resolve instead."""
    names = _variable_names(trace)
    # Terms tabulated over one loop that are not affine over this piece.
    pending: dict[str, list[tuple[np.ndarray, bool]]] = {}
    for instr, k in _index_exprs(trace):
        expr = sympy.sympify(instr.args[k])
        replace = {}
        for term in _functions(expr):
            free = {s.name for s in term.free_symbols}
            if not free <= names:
                continue  # a run-time index: the gather or nothing
            form = _affine_form(term, trace)
            if form is not None:
                replace[term] = form
            elif len(free) == 1:
                (n,) = free
                pending.setdefault(n, []).append((evaluate(term, _box([n], trace)), False))
            else:
                raise Unsupported(f"index {term} is not piecewise affine in one loop")
        if replace:
            # Products of functions may cancel once they are affine: the
            # window size (end - start) * (end - start) of a padded pooling.
            expr = sympy.expand(expr.xreplace(replace))
            instr.args = instr.args[:k] + (expr,) + instr.args[k + 1:]
    masks = [i for i in trace.instrs if i.op == "masked"]
    decided = {}
    for instr in masks:
        cone = _Cone(trace, instr.args[0])
        if not cone.ok:
            raise Unsupported("a masked load whose mask is loaded at run time")
        if not cone.variables() <= names:
            raise Unsupported("a masked load whose mask depends on a run-time index")
        value = _constant_mask(cone, trace)
        if value is not None:
            decided[instr.serial] = value
            continue
        for leaf in _mask_leaves(cone):
            sub = _Cone(trace, leaf.result)
            found = _one_loop_condition(sub, trace)
            if found is not None:
                n, values = found
                if len(np.unique(values)) > 1:
                    pending.setdefault(n, []).append((values, True))
        if not pending:
            raise Unsupported("a mask that is not a condition on single loops")
    if pending:
        n = next(iter(pending))
        v = next(x for x in trace.variables if x.name == n)
        position = trace.variables.index(v)
        if position >= len(trace.sizes):
            raise Unsupported("an index that is not affine in a reduction loop")
        size = trace.sizes[position]
        arrays = [(np.broadcast_to(a, (size,)).astype(np.int64), c) for a, c in pending[n]]
        segments = _segments(arrays, size)
        if segments == [(0, size, 1)]:  # no progress: a bug, not a reason to loop
            raise Unsupported("an index that no cut of its loops makes affine")
        return [_cut(trace, v, *s) for s in segments]
    _drop_masks(trace, decided, dtype_of)
    return None


def _one_loop_condition(cone, trace: Trace):
    """(loop, its values) when the condition `cone` computes depends on one
    loop only, else None. A loop split in two (v = q * hi + lo, periodic
    segments) makes a condition on v one of both halves, which may still
    depend on one of them: 8 * q + lo >= 8 with lo < 8 is q >= 1 (a rotary
    embedding's halves in the backward of a split frequency table)."""
    names = sorted(cone.variables())
    sizes = dict(zip((v.name for v in trace.variables), trace.sizes + trace.reduction_sizes))
    if not names or math.prod(sizes[n] for n in names) > MAX_TABLE:
        return None
    values = np.broadcast_to(cone.evaluate(_box(names, trace)).numpy().astype(np.int64),
                             [sizes[n] for n in names])
    varying = [k for k in range(len(names))
               if values.shape[k] > 1 and not (values == values.take([0], axis=k)).all()]
    if len(varying) > 1:
        return None
    k = varying[0] if varying else 0
    first = tuple(slice(None) if j == k else 0 for j in range(len(names)))
    return names[k], values[first].reshape(-1)


def _drop_masks(trace: Trace, decided: dict[int, bool], dtype_of) -> None:
    """Masked values with a constant mask: the value where it is true, the
    fallback constant where it is false (its loads are dropped)."""
    dropped: set[int] = set()
    replaced: dict[TV, TV] = {}
    instrs = []
    for instr in trace.instrs:
        if instr.serial in dropped:
            continue
        if instr.op != "masked":
            instrs.append(instr)
            continue
        _, value, other = instr.args
        if decided[instr.serial]:
            replaced[instr.result] = value
        else:
            dropped.update(instr.kwargs["body"])
            dtype = _dtype(trace, value, dtype_of)
            instrs.append(Instr("constant", (other, dtype), instr.result, serial=instr.serial))
    for instr in instrs:
        if any(a in replaced for a in instr.args):
            instr.args = tuple(_follow(replaced, a) for a in instr.args)
    trace.instrs = instrs


def _follow(replaced, a):
    while isinstance(a, TV) and a in replaced:
        a = replaced[a]
    return a


def _dtype(trace: Trace, value: TV, dtype_of) -> torch.dtype:
    """The dtype of a trace value, by Inductor's dtype propagation."""
    from torch._inductor.dtype_propagation import DtypePropagationOpsHandler

    class Typed:
        def __init__(self, dtype):
            self.dtype = dtype
    propagation = DtypePropagationOpsHandler()
    dtypes = {}
    for instr in trace.instrs:
        if not isinstance(instr.result, TV):
            continue
        if instr.op == "load":
            dtypes[instr.result] = dtype_of(instr.args[0])
        elif instr.op == "masked":
            dtypes[instr.result] = dtypes[instr.args[1]]
        else:
            args = [Typed(dtypes[a]) if isinstance(a, TV) else a for a in instr.args]
            dtypes[instr.result] = getattr(propagation, instr.op)(*args, **instr.kwargs)
        if instr.result == value:
            return dtypes[value]
    raise AssertionError("value not computed by the trace")


# --------------------------------------------------------------------------
# Computed indices as tables


def _tabulate_indices(trace: Trace) -> None:
    """Indices Inductor computes as values from one loop variable (no loads)
    become tables of that variable, and those from no loop variable
    constants; the card then needs no indirection."""
    for symbol, value in list(trace.indirect.items()):
        cone = _Cone(trace, value)
        free = cone.variables() if cone.ok else set()
        if not cone.ok or len(free) > 1 or not free <= _variable_names(trace):
            continue
        instr = next(i for i in trace.instrs
                     if i.op == "indirect_indexing" and i.args[2] == symbol)
        size = int(instr.args[1])
        values = cone.evaluate(_box(list(free), trace)).reshape(-1).to(torch.int64).numpy()
        if instr.kwargs.get("wrap_neg", True):
            values = np.where(values < 0, values + size, values)
        if np.any(values < 0) or np.any(values >= size):
            raise Unsupported("a computed index outside its dimension")
        if free:
            (n,) = free
            table = Table(_table(values), sympy.Symbol(n, integer=True, nonnegative=True))
        else:  # a constant (the position in a dimension of one element)
            table = sympy.Integer(int(values[0]))
        for other, k in _index_exprs(trace):
            expr = sympy.sympify(other.args[k])
            # By name: Inductor may rebuild symbols with other assumptions.
            expr = expr.xreplace({s: table for s in expr.free_symbols if s.name == symbol.name})
            other.args = other.args[:k] + (expr,) + other.args[k + 1:]
        trace.instrs.remove(instr)
        del trace.indirect[symbol]


def _needs_pieces(trace: Trace) -> bool:
    if any(i.op == "masked" for i in trace.instrs):
        return True
    names = _variable_names(trace)
    for instr, k in _index_exprs(trace):
        if any({s.name for s in f.free_symbols} <= names for f in _functions(instr.args[k])):
            return True
    return any(_Cone(trace, v).ok for v in trace.indirect.values())


def _without_dead_values(trace: Trace) -> None:
    used = set()
    keep = []
    for instr in reversed(trace.instrs):
        if not isinstance(instr.result, TV) or instr.op == "reduction" or \
                any(r in used for r in (instr.result if isinstance(instr.result, tuple)
                                        else (instr.result,))):
            keep.append(instr)
            used.update(a for a in instr.args if isinstance(a, TV))
    trace.instrs = keep[::-1]


def split(trace: Trace, dtype_of) -> list[Trace] | None:
    """The pieces of `trace`, or None if it needs none. `dtype_of(name)` is a
    buffer's dtype."""
    if any(s == 0 for s in trace.sizes + trace.reduction_sizes) or not _needs_pieces(trace):
        return None
    first = copy.copy(trace)
    first.instrs = [copy.copy(i) for i in trace.instrs]
    first.indirect = dict(trace.indirect)
    first.pieces = None
    _tabulate_indices(first)
    work, done = [first], []
    while work:
        piece = work.pop()
        more = _resolve(piece, dtype_of)
        if more is None:
            _without_dead_values(piece)
            done.append(piece)
        else:
            work.extend(reversed(more))
        if len(work) + len(done) > MAX_PIECES:
            raise Unsupported(f"indexing affine only in more than {MAX_PIECES} pieces")
    return done
