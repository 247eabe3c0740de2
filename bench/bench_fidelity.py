"""Simulated time against measured Spyre device time, row by row.

Each row of a measurement file (default: the training file,
../shared/calibration/spyre_device_train.csv) is built with
torch.compile(..., backend="spyre") on the card description with that row's
core count (a copy of the description with `cores` changed, passed as
$SPYRE_ARCH to one child process per core count), run once on the simulator,
and its simulated time (cycles / clock) compared with the measured kernel
time. Prints per row the simulated us, the measured us and their ratio, then
per family (op) and overall the median ratio and the log-RMS error
sqrt(mean(ln(sim / measured)^2)).

A measured time is that of the measuring compiler's program, so each row is
built as that program was where the file says how: a row whose `io_hbm_bytes`
(device memory its kernel's arguments occupy) is well above its inputs' and
outputs' kept its temporaries in device memory (the 1-8 core softmax rows:
134 MB against 34 MB), and is compiled without row fusion (`fuse-rows=false`),
which does the same. A row whose `tiles` is set (the softmax rows: 1 to 32)
was measured with each core's rows cut into that many tiles; it is built with
that row tile (`spyre.tile` set before the later stages) where it fits LX,
else with the compiler's own. Column `prog` says which program ran.

    python bench/bench_fidelity.py [--csv FILE] [--ops add,amax] [--rows S001,S040] [--json out.json]
"""

import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "calibration",
                                            "spyre_device_train.csv"))
FAMILY = {"add": "add", "amax": "amax", "mm": "matmul", "mmwd": "matmul",
          "softmax_row_tiling": "softmax", "transpose": "transpose"}


def parse_shape(text: str) -> dict:
    return {k.strip(): int(v) for k, v in (p.split("=") for p in text.split(","))}


def build(op: str, shape: dict):
    """The function and fp16 inputs of one row."""
    import torch
    g = torch.Generator().manual_seed(0)

    def rand(*size):
        return torch.randn(*size, generator=g).to(torch.float16)

    if op == "add":
        return (lambda x, y: x + y), (rand(shape["R"], shape["C"]), rand(shape["R"], shape["C"]))
    if op == "amax":
        return (lambda x: x.amax(-1)), (rand(shape["R"], shape["C"]),)
    if op in ("mm", "mmwd"):
        return (lambda a, b: a @ b), (rand(shape["M"], shape["K"]), rand(shape["K"], shape["N"]))
    if op == "softmax_row_tiling":
        return (lambda x: torch.softmax(x, -1)), (rand(shape["R"], shape["C"]),)
    if op == "transpose":
        return (lambda x: x.t().contiguous()), (rand(shape["R"], shape["C"]),)
    raise ValueError(f"no builder for op '{op}'")


def device_bytes(t, stick_bytes: int) -> int:
    """Bytes a tensor occupies in device memory: rows padded to whole sticks."""
    if t.dim() == 0:
        return stick_bytes
    row = t.shape[-1] * t.element_size()
    return t.numel() // t.shape[-1] * (-(-row // stick_bytes) * stick_bytes)


def spills_temporaries(row: dict, fn, inputs, stick_bytes: int) -> bool:
    """Whether the measured program kept temporaries in device memory: its
    arguments occupy over 1.5x the inputs and outputs."""
    # On meta tensors: only the output's shape counts, and an eager fp16
    # product of the large rows takes minutes on the host.
    args = [*inputs, fn(*(t.to("meta") for t in inputs))]
    return int(row["io_hbm_bytes"]) > 1.5 * sum(device_bytes(t, stick_bytes) for t in args)


def captured_kernels(fn, inputs, dump: str) -> list[str]:
    """The kernel-level IR of each kernel torch.compile makes of `fn`."""
    import glob
    import torch
    os.environ["SPYRE_DUMP_DIR"] = dump
    try:
        with torch.no_grad():
            torch.compile(fn, backend="spyre")(*inputs)
    finally:
        del os.environ["SPYRE_DUMP_DIR"]
    texts = []
    for path in sorted(glob.glob(os.path.join(dump, "*.kernel.mlir"))):
        with open(path) as f:
            texts.append(f.read())
    return texts


