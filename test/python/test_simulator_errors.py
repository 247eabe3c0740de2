"""Bad programs and bad files: a Python exception, never a crash, never an
access outside the program's buffers."""

import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from simkit import OneCore
from spyre_mlir import simulator as sim
from spyre_mlir.simulator import DType, Operand, Sync
from spyre_mlir.simulator_programs import matmul_program

ARCH = sim.default_arch()
HEADER = 64  # docs/binary-format.md


def small_program():
    return matmul_program(ARCH, 64, 32, 64, (2, 2)).serialize()


def with_crc(data: bytearray) -> bytes:
    """Recomputes the checksum so that a mutation reaches the parser."""
    struct.pack_into("<I", data, 24, zlib.crc32(bytes(data[HEADER:])) & 0xFFFFFFFF)
    return bytes(data)


def attempt(data: bytes) -> str:
    """Parses, validates and runs a binary; returns how it ended."""
    try:
        program = sim.Program.parse(data)
        simulator = sim.Simulator(ARCH)
        simulator.load(program)
        keep = []
        for index, buf in enumerate(program.buffers):
            if buf["kind"] in (sim.BufferKind.input, sim.BufferKind.output, sim.BufferKind.inout):
                array = np.zeros(buf["bytes"], np.uint8)
                keep.append(array)
                simulator.bind(index, array)
        simulator.run()
        return "ran"
    except sim.ProgramError:
        return "rejected"
    except sim.SimulationError:
        return "failed"


def test_1000_corrupted_binaries():
    rng = np.random.default_rng(1234)
    good = small_program()
    outcomes = {}
    for trial in range(1000):
        data = bytearray(good)
        kind = trial % 4
        if kind == 0:  # truncate
            data = data[: rng.integers(0, len(data))]
        elif kind == 1:  # flip bytes, checksum left stale
            for pos in rng.integers(0, len(data), size=rng.integers(1, 8)):
                data[pos] ^= int(rng.integers(1, 256))
        else:  # flip bytes past the header and fix the checksum: the parser and validator see them
            for pos in rng.integers(HEADER, len(data), size=rng.integers(1, 16)):
                data[pos] = int(rng.integers(0, 256))
            data = bytearray(with_crc(data))
        outcome = attempt(bytes(data))
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    # Truncated and stale-checksum files are always rejected; mutated ones may
    # still be valid programs (e.g. a changed data byte), and then they run.
    assert outcomes.get("rejected", 0) >= 500, outcomes
    assert sum(outcomes.values()) == 1000


def random_instruction(rng, num_buffers, num_cores):
    """An instruction with a real opcode and random but small fields, so that
    many are valid and run, and many are not."""
    opcodes = [0, 1, 2, 3, 4, 16, 17, 18, 32, 48, 49, 50, 51, 52, int(rng.integers(0, 256))]
    record = bytearray(rng.integers(0, 256, sim.INSTRUCTION_BYTES, dtype=np.uint8).tobytes())
    small = lambda hi: int(rng.integers(0, hi))
    record[0] = opcodes[small(len(opcodes))]
    record[1] = small(30)
    struct.pack_into("<H", record, 2, small(32))
    record[4] = small(4) if rng.random() < 0.3 else 0xFF
    record[5] = small(4) if rng.random() < 0.5 else 0xFF
    struct.pack_into("<q4q", record, 8, small(3), *(small(3) for _ in range(4)))  # waitCount, waitInc..
    struct.pack_into("<4q", record, 40, *(small(70) for _ in range(4)))  # shape
    if record[0] == 1:  # keep loop nests short: the test is about safety, not stamina
        struct.pack_into("<q", record, 40, small(5))
    for op in range(4):
        base = 96 + 64 * op
        buffer = 0xFFFFFFFF if rng.random() < 0.6 else small(num_buffers + 2)
        struct.pack_into("<IHBB", record, base, buffer, small(num_cores + 1), small(6), 0)
        struct.pack_into("<q", record, base + 8, small(4096) - 64)
        struct.pack_into("<3q", record, base + 16, *(small(300) - 20 for _ in range(3)))
        struct.pack_into("<3q", record, base + 40, *(small(200) - 50 for _ in range(3)))
    return bytes(record)


