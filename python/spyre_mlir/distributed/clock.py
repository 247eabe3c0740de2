"""Each card's simulated clock across collectives.

A process runs one card: its clock is the cycles of the kernels it ran plus
the cycles it spent in collectives. Before a collective starts, the cards
exchange their clocks (over gloo, which costs host time, not simulated
time): the collective starts on the card when the last card reaches it, and
no earlier than the group's previous collective ends (collectives in flight
together share the links), and lasts `collective_time` (C++, from the card
description's [link]). When the caller waits for it, its card's clock moves
to its end if it is not there yet. The time a card stood still is split into
waiting for the start (a slower card, or the group's earlier collectives:
`counters.collective_wait_cycles`) and the transfer itself
(`counters.collective_cycles`); transfer time the card spent computing
instead, because the graph waited for the collective later than it issued
it, is `counters.collective_overlapped_cycles`. Only `Work.wait()` (what
compiled graphs and blocking calls use) advances the clock, not a Work's
future.
"""

from __future__ import annotations

import itertools
import threading

import torch

from .. import simulator as sim
from ..inductor.counting import counters

#: The collectives in the order of their code in the clock exchange.
KINDS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "barrier")


def clock_cycles() -> float:
    """This card's simulated clock since `counters.reset()`."""
    return (counters.simulated_cycles + counters.collective_cycles +
            counters.collective_wait_cycles)


class CollectiveMismatch(RuntimeError):
    """The cards called different collectives, or the same one on different sizes."""


class CollectiveTimer:
    """The clock side of one process group (called by spyre_backend.cpp)."""

    def __init__(self, data, size: int):
        self._data, self._size = data, size
        self._tokens = itertools.count()
        self._pending: dict[int, tuple[int, float, float, float]] = {}
        self._lock = threading.Lock()
        # When the group's links finish the collectives issued so far (the
        # same on every card: all issue the same sequence), per counters
        # generation: collectives in flight together share the links.
        self._links_free = (counters.generation, 0.0)

    def close(self) -> None:
        """Lets go of the data's process group (its backend shuts down)."""
        self._data = None

    def issued(self, kind: str, nbytes: float) -> int:
        """Agrees with the other cards on when `kind` starts; returns the
        token its Work reports back with."""
        mine = torch.tensor([clock_cycles(), KINDS.index(kind), nbytes], dtype=torch.float64)
        everyone = [torch.empty_like(mine) for _ in range(self._size)]
        self._data.allgather([everyone], [mine]).wait()
        if kind != "all_to_all":  # its cards may send different amounts
            self._check_same(everyone)
        moved = max(float(e[2]) for e in everyone)
        cost = sim.collective_time(sim.default_arch(), getattr(sim.Collective, kind), moved,
                                   self._size)["cycles"]
        with self._lock:
            generation, free = self._links_free
            start = max(max(float(e[0]) for e in everyone),
                        free if generation == counters.generation else 0.0)
            self._links_free = (counters.generation, start + cost)
            token = next(self._tokens)
            self._pending[token] = (counters.generation, start, start + cost, cost)
            counters.collectives[kind] += 1
        return token

    def waited(self, token: int) -> None:
        with self._lock:
            entry = self._pending.pop(token, None)
            # Waited for before, or issued before counters.reset(): the new
            # counts start after it.
            if entry is None or entry[0] != counters.generation:
                return
            _, start, end, cost = entry
            now = clock_cycles()
            stalled = max(0.0, end - now)
            waiting = min(stalled, max(0.0, start - now))
            counters.collective_wait_cycles += waiting
            counters.collective_cycles += stalled - waiting
            counters.collective_overlapped_cycles += cost - (stalled - waiting)

    def _check_same(self, everyone) -> None:
        first = everyone[0]
        for rank, other in enumerate(everyone[1:], start=1):
            if int(other[1]) != int(first[1]) or float(other[2]) != float(first[2]):
                raise CollectiveMismatch(
                    f"cards of one process group called different collectives: rank 0 "
                    f"{_describe(first)}, rank {rank} {_describe(other)} (every card must call "
                    "the same collectives in the same order, on tensors of the same size)")


def _describe(entry) -> str:
    return f"{KINDS[int(entry[1])]} of {int(entry[2])} bytes"
