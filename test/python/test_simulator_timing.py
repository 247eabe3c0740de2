"""The timing model: tests that fail if bandwidth sharing, port limits or
engine overlap are modelled wrongly, and one test per calibrated mechanism
(docs/simulator-fidelity.md) that fails if the mechanism is removed.
Figures come from the architecture description, never from literals here."""

import re

import numpy as np
import pytest

from spyre_mlir import compiler
from spyre_mlir import simulator as sim
from spyre_mlir.simulator import BinaryFunc, DType, Operand, ReduceFunc, Sync
from spyre_mlir.testing import amap, generic, kernel

ARCH = sim.default_arch()
TILE = 256 * 1024  # bytes each core streams
# Bytes per cycle one transfer moves alone: its core's DMA port or its
# memory port, whichever is narrower.
ALONE = min(ARCH.dma_port_bytes_per_cycle, ARCH.port_bytes_per_cycle)


def streaming_program(cores, tile=TILE):
    """Every core copies its own `tile` bytes from device memory into LX."""
    b = sim.ProgramBuilder(ARCH, cores)
    x = b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [cores * tile])
    for core in range(cores):
        b.core(core).dma(Operand(dtype=DType.u8), Operand(buffer=x, dtype=DType.u8, offset=core * tile), tile)
    return b.finish(), {"x": np.zeros(cores * tile, bool)}


def test_one_core_is_limited_by_its_port():
    program, inputs = streaming_program(1)
    cycles = sim.run(program, inputs).cycles
    expected = ARCH.dma_latency_cycles + TILE / ALONE
    assert cycles == pytest.approx(expected, rel=1e-6)
    assert ALONE < ARCH.device_bytes_per_cycle  # else this test is moot


def test_all_cores_share_the_card_bandwidth():
    cores = ARCH.cores
    program, inputs = streaming_program(cores)
    result = sim.run(program, inputs)
    transfer = result.cycles - ARCH.dma_latency_cycles
    total = cores * TILE
    # Together the cores get at most the card's bandwidth, and (fair sharing)
    # no less: the copy is bandwidth bound, not port bound.
    assert total / transfer <= ARCH.device_bytes_per_cycle * (1 + 1e-9)
    assert total / transfer == pytest.approx(ARCH.device_bytes_per_cycle, rel=1e-6)
    # Every core finishes at the same time.
    assert max(result.stats["core_cycles"]) - min(result.stats["core_cycles"]) < 1
    assert result.stats["cores"][0]["device_read_bytes"] == TILE


def test_a_broadcast_operand_is_read_once():
    """Cores that start the same device read in the same cycle get it from
    one transfer: all of them reading one tile takes as long as one core
    reading it (its port binds), not the bus time of every copy."""
    cores = ARCH.cores
    b = sim.ProgramBuilder(ARCH, cores)
    x = b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [TILE])
    for core in range(cores):
        b.core(core).dma(Operand(dtype=DType.u8), Operand(buffer=x, dtype=DType.u8), TILE)
    result = sim.run(b.finish(), {"x": np.zeros(TILE, bool)})
    shared = result.cycles
    alone = sim.run(*streaming_program(1)).cycles
    own = sim.run(*streaming_program(cores))
    assert shared == pytest.approx(alone, rel=1e-6)
    assert own.cycles > 4 * shared  # every core's own tile: the bus carries them all
    # The bus carried the shared tile once; every core received its copy.
    assert result.stats["bus_read_bytes"] == pytest.approx(TILE, rel=1e-9)
    assert sum(c["device_read_bytes"] for c in result.stats["cores"]) == cores * TILE
    assert own.stats["bus_read_bytes"] == pytest.approx(cores * TILE, rel=1e-9)
    assert result.stats["bus_write_bytes"] == own.stats["bus_write_bytes"] == 0


def test_two_cores_split_bandwidth_when_it_binds():
    program, inputs = streaming_program(2)
    cycles = sim.run(program, inputs).cycles
    per_core = min(ALONE, ARCH.port_bytes_per_cycle / 2, ARCH.device_bytes_per_cycle / 2)
    assert cycles == pytest.approx(ARCH.dma_latency_cycles + TILE / per_core, rel=1e-6)


def test_unaligned_rows_cost_whole_sticks():
    """DMA moves whole sticks: 64 rows of 2 bytes cost 64 sticks."""
    b = sim.ProgramBuilder(ARCH, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.dl16, sim.HostDType.f16, [64, 64])
    b.core(0).dma(Operand(dtype=DType.dl16, strides=(2, 0, 0)),
                  Operand(buffer=x, dtype=DType.dl16, strides=(128, 0, 0)), 2, counts=(64, 1, 1))
    r = sim.run(b.finish(), {"x": np.zeros((64, 64), np.float16)})
    assert r.stats["cores"][0]["device_read_bytes"] == 64 * ARCH.stick_bytes


