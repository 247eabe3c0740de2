"""Bad input never crashes or hangs (issue 10): deep nesting from Python,
hostile binary headers, spyre-run's errors and simulator.run's inputs."""

import os
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

from spyre_mlir import compiler
from spyre_mlir import simulator as sim
from spyre_mlir.dialects import spyre
from spyre_mlir.ir import Context
from spyre_mlir.simulator import DType, Operand
from spyre_mlir.simulator_programs import matmul_program

ARCH = sim.default_arch()
SPYRE_RUN = [sys.executable, "-c", "from spyre_mlir.tools import spyre_run_main; spyre_run_main()"]


def test_parse_module_refuses_deep_nesting():
    # Module.parse of this overflows the stack and kills the interpreter.
    deep = "module {" * 4000 + "}" * 4000
    with Context(), pytest.raises(ValueError, match="nests deeper than 256 levels"):
        compiler.parse_module(deep)
    with pytest.raises(ValueError, match="nests deeper"):
        compiler.compile_kernel(deep)
    assert spyre.MAX_NESTING_DEPTH == 256
    with Context():
        shallow = "module {" * 100 + "}" * 100
        assert "module" in str(compiler.parse_module(shallow))


@pytest.mark.parametrize("num_cores", [1 << 28, (1 << 32) - 1])
def test_header_core_count_is_checked_before_allocating(num_cores):
    data = bytearray(matmul_program(ARCH, 64, 32, 64, (2, 2)).serialize())
    struct.pack_into("<I", data, 40, num_cores)  # FileHeader.num_cores, outside the checksum
    program = sim.Program.parse(bytes(data))
    start = time.perf_counter()
    with pytest.raises(sim.ProgramError, match=f"program is for {num_cores} cores; the card has 32"):
        sim.Simulator(ARCH).load(program)
    assert time.perf_counter() - start < 0.5


@pytest.fixture
def matmul_files(tmp_path):
    (tmp_path / "mm.spyre").write_bytes(matmul_program(ARCH, 64, 32, 64, (2, 2)).serialize())
    np.save(tmp_path / "a.npy", np.ones((64, 32), np.float16))
    np.save(tmp_path / "b.npy", np.ones((32, 64), np.float16))
    return tmp_path


def spyre_run(*args, **kwargs):
    out = subprocess.run(SPYRE_RUN + [str(a) for a in args], capture_output=True, text=True,
                         **kwargs)
    return out.returncode, out.stderr


def assert_clean_error(rc, stderr, message):
    assert rc == 1, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("spyre-run: error: "), stderr
    assert message in stderr, stderr


@pytest.mark.parametrize("content, message", [
    (b"", "cannot read input 'a'"),
    (b"\x93NUMPY garbage", "cannot read input 'a'"),
    (b"not numpy at all", "cannot read input 'a'"),
])
def test_spyre_run_bad_npy(matmul_files, content, message):
    (matmul_files / "bad.npy").write_bytes(content)
    rc, err = spyre_run(matmul_files / "mm.spyre", "-i", f"a={matmul_files / 'bad.npy'}",
                        "-i", f"b={matmul_files / 'b.npy'}", "-o", matmul_files / "out")
    assert_clean_error(rc, err, message)


def test_spyre_run_unwritable_outputs_are_found_before_simulating(matmul_files):
    d = matmul_files
    (d / "file").write_text("")
    inputs = ["-i", f"a={d / 'a.npy'}", "-i", f"b={d / 'b.npy'}"]
    rc, err = spyre_run(d / "mm.spyre", *inputs, "-o", d / "file" / "out")
    assert_clean_error(rc, err, "Not a directory")
    rc, err = spyre_run(d / "mm.spyre", *inputs, "-o", d / "out", "--trace", d / "no" / "t.json")
    assert_clean_error(rc, err, "No such file or directory")
    assert not (d / "out" / "c.npy").exists()  # refused before simulating


