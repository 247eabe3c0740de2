"""The Spyre dialect from Python: MLIR's bindings with our dialect loaded."""

import re
import subprocess
import sys

import pytest

from spyre_mlir import ir
from spyre_mlir.dialects import arith, spyre
from spyre_mlir.passmanager import PassManager


def test_torch_and_spyre_mlir_share_a_process():
    # Both bundle native libraries; importing them together must work.
    code = "import torch, spyre_mlir.ir, spyre_mlir.dialects.spyre; print(torch.ones(2).sum().item())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2.0"


def test_every_context_has_the_dialect():
    with ir.Context():
        t = ir.Type.parse("!spyre.buffer<4x?xf16, lx>")
        assert spyre.BufferType.isinstance(t)


def test_buffer_type_api():
    with ir.Context(), ir.Location.unknown():
        layout = spyre.LayoutAttr.get([0, 1], stick=64)
        t = spyre.BufferType.get([1024, spyre.DYNAMIC], ir.F16Type.get(), layout=layout)
        assert str(t) == "!spyre.buffer<1024x?xf16, #spyre.layout<[0, 1], stick = 64>>"
        assert t.shape == [1024, spyre.DYNAMIC]
        assert t.rank == 2 and t.element_type == ir.F16Type.get()
        assert t.memory_space == "dram"
        assert spyre.LayoutAttr(t.layout).stick == 64
        assert spyre.LayoutAttr(t.layout).order == [0, 1]
        lx = spyre.BufferType.get([4], ir.F32Type.get(), memory_space="lx")
        assert lx.memory_space == "lx" and lx.layout is None


@pytest.mark.parametrize(
    "make",
    [
        lambda: spyre.BufferType.get([4], ir.IntegerType.get_signless(64)),
        lambda: spyre.BufferType.get([4], ir.F64Type.get()),
        lambda: spyre.BufferType.get([4, 4], ir.F16Type.get(), layout=spyre.LayoutAttr.get([0])),
        lambda: spyre.BufferType.get([4], ir.F16Type.get(), memory_space="hbm"),
        lambda: spyre.LayoutAttr.get([1, 1]),
    ],
    ids=["i64", "f64", "layout-rank", "memory-space", "layout-perm"],
)
def test_invalid_types_raise(make):
    with ir.Context(), ir.Location.unknown():
        with pytest.raises((ValueError, ir.MLIRError)):
            make()


def _buffer(shape, element_type):
    return spyre.BufferType.get(shape, element_type)


def _build_softmax_numerator(module):
    """exp(x - max(x)) over rows, built with the generated op builders."""
    f32 = ir.F32Type.get()
    x_t = _buffer([64, spyre.DYNAMIC], f32)
    row_t = _buffer([64], f32)
    with ir.InsertionPoint(module.body):
        _, block = spyre.kernel("softmax_num", [x_t, row_t, x_t, ir.IndexType.get()])
    x, row_max, out, n = block.arguments
    ident = ir.AffineMap.get_identity(2)
    rows = ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(0)])
    with ir.InsertionPoint(block):
        spyre.generic(
            [64, n], [x], [row_max], [ident, rows], ["parallel", "reduction"],
            lambda v: v, combiners=["max"])
        spyre.generic(
            [64, n], [x, row_max], [out], [ident, rows, ident], ["parallel", "parallel"],
            lambda v, m: ir.Operation.create(
                "math.exp", results=[f32],
                operands=[arith.subf(v, m)]).result)
        spyre.ReturnOp()


def test_build_verify_and_run_a_pipeline():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        _build_softmax_numerator(module)
        assert module.operation.verify()
        text = str(module)
        assert "combiners = [#spyre.combiner<max>]" in text
        assert "math.exp" in text
        PassManager.parse("builtin.module(spyre-generalize,canonicalize,cse)").run(module.operation)
        assert module.operation.verify()


def test_generalize_from_python_matches_spyre_opt(spyre_opt):
    source = """
    spyre.kernel @t(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<8x4xf16>) {
      spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>) permutation = [1, 0]
      spyre.return
    }"""
    with ir.Context():
        module = ir.Module.parse(source)
        PassManager.parse("builtin.module(spyre-generalize)").run(module.operation)
        from_python = str(module)
    from_cli = subprocess.run([spyre_opt, "-spyre-generalize", "-"], input=source,
                              capture_output=True, text=True, check=True).stdout
    # spyre-opt ends its output with one more newline than str(module).
    assert from_python.rstrip() == from_cli.rstrip()
    assert "spyre.permute" not in from_python


def test_every_op_prints_identically_from_python_and_spyre_opt(spyre_opt, all_ops_source):
    with ir.Context():
        module = ir.Module.parse(all_ops_source)
        assert module.operation.verify()
        from_python = str(module)
        # Round trip inside Python as well.
        assert str(ir.Module.parse(from_python)) == from_python
    from_cli = subprocess.run([spyre_opt, "-"], input=all_ops_source,
                              capture_output=True, text=True, check=True).stdout
    # spyre-opt ends its output with one more newline than str(module).
    assert from_python.rstrip() == from_cli.rstrip()
    for op in ["kernel", "return", "alloc", "dealloc", "dim", "matmul",
               "batch_matmul", "generic", "yield", "index_expr", "copy", "permute",
               "broadcast", "slice", "concat", "gather", "fill", "constant"]:
        assert re.search(rf"spyre\.{op}\b", from_python), op


def test_invalid_ir_raises_with_diagnostic():
    with ir.Context():
        with pytest.raises(ir.MLIRError, match="the card has no 64-bit integers"):
            ir.Module.parse("spyre.kernel @k(%a: !spyre.buffer<4xi64>) { spyre.return }")


def test_unknown_pass_is_an_error():
    with ir.Context():
        with pytest.raises(ValueError):
            PassManager.parse("builtin.module(spyre-no-such-pass)")