def pipeline(tiles, double_buffered):
    """Load a K x N tile and multiply it, `tiles` times. Double buffered: the
    load of tile i+1 overlaps the matmul of tile i (two LX slots, two
    semaphores). Serial: each load waits for the previous matmul. m is
    chosen so that a load and a matmul take about as long."""
    k, n = 64, 64
    tile_bytes = k * n * 2
    load = ARCH.dma_latency_cycles + tile_bytes / ALONE
    m = min(range(1, 1025), key=lambda m: abs(pt_cycles(m, k, n) - load))
    assert abs(pt_cycles(m, k, n) - load) < 0.2 * load
    a_off, out_off, slot0 = 0, m * k * 2, m * k * 2 + m * n * 4
    slots = 2 if double_buffered else 1
    b = sim.ProgramBuilder(ARCH, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.dl16, sim.HostDType.f16, [tiles, k, n])
    c = b.core(0)
    dma_done, mm_done = 0, 1
    for i in range(tiles):
        slot = slot0 + (i % slots) * tile_bytes
        # The slot is free once the matmul that used it last has finished.
        prior_user = i - slots
        c.dma(Operand(offset=slot), Operand(buffer=x, offset=i * tile_bytes), tile_bytes,
              sync=Sync(wait_sem=mm_done if prior_user >= 0 else None,
                        wait_count=prior_user + 1, signal_sem=dma_done))
        c.matmul(Operand(offset=out_off, dtype=DType.f32, strides=(n * 4, 0, 0)),
                 Operand(offset=a_off, strides=(k * 2, 0, 0)),
                 Operand(offset=slot, strides=(n * 2, 0, 0)), m, k, n, accumulate=i > 0,
                 sync=Sync(wait_sem=dma_done, wait_count=i + 1, signal_sem=mm_done))
    r = sim.run(b.finish(), {"x": np.zeros((tiles, k, n), np.float16)})
    dma = ARCH.dma_latency_cycles + tile_bytes / ALONE
    return r.cycles, dma, (m, k, n)


def test_double_buffering_overlaps_dma_and_matmul():
    tiles = 8
    overlapped, dma, mm = pipeline(tiles, double_buffered=True)
    serial, _, _ = pipeline(tiles, double_buffered=False)
    first = pt_cycles(*mm, accumulate=False)
    mm = pt_cycles(*mm)
    assert serial == pytest.approx(tiles * (dma + mm) - (mm - first), rel=1e-6)
    # Close to max(DMA, PT) per tile plus filling the pipeline once, not the sum.
    assert overlapped <= tiles * max(dma, mm) + min(dma, mm) + 1
    assert overlapped < 0.6 * serial


def test_runs_are_deterministic():
    program, inputs = streaming_program(4)
    first = sim.run(program, inputs).stats
    second = sim.run(program, inputs).stats
    assert first == second


# --- the calibrated mechanisms (docs/simulator-fidelity.md) ---------------


def pt_cycles(m, k, n, accumulate=True):
    """A matmul instruction: the PT's peak or its operand feed (16-bit A and
    B, the f32 accumulator read and written), whichever binds, plus one
    pipeline fill and drain."""
    compute = m * k * n / ARCH.macs_per_cycle
    feed = ((m * k + k * n) * 2 + m * n * 4 * (2 if accumulate else 1)) / ARCH.pt_feed_bytes_per_cycle
    return np.ceil(max(compute, feed)) + ARCH.pt_startup_cycles


def read_write_program(readers, writers, tile=TILE):
    """`readers` cores copy device memory into LX while `writers` other cores
    copy LX into device memory, `tile` bytes each, at the same time."""
    cores = readers + writers
    b = sim.ProgramBuilder(ARCH, cores)
    x = b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [max(readers, 1) * tile])
    y = b.add_buffer("y", sim.BufferKind.output, DType.u8, sim.HostDType.bool, [max(writers, 1) * tile])
    for core in range(readers):
        b.core(core).dma(Operand(dtype=DType.u8), Operand(buffer=x, dtype=DType.u8, offset=core * tile), tile)
    for w in range(writers):
        b.core(readers + w).dma(Operand(buffer=y, dtype=DType.u8, offset=w * tile), Operand(dtype=DType.u8), tile)
    return b.finish(), {"x": np.zeros(max(readers, 1) * tile, bool)}