def run_binaries(binaries, arch) -> float:
    """Cycles of the programs run one after the other on random inputs."""
    import numpy as np
    from spyre_mlir import simulator as sim
    cycles = 0.0
    rng = np.random.default_rng(0)
    for binary in binaries:
        program = sim.Program.parse(binary)
        feed = {buf["name"]: rng.standard_normal(buf["shape"]).astype(np.float16)
                for _, buf in sim.host_buffers(program) if not sim.writes(buf)}
        cycles += sim.run(program, feed, arch).cycles
    return cycles


def run_unfused(fn, inputs, dump: str, arch) -> tuple[float, int]:
    """Each kernel of `fn` built again without row fusion: (cycles, kernels)."""
    from spyre_mlir import compiler
    texts = captured_kernels(fn, inputs, dump)
    return run_binaries([compiler.compile_kernel(t, fuse_rows=False) for t in texts], arch), \
        len(texts)


def tiled_binary(text: str, tiles: int) -> bytes | None:
    """The kernel in `text` with each core's rows of its row group cut into
    `tiles` tiles (its spyre.tile set after the tile stage, as tuning.py sets
    tuned tiles), or None when it has not exactly one row group or such a
    tile does not fit LX."""
    from spyre_mlir import compiler, ir
    from spyre_mlir.dialects import spyre
    with ir.Context():
        module = compiler.parse_module(text)
        compiler.compile_module(module, stop_after="tile")
        groups = compiler.ops_where(module, lambda op: op.name == "spyre.fused")
        if len(groups) != 1:
            return None
        group = groups[0]
        tile = list(ir.DenseI64ArrayAttr(group.attributes["spyre.tile"]))
        member = next(op for op in group.regions[0].blocks[0].operations
                      if op.operation.name == "spyre.generic")
        rows = ir.DenseI64ArrayAttr(member.operation.attributes["static_domain"])[0]
        cores = ir.IntegerAttr(group.attributes["spyre.cores"]).value
        tile[0] = -(-(-(-rows // cores)) // tiles)
        group.attributes["spyre.tile"] = ir.DenseI64ArrayAttr.get(tile)
        try:
            compiler.compile_module(module, start_before="plan-memory")
        except ir.MLIRError:
            return None  # the row tile does not fit LX
        return spyre.program_binary(module, None)


def run_tiled(fn, inputs, dump: str, arch, tiles: int) -> tuple[float, int] | None:
    """`fn`'s kernels with their row groups in `tiles` tiles per core, or
    None if one of them cannot be built so."""
    texts = captured_kernels(fn, inputs, dump)
    binaries = [tiled_binary(t, tiles) for t in texts]
    if any(b is None for b in binaries):
        return None
    return run_binaries(binaries, arch), len(texts)


def child(rows: list) -> None:
    """Runs in a process whose $SPYRE_ARCH has the rows' core count."""
    import tempfile
    import torch
    from spyre_mlir import simulator as sim
    from spyre_mlir.inductor import counters
    arch = sim.default_arch()
    out = []
    for row in rows:
        fn, inputs = build(row["op_detail"], parse_shape(row["shape"]))
        torch._dynamo.reset()
        counters.reset()
        tiles = int(row.get("tiles") or 0)
        built = None
        with tempfile.TemporaryDirectory() as dump:
            if spills_temporaries(row, fn, inputs, arch.stick_bytes):
                built = (*run_unfused(fn, inputs, dump, arch), "unfused")
            elif tiles > 0 and (tiled := run_tiled(fn, inputs, dump, arch, tiles)):
                built = (*tiled, f"tiles={tiles}")
        if built is None:
            torch._dynamo.reset()
            counters.reset()
            with torch.no_grad():
                torch.compile(fn, backend="spyre")(*inputs)
            built = (counters.simulated_cycles, counters.kernels_run, "ours")
        cycles, kernels, program = built
        out.append({"id": row["id"], "cycles": cycles, "kernels": kernels, "program": program,
                    "fallbacks": sum(counters.fallbacks.values()),
                    "cores": arch.cores, "clock_hz": arch.clock_hz})
        print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    print("RESULT " + json.dumps(out), flush=True)


def arch_with_cores(cores: int, directory: str) -> str:
    from spyre_mlir import simulator as sim
    with open(sim.arch_path()) as f:
        text = f.read()
    text, n = re.subn(r"(?m)^cores\s*=\s*\d+", f"cores = {cores}", text)
    if n != 1:
        raise SystemExit(f"cannot set the core count in {sim.arch_path()}")
    path = os.path.join(directory, f"spyre_card_{cores}.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def log_rms(ratios) -> float:
    return math.sqrt(sum(math.log(r) ** 2 for r in ratios) / len(ratios))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default=DEFAULT_CSV, help="measurements (the training file's columns)")
    parser.add_argument("--ops", help="only these op_detail values, comma separated")
    parser.add_argument("--rows", help="only these ids, comma separated")
    parser.add_argument("--json", help="also write the per-row results here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        with open(args.child) as f:
            child(json.load(f))
        return
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    every = rows
    if args.ops:
        rows = [r for r in rows if r["op_detail"] in args.ops.split(",")]
    if args.rows:
        rows = [r for r in rows if r["id"] in args.rows.split(",")]
    if not rows:
        raise SystemExit(f"no row of {args.csv} matches: --ops takes op_detail values "
                         f"({', '.join(sorted({r['op_detail'] for r in every}))}), "
                         "--rows ids such as " + ", ".join(r["id"] for r in every[:3]))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for cores in sorted({int(r["cores_used"]) for r in rows}):
            group = [r for r in rows if int(r["cores_used"]) == cores]
            spec = os.path.join(tmp, f"rows_{cores}.json")
            with open(spec, "w") as f:
                json.dump(group, f)
            env = dict(os.environ, SPYRE_ARCH=arch_with_cores(cores, tmp),
                       SPYRE_CACHE_DIR=os.path.join(tmp, "kernels"),
                       TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"),
                       TORCHINDUCTOR_FX_GRAPH_CACHE="0")
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", spec],
                                  env=env, capture_output=True, text=True)
            lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
            if proc.returncode != 0 or not lines:
                sys.stderr.write(proc.stderr[-4000:])
                raise SystemExit(f"the child for {cores} cores failed")
            for res in json.loads(lines[-1][len("RESULT "):]):
                results[res["id"]] = res

    print(f"{'id':<6}{'op':<20}{'shape':<22}{'cores':>5}{'sim us':>11}{'meas us':>11}{'ratio':>8}"
          f"{'kern':>5}{'prog':>9}")
    by_family, table = {}, []
    for r in rows:
        res = results[r["id"]]
        sim_us = res["cycles"] / res["clock_hz"] * 1e6
        meas = float(r["measured_us"])
        ratio = sim_us / meas
        fam = FAMILY.get(r["op_detail"], r["op_detail"])
        by_family.setdefault(fam, []).append(ratio)
        note = "" if not res["fallbacks"] else f"  ({res['fallbacks']} CPU fallbacks)"
        print(f"{r['id']:<6}{r['op_detail']:<20}{r['shape']:<22}{r['cores_used']:>5}{sim_us:>11.1f}"
              f"{meas:>11.1f}{ratio:>8.3f}{res['kernels']:>5}{res['program']:>9}{note}")
        table.append({"id": r["id"], "family": fam, "cores": int(r["cores_used"]),
                      "sim_us": sim_us, "measured_us": meas, "ratio": ratio,
                      "program": res["program"]})
    print()
    print(f"{'family':<12}{'rows':>5}{'median ratio':>14}{'log-RMS':>10}{'worst row':>22}")
    everything = []
    for fam, ratios in by_family.items():
        everything += ratios
        worst = max((t for t in table if t["family"] == fam), key=lambda t: abs(math.log(t["ratio"])))
        print(f"{fam:<12}{len(ratios):>5}{statistics.median(ratios):>14.3f}"
              f"{100 * log_rms(ratios):>9.1f}%{worst['id']:>12} {worst['ratio']:>8.3f}")
    worst = max(table, key=lambda t: abs(math.log(t["ratio"])))
    print(f"{'all':<12}{len(everything):>5}{statistics.median(everything):>14.3f}"
          f"{100 * log_rms(everything):>9.1f}%{worst['id']:>12} {worst['ratio']:>8.3f}")
    off = [t for t in table if max(t["ratio"], 1 / t["ratio"]) > 1.5]
    print(f"rows off by more than 1.5x: {len(off)}" +
          (" (" + ", ".join(t["id"] for t in off) + ")" if off else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