def test_1000_random_instruction_streams():
    rng = np.random.default_rng(99)
    outcomes = {}
    for trial in range(1000):
        cores = int(rng.integers(1, 4))
        b = sim.ProgramBuilder(ARCH, cores)
        b.add_buffer("x", sim.BufferKind.input, DType.f32, sim.HostDType.f32, [1024])
        b.add_buffer("t", sim.BufferKind.scratch, DType.dl16, sim.HostDType.f16, [64, 64])
        for core in range(cores):
            stream = b.core(core)
            for _ in range(int(rng.integers(1, 12))):
                stream.raw(random_instruction(rng, 2, cores))
        outcome = attempt(b.finish().serialize())
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert sum(outcomes.values()) == 1000
    # The generator is tuned so that every outcome happens.
    assert outcomes.get("ran", 0) > 0 and outcomes.get("rejected", 0) > 0, outcomes


def test_corrupt_file_errors_name_the_problem():
    good = small_program()
    with pytest.raises(sim.ProgramError, match="bad magic"):
        sim.Program.parse(b"NOTSPYRE" + good[8:])
    with pytest.raises(sim.ProgramError, match="checksum mismatch"):
        sim.Program.parse(good[:-1] + bytes([good[-1] ^ 1]))
    with pytest.raises(sim.ProgramError, match="header says"):
        sim.Program.parse(good[:100])
    with pytest.raises(sim.ProgramError):
        sim.Program.parse(b"")
    data = bytearray(good)
    struct.pack_into("<I", data, 8, 99)
    with pytest.raises(sim.ProgramError, match="unsupported program format version 99"):
        sim.Program.parse(bytes(data))


def test_out_of_bounds_access_is_rejected_before_running():
    p = OneCore()
    p.input("x", DType.f32, (4, 4))
    p.output("y", DType.f32, (4, 4))
    # Reads 8 rows of a 4-row buffer through a loop increment.
    p.c.loop(8)
    p.c.dma(Operand(dtype=DType.f32), Operand(buffer=p.bufs["x"][0], dtype=DType.f32, loop_inc=(16, 0, 0)), 16)
    p.c.end_loop()
    with pytest.raises(sim.ProgramError, match=r"instruction 2: operand 1 accesses bytes \[0, 128\) of buffer 'x' of 64 bytes"):
        p.finish({"x": np.zeros((4, 4), np.float32)})


def test_lx_overflow_is_rejected():
    b = sim.ProgramBuilder(ARCH, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [256])
    b.core(0).dma(Operand(dtype=DType.u8, offset=ARCH.lx_usable_bytes - 128), Operand(buffer=x, dtype=DType.u8), 256)
    with pytest.raises(sim.ProgramError, match="of LX of"):
        sim.run(b.finish(), {"x": np.zeros(256, bool)})


def test_deadlock_is_reported():
    p = OneCore()
    p.output("y", DType.f32, (1, 4))
    p.c.fill(p.view("y"), 1.0, 1, 4, sync=Sync(wait_sem=3, wait_count=1))
    with pytest.raises(sim.SimulationError, match="(?s)deadlock.*waits for semaphore 3 >= 1 \\(it is 0\\)"):
        sim.run(p.b.finish(), {})


def test_barrier_mismatch_is_reported():
    b = sim.ProgramBuilder(ARCH, 2)
    b.core(0).barrier()
    b.core(1).nop()
    with pytest.raises(sim.SimulationError, match="barrier"):
        sim.run(b.finish(), {})


def test_program_for_another_card_is_rejected():
    text = open(sim.arch_path()).read().replace("cores = 32", "cores = 8")
    small = sim.Arch.parse(text)
    with pytest.raises(sim.ProgramError, match="another architecture description"):
        sim.Simulator(small).load(matmul_program(ARCH, 64, 32, 64, (2, 2)))


def test_constant_buffers_cannot_be_written():
    b = sim.ProgramBuilder(ARCH, 1)
    k = b.add_buffer("k", sim.BufferKind.constant, DType.f32, sim.HostDType.f32, [4],
                     constant=np.arange(4, dtype=np.float32).tobytes())
    b.core(0).dma(Operand(buffer=k, dtype=DType.f32), Operand(dtype=DType.f32), 16)
    with pytest.raises(sim.ProgramError, match="writes constant buffer 'k'"):
        sim.run(b.finish(), {})


def test_binding_errors():
    program = matmul_program(ARCH, 64, 32, 64, (2, 2))
    s = sim.Simulator(ARCH)
    s.load(program)
    with pytest.raises(sim.ProgramError, match="needs 4096 bytes, got 8"):
        s.bind(0, np.zeros(4, np.uint16))
    with pytest.raises(sim.SimulationError, match="not bound"):
        s.run()
    with pytest.raises(ValueError, match="input 'a' is missing"):
        sim.run(program, {"b": np.zeros((32, 64), np.float16)})
    with pytest.raises(ValueError, match="shape"):
        sim.run(program, {"a": np.zeros((3, 3), np.float16), "b": np.zeros((32, 64), np.float16)})


