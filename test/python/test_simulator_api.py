"""The simulator's Python API: zero-copy binding, the GIL, counters, traces."""

import json
import threading
import time

import numpy as np
import torch

from spyre_mlir import simulator as sim
from spyre_mlir.simulator import DType, Operand, Sync
from spyre_mlir.simulator_programs import matmul_program

ARCH = sim.default_arch()


def scale_program():
    b = sim.ProgramBuilder(ARCH, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.f32, sim.HostDType.f32, [16])
    y = b.add_buffer("y", sim.BufferKind.output, DType.f32, sim.HostDType.f32, [16])
    c = b.core(0)
    c.kernel(7)
    c.dma(Operand(dtype=DType.f32), Operand(buffer=x, dtype=DType.f32), 64, sync=Sync(signal_sem=0))
    c.binary_imm(sim.BinaryFunc.mul, Operand(dtype=DType.f32, offset=128, strides=(64, 4, 0)),
                 Operand(dtype=DType.f32, strides=(64, 4, 0)), 3.0, 1, 16,
                 sync=Sync(wait_sem=0, wait_count=1, signal_sem=1))
    c.kernel(8)
    c.dma(Operand(buffer=y, dtype=DType.f32), Operand(dtype=DType.f32, offset=128), 64,
          sync=Sync(wait_sem=1, wait_count=1))
    return b.finish()


def test_bind_is_zero_copy_for_numpy_and_torch():
    program = scale_program()
    s = sim.Simulator(ARCH)
    s.load(program)
    x = torch.arange(16, dtype=torch.float32)
    y = torch.zeros(16)
    s.bind(0, x.numpy())  # shares the tensor's memory
    s.bind(1, y.numpy())
    s.run()
    torch.testing.assert_close(y, x * 3)  # the tensor itself holds the result
    x.mul_(2)  # the simulator sees later writes to the bound memory too
    s.run()
    torch.testing.assert_close(y, x * 3)


def test_run_releases_the_gil():
    program = matmul_program(ARCH, 1024, 1024, 1024, (4, 8))
    a = np.zeros((1024, 1024), np.float16)
    done = threading.Event()
    ticks = 0

    def simulate():
        for _ in range(3):
            sim.run(program, {"a": a, "b": a})
        done.set()

    worker = threading.Thread(target=simulate)
    worker.start()
    while not done.is_set():
        ticks += 1  # only runs while the worker does not hold the GIL
        time.sleep(0.001)
    worker.join()
    assert ticks > 5


def test_counters_per_core_and_kernel_and_trace():
    result = sim.run(scale_program(), {"x": np.ones(16, np.float32)}, trace=True)
    stats = result.stats
    core = stats["cores"][0]
    assert core["engines"]["dma"]["instructions"] == 2
    assert core["engines"]["sfu"]["instructions"] == 1
    assert core["vector_ops"] == 16
    assert core["device_read_bytes"] == ARCH.stick_bytes  # 64 bytes cost one stick
    assert set(stats["kernels"]) == {7, 8}
    assert stats["kernels"][7]["vector_ops"] == 16 and stats["kernels"][8]["vector_ops"] == 0
    assert stats["kernels"][8]["device_write_bytes"] == ARCH.stick_bytes
    assert stats["core_cycles"][0] == result.cycles
    events = json.loads(stats["trace"])["traceEvents"]
    assert [e["name"] for e in events] == ["dma", "binary", "dma"]
    assert all(e["ph"] == "X" and e["pid"] == 0 for e in events)
    # Events are in microseconds of the card's clock and cover the run.
    end = max(e["ts"] + e["dur"] for e in events)
    assert abs(end - result.cycles / ARCH.clock_hz * 1e6) < 1e-6


def test_program_survives_a_file_round_trip(tmp_path):
    program = scale_program()
    path = tmp_path / "p.spyre"
    path.write_bytes(program.serialize())
    again = sim.Program.parse(path.read_bytes())
    assert again.serialize() == program.serialize()
    assert [b["name"] for b in again.buffers] == ["x", "y"]
    assert again.instruction_counts == {0: 5}