def card_with(**changes):
    """The card description with some [memory] parameters changed."""
    text = open(sim.arch_path()).read()
    for key, value in changes.items():
        text, n = re.subn(rf"(?m)^{key}\s*=\s*\S+", f"{key} = {value}", text)
        assert n == 1, key
    return sim.Arch.parse(text)


def load_and_store_program(arch, store_reads_loaded_bytes=False):
    """One core stores one tile of LX to device memory, then loads another
    tile from device memory into LX: into other LX bytes, or into those the
    store reads."""
    b = sim.ProgramBuilder(arch, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [TILE])
    y = b.add_buffer("y", sim.BufferKind.output, DType.u8, sim.HostDType.bool, [TILE])
    c = b.core(0)
    c.dma(Operand(buffer=y, dtype=DType.u8), Operand(dtype=DType.u8), TILE)
    c.dma(Operand(dtype=DType.u8, offset=0 if store_reads_loaded_bytes else TILE),
          Operand(buffer=x, dtype=DType.u8), TILE)
    return b.finish(), {"x": np.ones(TILE, bool)}


def test_a_core_loads_beside_a_store():
    """Mechanism: a core's DMA engine moves a load beside a store
    (`memory.dma_duplex`), the two sharing its DMA port and the bus; not
    when the load writes LX bytes the store reads, and not when the card
    description says it cannot."""
    program, inputs = load_and_store_program(ARCH)
    beside = sim.run(program, inputs, ARCH)
    expected = ARCH.dma_latency_cycles + max(2 * TILE / ARCH.dma_port_bytes_per_cycle,
                                             ARCH.device_cycles(TILE, TILE))
    assert beside.cycles == pytest.approx(expected, rel=1e-6)
    # The store read the LX bytes before the load: y holds LX's zeros.
    assert not beside.outputs["y"].any()
    alternating = card_with(dma_duplex=0)
    program, inputs = load_and_store_program(alternating)
    apart = sim.run(program, inputs, alternating).cycles
    # One after the other: the store alone, then the load paying the
    # turnaround on its bytes (the fewer, as the kernel moves them).
    paying = min(ALONE, 1 / (1 / ARCH.device_bytes_per_cycle + ARCH.turnaround_cycles_per_byte))
    assert apart == pytest.approx(2 * ARCH.dma_latency_cycles + TILE / ALONE + TILE / paying,
                                  rel=1e-6)
    assert apart > beside.cycles + ARCH.dma_latency_cycles
    program, inputs = load_and_store_program(ARCH, store_reads_loaded_bytes=True)
    hazard = sim.run(program, inputs, ARCH)
    assert hazard.cycles == pytest.approx(apart, rel=1e-6)
    assert not hazard.outputs["y"].any()


def test_cores_of_one_half_share_a_memory_port():
    """Mechanism: cores 0-15 reach device memory through one port and
    16-31 through the other (`memory.port_cores`), each port carrying
    `memory.port_bytes_per_s` one way: 16 cores read at one port's rate,
    32 at the card's. Without the ports 16 would read at the card's too
    (the 8- and 16-core amax rows, S045 and S046)."""
    half = ARCH.port_cores
    assert 2 * half == ARCH.cores and ARCH.port_bytes_per_cycle < ARCH.device_bytes_per_cycle
    program, inputs = streaming_program(half)
    one_port = half * TILE / (sim.run(program, inputs).cycles - ARCH.dma_latency_cycles)
    program, inputs = streaming_program(2 * half)
    two_ports = 2 * half * TILE / (sim.run(program, inputs).cycles - ARCH.dma_latency_cycles)
    assert one_port == pytest.approx(ARCH.port_bytes_per_cycle, rel=1e-6)
    assert two_ports == pytest.approx(min(ARCH.device_bytes_per_cycle,
                                          2 * ARCH.port_bytes_per_cycle), rel=1e-6)
    assert ARCH.memory_bytes_per_cycle == pytest.approx(two_ports, rel=1e-6)


def test_read_write_turnaround_makes_a_balanced_copy_slower_per_byte():
    """Mechanism: device-memory bus with read/write turnaround (SPYRE_HW.md:
    150 GB/s one direction, 0.00574 ns per byte of min(read, write))."""
    half = ARCH.cores // 2
    program, inputs = streaming_program(2 * half)
    read_only = sim.run(program, inputs).cycles - ARCH.dma_latency_cycles
    program, inputs = read_write_program(half, half)
    balanced = sim.run(program, inputs).cycles - ARCH.dma_latency_cycles
    total = 2 * half * TILE
    assert read_only == pytest.approx(total / ARCH.device_bytes_per_cycle, rel=1e-6)
    assert balanced == pytest.approx(ARCH.device_cycles(half * TILE, half * TILE), rel=1e-6)
    assert ARCH.turnaround_cycles_per_byte > 0
    assert balanced > 1.2 * read_only  # ~105 GB/s against 150


