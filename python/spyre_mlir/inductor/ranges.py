"""Integer values the card can hold exactly: a kernel whose int64 values may
leave int32 (the card's widest integer), or whose integer sums may leave the
range its f32 accumulator holds exactly, is refused (it runs on the CPU,
counted) instead of wrapping or saturating.

Inductor's own analyses do the work: its dtype propagation gives each value
of a trace its dtype, its value-range analysis the interval it lies in.
Graph inputs of int64 are checked at run time to lie in INT64_INPUTS
(backend.py): their maxima and minima are exact in f32, and sums and
differences of two of them still fit int32.
A buffer computed by an earlier node of the graph has the range that node
stored into it (OPT's position ids: a float running count of the attention
mask, made int64 in the next node, lie in [0, length]), unless CPU code
wrote it too.
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
#: Integers an f32 holds exactly: the card's reductions (sums, maxima,
#: minima, and the sorts built on them) compute in f32.
EXACT_IN_F32 = ValueRanges(-2 ** 24, 2 ** 24)
#: What int64 graph inputs must hold to run on the card (checked per call):
#: what the card's reductions hold exactly (token ids, positions and indices
#: do), and a sum of two still fits int32.
INT64_INPUTS = EXACT_IN_F32

_BY_DTYPE = {torch.bool: ValueRanges(0, 1), torch.int8: ValueRanges(-128, 127),
             torch.uint8: ValueRanges(0, 255), torch.int16: ValueRanges(-2 ** 15, 2 ** 15 - 1),
             torch.int32: INT32, torch.int64: INT64_INPUTS}


def integer_limits(dtype: torch.dtype) -> tuple[int, int]:
    """The least and greatest values of an integer (or bool) dtype as the
    card holds it: int64 as int32. The sentinels of masked maxima and
    minima, which must be values of the masked tensor's own type."""
    if dtype == torch.bool:
        return 0, 1
    info = torch.iinfo(torch.int32 if dtype == torch.int64 else dtype)
    return info.min, info.max


@dataclass(frozen=True)
class _Typed:
    """What Inductor's dtype propagation reads of a value."""
    dtype: torch.dtype


def _within(r: ValueRanges, bounds: ValueRanges) -> bool:
    try:
        return bool(r.lower >= bounds.lower) and bool(r.upper <= bounds.upper)
    except TypeError:  # symbolic or unknown bounds
        return False