def test_spyre_run_out_of_memory(tmp_path):
    # An 8 GiB output fits the card but not a process limited to 2 GiB.
    b = sim.ProgramBuilder(ARCH, 1)
    b.add_buffer("big", sim.BufferKind.output, sim.DType.f32, sim.HostDType.f32, [1 << 31])
    b.core(0).nop()
    (tmp_path / "big.spyre").write_bytes(b.finish().serialize())
    limit = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
             "from spyre_mlir.tools import spyre_run_main; spyre_run_main()")
    out = subprocess.run([sys.executable, "-c", limit, str(tmp_path / "big.spyre"),
                          "-o", str(tmp_path)], capture_output=True, text=True)
    assert_clean_error(out.returncode, out.stderr, "out of memory")


def test_run_accepts_read_only_inputs(matmul_files):
    program = sim.Program.parse((matmul_files / "mm.spyre").read_bytes())
    a = np.load(matmul_files / "a.npy", mmap_mode="r")
    b = np.ones((32, 64), np.float16)
    b.flags.writeable = False
    out = sim.run(program, {"a": a, "b": b})
    np.testing.assert_allclose(out.outputs["c"], np.full((64, 64), 32.0))


def test_run_refuses_complex_inputs(matmul_files):
    program = sim.Program.parse((matmul_files / "mm.spyre").read_bytes())
    a = np.ones((64, 32), np.complex64) * 1j
    with pytest.raises(ValueError, match="input 'a' is complex"):
        sim.run(program, {"a": a, "b": np.ones((32, 64), np.float16)})


# ---------------------------------------------------------------- work budget
# A program may ask the simulator for a bounded amount of work, summed over its
# cores and every iteration of its hardware loops (docs/binary-format.md, "Work
# limits"; Program.h, budget::). Programs here are validated, never run: those
# at the limit would take seconds, those beyond it hours.

KB = 1 << 10
LX_OUT, LX_IN, LX_B = 0, 512 * KB, 1024 * KB


