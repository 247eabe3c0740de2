"""Integer values the card can hold exactly: a kernel whose int64 values may
leave int32 (the card's widest integer), or whose integer sums may leave the
range its f32 accumulator holds exactly, is refused (it runs on the CPU,
counted) instead of wrapping or saturating.

Inductor's own analyses do the work: its dtype propagation gives each value
of a trace its dtype, its value-range analysis the interval it lies in.
Graph inputs of int64 are checked at run time to lie in INT64_INPUTS
(backend.py), so sums and differences of two of them still fit int32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy
import torch
from torch._inductor.bounds import ValueRangeAnalysis
from torch._inductor.dtype_propagation import DtypePropagationOpsHandler
from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

from .trace import TV, Trace, Unsupported

INT32 = ValueRanges(-2 ** 31, 2 ** 31 - 1)
#: What int64 graph inputs must hold to run on the card (checked per call).
INT64_INPUTS = ValueRanges(-2 ** 30, 2 ** 30 - 1)
#: Integers an f32 accumulator holds exactly: the card's reductions add in f32.
EXACT_IN_F32 = ValueRanges(-2 ** 24, 2 ** 24)

_BY_DTYPE = {torch.bool: ValueRanges(0, 1), torch.int8: ValueRanges(-128, 127),
             torch.uint8: ValueRanges(0, 255), torch.int32: INT32, torch.int64: INT64_INPUTS}


@dataclass(frozen=True)
class _Typed:
    """What Inductor's dtype propagation reads of a value."""
    dtype: torch.dtype


def _within(r: ValueRanges, bounds: ValueRanges) -> bool:
    try:
        return bool(r.lower >= bounds.lower) and bool(r.upper <= bounds.upper)
    except TypeError:  # symbolic or unknown bounds
        return False


def check_integer_ranges(trace: Trace, dtype_of, cpu_computed: set[str]) -> None:
    """Raises Unsupported where a value of `trace` may not fit the card's
    integer types. `dtype_of(name)` is a buffer's dtype; int64 buffers in
    `cpu_computed` were written by CPU code and may hold any int64."""
    dtypes, ranges = {}, {}
    analysis, propagation = ValueRangeAnalysis(), DtypePropagationOpsHandler()
    variables = {v: ValueRanges(0, size - 1) for v, size in
                 zip(trace.variables, trace.sizes + trace.reduction_sizes)}
    reduced = math.prod(trace.reduction_sizes)

    def typed(a):
        return _Typed(dtypes[a]) if isinstance(a, TV) else a

    def ranged(a):
        return ranges.get(a, ValueRanges.unknown()) if isinstance(a, TV) else a

    for instr in trace.instrs:
        op, args = instr.op, instr.args
        if op == "load":
            dtype = dtype_of(args[0])
            if dtype == torch.int64 and args[0] in cpu_computed:
                raise Unsupported(f"int64 buffer {args[0]} is computed on the CPU and may hold "
                                  "values beyond the card's int32")
            dtypes[instr.result] = dtype
            ranges[instr.result] = _BY_DTYPE.get(dtype, ValueRanges.unknown())
            continue
        if op in ("store", "store_reduction", "indirect_indexing") or instr.result is None:
            continue
        if op == "reduction":
            dtype, kind, value = args[0], args[2], args[3]
            results = instr.result if isinstance(instr.result, tuple) else (instr.result,)
            for r in results:
                dtypes[r] = dtype
                ranges[r] = ValueRanges.unknown_bool() if dtype == torch.bool else \
                    ValueRanges.unknown()
            if dtype.is_floating_point or dtype == torch.bool or kind not in ("sum", "prod"):
                if kind in ("max", "min"):
                    ranges[results[0]] = ranged(value)
                continue
            source = ranged(value)
            if kind == "sum":
                total = ValueRanges(source.lower * reduced, source.upper * reduced) \
                    if _within(source, ValueRanges(-2 ** 62, 2 ** 62)) else ValueRanges.unknown()
            else:
                total = source if _within(source, ValueRanges(0, 1)) else ValueRanges.unknown()
            if not _within(total, EXACT_IN_F32):
                raise Unsupported(f"an integer {kind} of {reduced} terms may leave the range "
                                  "the card's f32 accumulator holds exactly")
            ranges[results[0]] = total
            continue
        if op == "index_expr":
            dtype = args[1]
            r = bound_sympy(sympy.sympify(args[0]), variables)
        elif isinstance(instr.result, tuple):
            raise Unsupported(f"op {op!r} with several results")
        else:
            try:
                dtype = getattr(propagation, op)(*map(typed, args), **instr.kwargs)
            except Exception:
                dtype = None
            try:
                r = getattr(analysis, op)(*map(ranged, args), **instr.kwargs)
                r = r if isinstance(r, ValueRanges) else ValueRanges.unknown()
            except Exception:
                r = ValueRanges.unknown()
            r = _bounded(op, args, ranged, r)
        if dtype == torch.bool and not r.is_bool:  # 0 or 1, whatever op made it
            r = ValueRanges.unknown_bool()
        dtypes[instr.result], ranges[instr.result] = dtype, r
        if dtype == torch.int64 and not _within(r, INT32):
            raise Unsupported(f"int64 {op} may leave the card's int32 (values in [{r.lower}, "
                              f"{r.upper}])")


def _bounded(op: str, args, ranged, r: ValueRanges) -> ValueRanges:
    """Bounds Inductor's value-range analysis leaves unknown: a sign is -1, 0
    or 1, and a remainder is smaller in magnitude than its divisor (indices
    wrapped by a dimension's size, as in take_along_dim), and a choice lies
    in the union of its two values, constants included."""
    if op == "sign":
        return ValueRanges(-1, 1)
    if op in ("remainder", "fmod", "mod"):
        divisor = ranged(args[1])
        try:
            largest = max(abs(int(divisor.lower)), abs(int(divisor.upper)))
        except (TypeError, ValueError, OverflowError):
            return r
        return ValueRanges(-largest, largest)
    if op == "where" and not _within(r, INT32):
        choices = [ranged(a) for a in args[1:3]]
        choices = [ValueRanges.wrap(c) if isinstance(c, (int, float)) else c for c in choices]
        # (Booleans come as [False, True] or [0, 1] by the op that made
        # them, which ValueRanges does not unite; a boolean result is 0 or 1
        # whatever its range here.)
        if all(isinstance(c, ValueRanges) and not c.is_bool for c in choices):
            try:
                return choices[0] | choices[1]
            except AssertionError:  # an integer and a float range: no union
                return r
    return r
