"""The time model of collectives between cards (lib/Simulator/Collectives.cpp)
from the card description's [link] section."""

import math

import pytest

from spyre_mlir import simulator as sim

K = sim.Collective


@pytest.fixture(scope="module")
def arch():
    return sim.default_arch()


def cycles(arch, kind, nbytes, cards):
    return sim.collective_time(arch, kind, nbytes, cards)["cycles"]


def test_the_link_is_in_the_card_description(arch):
    assert arch.link_bandwidth_bytes_per_s > 0 and arch.link_latency_s > 0


@pytest.mark.parametrize("kind", list(K.__members__.values()))
def test_one_card_costs_nothing(arch, kind):
    assert sim.collective_time(arch, kind, 1 << 20, 1) == {"cycles": 0.0, "algorithm": "none",
                                                          "messages": 0}


def test_a_large_all_reduce_is_a_ring_at_the_link_bandwidth(arch):
    per_byte = arch.clock_hz / arch.link_bandwidth_bytes_per_s
    latency = arch.link_latency_s * arch.clock_hz
    nbytes, cards = 64 << 20, 4
    t = sim.collective_time(arch, K.all_reduce, nbytes, cards)
    assert t["algorithm"] == "ring" and t["messages"] == 2 * (cards - 1)
    # Each card sends and receives 2 (p - 1) / p of the tensor.
    assert t["cycles"] == pytest.approx(2 * (cards - 1) * latency +
                                        2 * (cards - 1) / cards * nbytes * per_byte)


def test_a_small_all_reduce_pays_log2_latencies(arch):
    # A decode step's activation row: latency-bound, so not a ring.
    t = sim.collective_time(arch, K.all_reduce, 4096, 8)
    assert t["algorithm"] == "recursive doubling" and t["messages"] == 3


def test_card_counts_that_are_not_powers_of_two_fold_first(arch):
    # 6 cards: two fold into the other four, which double twice, then hand
    # the result back: 4 steps, where 8 cards take 3.
    assert sim.collective_time(arch, K.all_reduce, 4096, 6)["messages"] == 4
    assert sim.collective_time(arch, K.all_reduce, 4096, 8)["messages"] == 3
    assert sim.collective_time(arch, K.all_gather, 4096, 6)["messages"] == 3  # Bruck


@pytest.mark.parametrize("kind", [K.all_reduce, K.all_gather, K.reduce_scatter, K.broadcast,
                                  K.all_to_all])
def test_more_bytes_or_cards_never_take_less_time(arch, kind):
    for cards in (2, 4, 8):
        times = [cycles(arch, kind, n, cards) for n in (0, 1 << 10, 1 << 16, 1 << 24)]
        assert times == sorted(times)
    assert cycles(arch, kind, 1 << 24, 8) >= cycles(arch, kind, 1 << 24, 2)


def test_gather_and_scatter_move_what_a_card_lacks(arch):
    per_byte = arch.clock_hz / arch.link_bandwidth_bytes_per_s
    nbytes = 32 << 20
    for kind in (K.all_gather, K.reduce_scatter):
        t = cycles(arch, kind, nbytes, 4)
        assert t >= 3 / 4 * nbytes * per_byte
        assert t < 3 / 4 * nbytes * per_byte * 1.01


def test_a_barrier_is_latency_only(arch):
    latency = arch.link_latency_s * arch.clock_hz
    assert cycles(arch, K.barrier, 0, 8) == pytest.approx(math.log2(8) * latency)


@pytest.mark.parametrize("nbytes,cards", [(1024, 0), (1024, -2), (-1, 2)])
def test_bad_arguments_are_refused(arch, nbytes, cards):
    with pytest.raises(ValueError, match="collective"):
        sim.collective_time(arch, K.all_reduce, nbytes, cards)


def test_a_description_without_the_link_is_refused():
    with open(sim.arch_path()) as f:
        text = f.read()
    start = text.index("[link]")
    without = text[:start] + text[text.index("[numerics]"):]
    with pytest.raises(ValueError, match="link.bandwidth_bytes_per_s' is missing"):
        sim.Arch.parse(without)