def test_bad_arch_descriptions():
    good = open(sim.arch_path()).read()
    with pytest.raises(ValueError, match="card.cores' is missing"):
        sim.Arch.parse(good.replace("cores = 32", ""))
    with pytest.raises(ValueError, match="must be positive"):
        sim.Arch.parse(good.replace("cores = 32", "cores = -1"))
    with pytest.raises(ValueError, match="reserved_bytes' leaves no usable LX"):
        sim.Arch.parse(good.replace("reserved_bytes = 497152", "reserved_bytes = 4194304"))
    with pytest.raises(ValueError):
        sim.Arch.parse("this is [not toml")
    with pytest.raises(ValueError, match="cannot read"):
        sim.Arch.load("/nonexistent/arch.toml")


def test_constant_buffers_are_read(tmp_path):
    b = sim.ProgramBuilder(ARCH, 1)
    k = b.add_buffer("k", sim.BufferKind.constant, DType.f32, sim.HostDType.f32, [4],
                     constant=np.arange(4, dtype=np.float32).tobytes())
    y = b.add_buffer("y", sim.BufferKind.output, DType.f32, sim.HostDType.f32, [4])
    c = b.core(0)
    c.dma(Operand(dtype=DType.f32), Operand(buffer=k, dtype=DType.f32), 16, sync=Sync(signal_sem=0))
    c.dma(Operand(buffer=y, dtype=DType.f32), Operand(dtype=DType.f32), 16, sync=Sync(wait_sem=0, wait_count=1))
    data = b.finish().serialize()
    np.testing.assert_array_equal(sim.run(data, {}).outputs["y"], np.arange(4))


def test_spyre_run_cli(tmp_path):
    program = matmul_program(ARCH, 64, 32, 64, (2, 2))
    (tmp_path / "mm.spyre").write_bytes(program.serialize())
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    cli = [sys.executable, "-c", "from spyre_mlir.tools import spyre_run_main; spyre_run_main()"]
    out = subprocess.run(cli + [str(tmp_path / "mm.spyre"), "-i", f"a={tmp_path / 'a.npy'}",
                                "-i", f"b={tmp_path / 'b.npy'}", "-o", str(tmp_path / "out"),
                                "--trace", str(tmp_path / "trace.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "simulated:" in out.stdout and "dma%" in out.stdout
    c = np.load(tmp_path / "out" / "c.npy")
    r = sim.dl16()
    expected = r.round(a.astype(np.float32)) @ r.round(b.astype(np.float32))
    np.testing.assert_allclose(c, expected, rtol=2 ** -9, atol=1e-2)
    import json
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert {e["name"] for e in events} == {"dma", "matmul"}
    # A corrupt file: a message and exit status 1, not a traceback.
    (tmp_path / "bad.spyre").write_bytes(b"garbage")
    out = subprocess.run(cli + [str(tmp_path / "bad.spyre")], capture_output=True, text=True)
    assert out.returncode == 1
    assert "spyre-run: error:" in out.stderr and "Traceback" not in out.stderr


def test_host_memory_is_bounded():
    b = sim.ProgramBuilder(ARCH, 1)
    b.add_buffer("huge", sim.BufferKind.scratch, DType.f32, sim.HostDType.f32, [1 << 20])
    b.core(0).nop()
    with pytest.raises(sim.ProgramError, match="need 4194304 bytes; the simulator may use 1024"):
        sim.Simulator(ARCH, max_host_bytes=1024).load(b.finish())


def test_runaway_programs_are_rejected():
    b = sim.ProgramBuilder(ARCH, 1)
    for _ in range(3):
        b.core(0).loop(1 << 20)
    b.core(0).nop()
    for _ in range(3):
        b.core(0).end_loop()
    with pytest.raises(sim.ProgramError, match="executes more than"):
        sim.Simulator(ARCH).load(b.finish())
    b = sim.ProgramBuilder(ARCH, 1)
    b.core(0).dma(Operand(), Operand(), 1, counts=(1 << 20, 1 << 20, 1))  # stride 0: tiny footprint
    with pytest.raises(sim.ProgramError, match="simulator limit"):
        sim.Simulator(ARCH).load(b.finish())
