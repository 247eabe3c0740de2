"""Tuning by simulated time: where the cost model ranks tile sizes closely,
compile the best few and keep the fastest on the simulator.

    SPYRE_TUNE=1 python my_model.py        # or spyre_mlir.tuning.force(True)

The default compile is deterministic and fast: every op gets the tile its
cost estimate ranks first (spyre-tile). In tuning mode, a kernel whose ops
have other candidate tiles (matrix products: spyre-tile's `candidates`
option lists the next ones the estimate ranks, including 3 x 2^i sticks
wide, which it ranks less reliably) is compiled once per candidate, each
program run on the simulator on zeros (a product's time does not depend on
its values), and the fastest kept. The choice is recorded on disk, per
kernel IR, compiler version and card description (a per-shape cache beside
the kernel cache, `SPYRE_CACHE_DIR`/../tuning): later compiles of the same
kernel, in any process, compile the recorded tiles once. Kernels with
nothing to choose compile as by default. A record that does not fit the
kernel's candidates (edited, or from another planner) is tuned again; a
candidate the later stages refuse is skipped.

Ops are tuned one after the other (each with the others at the tiles
already chosen), so a kernel of n such ops costs the sum, not the product,
of their candidates.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os

import numpy as np

from . import compiler
from . import simulator as sim

log = logging.getLogger("spyre_mlir.inductor.tuning")

#: Tiles tried per op: the estimate's choice and the next ones it ranks.
CANDIDATES = 4

_forced: bool | None = None


def enabled() -> bool:
    """Whether kernels are tuned: `SPYRE_TUNE=1`, unless force() says otherwise."""
    if _forced is not None:
        return _forced
    return os.environ.get("SPYRE_TUNE", "") not in ("", "0")


def force(value: bool | None) -> None:
    """Tunes (True) or does not (False) in this process whatever SPYRE_TUNE
    says; None gives the environment back control."""
    global _forced
    _forced = value


@contextlib.contextmanager
def forced(value: bool):
    """force(value) while the block runs, then what was in force before."""
    global _forced
    before = _forced
    _forced = value
    try:
        yield
    finally:
        _forced = before


def records_dir() -> str:
    from .inductor.kernel_cache import cache_dir
    return os.path.join(os.path.dirname(os.path.abspath(cache_dir())), "tuning")


def compile_tuned(mlir: str, version: str) -> bytes:
    """The program binary of the kernel in `mlir` with the tiles that ran
    fastest, tuned now or read from the record of an earlier tuning.
    `version` keys the record (the compiler and card description)."""
    from .ir import Context
    key = hashlib.sha256((version + "\0tuning\0" + mlir).encode()).hexdigest()
    path = os.path.join(records_dir(), key[:2], key + ".json")
    record = _read(path)
    with Context():
        divided, candidates = candidates_of(mlir)
        if record is not None and len(record["tiles"]) == len(candidates) and all(
                tile in options for tile, options in zip(record["tiles"], candidates)):
            return binary_with(divided, record["tiles"])
        if any(len(c) > 1 for c in candidates):
            return _tune(divided, candidates, path)
        return binary_with(divided, [c[0] for c in candidates])


def candidates_of(mlir: str) -> tuple[str, list[list[list[int]]]]:
    """The kernel in `mlir` compiled up to divide-work (as text), and per
    tuned op, in IR order, its candidate tiles, the estimate's choice first.
    Needs an MLIR context."""
    module = compiler.parse_module(mlir)
    compiler.compile_module(module, stop_after="divide-work")
    divided = str(module)
    _list_candidates(module)
    return divided, [_tiles(op) for op in _tuned_ops(module)]


def one_change_trials(candidates: list[list[list[int]]], chosen: list[list[int]]):
    """Each trial tuning runs: `chosen` with one op's tile replaced by another
    of its candidates, op by op. Reads `chosen` at each step, so a caller
    that updates it in place has later trials start from the best so far."""
    for i, options in enumerate(candidates):
        for tile in options[1:]:
            yield chosen[:i] + [tile] + chosen[i + 1:]


def _tune(divided: str, candidates: list[list[list[int]]], path: str) -> bytes:
    """The binary of the fastest candidates (recorded at `path`)."""
    from .ir import MLIRError
    chosen = [c[0] for c in candidates]
    binary = binary_with(divided, chosen)
    default = best = _cycles(binary)
    tried = [{"tiles": [list(t) for t in chosen], "cycles": default}]
    for trial in one_change_trials(candidates, chosen):
        try:
            trial_binary = binary_with(divided, trial)
            cycles = _cycles(trial_binary)
        except (MLIRError, ValueError, RuntimeError) as e:
            # A candidate the later stages refuse is not a choice; the
            # estimate's own tile compiled, so there is always one.
            log.debug("tuning: tiles %s refused: %s", trial, str(e).splitlines()[0])
            continue
        tried.append({"tiles": trial, "cycles": cycles})
        if cycles < best:
            best, binary = cycles, trial_binary
            chosen[:] = trial
    log.info("tuned a kernel: %.0f cycles with tiles %s, %.0f with the estimate's %s",
             best, chosen, default, [c[0] for c in candidates])
    _write(path, {"tiles": chosen, "cycles": best, "default_cycles": default, "tried": tried})
    return binary


def _list_candidates(module) -> None:
    from .passmanager import PassManager
    PassManager.parse(f"builtin.module(spyre-tile{{candidates={CANDIDATES}}})",
                      module.context).run(module.operation)


def _tuned_ops(module) -> list:
    """The tiled ops, in IR order (the same in every copy of the module)."""
    return compiler.ops_where(module, lambda op: "spyre.tile_candidates" in op.attributes)


def _tiles(op) -> list[list[int]]:
    from .ir import ArrayAttr, DenseI64ArrayAttr
    return [list(DenseI64ArrayAttr(a)) for a in ArrayAttr(op.attributes["spyre.tile_candidates"])]


def _compiled_with(divided: str, tiles: list[list[int]]):
    """The module after divide-work, compiled from the tile stage on with
    `tiles` as the tuned ops' spyre.tile."""
    from .ir import DenseI64ArrayAttr
    module = compiler.parse_module(divided)
    _list_candidates(module)  # marks the same ops as when the candidates were listed
    for op, tile in zip(_tuned_ops(module), tiles):
        op.attributes["spyre.tile"] = DenseI64ArrayAttr.get(tile)
        del op.attributes["spyre.tile_candidates"]
    compiler.compile_module(module, start_before="plan-memory")
    return module


def binary_with(divided: str, tiles: list[list[int]]) -> bytes:
    """The program binary of `divided` (candidates_of) with `tiles` as the
    tuned ops' tiles. Needs an MLIR context."""
    from .dialects import spyre
    return spyre.program_binary(_compiled_with(divided, tiles), None)


def _cycles(binary: bytes) -> float:
    """Simulated cycles of a program run on zeros."""
    program = sim.Program.parse(binary)
    inputs = {buf["name"]: np.zeros(tuple(buf["shape"]), np.float32)
              for _, buf in sim.host_buffers(program) if buf["kind"] != sim.BufferKind.output}
    return sim.run(program, inputs).cycles


def _read(path: str) -> dict | None:
    try:
        with open(path) as f:
            record = json.load(f)
        if isinstance(record.get("tiles"), list):
            return record
    except (OSError, ValueError):
        pass  # none yet, or unreadable: tuned again
    return None


def _write(path: str, record: dict) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as f:
            json.dump(record, f)
        os.replace(temporary, path)
    except OSError as e:
        log.warning("tuning record %s not written (%s): the kernel is tuned again next time",
                    path, e)