def check_integer_ranges(trace: Trace, dtype_of, cpu_computed: set[str],
                         stored: dict[str, ValueRanges], inputs: set[str]) -> None:
    """Raises Unsupported where a value of `trace` may not fit the card's
    integer types. `dtype_of(name)` is a buffer's dtype; int64 buffers in
    `cpu_computed` were written by CPU code and may hold any int64.
    `stored` maps the buffers earlier nodes wrote to the range of what they
    wrote; the ranges `trace` stores are added to it (where a buffer had
    one already, the union: concatenations write a buffer piecewise).
    Buffers in `inputs` (the graph's inputs and constants) may also hold
    what they held before the graph: a write may cover part of them."""
    dtypes, ranges, written = {}, {}, {}
    analysis, propagation = ValueRangeAnalysis(), DtypePropagationOpsHandler()
    variables = {v: ValueRanges(0, size - 1) for v, size in
                 zip(trace.variables, trace.sizes + trace.reduction_sizes)}
    reduced = math.prod(trace.reduction_sizes)

    def ranged(a):
        return ranges.get(a, ValueRanges.unknown()) if isinstance(a, TV) else a

    # Values an f32 holds exactly although their range is wider than 2^24:
    # a choice between such values, as the sentinel (-2^31) of a masked
    # maximum and values proven small.
    exact: set[TV] = set()

    def in_f32(a) -> bool:
        if isinstance(a, TV) and a in exact:
            return True
        r = ranged(a) if isinstance(a, TV) else ValueRanges.wrap(a)
        return _within(r, EXACT_IN_F32) or _one_f32(r)

    # Values that may leave the card's int32, with why: refused where they
    # are stored, reduced or used as an index, but not where a `where`
    # discards them (T5's log(0) bucket, converted to int64 on the lanes its
    # comparison sends to the other branch).
    poisoned: dict[TV, str] = {}
    defined = {instr.result: instr for instr in trace.instrs if isinstance(instr.result, TV)}

    def refuse_poisoned(*values) -> None:
        for v in values:
            if isinstance(v, TV) and v in poisoned:
                raise Unsupported(poisoned[v])

    def pointwise(op, args, kwargs, ranged):
        return _pointwise(op, args, kwargs, dtypes, ranged, analysis, propagation)

    for instr in trace.instrs:
        op, args = instr.op, instr.args
        if op in ("store", "store_reduction", "reduction", "indirect_indexing", "masked"):
            refuse_poisoned(*args)
        if op == "load":
            dtype = dtype_of(args[0])
            if dtype == torch.int64 and args[0] in cpu_computed:
                raise Unsupported(f"int64 buffer {args[0]} is computed on the CPU and may hold "
                                  "values beyond the card's int32")
            dtypes[instr.result] = dtype
            ranges[instr.result] = _BY_DTYPE.get(dtype, ValueRanges.unknown())
            if args[0] in stored and args[0] not in cpu_computed:
                r = _loaded(stored[args[0]], dtype, ranges[instr.result])
                if args[0] in inputs:
                    r = _union(r, ranges[instr.result])
                ranges[instr.result] = r
            continue
        if op in ("store", "store_reduction"):  # (the trace refuses atomic stores)
            r = ranged(args[2])
            r = r if isinstance(r, ValueRanges) else ValueRanges.wrap(r)
            written[args[0]] = _union(written[args[0]], r) if args[0] in written else r
            continue
        if op == "indirect_indexing" or instr.result is None:
            continue
        if op == "reduction":
            dtype, kind, value = args[0], args[2], args[3]
            results = instr.result if isinstance(instr.result, tuple) else (instr.result,)
            for r in results:
                dtypes[r] = dtype
                ranges[r] = ValueRanges.unknown_bool() if dtype == torch.bool else \
                    ValueRanges.unknown()
            source = ranged(value)
            # The card reduces in f32: integers beyond 2^24 round there, so
            # their order is not theirs (2^25 + 1 and 2^25 compare equal).
            if kind in ("max", "min") and in_f32(value):
                exact.update(results)
            if kind in ("max", "min", "argmax", "argmin") and _integer(args[1]) and \
                    not in_f32(value):
                raise Unsupported(f"an integer {kind} over values beyond 2^24 (in [{source.lower}, "
                                  f"{source.upper}]) would round in the card's f32 reduction")
            if dtype.is_floating_point and kind == "sum" and _finite(source) and \
                    isinstance(reduced, int):
                ranges[results[0]] = ValueRanges(min(0, source.lower * reduced),
                                                 max(0, source.upper * reduced))
            if dtype.is_floating_point or dtype == torch.bool or kind not in ("sum", "prod"):
                if kind in ("max", "min"):
                    ranges[results[0]] = source
                continue
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
        elif op == "masked":  # (mask, the body's value, the value where masked off)
            dtype = dtypes.get(args[1])
            r = _union(ranged(args[1]), ValueRanges.wrap(args[2])) \
                if isinstance(args[2], (int, float)) else ValueRanges.unknown()
        else:
            dtype, r = pointwise(op, args, instr.kwargs, ranged)
            if op == "where" and in_f32(args[1]) and in_f32(args[2]):
                exact.add(instr.result)
            why = next((poisoned[a] for a in args if isinstance(a, TV) and a in poisoned), None)
            if why is not None:
                chosen = _where_under_condition(instr, defined, ranges, poisoned, pointwise) \
                    if op == "where" else None
                if chosen is None:
                    poisoned[instr.result] = why
                    r = ValueRanges.unknown()
                else:
                    r = chosen
            elif op == "where" and not _finite(r) and not r.is_bool:
                # A branch infinite only on lanes the other one takes
                # (DeBERTa's log buckets: log(0) where the position is small).
                chosen = _where_under_condition(instr, defined, ranges, poisoned, pointwise)
                if chosen is not None and _finite(chosen):
                    r = chosen
        if dtype == torch.bool and not r.is_bool:  # 0 or 1, whatever op made it
            r = ValueRanges.unknown_bool()
        dtypes[instr.result], ranges[instr.result] = dtype, r
        if dtype == torch.int64 and not _within(r, INT32) and instr.result not in poisoned:
            poisoned[instr.result] = (f"int64 {op} may leave the card's int32 (values in "
                                      f"[{r.lower}, {r.upper}])")
    for name, r in written.items():
        stored[name] = _union(stored[name], r) if name in stored else r


