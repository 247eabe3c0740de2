"""The timing model: tests that fail if bandwidth sharing, port limits or
engine overlap are modelled wrongly. Figures come from the architecture
description, never from literals here."""

import numpy as np
import pytest

from spyre_mlir import simulator as sim
from spyre_mlir.simulator import DType, Operand, Sync

ARCH = sim.default_arch()
TILE = 256 * 1024  # bytes each core streams


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
    expected = ARCH.dma_latency_cycles + TILE / ARCH.dma_port_bytes_per_cycle
    assert cycles == pytest.approx(expected, rel=1e-6)
    assert ARCH.dma_port_bytes_per_cycle < ARCH.device_bytes_per_cycle  # else this test is moot


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


def test_two_cores_split_bandwidth_when_it_binds():
    program, inputs = streaming_program(2)
    cycles = sim.run(program, inputs).cycles
    per_core = min(ARCH.dma_port_bytes_per_cycle, ARCH.device_bytes_per_cycle / 2)
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
    k, n = 256, 256
    tile_bytes = k * n * 2
    load = ARCH.dma_latency_cycles + tile_bytes / ARCH.dma_port_bytes_per_cycle
    m = max(1, round(load * ARCH.macs_per_cycle / (k * n)))
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
    dma = ARCH.dma_latency_cycles + tile_bytes / ARCH.dma_port_bytes_per_cycle
    mm = m * k * n / ARCH.macs_per_cycle + ARCH.pt_startup_cycles
    return r.cycles, dma, mm


def test_double_buffering_overlaps_dma_and_matmul():
    tiles = 8
    overlapped, dma, mm = pipeline(tiles, double_buffered=True)
    serial, _, _ = pipeline(tiles, double_buffered=False)
    assert serial == pytest.approx(tiles * (dma + mm), rel=1e-6)
    # Close to max(DMA, PT) per tile plus filling the pipeline once, not the sum.
    assert overlapped <= tiles * max(dma, mm) + min(dma, mm) + 1
    assert overlapped < 0.6 * serial


def test_runs_are_deterministic():
    program, inputs = streaming_program(4)
    first = sim.run(program, inputs).stats
    second = sim.run(program, inputs).stats
    assert first == second
