"""Replaying a scheduled node's LoopBody into a trace: loads, stores, ops and
reductions with their sympy index expressions, in program order.

The trace is plain data so that emitting MLIR (export.py) is a second,
separate step: a generic's inputs are only known once every load is seen.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sympy
import torch

from torch._inductor.virtualized import V


class Unsupported(Exception):
    """The node uses something the card's kernels cannot express (yet)."""


@dataclass(frozen=True)
class TV:
    """A value of the trace: the result of instruction `id`."""
    id: int


@dataclass
class Instr:
    op: str
    args: tuple
    result: TV | tuple[TV, ...] | None = None
    kwargs: dict = field(default_factory=dict)
    serial: int = -1  # position in program order when traced


@dataclass
class Trace:
    sizes: list[int]
    reduction_sizes: list[int]
    variables: list[sympy.Symbol]
    instrs: list[Instr] = field(default_factory=list)
    indirect: dict[sympy.Symbol, TV] = field(default_factory=dict)
    #: Set by export: traces over parts of the domain where indexing is
    #: affine (pieces.py), None if the trace needs no split.
    pieces: list[Trace] | None = None
    split_checked: bool = False
    #: Whether the node computes a matrix product the program asked for
    #: (aten.mm, mv, addmm, bmm, ... before decomposition), not a sum of
    #: products written as pointwise ops.
    from_product: bool = False


def _key_part(a):
    """A hashable stand-in for an argument that equal arguments share and
    unequal ones do not: Python says 0.0 == -0.0 and 1 == 1.0 == True."""
    if isinstance(a, (bool, int, float)):
        return (type(a), a.hex() if isinstance(a, float) else a)
    if isinstance(a, (tuple, list)):
        return (type(a), tuple(_key_part(x) for x in a))
    return a