def _pointwise(op, args, kwargs, dtypes, ranged, analysis, propagation):
    """The dtype and range of a pointwise op's result: Inductor's dtype
    propagation and value-range analysis, with the bounds it leaves out."""
    def typed(a):
        return _Typed(dtypes[a]) if isinstance(a, TV) else a

    try:
        dtype = getattr(propagation, op)(*map(typed, args), **kwargs)
    except Exception:
        dtype = None
    try:
        r = getattr(analysis, op)(*map(ranged, args), **kwargs)
        r = r if isinstance(r, ValueRanges) else ValueRanges.unknown()
    except Exception:
        r = ValueRanges.unknown()
    r = _bounded(op, args, ranged, r)
    # Where the dtype is not known, an int64 operand makes the result
    # checked as int64 rather than not at all.
    if dtype is None and any(isinstance(a, TV) and dtypes.get(a) == torch.int64 for a in args):
        dtype = torch.int64
    if dtype == torch.bool and not r.is_bool:
        r = ValueRanges.unknown_bool()
    return dtype, r


#: A comparison and the one that holds where it is false.
_NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}
#: A comparison with its operands swapped.
_SWAPPED = {"gt": "lt", "ge": "le"}


def _where_under_condition(where, defined, ranges, poisoned, pointwise):
    """The range of `where(c, a, b)` with each branch analysed only over the
    lanes that choose it: where c compares two values, `a` sees them as
    c says and `b` as its negation. None if a chosen branch may still leave
    int32 there."""
    cond, *branches = where.args
    chosen = []
    for branch, holds in zip(branches, (True, False)):
        if not isinstance(branch, TV):
            chosen.append(ValueRanges.wrap(branch))
            continue
        narrowed = _narrowed(defined.get(cond), holds, ranges)
        if narrowed is None:
            if branch in poisoned:
                return None
            chosen.append(ranges[branch])
            continue
        if not narrowed:  # no lane chooses this branch
            continue
        r = _reanalysed(branch, narrowed, where.serial, defined, ranges, poisoned, pointwise)
        if r is None:
            return None
        chosen.append(r)
    if not chosen:
        return ValueRanges.unknown()
    result = chosen[0]
    for r in chosen[1:]:
        result = _union(result, r)
    return result


def _narrowed(compare, holds: bool, ranges) -> dict | None:
    """The ranges of a comparison's operands on the lanes where it holds
    (or, if not `holds`, does not): {} if there are none, None if the
    comparison is not one of two ranged values."""
    if compare is None or compare.op not in ("lt", "le", "gt", "ge"):
        return None
    op, (x, y) = compare.op, compare.args
    if not holds:
        op = _NEGATED[op]
    if op in _SWAPPED:
        op, x, y = _SWAPPED[op], y, x
    rx = ranges.get(x, ValueRanges.unknown()) if isinstance(x, TV) else ValueRanges.wrap(x)
    ry = ranges.get(y, ValueRanges.unknown()) if isinstance(y, TV) else ValueRanges.wrap(y)
    if rx.is_bool or ry.is_bool:
        return None
    # x < y (or x <= y): x is below y's greatest value, y above x's least;
    # for integers strictly so.
    step = 1 if op == "lt" and rx.is_int and ry.is_int else 0
    try:
        if bool(rx.lower > ry.upper - step):
            return {}  # no lane takes this branch
        new_x = ValueRanges(rx.lower, min(rx.upper, ry.upper - step))
        new_y = ValueRanges(max(ry.lower, rx.lower + step), ry.upper)
    except (TypeError, ValueError, RuntimeError):  # symbolic bounds
        return None
    return {v: r for v, r in ((x, new_x), (y, new_y)) if isinstance(v, TV)}