def test_turnaround_is_charged_on_the_smaller_direction():
    """A 2:1 read:write mix (x + y) pays turnaround on the written bytes only."""
    program, inputs = read_write_program(16, 8)
    cycles = sim.run(program, inputs).cycles - ARCH.dma_latency_cycles
    assert cycles == pytest.approx(ARCH.device_cycles(16 * TILE, 8 * TILE), rel=1e-6)


def test_turnaround_does_not_depend_on_the_order_of_reads_and_writes():
    """A kernel that reads everything, then writes twice as much, pays the
    turnaround on min(read, write) bytes like one that interleaves them
    (it paid none when the direction was decided by the bytes in flight).
    All the card's cores, so that the bus, not a memory port, binds."""
    cores = ARCH.cores
    b = sim.ProgramBuilder(ARCH, cores)
    x = b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [cores * TILE])
    y = b.add_buffer("y", sim.BufferKind.output, DType.u8, sim.HostDType.bool, [cores * 2 * TILE])
    for core in range(cores):
        c = b.core(core)
        c.dma(Operand(dtype=DType.u8), Operand(buffer=x, dtype=DType.u8, offset=core * TILE), TILE)
        c.dma(Operand(buffer=y, dtype=DType.u8, offset=core * 2 * TILE), Operand(dtype=DType.u8), 2 * TILE)
    cycles = sim.run(b.finish(), {"x": np.zeros(cores * TILE, bool)}).cycles
    expected = 2 * ARCH.dma_latency_cycles + ARCH.device_cycles(cores * TILE, cores * 2 * TILE)
    assert cycles == pytest.approx(expected, rel=1e-6)


def lx_op_program(op, elements, dtype=DType.dl16, out_dtype=None):
    """One vector instruction on `elements` LX values of one core (an add's
    result in `out_dtype`, default `dtype`)."""
    b = sim.ProgramBuilder(ARCH, 1)
    b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [128])
    c = b.core(0)
    size = sim.dtype_bytes(dtype)
    cols = 1024
    rows = elements // cols
    view = lambda off, t=dtype: Operand(offset=off, dtype=t, strides=(cols * sim.dtype_bytes(t), sim.dtype_bytes(t), 0))
    if op == "add":
        c.binary(BinaryFunc.add, view(0, out_dtype or dtype), view(4 * rows * cols),
                 view(8 * rows * cols), rows, cols)
    else:
        c.reduce(ReduceFunc.max, Operand(offset=0, dtype=DType.f32, strides=(4, 0, 0)),
                 view(4 * rows), rows, cols)
    return b.finish(), {"x": np.zeros(128, bool)}


def test_vector_rate_by_op_class():
    """Mechanism: the SFU's element rate per op class (elementwise, reduction),
    fitted to the 1-core add and amax rows."""
    n = 128 * 1024
    add = sim.run(*lx_op_program("add", n)).cycles
    red = sim.run(*lx_op_program("max", n)).cycles
    assert add == pytest.approx(np.ceil(n / ARCH.sfu_elementwise_per_cycle) + ARCH.sfu_startup_cycles)
    assert red == pytest.approx(np.ceil(n / ARCH.sfu_reduce_per_cycle) + ARCH.sfu_startup_cycles)
    assert red > add  # reductions are the slower class on the device


def test_vector_lx_port_halves_fp32():
    """Mechanism: the SFUs' LX port (bytes per cycle) caps the element rate.
    An fp32 add streams 12 bytes an element against an fp16 add's 6, so it
    runs at half the rate (the published fp32 figure); an add of fp16 values
    into an fp32 result (a softmax's exp tile) streams 8 and loses a quarter.
    Without the port every add would take the same time per element."""
    n = 128 * 1024
    f16 = sim.run(*lx_op_program("add", n)).cycles - ARCH.sfu_startup_cycles
    f32 = sim.run(*lx_op_program("add", n, DType.f32)).cycles - ARCH.sfu_startup_cycles
    widen = sim.run(*lx_op_program("add", n, DType.dl16, DType.f32)).cycles - ARCH.sfu_startup_cycles
    assert f32 == pytest.approx(2 * f16, abs=1)
    assert widen == pytest.approx(np.ceil(n * 8 / ARCH.sfu_lx_bytes_per_cycle))
    assert f16 < widen < f32
    assert ARCH.sfu_rate(12, False, False) == pytest.approx(ARCH.sfu_elementwise_per_cycle / 2)