class TraceHandler:
    """An Inductor ops handler that records what a LoopBody does.

    Repeated pure ops and loads are recorded once (common subexpressions):
    Inductor's LoopBody repeats a load for every use and inlined producers
    for every consumer (a reflected grid sample computes one coordinate from
    dozens of identical loads), and every later step, the integer range
    analysis above all, pays for each copy."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self._seen: dict = {}  # (op, args, kwargs) -> its result

    def _emit(self, op: str, *args, results: int = 1, kwargs=None):
        n = len(self.trace.instrs)
        result = (tuple(TV(n * 4 + i) for i in range(results)) if results > 1
                  else TV(n * 4) if results == 1 else None)
        self.trace.instrs.append(Instr(op, args, result, dict(kwargs or {}), n))
        return result

    def _pure(self, op: str, *args, kwargs=None):
        """`op` recorded once for equal arguments."""
        try:
            key = (op, _key_part(args), tuple(sorted((k, _key_part(v))
                                                     for k, v in (kwargs or {}).items())))
            hash(key)
        except TypeError:  # an argument that cannot be a key: recorded each time
            return self._emit(op, *args, kwargs=kwargs)
        if key not in self._seen:
            self._seen[key] = self._emit(op, *args, kwargs=kwargs)
        return self._seen[key]

    # Memory
    def load(self, name: str, index: sympy.Expr):
        return self._pure("load", name, index)

    def store(self, name: str, index: sympy.Expr, value, mode=None):
        if mode is not None:
            raise Unsupported(f"store with mode {mode!r}")
        # Later loads of the buffer may read what this wrote.
        self._seen = {k: v for k, v in self._seen.items()
                      if not (k[0] == "load" and k[1][1][0] == name)}
        self._emit("store", name, index, value, results=0)

    def reduction(self, dtype, src_dtype, reduction_type: str, value):
        results = 3 if reduction_type == "welford_reduce" else 1
        return self._emit("reduction", dtype, src_dtype, reduction_type, value, results=results)

    def store_reduction(self, name: str, index: sympy.Expr, value):
        self._emit("store_reduction", name, index, value, results=0)

    def indirect_indexing(self, value, size, check=True, wrap_neg=True):
        symbol = sympy.Symbol(f"indirect{len(self.trace.indirect)}", integer=True)
        self.trace.indirect[symbol] = value
        # Whether a negative index counts from the end (x[i]) or is refused
        # (an embedding's, a gather's): each export of the index applies it.
        self._emit("indirect_indexing", value, size, symbol, results=0,
                   kwargs={"wrap_neg": bool(wrap_neg)})
        return symbol

    def masked(self, mask, body, other):
        # The body is traced inline; pieces.py keeps it only in the parts of
        # the domain where the mask holds (its loads may leave their buffer
        # elsewhere) and puts `other` in the rest.
        start = len(self.trace.instrs)
        # What the body computes exists only where the mask holds: not to
        # be reused after it.
        seen = dict(self._seen)
        value = body()
        self._seen = seen
        inside = frozenset(range(start, len(self.trace.instrs)))
        if any(i.op in ("store", "store_reduction") for i in self.trace.instrs[start:]):
            raise Unsupported("a store under a mask")
        return self._emit("masked", mask, value, other, kwargs={"body": inside})

    def check_bounds(self, expr, size, lower, upper):
        pass

    def frexp(self, x):  # mantissa and exponent: two results
        return self._emit("frexp", x, results=2)

    # Everything else is a pure op on values.
    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)

        def op(*args, **kwargs):
            return self._pure(name, *args, kwargs=kwargs)
        return op


#: aten ops whose decompositions are sums of products (Inductor turns small
#: ones into a pointwise multiply and a sum).
_aten = torch.ops.aten
_PRODUCTS = {_aten.mm, _aten.mv, _aten.addmm, _aten.addmv, _aten.bmm, _aten.baddbmm,
             _aten.addbmm, _aten.matmul, _aten.dot, _aten.vdot, _aten.linear, _aten._int_mm}


def trace_node(node) -> Trace:
    """The trace of one SchedulerNode (its body over fresh loop variables)."""
    sizes, reduction_sizes = node.get_ranges()
    sizes = [_static(s) for s in sizes]
    reduction_sizes = [_static(s) for s in reduction_sizes]
    xs = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(sizes))]
    rs = [sympy.Symbol(f"r{i}", integer=True, nonnegative=True)
          for i in range(len(reduction_sizes))]
    trace = Trace(sizes, reduction_sizes, xs + rs)
    trace.from_product = any(
        getattr(o.meta.get("original_aten"), "overloadpacket", None) in _PRODUCTS
        for o in getattr(node.node, "origins", None) or ())
    with V.set_ops_handler(TraceHandler(trace)):
        node._body(xs, rs)
    _factor_mods(trace)
    while _split_a_loop(trace):
        _factor_mods(trace)
    _drop_bounded_mods(trace)
    _compute_index_values(trace)
    if not trace.variables:  # a scalar: one loop of one point
        trace.sizes.append(1)
        trace.variables.append(sympy.Symbol("x0", integer=True, nonnegative=True))
    return trace


_INDEXED = {"load": 1, "store": 1, "store_reduction": 1, "index_expr": 0}


def fresh_values(trace: Trace):
    """Values no instruction of `trace` has yet, for instructions added to it."""
    ids = [r.id for i in trace.instrs
           for r in (i.result if isinstance(i.result, tuple) else (i.result,)) if r is not None]
    return (TV(k) for k in itertools.count(min([0, *ids]) - 4, -4))


#: Functions of the loop variables an index value may hold, by name (sympy's
#: or Inductor's own Min and Max, which are not sympy's subclasses), and the
#: ops that compute them from affine index values.
_VALUE_FUNCTIONS = {"Abs": "abs", "Min": "minimum", "Max": "maximum"}


def _value_function(e) -> str | None:
    return _VALUE_FUNCTIONS.get(type(e).__name__) if isinstance(e, sympy.Basic) else None


def _compute_index_values(trace: Trace) -> None:
    """Index values (ops.index_expr) holding |a - b|, min or max of affine
    functions of several loops, as the ops that compute them from affine
    index values: pieces.py cuts the domain where such a function of one
    loop is affine, which two loops do not allow (ModernBERT's sliding
    window, |row - col| <= w, went to the CPU with its attention)."""
    def multi_loop(e) -> bool:
        return any(_value_function(t) and len(t.free_symbols) > 1
                   for t in sympy.preorder_traversal(e))

    if not any(i.op == "index_expr" and multi_loop(sympy.sympify(i.args[0]))
               for i in trace.instrs):
        return
    fresh = fresh_values(trace)
    instrs = []
    for instr in trace.instrs:
        expr = sympy.sympify(instr.args[0]) if instr.op == "index_expr" else None
        if expr is None or not multi_loop(expr):
            instrs.append(instr)
            continue
        dtype = instr.args[1]

        def emit(op, *args):
            instrs.append(Instr(op, args, next(fresh)))
            return instrs[-1].result

        def constant(a):
            if not a.is_Integer:
                raise Unsupported(f"index value {expr} with the coefficient {a}")
            return emit("constant", int(a), dtype)

        def value(e):
            if not any(_value_function(t) for t in sympy.preorder_traversal(e)):
                return emit("index_expr", e, dtype)
            op = _value_function(e) or ("add" if e.is_Add else "mul" if e.is_Mul else None)
            if op is None:
                raise Unsupported(f"index value {e}")
            args = [value(a) if a.free_symbols else constant(a) for a in e.args]
            if op == "abs":
                return emit("abs", args[0])
            result = args[0]
            for a in args[1:]:
                result = emit(op, result, a)
            return result

        final = value(expr)
        last = instrs.pop()
        assert last.result == final
        instr.op, instr.args, instr.kwargs = last.op, last.args, last.kwargs
        instrs.append(instr)
    # Program order again, for later passes; a masked body names its
    # instructions by their positions.
    renumbered = {instr.serial: k for k, instr in enumerate(instrs) if instr.serial >= 0}
    for k, instr in enumerate(instrs):
        instr.serial = k
        if instr.op == "masked":
            instr.kwargs = dict(instr.kwargs,
                                body=frozenset(renumbered[b] for b in instr.kwargs["body"]
                                               if b in renumbered))
    trace.instrs = instrs


def _factor_mods(trace: Trace) -> None:
    """(a * v + r) mod m is a * (v mod (m / a)) + r, and (a * v + r) // m is
    v // (m / a), where a divides m and the loops keep 0 <= r < a: a view
    that folds a row of a tensor onto two (ConvBERT's span-based convolution
    reads ModularIndexing(9 * x0 + r0, 1, 18)). The loop v is then split by
    _split_a_loop like any other."""
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    sizes = trace.sizes + trace.reduction_sizes

    def factored(e, m):
        """(v, a) when e = a * v + r as above, else None."""
        try:
            base, coeffs = linear(e, trace.variables)
        except Unsupported:
            return None
        if base < 0 or min(coeffs, default=0) < 0:
            return None
        top = _largest(base, coeffs, sizes)
        for k, a in enumerate(coeffs):
            if a > 1 and m % a == 0 and top - a * (sizes[k] - 1) < a:
                return trace.variables[k], a
        return None

    def mod(t):  # t itself where it does not factor
        if t.args[1] != 1 or not t.args[2].is_Integer:
            return t
        found = factored(t.args[0], int(t.args[2]))
        if found is None:
            return t
        v, a = found
        return a * ModularIndexing(v, 1, int(t.args[2]) // a) + (t.args[0] - a * v)

    def div(t):
        found = factored(t.args[0], int(t.args[1])) if t.args[1].is_Integer else None
        return t if found is None else FloorDiv(found[0], int(t.args[1]) // found[1])

    for instr in trace.instrs:
        if instr.op in _INDEXED:
            k = _INDEXED[instr.op]
            expr = sympy.sympify(instr.args[k])
            if not expr.has(ModularIndexing, FloorDiv):
                continue
            expr = expr.replace(lambda t: isinstance(t, ModularIndexing), mod)
            expr = expr.replace(lambda t: isinstance(t, FloorDiv), div)
            instr.args = instr.args[:k] + (expr,) + instr.args[k + 1:]


def _largest(base: int, coeffs: list[int], sizes: list[int]) -> int:
    """The largest value of base + sum(coeffs[i] * v_i) over the loops
    0 <= v_i < sizes[i], for non-negative coefficients."""
    return base + sum(c * (n - 1) for c, n in zip(coeffs, sizes))


def _split_a_loop(trace: Trace) -> bool:
    """Where an index divides a loop variable (FloorDiv / ModularIndexing, as
    in views of permuted tensors), splits the loop in two, v = c * hi + lo,
    so that the index becomes linear in the new loops. Returns whether a
    loop was split."""
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    exprs = [i.args[_INDEXED[i.op]] for i in trace.instrs if i.op in _INDEXED]
    sizes = trace.sizes + trace.reduction_sizes
    for expr in exprs:
        for term in sympy.sympify(expr).atoms(FloorDiv, ModularIndexing):
            v = term.args[0]
            if v not in trace.variables:
                continue
            if isinstance(term, FloorDiv):
                c = term.args[1]
            else:
                c = term.args[2] if term.args[1] == 1 else term.args[1]
            position = trace.variables.index(v)
            size = sizes[position]
            if not c.is_Integer or int(c) <= 1 or size % int(c) or int(c) == size:
                continue
            c = int(c)
            hi = sympy.Symbol(f"{v.name}h", integer=True, nonnegative=True)
            lo = sympy.Symbol(f"{v.name}l", integer=True, nonnegative=True)

            def rewrite(e, v=v, c=c, hi=hi, lo=lo):
                e = sympy.sympify(e)
                e = e.replace(lambda t: isinstance(t, FloorDiv) and t.args[0] == v
                              and t.args[1] % c == 0,
                              lambda t: FloorDiv(hi, t.args[1] // c))
                e = e.replace(lambda t: isinstance(t, ModularIndexing) and t.args[0] == v
                              and t.args[1] == 1 and t.args[2] == c,
                              lambda t: lo)
                e = e.replace(lambda t: isinstance(t, ModularIndexing) and t.args[0] == v
                              and t.args[1] % c == 0,
                              lambda t: ModularIndexing(hi, t.args[1] // c, t.args[2]))
                return e.subs(v, c * hi + lo)

            for instr in trace.instrs:
                if instr.op in _INDEXED:
                    k = _INDEXED[instr.op]
                    instr.args = instr.args[:k] + (rewrite(instr.args[k]),) + instr.args[k + 1:]
            trace.variables[position:position + 1] = [hi, lo]
            split = [size // c, c]
            if position < len(trace.sizes):
                trace.sizes[position:position + 1] = split
            else:
                p = position - len(trace.sizes)
                trace.reduction_sizes[p:p + 1] = split
            return True
    return False


def _drop_bounded_mods(trace: Trace) -> None:
    """ModularIndexing(e, 1, m) is e where the loops keep 0 <= e < m, as they
    may once a loop is split: (8 * lo + x) mod 32 with lo < 4 and x < 8; or
    where e is an indirect index of size at most m."""
    from torch.utils._sympy.functions import ModularIndexing

    sizes = trace.sizes + trace.reduction_sizes
    # An indirect index lies in [0, its size): Inductor checks it (OLMoE's
    # experts read their table at ModularIndexing(indirect0, 1, rows)).
    indirect = {i.args[2].name: i.args[1] for i in trace.instrs
                if i.op == "indirect_indexing" and isinstance(i.args[1], (int, sympy.Integer))}

    def bounded(t) -> bool:
        if not isinstance(t, ModularIndexing) or t.args[1] != 1 or not t.args[2].is_Integer:
            return False
        if isinstance(t.args[0], sympy.Symbol) and t.args[0].name in indirect:
            return int(indirect[t.args[0].name]) <= int(t.args[2])
        try:
            base, coeffs = linear(t.args[0], trace.variables)
        except Unsupported:
            return False
        return base >= 0 and min(coeffs, default=0) >= 0 and \
            _largest(base, coeffs, sizes) < int(t.args[2])

    for instr in trace.instrs:
        if instr.op in _INDEXED:
            k = _INDEXED[instr.op]
            expr = sympy.sympify(instr.args[k]).replace(bounded, lambda t: t.args[0])
            instr.args = instr.args[:k] + (expr,) + instr.args[k + 1:]


def _static(size) -> int:
    size = V.graph.sizevars.simplify(size)
    if not isinstance(size, (int, sympy.Integer)) and not getattr(size, "is_number", False):
        raise Unsupported(f"dynamic size {size}")
    return int(size)


def linear(expr: sympy.Expr, variables: list[sympy.Symbol]) -> tuple[int, list[int]]:
    """base + sum(coeff[i] * variables[i]) for a linear index expression."""
    expr = sympy.expand(sympy.sympify(expr))
    base, coeffs = 0, [0] * len(variables)
    # By name: Inductor may rebuild symbols with other assumptions.
    position = {v.name: i for i, v in enumerate(variables)}
    for term, coeff in expr.as_coefficients_dict().items():
        if not coeff.is_Integer:
            raise Unsupported(f"index {expr} has a non-integer coefficient")
        if term == 1:
            base += int(coeff)
        elif isinstance(term, sympy.Symbol) and term.name in position:
            coeffs[position[term.name]] += int(coeff)
        else:
            raise Unsupported(f"index {expr} is not linear in the loops")
    return base, coeffs


# bf16 is f32 on the card: bf16 has f32's exponent range, which DLFloat16
# lacks (largest value ~4.3e9), and Inductor's CPU code computes bf16 in f32
# too; the runtime rounds results to bf16 on the way out.
TORCH_TO_MLIR = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "f32",
    torch.int64: "i32", torch.int32: "i32", torch.int8: "i8", torch.bool: "i1",
}


def element_type(dtype: torch.dtype) -> str:
    try:
        return TORCH_TO_MLIR[dtype]
    except KeyError:
        raise Unsupported(f"element type {dtype}") from None
