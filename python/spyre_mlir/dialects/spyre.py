"""Python API of the Spyre dialect.

The op classes (``KernelOp``, ``GenericOp``, ``MatmulOp``, ...) are generated
from the dialect's TableGen by MLIR's ODS Python generator; ``BufferType`` and
``LayoutAttr`` come from the dialect's C API. This module adds helpers for the
few things the generated builders leave clumsy: creating a kernel with its
entry block and building a ``spyre.generic`` with its body.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ._spyre_ops_gen import *  # noqa: F401,F403
from ._spyre_ops_gen import _Dialect  # noqa: F401
from ._spyre_ops_gen import GenericOp, KernelOp, YieldOp
from .._mlir_libs._spyre import (  # noqa: F401
    MAX_NESTING_DEPTH,
    BufferType,
    LayoutAttr,
    check_nesting,
    compile_stages,
    translate_to_binary,
)
from ..ir import (
    AffineMap,
    AffineMapAttr,
    ArrayAttr,
    Attribute,
    Block,
    DenseI64ArrayAttr,
    FunctionType,
    InsertionPoint,
    ShapedType,
    StringAttr,
    Type,
    TypeAttr,
    Value,
)

DYNAMIC = ShapedType.get_dynamic_size()

COMBINERS = ("none", "sum", "prod", "max", "min", "argmax", "argmin",
             "welford", "any", "all")


def iterator_attr(kind: str) -> Attribute:
    if kind not in ("parallel", "reduction"):
        raise ValueError(f"iterator type must be 'parallel' or 'reduction', got {kind!r}")
    return Attribute.parse(f"#spyre.iterator<{kind}>")


def combiner_attr(kind: str) -> Attribute:
    if kind not in COMBINERS:
        raise ValueError(f"unknown combiner {kind!r}; expected one of {COMBINERS}")
    return Attribute.parse(f"#spyre.combiner<{kind}>")


def kernel(name: str, arg_types: Sequence[Type]) -> tuple[KernelOp, Block]:
    """Creates ``spyre.kernel @name`` at the current insertion point and
    returns it with its entry block (whose arguments have ``arg_types``)."""
    op = KernelOp(StringAttr.get(name).value,
                  TypeAttr.get(FunctionType.get(list(arg_types), [])))
    block = op.body.blocks.append(*arg_types)
    return op, block


def generic(
    domain: Sequence[int | Value],
    inputs: Sequence[Value],
    outputs: Sequence[Value],
    indexing_maps: Sequence[AffineMap],
    iterator_types: Sequence[str],
    body: Callable[..., Sequence[Value] | Value],
    *,
    combiners: Sequence[str] | None = None,
    symbols: Sequence[Value] = (),
) -> GenericOp:
    """Builds a ``spyre.generic``.

    ``domain`` mixes static sizes and ``index`` values. ``body`` receives one
    block argument per input, runs inside the body with the insertion point
    set, and returns the value(s) to yield.
    """
    static = [d if isinstance(d, int) else DYNAMIC for d in domain]
    dynamic = [d for d in domain if not isinstance(d, int)]
    op = GenericOp(
        dynamic,
        DenseI64ArrayAttr.get(static),
        list(symbols),
        list(inputs),
        list(outputs),
        ArrayAttr.get([AffineMapAttr.get(m) for m in indexing_maps]),
        ArrayAttr.get([iterator_attr(k) for k in iterator_types]),
        combiners=(ArrayAttr.get([combiner_attr(k) for k in combiners])
                   if combiners is not None else None),
    )
    element_types = [ShapedType(v.type).element_type for v in inputs]
    block = op.body.blocks.append(*element_types)
    with InsertionPoint(block):
        results = body(*block.arguments)
        if isinstance(results, Value):
            results = [results]
        YieldOp(list(results))
    return op


def program_binary(op, arch_path: str | None = None) -> bytes:
    """The program binary (docs/binary-format.md) of the one
    ``spyre.hw.program`` under ``op``, for the architecture description at
    ``arch_path`` (default: the one the compile attached to the module,
    ``spyre.arch``, else ``$SPYRE_ARCH`` or the installed card). Raises
    ValueError with MLIR's diagnostics if the program is invalid."""
    operation = getattr(op, "operation", op)
    return translate_to_binary(operation, arch_path or "")
