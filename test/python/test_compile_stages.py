"""The stages of spyre-compile come from one C++ table; dumps of every stage
come from one run of the pipeline and equal the IR of runs stopped there."""

import subprocess

from spyre_mlir import compiler
from spyre_mlir.dialects import spyre
from spyre_mlir.ir import Context, Module
from spyre_mlir.testing import softmax


def test_python_stages_are_the_cpp_table(spyre_opt):
    assert compiler.STAGES == ("generalize", "fuse", "divide-work", "tile", "plan-memory", "lower")
    assert [name for name, _ in spyre.compile_stages()] == list(compiler.STAGES)
    help_text = subprocess.run([spyre_opt, "--help"], capture_output=True, text=True,
                               check=True).stdout
    assert "(" + ", ".join(compiler.STAGES) + ")" in help_text


def test_one_run_gives_every_stage():
    source = softmax(16, 256)
    with Context():
        stepped = dict(compiler.compile_stages(Module.parse(source)))
    assert list(stepped) == list(compiler.STAGES)
    for stage in compiler.STAGES:
        with Context():
            module = compiler.compile_module(Module.parse(source), stop_after=stage)
            assert stepped[stage] == str(module), stage


def test_a_failing_stage_ends_the_run():
    # An op without a vector instruction: divide-work refuses it.
    source = softmax(4, 8).replace("arith.divf", "arith.remf").replace("math.exp %d", "math.cbrt %d")
    with Context():
        stepped = list(compiler.compile_stages(Module.parse(source)))
    stages = [stage for stage, _ in stepped]
    assert stages == list(compiler.STAGES[: len(stages)]) and len(stages) < len(compiler.STAGES)
    assert stages[-1] == "divide-work"
    assert "body op 'math.cbrt' has no vector-unit instruction" in str(stepped[-1][1])


def test_without_row_fusion_temporaries_go_to_device_memory():
    # fuse_rows=False (spyre-compile's fuse-rows=false) is how the fidelity
    # bench builds programs of compilers without row fusion: the softmax's ops
    # stay apart, their temporaries in the kernel's scratch area; the result
    # is the same.
    import numpy as np
    from spyre_mlir import simulator as sim
    source = softmax(64, 256)
    with Context():
        fused = str(compiler.compile_module(Module.parse(source), stop_after="fuse"))
        apart = str(compiler.compile_module(Module.parse(source), stop_after="fuse",
                                            fuse_rows=False))
    assert "spyre.fused" in fused and "spyre.fused" not in apart
    x = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
    runs = {}
    for fuse_rows in (True, False):
        program = sim.Program.parse(compiler.compile_kernel(source, fuse_rows=fuse_rows))
        scratch = [b for b in program.buffers if b["kind"] == sim.BufferKind.scratch]
        assert bool(scratch) != fuse_rows
        runs[fuse_rows] = sim.run(program, {"arg0": x})
    (name, out), = runs[True].outputs.items()
    np.testing.assert_array_equal(out, runs[False].outputs[name])
    written = {f: sum(c["device_write_bytes"] for c in r.stats["cores"]) for f, r in runs.items()}
    assert written[False] > written[True]