def looped(cores, trips, body, buffers=()):
    """`body(core, buffer indices)` inside nested hardware loops on each core."""
    b = sim.ProgramBuilder(ARCH, cores)
    ids = [b.add_buffer(name, sim.BufferKind.scratch, DType.dl16, sim.HostDType.f16, [n // 2])
           for name, n in buffers]
    for c in range(cores):
        core = b.core(c)
        for t in trips:
            core.loop(t)
        body(core, ids)
        for _ in trips:
            core.end_loop()
    return b.finish()


def vector_op(core, ids, rows=256, cols=1024, func=sim.UnaryFunc.abs):  # rows x cols DLFloat16
    core.unary(func, Operand(offset=LX_OUT, dtype=DType.dl16, strides=(cols * 2, 2, 0)),
               Operand(offset=LX_IN, dtype=DType.dl16, strides=(cols * 2, 2, 0)), rows, cols)


def matmul_op(core, ids, m=256, k=256, n=256):
    core.matmul(Operand(offset=LX_OUT, dtype=DType.f32, strides=(n * 4, 0, 0)),
                Operand(offset=LX_IN, dtype=DType.dl16, strides=(k * 2, 0, 0)),
                Operand(offset=LX_B, dtype=DType.dl16, strides=(n * 2, 0, 0)), m, k, n)


def byte_dma(core, ids):
    core.dma(Operand(offset=0), Operand(offset=64), 1)


def device_dma(core, ids, row=256 * KB):
    core.dma(Operand(offset=0), Operand(buffer=ids[0]), row)


def row_dma(core, ids, rows=1 << 14):
    core.dma(Operand(offset=0, strides=(1, 0, 0)), Operand(offset=LX_IN, strides=(1, 0, 0)), 1,
             counts=(rows, 1, 1))


# (kind named in the error, cores, loop trips, body, buffers): each spends
# 2^k of one kind; the budget's limit of that kind is 2^limit.
BUDGET_CASES = {
    "instructions": (lambda trips: looped(32, trips, byte_dma), 24, 5 + 1),   # 32 cores, 2 per trip
    "transfer rows": (lambda trips: looped(1, trips, row_dma), 30, 14),
    "bytes transferred": (lambda trips: looped(1, trips, device_dma, [("d", 256 * KB)]), 34, 18),
    "vector-element units": (lambda trips: looped(1, trips, vector_op), 31, 18),
    "matrix operand and result elements": (
        lambda trips: looped(1, trips, lambda c, i: matmul_op(c, i, 1, 256, 1024)), 33, 18),
    "MACs": (lambda trips: looped(1, trips, matmul_op), 38, 24),
}


def trips_for(total_log2):
    trips = []
    while total_log2 > 0:
        step = min(total_log2, 16)
        trips.append(1 << step)
        total_log2 -= step
    return trips


@pytest.mark.parametrize("kind", list(BUDGET_CASES))
def test_work_budget_per_kind(kind):
    make, limit_log2, per_trip_log2 = BUDGET_CASES[kind]
    # Half the limit of this kind: accepted (validated only).
    sim.Simulator(ARCH).load(make(trips_for(limit_log2 - 1 - per_trip_log2)))
    # Twice the limit: refused before anything runs, naming what was spent.
    start = time.perf_counter()
    with pytest.raises(sim.ProgramError, match=f"work budget.* {kind} \\("):
        sim.Simulator(ARCH).load(make(trips_for(limit_log2 + 1 - per_trip_log2)))
    assert time.perf_counter() - start < 5


def test_work_budget_adds_up_kinds():
    # 0.6 of the vector-element limit and 0.6 of the MAC limit: each alone is
    # fine, together they ask for more than the budget.
    vector = 6 * (1 << 31) // 10 // (256 * 1024)
    macs = 6 * (1 << 38) // 10 // (256 ** 3)
    for body, trips in ((vector_op, vector), (matmul_op, macs)):
        sim.Simulator(ARCH).load(looped(1, [trips], body))
    b = sim.ProgramBuilder(ARCH, 1)
    core = b.core(0)
    core.loop(vector)
    vector_op(core, [])
    core.end_loop()
    core.loop(macs)
    matmul_op(core, [])
    core.end_loop()
    with pytest.raises(sim.ProgramError, match="work budget.*vector-element units.*MACs"):
        sim.Simulator(ARCH).load(b.finish())


def test_work_budget_weighs_vector_functions_by_host_cost():
    # 2^29 elements: of abs (a unit each, ~2 ns on the host) a quarter of
    # the budget; of lgamma (five units) more than all of it.
    trips = trips_for(29 - 18)
    sim.Simulator(ARCH).load(looped(1, trips, vector_op))
    dear = lambda core, ids: vector_op(core, ids, func=sim.UnaryFunc.lgamma)  # noqa: E731
    with pytest.raises(sim.ProgramError, match="work budget.* vector-element units \\("):
        sim.Simulator(ARCH).load(looped(1, trips, dear))


def test_work_budget_refuses_loops_of_astronomical_trips():
    # 2^96 iterations of a vector operation: refused at once, no overflow.
    b = sim.ProgramBuilder(ARCH, 1)
    for _ in range(3):
        b.core(0).loop(1 << 32)
    vector_op(b.core(0), [])
    for _ in range(3):
        b.core(0).end_loop()
    with pytest.raises(sim.ProgramError, match="work budget.* 4294967297 instructions"):
        sim.Simulator(ARCH).load(b.finish())


@pytest.mark.parametrize("name, source", [
    ("matmul 2048^3", lambda t: t.matmul((2048, 2048), (2048, 2048), (2048, 2048), out="f16")),
    ("softmax 4096x4096", lambda t: t.softmax(4096, 4096)),
])
def test_compiled_programs_fit_the_work_budget(name, source):
    # bench/bench_lowering_roofline.py's largest programs: the compiler's
    # binaries load (they are not run here: bench/ and the e2e tests do).
    from spyre_mlir import testing
    binary = compiler.compile_kernel(source(testing))
    sim.Simulator(ARCH).load(sim.Program.parse(binary))


def test_a_fidelity_selection_that_matches_nothing_names_the_choices(tmp_path):
    # A misspelt op family ends with what it could have been, not a traceback.
    measured = tmp_path / "measured.csv"
    measured.write_text("id,op_detail,shape,dtype,cores_used,measured_us\n"
                        "S1,add,\"R=64,C=64\",fp16,1,1.0\n")
    script = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "bench_fidelity.py")
    done = subprocess.run([sys.executable, script, "--csv", str(measured), "--ops", "matmul"],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "no row" in done.stderr and "op_detail values (add)" in done.stderr
    assert "Traceback" not in done.stderr
