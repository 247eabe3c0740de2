"""Several simulated Spyre cards with torch.distributed (docs/distributed.md).

One process per card, started by ``torchrun`` or ``torch.multiprocessing``;
``torch.distributed.init_process_group("spyre")`` gives them a process group
whose collectives move the data with gloo and are **timed** as the cards'
links would take them (the ``[link]`` section of the card description,
lib/Simulator/Collectives.cpp). Each process keeps its card's simulated
clock: the kernels it ran (``counters.simulated_cycles``) plus the
collectives it waited for, split into transfer time and time waiting for a
slower card (``clock()``, ``counters.collective_*``).

Compiled graphs (``backend="spyre"``) with functional collectives, as
DTensor and ``torch.distributed.tensor.parallel`` produce, run their kernels
on the card and their collectives through this backend.

The backend is registered while torch is imported (our ``torch.backends``
entry point calls ``register``), for CPU tensors and spyre tensors.
"""

from __future__ import annotations

NAME = "spyre"


def clock_cycles() -> float:
    """This card's simulated clock since `counters.reset()` (clock.py)."""
    from .clock import clock_cycles
    return clock_cycles()


def register() -> None:
    """Makes "spyre" a torch.distributed backend (idempotent). The process
    group itself, and its C++ extension, are made on first use."""
    import torch.distributed as dist
    if not dist.is_available() or NAME in dist.Backend.backend_list:
        return
    dist.Backend.register_backend(NAME, _create, devices=["cpu", NAME])


def _create(store, rank: int, size: int, timeout):
    from .process_group import create
    return create(store, rank, size, timeout)


def count_if_untimed(op: str, group_name: str | None) -> None:
    """Called by compiled graphs before a collective: one over another
    backend than "spyre" moves the data but is not timed as the cards'
    links would take it, so it is counted as a CPU fallback (refused in
    strict mode)."""
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group
    backend = dist.get_backend(_resolve_process_group(group_name)) if group_name else None
    if backend != NAME:
        from ..inductor.counting import fallback
        fallback([op], f"a collective over the {backend} backend, which the simulated cards' "
                 f"links do not time (init_process_group(\"{NAME}\") does)")
