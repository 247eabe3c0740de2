"""torch.profiler and spyre kernels.

Inside ``with torch.profiler.profile(...)`` every kernel call is a host
event ``spyre::<graph>.<kernel>`` (record_function: the launch, whose host
time is mostly the simulation) with the kernel's *simulated* duration as its
device time, and a device event ``<graph>.<kernel>`` of that duration:
``prof.key_averages().table()`` lists them in a SPYRE column next to CPU ops.
``prof.export_chrome_trace(path)`` adds the card to the trace: a track of
kernels and, per core, one track per engine (control, dma, pt, sfu; ring
transfers are DMA instructions) with the simulator's instructions.

What is approximated, and why: PyTorch takes device activity of a
PrivateUse1 device from a C++ profiler plugin (Kineto IActivityProfiler or
the legacy ProfilerStubs), and the kernels run on CPU tensors under
torch.compile(backend="spyre") anyway. So the device events are added when
the profiler's results are parsed and exported (two methods of
torch.autograd.profiler.profile are wrapped by install()). The card's time is
simulated, not measured: a device event starts where its launch starts and
lasts the simulated time (launches are serial, so kernels never overlap as
they may on a card with queued launches). Kernels are matched to launches in
order; if the profile's launches do not match the recorded kernels (threads
launching kernels concurrently), no device time is added, with a warning,
rather than attributing time to the wrong kernel.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

PREFIX = "spyre::"
#: The device column's name in key_averages() tables when none was asked for.
DEVICE = "spyre"


@dataclass
class Run:
    """One kernel call made while a profiler was on."""
    name: str  # device event: <graph>.<kernel>
    us: float  # simulated
    trace: str  # the simulator's Chrome trace of the call


_runs: list[Run] = []
_lock = threading.Lock()
#: Recorded calls kept for a profile that has not asked for them yet.
MAX_RUNS = 1_000_000


def launch_name(kernel) -> str:
    return f"{PREFIX}{kernel.graph}.{kernel.name}"


def is_launch(name: str) -> bool:
    """Whether a profiler event is a kernel launch (launch_name), not one of
    our custom ops, which the profiler also names ``spyre::<op>``."""
    return name.startswith(PREFIX) and "." in name[len(PREFIX):]


def record(kernel, stats: dict) -> None:
    from .. import simulator as sim
    install()
    us = stats["cycles"] / sim.default_arch().clock_hz * 1e6
    with _lock:
        _runs.append(Run(f"{kernel.graph}.{kernel.name}", us, stats.get("trace", "")))
        del _runs[:-MAX_RUNS]


def _claim(prof, launches: list[str]) -> list[Run]:
    """The runs of `prof`'s launches (names in time order), claimed once per
    profile: the last len(launches) runs recorded; earlier ones belong to
    profiles that will not ask (steps a schedule skipped)."""
    runs = getattr(prof, "_spyre_runs", None)
    if runs is not None:
        return runs
    with _lock:
        runs = _runs[len(_runs) - len(launches):] if launches else []
        _runs.clear()
    if [PREFIX + r.name for r in runs] != launches:
        log.warning("spyre kernels in this profile do not match the calls recorded (%d "
                    "launches, %d calls): no device time added", len(launches), len(runs))
        runs = []
    prof._spyre_runs = runs
    return runs


def _launch_names(prof) -> list[str]:
    events = sorted((e for e in prof.kineto_results.events() if is_launch(e.name())),
                    key=lambda e: e.start_ns())
    return [e.name() for e in events]


def _parse_kineto_results(original):
    def parse(self, result, *args, **kwargs):
        events = original(self, result, *args, **kwargs)
        launches = [e for e in events if is_launch(e.name)]
        if not launches:
            return events
        runs = _claim(self, [e.name for e in launches])
        if not runs:
            return events
        from torch.autograd import DeviceType
        from torch.autograd.profiler_util import FunctionEvent
        device = self.use_device or DEVICE
        next_id = max(e.id for e in events) + 1
        for launch, run in zip(launches, runs):
            launch.append_kernel(run.name, 0, run.us)
            events.append(FunctionEvent(
                id=next_id, name=run.name, trace_name=run.name, thread=0, stack=[],
                input_shapes=[],
                start_us=launch.time_range.start, end_us=launch.time_range.start + run.us,
                device_type=DeviceType.PrivateUse1, device_index=0, use_device=device))
            next_id += 1
        for e in events:  # tables show device columns only with a device
            if not e.use_device:
                e.use_device = device
        if not self.use_device:
            self.use_device = device
        events.sort(key=lambda e: [e.time_range.start, -e.time_range.end])
        return events
    return parse


def _export_chrome_trace(original):
    def export(self, path, *args, **kwargs):
        result = original(self, path, *args, **kwargs)
        if str(path).endswith(".json") and self.kineto_results is not None:
            launches = _launch_names(self)
            runs = _claim(self, launches) if launches else []
            if runs:
                with open(path) as f:
                    trace = json.load(f)
                add_card_tracks(trace, runs)
                with open(path, "w") as f:
                    json.dump(trace, f)
        return result
    return export


_ENGINES = ("control", "dma", "pt", "sfu", "dma (second)")  # the simulator's tids


def add_card_tracks(trace: dict, runs: list[Run]) -> None:
    """Adds the card to a Chrome trace: a process "Spyre card (simulated)"
    with the kernels, and a process per core whose threads are its engines,
    each kernel's instructions placed at the start of its launch."""
    from .. import simulator as sim
    events = trace.setdefault("traceEvents", [])
    launches = sorted((e for e in events if e.get("ph") == "X" and
                       is_launch(str(e.get("name", "")))), key=lambda e: e["ts"])
    if len(launches) != len(runs):
        log.warning("chrome trace: %d spyre launches, %d calls recorded: card not added",
                    len(launches), len(runs))
        return
    pids = [e["pid"] for e in events if isinstance(e.get("pid"), int)]
    card = max(pids, default=0) + 1
    cores = sim.default_arch().cores

    def meta(pid, tid, kind, name):
        events.append({"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}})

    meta(card, 0, "process_name", "Spyre card (simulated)")
    meta(card, 0, "thread_name", "kernels")
    for core in range(cores):
        meta(card + 1 + core, 0, "process_name", f"Spyre core {core}")
        for tid, engine in enumerate(_ENGINES):
            meta(card + 1 + core, tid, "thread_name", engine)
    for launch, run in zip(launches, runs):
        start = float(launch["ts"])
        events.append({"name": run.name, "cat": "spyre_kernel", "ph": "X", "ts": start,
                       "dur": run.us, "pid": card, "tid": 0, "args": {"simulated_us": run.us}})
        for e in json.loads(run.trace)["traceEvents"] if run.trace else ():
            events.append({**e, "ts": start + e["ts"], "pid": card + 1 + e["pid"],
                           "args": {**e.get("args", {}), "kernel_name": run.name}})


_installed = False


def install() -> None:
    """Wraps the profiler's parsing and export (idempotent)."""
    global _installed
    if _installed:
        return
    from torch.autograd import profiler
    profiler.profile._parse_kineto_results = _parse_kineto_results(
        profiler.profile._parse_kineto_results)
    profiler.profile.export_chrome_trace = _export_chrome_trace(
        profiler.profile.export_chrome_trace)
    _installed = True
