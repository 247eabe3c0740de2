"""A traced scheduled node as a kernel-level Spyre kernel, built with the MLIR
Python bindings.

Buffers are passed flat (one dimension covering every element the node
touches) so that Inductor's index expressions, which are flat offsets, become
one-result affine maps. Two shapes of node get a dedicated op: a sum of
products that is a matrix product becomes `spyre.matmul` / `spyre.batch_matmul`
(on 2-D / 3-D views of the buffers), a load through an index loaded from
another buffer becomes `spyre.gather`, and a store of whole rows through
such an index (a KV cache written at its positions) `spyre.scatter`.
Everything else becomes one `spyre.generic`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import sympy
import torch

from ..dialects import spyre
from ..ir import (AffineConstantExpr, AffineDimExpr, AffineMap, Context, InsertionPoint,
                  IntegerAttr, IntegerType, Location, Module, ShapedType, Type, UnitAttr, Value)
from .body import Body, affine_expr
from .pieces import TORCH_OPS, split as split_pieces
from .trace import _INDEXED, TV, Instr, Trace, Unsupported, element_type, fresh_values, linear

COMBINERS = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "argmax": "argmax",
             "argmin": "argmin", "any": "any", "welford_reduce": "welford"}


@dataclass
class ExportedKernel:
    name: str
    mlir: str
    buffers: list[str]       # kernel arguments, by Inductor buffer name
    ops: str                 # what it computes, for reports
    #: Arguments the kernel writes only in part, with the elements it writes
    #: (see partial_writes): the runtime must neither zero nor write back the rest.
    partial: dict[str, list[Box]] = field(default_factory=dict)


BufferInfo = Callable[[str], tuple[int, torch.dtype]]  # name -> (flat extent, dtype)
#: Elements of a flat buffer: torch's as_strided (offset, sizes, strides).
Box = tuple[int, tuple[int, ...], tuple[int, ...]]


def export(name: str, trace: Trace, buffer_info: BufferInfo) -> ExportedKernel:
    with Context(), Location.unknown():
        split = _pieces(trace, buffer_info) is not None
        for attempt in (_generic,) if split else (_scatter, _gather, _matmul, _generic):
            module = attempt(name, trace, buffer_info)
            if module is not None:
                module.operation.verify()
                kernel = module.body.operations[0]
                buffers = [str(a).strip('"') for a in _arg_names(kernel)]
                return ExportedKernel(name, str(module), buffers, attempt.__name__.strip("_"),
                                      partial_writes([trace], buffers, buffer_info))
    raise AssertionError("unreachable")


def export_many(name: str, traces: list[Trace], buffer_info: BufferInfo,
                temporaries: set[str]) -> ExportedKernel:
    """Several elementwise/reduction nodes as one kernel (see export_group)."""
    with Context(), Location.unknown():
        module = export_group(name, traces, buffer_info, temporaries)
        module.operation.verify()
        kernel = module.body.operations[0]
        buffers = [str(a).strip('"') for a in _arg_names(kernel)]
        return ExportedKernel(name, str(module), buffers, "generic",
                              partial_writes(traces, buffers, buffer_info))


def export_epilogue(name: str, products: list[Trace], epilogue: Trace,
                    buffer_info: BufferInfo, temporaries: set[str]) -> ExportedKernel:
    """Matrix products and the elementwise node that consumes their outputs
    as one kernel: each product goes to a kernel temporary (it must be among
    `temporaries`) that the epilogue's generic reads at the index it writes,
    which spyre-fuse-epilogue runs on the products' output tiles in LX. Two
    products must share their lhs (a gated MLP's gate and up projections);
    the card computes them side by side. Raises Unsupported when the nodes
    do not have that shape."""
    with Context(), Location.unknown():
        specs = _side_by_side(products, buffer_info)
        if specs is None:
            raise Unsupported("not a matrix product with an epilogue, or products that do "
                              "not share their lhs and shapes")
        (a_name, _, _), _, (_, (M, N), _) = specs[0].args
        c_names = [spec.args[2][0] for spec in specs]
        if any(c not in temporaries for c in c_names):
            raise Unsupported("the product is read by other nodes too")
        if epilogue.indirect or epilogue.reduction_sizes or \
                _pieces(epilogue, buffer_info) is not None:
            raise Unsupported("the product's consumer is not elementwise")
        epilogue = _on_rows_and_cols(epilogue, c_names, M, N)
        yields = _yields(epilogue)
        used = _buffers(epilogue, yields)
        operands = {a_name} | {spec.args[1][0] for spec in specs}
        if operands & set(used):
            # As matrices they are not the flat buffers its maps index.
            raise Unsupported("the epilogue reads an operand of the product")
        if any(i.args[0] in c_names for i in epilogue.instrs if i.op == "store"):
            raise Unsupported("the epilogue writes the product")
        args = [specs[0].args[0]] + [spec.args[1] for spec in specs]
        for n in used:
            if n not in c_names:
                extent, dtype = buffer_info(n)
                args.append((n, (max(extent, 1),), element_type(dtype)))
        module, kernel, block = _new_kernel(name, args)
        buffer_of = {n: block.arguments[k] for k, (n, _, _) in enumerate(args)}
        with InsertionPoint(block):
            for spec in specs:
                (_, _, _), (b_name, _, _), (c_name, _, c_type) = spec.args
                buffer_of[c_name] = spyre.AllocOp(_buffer_type((M, N), c_type), []).result
                _emit_matmul(spec, buffer_of[a_name], buffer_of[b_name], buffer_of[c_name])
            _emit_generic(epilogue, yields, buffer_of,
                          matrices={c: (M, N) for c in c_names})
            spyre.ReturnOp()
        module.operation.verify()
        buffers = [str(a).strip('"') for a in _arg_names(kernel)]
        return ExportedKernel(name, str(module), buffers, "matmul",
                              partial_writes([epilogue], buffers, buffer_info))


def export_chain(name: str, first: tuple[Trace, Trace], second: tuple[Trace, Trace],
                 buffer_info: BufferInfo, temporaries: set[str]) -> ExportedKernel:
    """Two products with their epilogues as one kernel, the second product's
    lhs being the first epilogue's output (a multilayer perceptron:
    epi(act(x @ W1) @ W2)): that output becomes a kernel temporary, an
    (M x F) matrix, which spyre-fuse-epilogue keeps in LX (ChainPlan).
    Raises Unsupported when the nodes do not have that shape."""
    with Context(), Location.unknown():
        steps = []
        for product, epilogue in (first, second):
            specs = _side_by_side([product], buffer_info)
            if specs is None or specs[0].batched or specs[0].transpose_lhs:
                raise Unsupported("not a plain matrix product")
            (_, _, _), _, (c_name, (M, N), _) = specs[0].args
            if c_name not in temporaries:
                raise Unsupported("the product is read by other nodes too")
            if epilogue.indirect or epilogue.reduction_sizes or \
                    _pieces(epilogue, buffer_info) is not None:
                raise Unsupported("the product's consumer is not elementwise")
            epilogue = _on_rows_and_cols(epilogue, [c_name], M, N)
            if epilogue.sizes != [M, N]:
                raise Unsupported("the epilogue runs over more loops than rows and columns")
            yields = _yields(epilogue)
            steps.append((specs[0], epilogue, yields, _buffers(epilogue, yields)))
        (spec1, epi1, yields1, used1), (spec2, epi2, yields2, used2) = steps
        stores = [i.args[0] for i in epi1.instrs if i.op == "store"]
        hidden, (M, F) = spec2.args[0][0], spec2.args[0][1]
        if stores != [hidden] or hidden not in temporaries or spec1.args[2][1] != (M, F):
            raise Unsupported("the second product does not read the first epilogue's output")
        matrices = {spec1.args[0][0], spec1.args[1][0], spec2.args[1][0]}
        if matrices & (set(used1) | set(used2)) or len(matrices) != 3:
            raise Unsupported("an epilogue reads an operand of a product")
        products = {spec1.args[2][0], spec2.args[2][0]}
        if any(i.args[0] in products for e in (epi1, epi2) for i in e.instrs
               if i.op == "store"):
            raise Unsupported("an epilogue writes a product")
        args, seen = [spec1.args[0], spec1.args[1], spec2.args[1]], set(matrices)
        for n in used1 + used2:
            if n not in products and n != hidden and n not in seen:
                seen.add(n)
                extent, dtype = buffer_info(n)
                args.append((n, (max(extent, 1),), element_type(dtype)))
        module, kernel, block = _new_kernel(name, args)
        buffer_of = {n: block.arguments[k] for k, (n, _, _) in enumerate(args)}
        with InsertionPoint(block):
            buffer_of[hidden] = spyre.AllocOp(
                _buffer_type((M, F), element_type(buffer_info(hidden)[1])), []).result
            for spec, epilogue, yields in ((spec1, epi1, yields1), (spec2, epi2, yields2)):
                (a_name, _, _), (b_name, _, _), (c_name, shape, c_type) = spec.args
                buffer_of[c_name] = spyre.AllocOp(_buffer_type(shape, c_type), []).result
                _emit_matmul(spec, buffer_of[a_name], buffer_of[b_name], buffer_of[c_name])
                _emit_generic(epilogue, yields, buffer_of, matrices={c_name: shape})
            spyre.ReturnOp()
        module.operation.verify()
        buffers = [str(a).strip('"') for a in _arg_names(kernel)]
        return ExportedKernel(name, str(module), buffers, "matmul",
                              partial_writes([epi2], buffers, buffer_info))


def export_products(name: str, products: list[Trace], buffer_info: BufferInfo) -> ExportedKernel:
    """Matrix products of one lhs and the same shapes, each writing an output
    of its own (a layer's key and value projections), as one kernel:
    spyre-fuse-epilogue groups them and the card computes them side by
    side, each lhs panel loaded once for both. Raises Unsupported when they
    are not such products."""
    with Context(), Location.unknown():
        specs = _side_by_side(products, buffer_info)
        if specs is None:
            raise Unsupported("products that do not share their lhs and shapes")
        args = [specs[0].args[0]] + [spec.args[1] for spec in specs] + \
            [spec.args[2] for spec in specs]
        if len({name for name, _, _ in args}) != len(args):
            raise Unsupported("the products share a buffer besides their lhs")
        module, kernel, block = _new_kernel(name, args)
        count = len(specs)
        with InsertionPoint(block):
            for i, spec in enumerate(specs):
                _emit_matmul(spec, block.arguments[0], block.arguments[1 + i],
                             block.arguments[1 + count + i])
            spyre.ReturnOp()
        module.operation.verify()
        buffers = [str(a).strip('"') for a in _arg_names(kernel)]
        return ExportedKernel(name, str(module), buffers, "matmul",
                              partial_writes(products, buffers, buffer_info))


def products_side_by_side(products: list[Trace], buffer_info: BufferInfo) -> bool:
    """Whether these matrix products can share one kernel's output tiles:
    unbatched, the same lhs, the same shapes, types and layouts."""
    try:
        return _side_by_side(products, buffer_info) is not None
    except Unsupported:
        return False


def _side_by_side(products: list[Trace], buffer_info: BufferInfo) -> list[_MatmulSpec] | None:
    specs = [_matmul_spec(product, buffer_info) for product in products]
    if any(spec is None or spec.batched for spec in specs):
        return None
    same = [(s.args[0], s.args[1][1:], s.args[2][1:], s.transpose_lhs, s.transpose_rhs)
            for s in specs]
    return specs if all(x == same[0] for x in same) else None


def _on_rows_and_cols(trace: Trace, products: list[str], M: int, N: int) -> Trace:
    """`trace` over two loops (rows, columns of the M x N products) reading
    each of `products` at row * N + col: as it is, or with its one loop over
    all M * N elements split in two (Inductor merges the loops of a node
    whose every access is contiguous)."""
    loads = [i for i in trace.instrs if i.op == "load" and i.args[0] in products]
    if {i.args[0] for i in loads} != set(products):
        raise Unsupported("the node does not read the product")
    accesses = {(base, tuple(coeffs)) for base, coeffs in
                (linear(i.args[1], trace.variables) for i in loads)}
    if trace.sizes == [M, N] and accesses == {(0, (N, 1))}:
        return trace
    if M == 1 and len(trace.sizes) > 1 and math.prod(trace.sizes) == N:
        # One row (a decode step), whose loop Inductor drops: a row loop of
        # one, stepping the products and the output by a row.
        trace = _with_row_loop(trace, products, N)
        accesses = {(base, (N,) + coeffs) for base, coeffs in accesses}
    if len(trace.sizes) > 2 and trace.sizes[0] == M and math.prod(trace.sizes[1:]) == N and \
            all(_in_its_row(base, coeffs, trace.sizes, N) for base, coeffs in accesses):
        # Loops over the columns too (a rotary embedding's heads, halves and
        # elements), each read of a product within the row it writes: the
        # plan takes it or says why not.
        return trace
    if trace.sizes != [M * N] or accesses != {(0, (1,))}:
        raise Unsupported("the node does not read the product row by row")
    (v,) = trace.variables
    row = sympy.Symbol(f"{v.name}h", integer=True, nonnegative=True)
    col = sympy.Symbol(f"{v.name}l", integer=True, nonnegative=True)
    instrs = []
    for instr in trace.instrs:
        args = instr.args
        if instr.op in _INDEXED:
            k = _INDEXED[instr.op]
            args = args[:k] + (sympy.sympify(args[k]).subs(v, N * row + col),) + args[k + 1:]
        instrs.append(replace(instr, args=args))
    return replace(trace, sizes=[M, N], variables=[row, col], instrs=instrs)


def _with_row_loop(trace: Trace, products: list[str], cols: int) -> Trace:
    """`trace` with a first loop of one iteration that steps the products it
    reads and the buffers it stores by `cols` elements."""
    row = sympy.Symbol("r_row", integer=True, nonnegative=True)
    instrs = []
    for instr in trace.instrs:
        args = instr.args
        if (instr.op == "load" and args[0] in products) or instr.op == "store":
            k = _INDEXED[instr.op]
            args = args[:k] + (sympy.sympify(args[k]) + cols * row,) + args[k + 1:]
        instrs.append(replace(instr, args=args))
    return replace(trace, sizes=[1] + trace.sizes, variables=[row] + trace.variables,
                   instrs=instrs)


def _in_its_row(base, coeffs, sizes, cols: int) -> bool:
    """Whether `base + sum(coeffs * loops)` over loops of `sizes` reads a
    (rows x cols) matrix row by row: the first loop steps a row, the others
    stay within it."""
    if not coeffs or coeffs[0] != cols:
        return False
    low = base + sum(min(0, c * (n - 1)) for c, n in zip(coeffs[1:], sizes[1:]))
    high = base + sum(max(0, c * (n - 1)) for c, n in zip(coeffs[1:], sizes[1:]))
    return 0 <= low and high < cols


def partial_writes(traces: list[Trace], buffers: list[str],
                   buffer_info: BufferInfo) -> dict[str, list[Box]]:
    """The arguments among `buffers` that the traces' stores write only in
    part, with the boxes of elements they write. A slice of a concatenation
    is written through its base buffer (scheduling._storage), so a kernel
    may write a few elements of an argument whose other elements hold
    values of earlier kernels; the C++ pipeline calls an argument an
    `output` when its first access is a write, however few elements that
    write covers."""
    boxes: dict[str, list[Box]] = {}
    # Pieces (pieces.py) index affinely where their whole trace may not.
    for trace in (p for t in traces for p in _pieces(t, buffer_info) or [t]):
        sizes = trace.sizes + trace.reduction_sizes
        for store in (i for i in trace.instrs if i.op in ("store", "store_reduction")):
            if store.args[0] not in buffers:
                continue  # a kernel temporary
            if _indexed_by(store, {s.name for s in trace.indirect}):
                continue  # a scatter's table: the kernel reads it whole, then writes rows
            offset, coeffs = linear(store.args[1], trace.variables)
            dims = []
            for size, stride in zip(sizes, coeffs):
                if size > 1 and stride:
                    if stride < 0:  # the same elements, from the other end
                        offset, stride = offset + stride * (size - 1), -stride
                    dims.append((size, stride))
            dims.sort(key=lambda d: d[1])
            boxes.setdefault(store.args[0], []).append(
                (offset, tuple(d[0] for d in dims), tuple(d[1] for d in dims)))
    return {name: b for name, b in boxes.items()
            if not _covers(b, max(buffer_info(name)[0], 1))}


def _covers(boxes: list[Box], extent: int) -> bool:
    """Whether the boxes hold every element of a flat buffer of `extent`."""
    for offset, sizes, strides in boxes:
        dense = 1  # a box whose strides are those of a contiguous tensor
        for size, stride in zip(sizes, strides):
            dense = dense * size if stride == dense else -1
        if offset == 0 and dense == extent:
            return True
    if extent > 1 << 22:  # a mask too big to build at compile time: say no
        return False
    written = np.zeros(extent, bool)
    for offset, sizes, strides in boxes:
        if offset >= 0 and offset + sum((n - 1) * s for n, s in zip(sizes, strides)) < extent:
            np.lib.stride_tricks.as_strided(written[offset:], sizes, [s * written.itemsize
                                                                      for s in strides])[...] = True
    return bool(written.all())


def _arg_names(kernel) -> list[str]:
    return [d["spyre.name"].value for d in kernel.attributes["arg_attrs"]]


def _buffer_type(shape, elt: str) -> Type:
    return Type.parse(f"!spyre.buffer<{'x'.join(map(str, shape))}x{elt}>")


def _new_kernel(name: str, args: list[tuple[str, tuple[int, ...], str]]):
    module = Module.create()
    with InsertionPoint(module.body):
        kernel, block = spyre.kernel(name, [_buffer_type(s, t) for _, s, t in args])
    kernel.attributes["arg_attrs"] = _arg_attrs(args)
    return module, kernel, block


def _arg_attrs(args):
    from ..ir import ArrayAttr, DictAttr, StringAttr
    return ArrayAttr.get([DictAttr.get({"spyre.name": StringAttr.get(n)}) for n, _, _ in args])


def _pieces(trace: Trace, buffer_info: BufferInfo) -> list[Trace] | None:
    """The parts of the trace's domain where its indexing is affine, if it
    needs splitting (pieces.py); computed once per trace."""
    if not trace.split_checked:
        trace.pieces = split_pieces(trace, lambda n: buffer_info(n)[1])
        trace.split_checked = True
    return trace.pieces


# --------------------------------------------------------------------------
# spyre.generic


def _yields(trace: Trace) -> list[tuple[TV, str, list]]:
    """(value, combiner, [store instrs]) per value the generic yields."""
    if trace.indirect:
        raise Unsupported("indirect indexing other than an embedding lookup")
    reducing = bool(trace.reduction_sizes)
    stores = [i for i in trace.instrs if i.op in ("store", "store_reduction")]
    if not reducing:
        return [(s.args[2], "none", [s]) for s in stores]
    if any(s.op == "store" for s in stores):
        raise Unsupported("a reduction node that also stores elementwise values")
    yields = []
    for r in (i for i in trace.instrs if i.op == "reduction"):
        kind = r.args[2]
        if kind not in COMBINERS:
            raise Unsupported(f"reduction {kind!r}")
        results = r.result if isinstance(r.result, tuple) else (r.result,)
        outs = []
        for part in results:
            match = [s for s in stores if s.args[2] == part]
            if len(match) > 1 or (not match and len(results) == 1):
                raise Unsupported("a reduction result used other than by one store")
            # A Welford part no store keeps (Inductor may split the three
            # results over nodes) goes to a kernel temporary.
            outs.append(match[0] if match else None)
        if all(o is None for o in outs):
            raise Unsupported("a reduction whose results are not stored")
        yields.append((r.args[3], COMBINERS[kind], outs))
    if sum(o is not None for _, _, outs in yields for o in outs) != len(stores):
        raise Unsupported("a reduction node storing values that are not reductions")
    return yields


def _buffers(trace: Trace, yields) -> list[str]:
    names = []
    loads = [i for i in trace.instrs if i.op == "load"]
    for i in loads + [s for _, _, outs in yields for s in outs if s is not None]:
        if i.args[0] not in names:
            names.append(i.args[0])
    return names


def _generic(name: str, trace: Trace, buffer_info: BufferInfo):
    return export_group(name, [trace], buffer_info, set())


def export_group(name: str, traces: list[Trace], buffer_info: BufferInfo,
                 temporaries: set[str]) -> Module:
    """One kernel running a generic per trace, in order; buffers named in
    `temporaries` are written and read only by these traces and become
    kernel temporaries (spyre.alloc) instead of arguments. A split trace is
    a generic per piece."""
    split = [_pieces(t, buffer_info) for t in traces]
    if len(traces) > 1 and any(p is not None for p in split):
        # Pieces write one buffer from several generics, which the fusion
        # passes' single-producer view of temporaries does not model.
        raise Unsupported("a split trace runs as a kernel of its own")
    traces = [p for t, pieces in zip(traces, split) for p in (pieces if pieces is not None else [t])]
    yields_of = [_yields(t) for t in traces]
    names = []
    for trace, yields in zip(traces, yields_of):
        names += [n for n in _buffers(trace, yields) if n not in names]
    args = []
    for n in names:
        if n not in temporaries:
            extent, dtype = buffer_info(n)
            args.append((n, (max(extent, 1),), element_type(dtype)))
    module, kernel, block = _new_kernel(name, args)
    buffer_of = {n: block.arguments[k] for k, (n, _, _) in enumerate(args)}
    with InsertionPoint(block):
        for n in names:
            if n in temporaries:
                extent, dtype = buffer_info(n)
                buffer_of[n] = spyre.AllocOp(_buffer_type((max(extent, 1),),
                                                          element_type(dtype)), []).result
        for trace, yields in zip(traces, yields_of):
            _emit_generic(trace, yields, buffer_of)
        spyre.ReturnOp()
    return module


def _emit_generic(trace: Trace, yields, buffer_of: dict, matrices: dict | None = None) -> None:
    """`matrices`: buffers that are (rows x cols) matrices rather than flat,
    read at (row, col) by a generic over (rows, cols)."""
    variables = trace.variables
    ndims = len(variables)
    reducing = bool(trace.reduction_sizes)
    loads = [i for i in trace.instrs if i.op == "load"]
    maps, inputs = [], []
    for load in loads:
        base, coeffs = linear(load.args[1], variables)
        if load.args[0] in (matrices or {}):
            cols = matrices[load.args[0]][1]
            if base == 0 and coeffs == [cols, 1]:
                maps.append(AffineMap.get_identity(2))
            elif ndims > 2 and _in_its_row(base, coeffs, trace.sizes, cols):
                maps.append(AffineMap.get(ndims, 0, [AffineDimExpr.get(0),
                                                     affine_expr(base, [0] + coeffs[1:])]))
            elif cols == 1:  # one value per row, at any row of the domain
                maps.append(AffineMap.get(ndims, 0, [affine_expr(base, coeffs),
                                                     AffineConstantExpr.get(0)]))
            else:
                raise Unsupported("a matrix read other than row by row")
        else:
            maps.append(AffineMap.get(ndims, 0, [affine_expr(base, coeffs)]))
        inputs.append(buffer_of[load.args[0]])
    outputs, out_types = [], []
    for _, _, outs in yields:
        kept = next(s for s in outs if s is not None)
        for s in outs:
            base, coeffs = linear((s or kept).args[1], variables)
            buffer = buffer_of[kept.args[0]]
            shape = ShapedType(buffer.type).shape
            if len(shape) > 1:  # a temporary whose dimensions are loops (a scatter's values)
                maps.append(_loops_map(shape, base, coeffs, trace.sizes))
            else:
                maps.append(AffineMap.get(ndims, 0, [affine_expr(base, coeffs)]))
            outputs.append(buffer if s is not None else spyre.AllocOp(buffer.type, []).result)
            out_types.append(_element_type_of(buffer))
    iterators = ["parallel"] * len(trace.sizes) + ["reduction"] * len(trace.reduction_sizes)

    def body(*block_args):
        body = Body({}, variables)
        body.values.update({load.result: body.widen(block_args[k])
                            for k, load in enumerate(loads)})
        for instr in trace.instrs:
            if instr.op in ("load", "store", "store_reduction", "reduction"):
                continue
            body.emit(instr)
        result = []
        position = 0
        for value, combiner, outs in yields:
            v = body.get(value)
            if combiner not in ("argmax", "argmin"):  # those yield the values compared
                v = body.cast(v, out_types[position])
            result.append(v)
            position += len(outs)
        return result

    spyre.generic(trace.sizes + trace.reduction_sizes, inputs, outputs, maps, iterators, body,
                  combiners=[c for _, c, _ in yields] if reducing else None)


def _loops_map(shape, base: int, coeffs: list[int], sizes: list[int]) -> AffineMap:
    """The map that writes a shaped buffer at the flat position base +
    coeffs . loops: each dimension of it is the loop of its size whose
    coefficient is that dimension's row-major stride."""
    results, used = [], set()
    for d, n in enumerate(shape):
        stride = math.prod(shape[d + 1:])
        if n == 1:
            results.append(AffineConstantExpr.get(0))
            continue
        k = next((k for k, c in enumerate(coeffs) if c == stride and sizes[k] == n and
                  k not in used), None)
        if k is None:
            raise Unsupported("a shaped temporary written other than along its loops")
        used.add(k)
        results.append(AffineDimExpr.get(k))
    if base != 0 or any(c and k not in used for k, c in enumerate(coeffs)):
        raise Unsupported("a shaped temporary written other than along its loops")
    return AffineMap.get(len(sizes), 0, results)


def _element_type_of(buffer: Value) -> Type:
    return ShapedType(buffer.type).element_type


# --------------------------------------------------------------------------
# spyre.matmul: sum over r of A[.., r] * B[r, ..]


@dataclass
class _MatmulSpec:
    args: list        # (name, shape, element type) of lhs, rhs and output
    batched: bool
    transpose_lhs: bool
    transpose_rhs: bool


def _matmul(name: str, trace: Trace, buffer_info: BufferInfo):
    spec = _matmul_spec(trace, buffer_info)
    if spec is None:
        return None
    module, kernel, block = _new_kernel(name, spec.args)
    with InsertionPoint(block):
        _emit_matmul(spec, *block.arguments)
        spyre.ReturnOp()
    return module


def _emit_matmul(spec: _MatmulSpec, a: Value, b: Value, c: Value) -> None:
    from ..ir import UnitAttr
    op = (spyre.BatchMatmulOp if spec.batched else spyre.MatmulOp)(a, b, c)
    if spec.transpose_lhs:
        op.attributes["transpose_lhs"] = UnitAttr.get()
    if spec.transpose_rhs:
        op.attributes["transpose_rhs"] = UnitAttr.get()


def _matmul_spec(trace: Trace, buffer_info: BufferInfo) -> _MatmulSpec | None:
    """The product `trace` computes, if it is one."""
    if trace.indirect or len(trace.reduction_sizes) != 1 or len(trace.sizes) not in (1, 2, 3):
        return None
    ops = [i for i in trace.instrs]
    loads = [i for i in ops if i.op == "load"]
    if len(loads) != 2 or [i.op for i in ops][-2:] != ["reduction", "store_reduction"]:
        return None
    reduction, store = ops[-2], ops[-1]
    if reduction.args[2] != "sum" or store.args[2] != reduction.result:
        return None
    # Between the loads and the reduction: casts to f32 of each load, then one mul.
    values = {loads[0].result: loads[0], loads[1].result: loads[1]}
    for i in ops:
        if i.op == "to_dtype" and i.args[0] in values and i.args[1] == torch.float32:
            values[i.result] = values[i.args[0]]
        elif i.op == "mul" and all(a in values for a in i.args):
            if reduction.args[3] != i.result:
                return None
            a_load, b_load = values[i.args[0]], values[i.args[1]]
            break
        elif i.op not in ("load",):
            return None
    else:
        return None
    batched = len(trace.sizes) == 3
    variables = trace.variables
    if len(trace.sizes) == 1:
        # A vector times a matrix (or a matrix times a vector): Inductor
        # drops the output's dimension of size 1. A stand-in variable of size
        # 1 (in no index) takes its place, and the product runs as
        # (1 x K) @ (K x N) on the PT, the vector being the operand that does
        # not depend on the output's index.
        (var,), r = variables[:-1], variables[-1]
        m_var, n_var = sympy.Symbol("spyre_unit"), var
        sizes = [1, trace.sizes[0]]
        variables = [m_var, n_var, r]
        batch_vars = []
    else:
        *batch_vars, m_var, n_var = trace.variables[:-1]
        sizes = trace.sizes
    B = sizes[0] if batched else 1
    M, N, K = sizes[-2], sizes[-1], trace.reduction_sizes[0]

    def layout(load, outer, inner, outer_size, inner_size):
        """(transposed, batch stride) if `load` reads a dense (outer x inner)
        or (inner x outer) matrix per batch, else None. A dimension of size 1
        has no stride to check."""
        base, c = linear(load.args[1], trace.variables)
        coeff = dict(zip(trace.variables, c))
        coeff = {v: coeff.get(v, 0) for v in variables}
        if base != 0 or any(coeff[v] for v in variables if v not in (*batch_vars, outer, inner)):
            return None
        if (inner_size == 1 or coeff[inner] == 1) and (outer_size == 1 or coeff[outer] == inner_size):
            transposed = False
        elif (outer_size == 1 or coeff[outer] == 1) and (inner_size == 1 or coeff[inner] == outer_size):
            transposed = True
        else:
            return None
        batch = coeff[batch_vars[0]] if batched else 0
        if batched and batch not in (0, outer_size * inner_size):
            return None
        return transposed, batch

    r = variables[-1]
    for lhs, rhs in ((a_load, b_load), (b_load, a_load)):
        la = layout(lhs, m_var, r, M, K)
        lb = layout(rhs, r, n_var, K, N)
        if la and lb and (not batched or (la[1] and lb[1])):
            break
    else:
        return None
    out_base, out_c = linear(store.args[1], trace.variables)
    out_c = [dict(zip(trace.variables, out_c)).get(v, 0) for v in variables]
    if out_base != 0 or out_c[-1] != 0 or (N > 1 and out_c[-2] != 1) or \
            (M > 1 and out_c[-3] != N) or (batched and out_c[0] != M * N):
        return None
    if lhs.args[0] == rhs.args[0]:
        return None  # one buffer as both operands: kernel arguments must differ
    a_dtype, b_dtype = buffer_info(lhs.args[0])[1], buffer_info(rhs.args[0])[1]
    c_dtype = buffer_info(store.args[0])[1]
    for dtype in (a_dtype, b_dtype, c_dtype):
        if dtype not in (torch.float32, torch.float16, torch.bfloat16):
            return None
    # The PT rounds its operands to DLFloat16: exact for bf16 and the card's
    # fp16, but 14 fraction bits lost from an f32 operand. That is the
    # documented precision of a matrix product the program asks for (README,
    # "Range"), not of f32 products it writes as pointwise ops and a sum:
    # those stay a reduction on the SFU, in f32 as on the CPU
    # ((x[:, None] * y).sum(-1) of 27 f32 values was off by 1.5e-2 as a product).
    if torch.float32 in (a_dtype, b_dtype) and not trace.from_product:
        return None
    lead = (B,) if batched else ()
    a_shape = lead + ((K, M) if la[0] else (M, K))
    b_shape = lead + ((N, K) if lb[0] else (K, N))
    args = [(lhs.args[0], a_shape, element_type(a_dtype)),
            (rhs.args[0], b_shape, element_type(b_dtype)),
            (store.args[0], lead + (M, N), element_type(c_dtype))]
    return _MatmulSpec(args, batched, la[0], lb[0])


# --------------------------------------------------------------------------
# spyre.gather: out[p, x] = table[rows[p], x] over the lookup's leading loops p


def _gather(name: str, trace: Trace, buffer_info: BufferInfo):
    if len(trace.indirect) > 1 and not trace.reduction_sizes:
        return _element_lookups(name, trace, buffer_info)
    if len(trace.indirect) != 1 or trace.reduction_sizes:
        return None
    if len(trace.sizes) < 2:  # one loop (a decode step's one position): no rows to look up
        return _element_lookups(name, trace, buffer_info)
    ops = trace.instrs
    symbol, source = next(iter(trace.indirect.items()))
    loads = [i for i in ops if i.op == "load"]
    stores = [i for i in ops if i.op == "store"]
    if len(stores) != 1:
        return _lookups(name, trace, buffer_info)
    store = stores[0]
    rows = int(next(i.args[1] for i in ops if i.op == "indirect_indexing"))
    # The table's load reads at the index; Inductor drops the index from it
    # when the table has one row (BERT-like token types of one type).
    table_load = next((i for i in loads if _indexed_by(i, {symbol.name})), None)
    if table_load is None and rows == 1:
        table_load = next((i for i in loads if i.result == store.args[2]), None)
    if table_load is None or store.args[2] != table_load.result or \
            any(table_load.result in i.args for i in ops if i is not store):
        return _lookups(name, trace, buffer_info)
    # Every other load and op computes the rows (Inductor's wrap of negative
    # indices, where(i < 0, i + rows, i); MoE routing's order // top_k;
    # M2M100's positions from a count of its non-padding tokens).
    index_loads = [i for i in loads if i is not table_load]
    in_cone = {id(i) for i in _cone(ops, source)}
    if not any(id(i) in in_cone for i in index_loads):
        raise Unsupported("an indirect index not loaded from an index buffer")
    *leading, width = trace.sizes
    count = math.prod(leading)
    dense = [math.prod(leading[k + 1:]) * width for k in range(len(leading))] + [1]
    tb, tc = linear(table_load.args[1], trace.variables + [symbol])
    if (tb, tc) != (0, [0] * len(leading) + [1, width if rows > 1 else tc[-1]]):
        raise Unsupported("an indirect load that is not a row lookup of a dense table")
    if any(linear(i.args[1], trace.variables)[1][-1] for i in index_loads):
        raise Unsupported("an embedding lookup whose row depends on the column")
    table_extent, table_dtype = buffer_info(table_load.args[0])
    if rows != table_extent // width:
        raise Unsupported("an embedding table whose rows do not match the index bound")
    # One index buffer read in order, one index per row of the output.
    plain = len(index_loads) == 1 and \
        linear(index_loads[0].args[1], trace.variables) == (0, [d // width for d in dense]) and \
        buffer_info(index_loads[0].args[0])[0] == count and \
        _reads_the_index_as_loaded(ops, index_loads[0].result, source, rows) and \
        not _wraps_negative(trace, symbol)
    out_type = element_type(buffer_info(store.args[0])[1])
    args = [(table_load.args[0], (rows, width), element_type(table_dtype))]
    for name_ in dict.fromkeys(i.args[0] for i in index_loads):
        extent, dtype = buffer_info(name_)
        args.append((name_, (max(extent, 1),), "i32" if plain else element_type(dtype)))
    stored_dense = linear(store.args[1], trace.variables) == (0, dense)
    if not stored_dense and len(leading) > 1:
        raise Unsupported("a lookup into part of a buffer over several loops")
    args.append((store.args[0], (count, width) if stored_dense else
                 (max(buffer_info(store.args[0])[0], 1),), out_type))
    module, kernel, block = _new_kernel(name, args)
    buffer_of = {n: block.arguments[k] for k, (n, _, _) in enumerate(args)}
    with InsertionPoint(block):
        indices = buffer_of[index_loads[0].args[0]]
        if not plain:
            # The rows are computed into a kernel temporary first.
            rows_trace = _row_trace(trace, symbol)
            indices = buffer_of[_ROWS] = \
                spyre.AllocOp(_buffer_type((count,), "i32"), []).result
            _emit_generic(rows_trace, _yields(rows_trace), buffer_of)
        target = buffer_of[store.args[0]] if stored_dense else \
            spyre.AllocOp(_buffer_type((count, width), out_type), []).result
        spyre.GatherOp(buffer_of[table_load.args[0]], indices, target, 0)
        if not stored_dense:
            # A lookup into part of a buffer (CANINE's hash embeddings, one
            # slice of their concatenation each): gathered, then copied.
            buffer_of[_GATHERED] = target
            copy = _copy_trace(trace, store, dense)
            _emit_generic(copy, _yields(copy), buffer_of, matrices={_GATHERED: (count, width)})
        spyre.ReturnOp()
    return module


# --------------------------------------------------------------------------
# spyre.scatter: table[p, rows[q], r] = values[p, q, r] over the loops (p, q, r)


def _scatter(name: str, trace: Trace, buffer_info: BufferInfo):
    """Inductor's index_put of whole rows (index_copy: a static KV cache
    written at a step's positions): one store through an indirect index,
    over loops of three kinds in any order: over the table's outer
    dimensions, over the indices (the loop the stored position does not
    use; Inductor drops it when there is one index) and within a row, which
    the store walks densely. The values are read where they are when a
    buffer holds them in that order, else computed into a kernel temporary
    first; the rows are computed into one (a cache position plus an arange,
    negative indices wrapped)."""
    stores = [i for i in trace.instrs if i.op == "store"]
    if len(trace.indirect) != 1 or len(stores) != 1 or trace.reduction_sizes:
        return None
    (symbol, source), = trace.indirect.items()
    store = stores[0]
    if not _indexed_by(store, {symbol.name}):
        return None
    if any(_indexed_by(i, {symbol.name}) for i in trace.instrs if i.op == "load"):
        raise Unsupported("a scatter whose values are read through its index")
    rows = int(next(i.args[1] for i in trace.instrs if i.op == "indirect_indexing"))
    base, coeffs = linear(store.args[1], trace.variables + [symbol])
    *coeffs, width = coeffs
    loops = [k for k, n in enumerate(trace.sizes) if n > 1]
    at = [k for k in loops if coeffs[k] == 0]
    outer = sorted((k for k in loops if coeffs[k] >= rows * width), key=lambda k: -coeffs[k])
    inner = sorted((k for k in loops if 0 < coeffs[k] < width), key=lambda k: -coeffs[k])
    if len(at) > 1 or len(at) + len(outer) + len(inner) != len(loops):
        raise Unsupported("a scatter whose loops are not over rows, indices and a row")
    count = trace.sizes[at[0]] if at else 1
    table_shape = (*(trace.sizes[k] for k in outer), rows, *(trace.sizes[k] for k in inner))
    values_shape = table_shape[:len(outer)] + (count,) + table_shape[len(outer) + 1:]
    canonical = outer + at + inner
    strides = {k: math.prod(table_shape[d + 1:]) for d, k in
               enumerate(outer + [None] + inner) if k is not None}
    if base != 0 or width != math.prod(table_shape[len(outer) + 1:]) or \
            any(coeffs[k] != strides[k] for k in outer + inner):
        raise Unsupported("a scatter that does not write whole rows of a dense table")
    table, table_dtype = store.args[0], buffer_info(store.args[0])[1]
    if buffer_info(table)[0] != math.prod(table_shape):
        raise Unsupported("a scatter into part of a buffer")
    values_dense = _dense_over(canonical, trace.sizes)
    index_cone = {id(i) for i in _cone(trace.instrs, source)}
    index_loads = [i for i in trace.instrs if i.op == "load" and id(i) in index_cone]
    index_exprs = [i for i in trace.instrs if i.op == "index_expr" and id(i) in index_cone]
    index_var = trace.variables[at[0]] if at else sympy.Symbol("scatter_index", integer=True)
    if any(c for i in index_loads for k, c in enumerate(linear(i.args[1], trace.variables)[1])
           if not at or k != at[0]) or \
            any(sympy.sympify(i.args[0]).free_symbols - {index_var} for i in index_exprs):
        raise Unsupported("a scatter whose index depends on more than its index loop")
    value_load = next((i for i in trace.instrs if i.op == "load" and i.result == store.args[2]),
                      None)
    # The values where a buffer holds them: in the table's order, or with
    # the index loop elsewhere among the outer ones (a projection's keys,
    # [positions, heads, dim], into a cache of [heads, positions, dim]).
    source_axis = None
    if value_load is not None and id(value_load) not in index_cone and \
            [i for i in trace.instrs if i.op == "load" and i.args[0] == value_load.args[0]] == \
            [value_load] and \
            buffer_info(value_load.args[0]) == (math.prod(values_shape), table_dtype):
        read = linear(value_load.args[1], trace.variables)
        source_axis = next((a for a in range(len(outer) + 1) if read == (0, _dense_over(
            outer[:a] + at + outer[a:] + inner, trace.sizes))), None)
    plain_values = source_axis is not None
    element = element_type(table_dtype)
    args = [(table, table_shape, element)]
    if plain_values:
        order = outer[:source_axis] + at + outer[source_axis:] + inner
        args.append((value_load.args[0],
                     tuple(trace.sizes[k] for k in order) if at else values_shape, element))
    for n in dict.fromkeys(i.args[0] for i in trace.instrs if i.op == "load"):
        if all(a[0] != n for a in args):
            extent, dtype = buffer_info(n)
            args.append((n, (max(extent, 1),), element_type(dtype)))
    module, kernel, block = _new_kernel(name, args)
    buffer_of = {n: block.arguments[k] for k, (n, _, _) in enumerate(args)}
    with InsertionPoint(block):
        # The rows, computed over the index loop: where Inductor's indirect
        # indexing wraps a negative index, the card's scatter does not.
        indices = buffer_of[_ROWS] = spyre.AllocOp(_buffer_type((count,), "i32"), []).result
        fresh, serial = fresh_values(trace), itertools.count(len(trace.instrs))
        wrap, row = _wrapped(trace, symbol, fresh, serial)
        rows_trace = Trace([count], [], [index_var], _cone(trace.instrs, source) + wrap + [
            Instr("store", (_ROWS, index_var, row), None, {}, next(serial))])
        _emit_generic(rows_trace, _yields(rows_trace), buffer_of)
        if plain_values:
            values = buffer_of[value_load.args[0]]
        else:
            values = buffer_of[_SCATTERED] = \
                spyre.AllocOp(_buffer_type(values_shape, element), []).result
            position = sum(c * v for c, v in zip(values_dense, trace.variables))
            kept = _outside(trace.instrs, index_cone)
            body = [i for i in trace.instrs if id(i) in kept and i is not store]
            values_trace = Trace(list(trace.sizes), [], list(trace.variables), body + [
                Instr("store", (_SCATTERED, position, store.args[2]), None, {}, store.serial)])
            _emit_generic(values_trace, _yields(values_trace), buffer_of)
        scatter = spyre.ScatterOp(values, indices, buffer_of[table], len(outer))
        if plain_values and at and source_axis != len(outer):
            scatter.attributes["source_axis"] = IntegerAttr.get(IntegerType.get_signless(64),
                                                                source_axis)
        if _distinct_rows(trace.instrs, source, index_var, count, rows):
            scatter.attributes["unique_indices"] = UnitAttr.get()
        spyre.ReturnOp()
    return module


def _dense_over(order: list[int], sizes: list[int]) -> list[int]:
    """Each loop's coefficient when the loops in `order` walk a buffer
    row-major (the others do not move it)."""
    coeffs = [0] * len(sizes)
    for d, k in enumerate(order):
        coeffs[k] = math.prod(sizes[j] for j in order[d + 1:])
    return coeffs


def _distinct_rows(instrs, row: TV, index_var, count: int, rows: int) -> bool:
    """Whether the rows a scatter's index loop computes never repeat: c *
    i + s for a start s that does not depend on the loop (a prompt's cache
    positions, start + arange), with |c| (count - 1) < rows, so that even
    wrapped negative ones differ. A row chosen outside the table is refused
    when written, so it cannot repeat a row that is written."""
    by_result = {i.result: i for i in instrs if isinstance(i.result, TV)}

    def slope(value) -> int | None:
        """The coefficient of the index loop in `value`, None if not affine."""
        instr = by_result.get(value)
        if instr is None:
            return None
        if instr.op == "to_dtype":
            return slope(instr.args[0])
        if instr.op == "load":
            return None if index_var.name in {v.name for v in
                                              sympy.sympify(instr.args[1]).free_symbols} else 0
        if instr.op == "index_expr":
            expr = sympy.expand(sympy.sympify(instr.args[0]))
            if expr.free_symbols - {index_var} or not expr.is_polynomial(index_var) or \
                    sympy.degree(expr, index_var) > 1:
                return None
            return int(expr.coeff(index_var, 1))
        if instr.op in ("add", "sub"):
            a, b = (slope(v) for v in instr.args)
            if a is None or b is None:
                return None
            return a + b if instr.op == "add" else a - b
        if instr.op == "where":
            # Inductor's index_copy sends a negative row past the table's
            # end, which the card's scatter refuses as eager does: the rows
            # written are the other branch's.
            for outside, other in (instr.args[1:], instr.args[2:0:-1]):
                const = by_result.get(outside)
                if const is not None and const.op == "constant" and \
                        not 0 <= const.args[0] < rows:
                    return slope(other)
        return None

    c = slope(row)
    return c is not None and c != 0 and abs(c) * (count - 1) < rows


def _lookups(name: str, trace: Trace, buffer_info: BufferInfo):
    """A node that reads rows of tables at computed rows and computes on
    them (MoE routing: a token's hidden row times its routing weight,
    both at the token the expert's slot holds): its rows are computed, each
    table's rows gathered into a kernel temporary, and its body runs as a
    generic reading them. Over two loops, rows and columns; a table is read
    a whole row per output row, or one value per output row."""
    if len(trace.sizes) != 2:
        return _element_lookups(name, trace, buffer_info)
    symbol, source = next(iter(trace.indirect.items()))
    count, width = trace.sizes
    row_var, col = trace.variables
    rows = int(next(i.args[1] for i in trace.instrs if i.op == "indirect_indexing"))
    widths = {}  # id(load of a table) -> the row width it reads
    for load in trace.instrs:
        if load.op != "load" or not _indexed_by(load, {symbol.name}):
            continue
        base, (c_row, c_col, c_symbol) = linear(load.args[1], [row_var, col, symbol])
        extent, _ = buffer_info(load.args[0])
        if base == 0 and c_row == 0 and c_col == 1 and c_symbol == width and \
                extent == rows * width:
            widths[id(load)] = width
        elif base == 0 and c_row == 0 and c_col == 0 and c_symbol == 1 and extent == rows:
            widths[id(load)] = 1
        else:
            return _element_lookups(name, trace, buffer_info)
    tables = [i for i in trace.instrs if id(i) in widths]
    row_trace = _row_trace(trace, symbol)
    in_cone = {id(i) for i in row_trace.instrs}
    # The body: the tables' loads read the gathered rows instead.
    body_trace, gathered = _body_on_gathered(
        trace, in_cone, lambda i: row_var * widths[id(i)] + (col if widths[id(i)] > 1 else 0)
        if id(i) in widths else None)
    args = _lookup_args(tables, lambda t: (rows, widths[id(t)]), [row_trace, body_trace],
                        gathered, buffer_info)
    module, kernel, block = _new_kernel(name, args)
    buffer_of = {n: block.arguments[k] for k, (n, _, _) in enumerate(args)}
    with InsertionPoint(block):
        buffer_of[_ROWS] = spyre.AllocOp(_buffer_type((count,), "i32"), []).result
        _emit_generic(row_trace, _yields(row_trace), buffer_of)
        matrices = {}
        for temporary, table in gathered.items():
            w = widths[id(table)]
            buffer_of[temporary] = spyre.AllocOp(_buffer_type(
                (count, w), element_type(buffer_info(table.args[0])[1])), []).result
            spyre.GatherOp(buffer_of[table.args[0]], buffer_of[_ROWS], buffer_of[temporary], 0)
            matrices[temporary] = (count, w)
        _emit_generic(body_trace, _yields(body_trace), buffer_of, matrices=matrices)
        spyre.ReturnOp()
    return module


def _element_lookups(name: str, trace: Trace, buffer_info: BufferInfo):
    """A node reading single elements of tables at computed positions:
    torch.gather along a dimension, or DeBERTa-style relative attention,
    whose scores add two such gathers (content to position, and position to
    content transposed). For each such load, the element's position in its
    table is computed at every point of the node's domain into a kernel
    temporary, the elements are gathered as rows of one element, and the
    body runs as a generic reading them. An index outside its dimension
    gives position -1, which the card's gather refuses as eager refuses the
    index: another dimension's elements are never read in its place."""
    if trace.reduction_sizes:
        raise Unsupported("a reduction over elements read at computed positions")
    variables, sizes = trace.variables, trace.sizes
    symbols = list(trace.indirect)
    count = math.prod(sizes)
    position = sum(v * math.prod(sizes[k + 1:]) for k, v in enumerate(variables))
    bound = {i.args[2].name: i.args[1] for i in trace.instrs if i.op == "indirect_indexing"}
    names = {s.name for s in symbols}
    tables = [i for i in trace.instrs if i.op == "load" and _indexed_by(i, names)]
    table_ids = {id(t) for t in tables}
    # New instructions follow the trace's, with values of their own.
    serial, fresh = itertools.count(len(trace.instrs)), fresh_values(trace)

    def new(instrs, op, *args):
        instrs.append(Instr(op, args, next(fresh), {}, next(serial)))
        return instrs[-1].result

    row_traces, cones = [], set()
    for k, table in enumerate(tables):
        base, coeffs = linear(table.args[1], variables + symbols)
        used = [(s, c, bound[s.name]) for s, c in zip(symbols, coeffs[len(variables):]) if c]
        cone = {id(i) for s, _, _ in used for i in _cone(trace.instrs, trace.indirect[s])}
        cones |= cone
        instrs = [i for i in trace.instrs if id(i) in cone]
        wrapped = []
        for s, c, size in used:
            wrap, source = _wrapped(trace, s, fresh, serial)
            instrs += wrap
            wrapped.append((source, c, size))
        row = new(instrs, "index_expr",
                  base + sum(c * v for c, v in zip(coeffs, variables)), torch.int64)
        inside = None
        for source, c, size in wrapped:
            term = source if c == 1 else new(instrs, "mul", source,
                                              new(instrs, "constant", c, torch.int64))
            row = new(instrs, "add", row, term)
            ok = new(instrs, "logical_and",
                     new(instrs, "ge", source, new(instrs, "constant", 0, torch.int64)),
                     new(instrs, "lt", source, new(instrs, "constant", int(size), torch.int64)))
            inside = ok if inside is None else new(instrs, "logical_and", inside, ok)
        row = new(instrs, "where", inside, row, new(instrs, "constant", -1, torch.int64))
        instrs.append(Instr("store", (f"{_ROWS}{k}", position, row), None, {}, next(serial)))
        row_traces.append(Trace(list(sizes), [], list(variables), instrs))
    # The body: the tables' loads read the gathered elements instead.
    body_trace, gathered = _body_on_gathered(
        trace, cones, lambda i: position if id(i) in table_ids else None)
    args = _lookup_args(tables, lambda t: (max(buffer_info(t.args[0])[0], 1), 1),
                        row_traces + [body_trace], gathered, buffer_info)
    module, kernel, block = _new_kernel(name, args)
    buffer_of = {n: block.arguments[k] for k, (n, _, _) in enumerate(args)}
    with InsertionPoint(block):
        matrices = {}
        for k, (rows, (temporary, table)) in enumerate(zip(row_traces, gathered.items())):
            buffer_of[f"{_ROWS}{k}"] = spyre.AllocOp(_buffer_type((count,), "i32"), []).result
            _emit_generic(rows, _yields(rows), buffer_of)
            buffer_of[temporary] = spyre.AllocOp(_buffer_type(
                (count, 1), element_type(buffer_info(table.args[0])[1])), []).result
            spyre.GatherOp(buffer_of[table.args[0]], buffer_of[f"{_ROWS}{k}"],
                           buffer_of[temporary], 0)
            matrices[temporary] = (count, 1)
        _emit_generic(body_trace, _yields(body_trace), buffer_of, matrices=matrices)
        spyre.ReturnOp()
    return module


def _indexed_by(load: Instr, names: set[str]) -> bool:
    """Whether a load's index uses one of the indirect symbols `names`."""
    return bool(names & {v.name for v in sympy.sympify(load.args[1]).free_symbols})


def _body_on_gathered(trace: Trace, cone: set[int], index_of) -> tuple[Trace, dict]:
    """A lookup node's body with each table load reading its gathered
    temporary at `index_of(load)` (None for the other instructions), without
    what only the rows' computation (`cone`, ids) uses. Also returns the
    temporaries, each with its table's load."""
    body, gathered = [], {}
    kept = _outside(trace.instrs, cone)
    for instr in trace.instrs:
        if id(instr) not in kept:
            continue
        index = index_of(instr)
        if index is not None:
            temporary = f"{_GATHERED}{len(gathered)}"
            gathered[temporary] = instr
            instr = Instr("load", (temporary, index), instr.result, {}, instr.serial)
        body.append(instr)
    return Trace(list(trace.sizes), [], list(trace.variables), body), gathered


def _lookup_args(tables, shape_of, traces, gathered: dict, buffer_info: BufferInfo):
    """A lookup kernel's arguments: its tables, each shaped by
    `shape_of(load)`, then the buffers its traces read or write directly."""
    direct = [i.args[0] for t in traces for i in t.instrs if i.op in ("load", "store")
              and i.args[0] not in gathered and not i.args[0].startswith(_ROWS)]
    if {t.args[0] for t in tables} & set(direct):
        raise Unsupported("a table read both at computed rows and directly")
    args = []
    for t in tables:
        if all(a[0] != t.args[0] for a in args):
            args.append((t.args[0], shape_of(t), element_type(buffer_info(t.args[0])[1])))
    for n in dict.fromkeys(direct):
        extent, dtype = buffer_info(n)
        args.append((n, (max(extent, 1),), element_type(dtype)))
    return args


def _cone(instrs, *values: TV) -> list[Instr]:
    """The instructions `values` are computed by, in program order."""
    by_result = {i.result: i for i in instrs if isinstance(i.result, TV)}
    needed, stack = set(), list(values)
    while stack:
        v = stack.pop()
        instr = by_result.get(v)
        if instr is None or id(instr) in needed:
            continue
        needed.add(id(instr))
        stack += [a for a in instr.args if isinstance(a, TV)]
    return [i for i in instrs if id(i) in needed and i.op != "indirect_indexing"]


def _outside(instrs, cone: set[int]) -> set[int]:
    """The instructions (ids) of a node's body once the rows' `cone` (ids) is
    computed apart: those outside it, and those of it they use, with what
    these are computed from (a cache write's position, read by the rotary
    angle of the values it writes too, is the sum of a constant and a load)."""
    kept = {id(i) for i in instrs if id(i) not in cone and i.op != "indirect_indexing"}
    used = [a for i in instrs if id(i) in kept for a in i.args if isinstance(a, TV)]
    return kept | {id(i) for i in _cone(instrs, *used)}


#: Kernel temporaries of a lookup: its computed rows, its gathered rows; of
#: a scatter: its computed values.
_ROWS, _GATHERED, _SCATTERED = "gather_rows", "gathered", "scattered"


def _copy_trace(trace: Trace, store: Instr, dense: list[int]) -> Trace:
    """Copies the gathered rows, dense, to where the lookup stores them."""
    position = sum(c * v for c, v in zip(dense, trace.variables))
    load = Instr("load", (_GATHERED, position), TV(-4), {}, 0)
    return Trace(list(trace.sizes), [], list(trace.variables),
                 [load, Instr("store", (store.args[0], store.args[1], load.result), None, {}, 1)])


def _indirect(trace: Trace, symbol) -> Instr:
    return next(i for i in trace.instrs if i.op == "indirect_indexing" and i.args[2] == symbol)


def _wraps_negative(trace: Trace, symbol) -> bool:
    return _indirect(trace, symbol).kwargs.get("wrap_neg", True)


def _wrapped(trace: Trace, symbol, fresh, serial) -> tuple[list[Instr], TV]:
    """Instructions computing the row that indirect index `symbol` names,
    and that row: a negative index counts from the end where Inductor's
    indexing asks (x[i]); elsewhere (an embedding's, a gather's index) it
    stays negative, and the card's gather refuses it as eager does."""
    source = trace.indirect[symbol]
    if not _wraps_negative(trace, symbol):
        return [], source
    rows = _indirect(trace, symbol).args[1]
    zero, negative, bound, wrapped, row = (next(fresh) for _ in range(5))
    return [Instr("constant", (0, torch.int64), zero, {}, next(serial)),
            Instr("lt", (source, zero), negative, {}, next(serial)),
            Instr("constant", (int(rows), torch.int64), bound, {}, next(serial)),
            Instr("add", (source, bound), wrapped, {}, next(serial)),
            Instr("where", (negative, wrapped, source), row, {}, next(serial))], row


def _row_trace(trace: Trace, symbol) -> Trace:
    """What a row lookup's rows are computed by (loads of index buffers and
    ops on them, a negative index's wrap), over the lookup's leading loops,
    storing them in order."""
    leading, sizes = trace.variables[:-1], trace.sizes[:-1]
    instrs = _cone(trace.instrs, trace.indirect[symbol])
    for instr in instrs:
        if (instr.op == "index_expr" and
                sympy.sympify(instr.args[0]).free_symbols - set(leading)) or \
                (instr.op == "load" and linear(instr.args[1], trace.variables)[1][-1]):
            raise Unsupported("an embedding lookup whose row depends on the column")
    serial = itertools.count(len(trace.instrs))
    wrap, row = _wrapped(trace, symbol, fresh_values(trace), serial)
    position = sum(v * math.prod(sizes[k + 1:]) for k, v in enumerate(leading))
    return Trace(sizes, [], leading,
                 instrs + wrap + [Instr("store", (_ROWS, position, row), None, {}, next(serial))])


def _reads_the_index_as_loaded(ops, loaded: TV, index: TV, rows: int) -> bool:
    """Whether the ops from the loaded index to the row read are the
    identity, negative and past-the-end indices included: the card's gather
    reads the index buffer itself and refuses those. An offset such as
    XGLM's positions + 2 is not, nor a wrap of negative ones, which x[i]
    counts from the end."""
    i = torch.arange(-rows, 2 * rows, dtype=torch.int64)
    values = {loaded: i}
    for instr in ops:
        if instr.op in ("load", "store", "indirect_indexing"):
            continue
        args = [values.get(a) if isinstance(a, TV) else a for a in instr.args]
        if any(a is None for a in args):
            return False
        try:
            if instr.op == "constant":
                values[instr.result] = torch.tensor(args[0], dtype=args[1])
            elif instr.op == "to_dtype":
                values[instr.result] = args[0].to(args[1])
            else:
                values[instr.result] = TORCH_OPS[instr.op](*args)
        except (KeyError, TypeError, RuntimeError):
            return False
    return bool((values[index] == i).all())