def add_kernel(rows, cols):
    body = generic((rows, cols), [("%x", (rows, cols), "f16"), ("%y", (rows, cols), "f16")],
                   [("%z", (rows, cols), "f16")],
                   [amap(2, "d0, d1"), amap(2, "d0, d1"), amap(2, "d0, d1")], """
%s = arith.addf %a0, %a1 : f16
spyre.yield %s : f16""")
    return kernel("add", [("x", (rows, cols), "f16"), ("y", (rows, cols), "f16"),
                          ("z", (rows, cols), "f16")], body)


def test_one_core_elementwise_is_limited_by_its_vector_unit():
    """A compiled x + y on one core: the SFU, not device memory or the DMA
    port, sets the time (the measured 1-core add rows, S015 and S023)."""
    rows, cols = 512, 1024
    binary = compiler.compile_kernel(add_kernel(rows, cols), cores=1)
    x = np.zeros((rows, cols), np.float16)
    r = sim.run(binary, {"arg0": x, "arg1": x})
    elements = rows * cols
    vector = elements / ARCH.sfu_elementwise_per_cycle
    memory = ARCH.device_cycles(4 * elements, 2 * elements)
    port = 6 * elements / ALONE
    assert vector > max(memory, port)  # else this test is moot
    assert r.cycles >= vector
    assert r.cycles < 1.3 * vector  # plus filling and draining the DMA pipeline
    engines = r.stats["cores"][0]["engines"]
    assert engines["sfu"]["busy_cycles"] > engines["dma"]["busy_cycles"]


def matmul_program(m, k, n, instructions=1, out=DType.f32):
    b = sim.ProgramBuilder(ARCH, 1)
    b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [128])
    c = b.core(0)
    a_off, b_off = 0, m * k * 2
    out_off = b_off + k * n * 2
    size = sim.dtype_bytes(out)
    for i in range(instructions):
        c.matmul(Operand(offset=out_off, dtype=out, strides=(n * size, 0, 0)),
                 Operand(offset=a_off, strides=(k * 2, 0, 0)),
                 Operand(offset=b_off, strides=(n * 2, 0, 0)), m, k, n, accumulate=i > 0)
    return b.finish(), {"x": np.zeros(128, bool)}


def test_pt_operand_feed_limits_thin_tiles():
    """Mechanism: the PT streams its A and B operands from LX at
    pt_feed_bytes_per_cycle; a tile with few rows is feed bound, a large
    square one (operand bytes per MAC fall as the tile grows) reaches the
    peak rate."""
    thin = sim.run(*matmul_program(16, 512, 512)).cycles
    assert thin == pytest.approx(pt_cycles(16, 512, 512, accumulate=False))
    assert thin > 1.5 * (16 * 512 * 512 / ARCH.macs_per_cycle + ARCH.pt_startup_cycles)
    square = sim.run(*matmul_program(384, 512, 384, out=DType.dl16)).cycles
    assert square == pytest.approx(np.ceil(384 * 512 * 384 / ARCH.macs_per_cycle) + ARCH.pt_startup_cycles)


def test_pt_fill_and_drain_per_instruction():
    """Short per-core tiles lose efficiency: eight small matmuls take longer
    than one with the same MACs."""
    one = sim.run(*matmul_program(128, 512, 128)).cycles
    eight = sim.run(*matmul_program(16, 512, 128, instructions=8)).cycles
    assert ARCH.pt_startup_cycles > 0
    assert eight >= 8 * pt_cycles(16, 512, 128, accumulate=False)
    assert eight > one + 7 * ARCH.pt_startup_cycles


def test_calibrated_peak_and_allocatable_lx():
    """The PT peak is the published 1536 MAC/ns per core (the roofline's
    compute ceiling), and programs may use only the allocatable LX."""
    assert ARCH.macs_per_cycle * ARCH.clock_hz / 1e9 == pytest.approx(1536)
    assert ARCH.lx_usable_bytes < ARCH.lx_bytes
    b = sim.ProgramBuilder(ARCH, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.u8, sim.HostDType.bool, [256])
    b.core(0).dma(Operand(dtype=DType.u8, offset=ARCH.lx_usable_bytes - 128),
                  Operand(buffer=x, dtype=DType.u8), 256)
    with pytest.raises(sim.ProgramError):
        b.finish().validate(ARCH)
