"""Console entry points: spyre-opt and spyre-translate (native MLIR drivers) and spyre-run."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import tools_dir


def _exec(name: str) -> None:
    path = os.path.join(tools_dir(), name)
    os.execv(path, [path, *sys.argv[1:]])


def spyre_opt() -> None:
    _exec("spyre-opt")


def spyre_translate() -> None:
    _exec("spyre-translate")


def _report(stats: dict, arch) -> str:
    cycles = stats["cycles"]
    lines = [f"simulated: {cycles:.0f} cycles = {cycles / arch.clock_hz * 1e6:.3f} us "
             f"at {arch.clock_hz / 1e9:g} GHz",
             "core   cycles      dma%   pt%    sfu%   dev-read   dev-write  MACs          vector-ops"]
    for core, (c, done) in enumerate(zip(stats["cores"], stats["core_cycles"])):
        if not any(e["instructions"] for e in c["engines"].values()):
            continue
        util = [100 * c["engines"][e]["busy_cycles"] / cycles if cycles else 0.0
                for e in ("dma", "pt", "sfu")]
        lines.append(f"{core:<6} {done:<11.0f} {util[0]:<6.1f} {util[1]:<6.1f} {util[2]:<6.1f} "
                     f"{c['device_read_bytes']:<10} {c['device_write_bytes']:<10} "
                     f"{c['macs']:<13} {c['vector_ops']}")
    return "\n".join(lines)


def spyre_run(argv: list[str] | None = None) -> int:
    """Runs a program binary on the simulator with .npy inputs."""
    import numpy as np

    from . import simulator as sim

    parser = argparse.ArgumentParser(prog="spyre-run", description=spyre_run.__doc__)
    parser.add_argument("program", help="program binary (.spyre)")
    parser.add_argument("-i", "--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input buffer's data; repeat for each input")
    parser.add_argument("-o", "--output-dir", default=".",
                        help="where NAME.npy is written for each output (default: .)")
    parser.add_argument("--arch", help="architecture description (default: the installed card)")
    parser.add_argument("--trace", metavar="FILE.json",
                        help="write a Chrome trace-event file (opens in Perfetto)")
    parser.add_argument("--json", action="store_true", help="print the counters as JSON")
    args = parser.parse_args(argv)

    def fail(message: str) -> int:
        print(f"spyre-run: error: {message}", file=sys.stderr)
        return 1

    inputs = {}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep:
            parser.error(f"--input takes NAME=FILE.npy, got {item!r}")
        try:
            inputs[name] = np.load(path, allow_pickle=False)
        except MemoryError:
            return fail(f"out of memory reading input '{name}' from {path}")
        except Exception as e:  # numpy raises many types for a bad file
            return fail(f"cannot read input '{name}' from {path}: {e or type(e).__name__}")
        if not isinstance(inputs[name], np.ndarray):
            return fail(f"cannot read input '{name}' from {path}: not a single array (.npy)")
    # Where results go is checked before simulating, which may take long.
    try:
        os.makedirs(args.output_dir, exist_ok=True)
        if not os.access(args.output_dir, os.W_OK | os.X_OK):
            return fail(f"output directory {args.output_dir} is not writable")
        trace = open(args.trace, "w") if args.trace else None
    except OSError as e:
        return fail(str(e))
    try:
        arch = sim.Arch.load(args.arch) if args.arch else sim.default_arch()
        with open(args.program, "rb") as f:
            program = sim.Program.parse(f.read())
        result = sim.run(program, inputs, arch=arch, trace=trace is not None)
        for name, value in result.outputs.items():
            np.save(os.path.join(args.output_dir, f"{name}.npy"), value)
        if trace is not None:
            with trace:
                trace.write(result.stats.pop("trace"))
    except MemoryError:
        return fail("out of memory (the program's buffers do not fit the host)")
    except (OSError, ValueError, RuntimeError) as e:
        return fail(str(e))
    if args.json:
        print(json.dumps(result.stats, indent=1, default=str))
    else:
        print(_report(result.stats, arch))
    return 0


def spyre_run_main() -> None:
    sys.exit(spyre_run())