def _reanalysed(value, narrowed, before, defined, ranges, poisoned, pointwise):
    """The range of `value` with the values in `narrowed` held to their new
    ranges: the pointwise ops between them and `value` analysed again.
    None if `value` may still leave int32."""
    local = dict(narrowed)
    still_poisoned = set()

    def ranged(a):
        if not isinstance(a, TV):
            return a
        return local.get(a, ranges.get(a, ValueRanges.unknown()))

    first = min(defined[v].serial for v in narrowed if v in defined) if \
        any(v in defined for v in narrowed) else 0
    # (`defined` is in program order.)
    for instr in (i for i in defined.values() if first < i.serial < before):
        uses = [a for a in instr.args if isinstance(a, TV)]
        if instr.result in narrowed or not any(a in local or a in still_poisoned for a in uses):
            continue  # (the narrowed values keep their narrowed ranges)
        if instr.op in ("load", "reduction", "index_expr", "masked", "indirect_indexing"):
            continue  # not a pointwise function of the narrowed values
        dtype, r = pointwise(instr.op, instr.args, instr.kwargs, ranged)
        if any(a in still_poisoned for a in uses) or \
                any(a in poisoned and a not in local for a in uses) or \
                (dtype == torch.int64 and not _within(r, INT32)):
            still_poisoned.add(instr.result)
        local[instr.result] = r
    if value in still_poisoned or (value in poisoned and value not in local):
        return None
    return ranged(value)


def _bounded(op: str, args, ranged, r: ValueRanges) -> ValueRanges:
    """Bounds Inductor's value-range analysis leaves unknown: a sign is -1, 0
    or 1, a remainder is smaller in magnitude than its divisor (indices
    wrapped by a dimension's size, as in take_along_dim), an integer
    quotient no larger than its dividend, and a choice lies
    in the union of its two values, constants included."""
    if op == "sign":
        return ValueRanges(-1, 1)
    if op in ("remainder", "fmod", "mod"):
        divisor = ranged(args[1])
        if not _finite(divisor):  # (sympy's infinities cannot be made int)
            return r
        largest = max(abs(int(divisor.lower)), abs(int(divisor.upper)))
        return ValueRanges(-largest, largest)
    if op == "truncdiv":  # an integer quotient is no larger than its dividend
        dividend = ranged(args[0])
        if _finite(dividend):
            largest = max(abs(int(dividend.lower)), abs(int(dividend.upper)))
            return ValueRanges(-largest, largest)
        return r
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


def _integer(dtype) -> bool:
    return isinstance(dtype, torch.dtype) and not dtype.is_floating_point and \
        not dtype.is_complex and dtype != torch.bool


def _one_f32(r: ValueRanges) -> bool:
    """Whether r is one integer that an f32 holds exactly."""
    try:
        return r.lower == r.upper and int(r.lower) == float(torch.tensor(
            float(r.lower), dtype=torch.float32))
    except (TypeError, ValueError, OverflowError):
        return False


def _finite(r) -> bool:
    try:
        return isinstance(r, ValueRanges) and not r.is_bool and \
            math.isfinite(float(r.lower)) and math.isfinite(float(r.upper))
    except (TypeError, ValueError):  # symbolic bounds
        return False


def _union(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    if a.is_bool != b.is_bool:
        return ValueRanges.unknown()
    try:
        return a | b
    except AssertionError:  # an integer and a float range
        return ValueRanges.unknown()


def _loaded(r: ValueRanges, dtype: torch.dtype, default: ValueRanges) -> ValueRanges:
    """What a load of a buffer that holds `r` reads. The card computes
    floats in f32 or DLFloat16, not in the reals of the analysis: a float
    range is widened by more than their roundings (DLFloat16's 2^-10, f32
    sums of 2^16 terms; 2^-6 relative, and 1 for a rounding across an
    integer)."""
    if not _finite(r):
        return default
    if dtype.is_floating_point:
        lower, upper = float(r.lower), float(r.upper)
        # Beyond the type's largest finite value eager stores infinities.
        if max(abs(lower), abs(upper)) > torch.finfo(dtype).max / 2:
            return default
        return ValueRanges(lower - abs(lower) / 64 - 1, upper + abs(upper) / 64 + 1)
    if dtype == torch.int64:  # what was checked to fit int32 when it was stored
        return r
    return r if _within(r, default) else default
