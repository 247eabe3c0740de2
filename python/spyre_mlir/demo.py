"""The spyre-mlir demo (for now): build a kernel-level Spyre program from
Python, verify it, and run a pass pipeline on it.

Compiling a real torch model with ``torch.compile(..., backend="spyre")`` and
running it on the simulator replaces this once the simulator, the lowering
pipeline and the Inductor backend exist (issues 3-5).

Run with ``python -m spyre_mlir.demo``.
"""

from spyre_mlir import ir
from spyre_mlir.dialects import arith, math, spyre
from spyre_mlir.passmanager import PassManager


def build_softmax(rows: int) -> ir.Module:
    """softmax over the last (dynamic) dimension of a (rows, ?) f16 buffer:
    a row max, exp(x - max) with a row sum, and a division, as three
    spyre.generic ops; then a transpose of the result for good measure."""
    f16, f32 = ir.F16Type.get(), ir.F32Type.get()
    x_t = spyre.BufferType.get([rows, spyre.DYNAMIC], f16)
    xt_t = spyre.BufferType.get([spyre.DYNAMIC, rows], f16)
    row_t = spyre.BufferType.get([rows], f32)
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        _, block = spyre.kernel("softmax", [x_t, xt_t, ir.IndexType.get()])
    x, out_t, n = block.arguments
    ident = ir.AffineMap.get_identity(2)
    row = ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(0)])
    with ir.InsertionPoint(block):
        row_max = spyre.AllocOp(row_t, []).result
        row_sum = spyre.AllocOp(row_t, []).result
        exps = spyre.AllocOp(x_t, [n]).result
        out = spyre.AllocOp(x_t, [n]).result
        spyre.generic([rows, n], [x], [row_max], [ident, row],
                      ["parallel", "reduction"],
                      lambda v: arith.extf(f32, v), combiners=["max"])
        spyre.generic([rows, n], [x, row_max], [exps], [ident, row, ident],
                      ["parallel", "parallel"],
                      lambda v, m: arith.truncf(f16, math.exp(arith.subf(arith.extf(f32, v), m))))
        spyre.generic([rows, n], [exps], [row_sum], [ident, row],
                      ["parallel", "reduction"],
                      lambda e: arith.extf(f32, e), combiners=["sum"])
        spyre.generic([rows, n], [exps, row_sum], [out], [ident, row, ident],
                      ["parallel", "parallel"],
                      lambda e, s: arith.truncf(f16, arith.divf(arith.extf(f32, e), s)))
        spyre.PermuteOp(out, out_t, [1, 0])
        for buffer in (row_max, row_sum, exps, out):
            spyre.DeallocOp(buffer)
        spyre.ReturnOp()
    return module


def main() -> None:
    with ir.Context(), ir.Location.unknown():
        module = build_softmax(rows=128)
        assert module.operation.verify()
        print("// Kernel-level Spyre IR built from Python:")
        print(module)
        pipeline = "builtin.module(spyre-generalize,canonicalize,cse)"
        PassManager.parse(pipeline).run(module.operation)
        print(f"// After {pipeline}:")
        print(module)
        generics = str(module).count("spyre.generic")
        print(f"// {generics} spyre.generic ops; the transpose became one of them.")


if __name__ == "__main__":
    main()
