"""Bad input never crashes or hangs (issue 10): deep nesting from Python,
hostile binary headers, spyre-run's errors and simulator.run's inputs."""

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
