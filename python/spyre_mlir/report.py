"""Where the time goes: a roofline report of the spyre kernels that ran.

    python -m spyre_mlir.report [--model demo|gpt2-block] [--out DIR]

compiles and runs a model (the demo GPT by default) and writes, into DIR,
`kernels.txt` (a table per kernel, sorted by time lost against the roofline),
`roofline.png` (matplotlib, if installed) and `index.html` with both. From
Python, on a run you made yourself:

    counters.reset(); compiled(x)
    spyre_mlir.report.write("out")          # or kernel_rows() for the rows

The roofline bound of a kernel is the compiler's cost model
(spyre-annotate-cost, from the card description also used by the
simulator): the larger of its compute at the card's peak (matrix unit, or the
SFU at its rate for the kernel's ops and types) and its arguments moved once
at full device bandwidth. Its floor adds the bus's read/write turnaround on
the lesser direction of those bytes, which the card charges a kernel whatever
its schedule: no program is faster. Efficiency = floor / simulated; time lost
= simulated - floor, what a better schedule of the same kernel could gain
(below the floor only less traffic helps: fusion). The share of the kernel's
time its busiest core kept the matrix unit, the vector unit and the DMA
engine busy says which of them paces it.
"""

from __future__ import annotations

import argparse
import html
import os
from dataclasses import dataclass

from . import simulator as sim


@dataclass
class Row:
    name: str  # <graph>.<kernel>
    ops: list[str]
    sources: list[str]
    calls: int
    flops: float  # all calls
    vector_ops: float
    device_bytes: float
    simulated_us: float
    bound_us: float | None  # None: the cost model has no estimate
    bound_by: str
    floor_us: float | None = None  # the bound with the bus's turnaround
    #: engine ("pt", "sfu", "dma") -> share of the simulated time the busiest
    #: core kept it busy
    busy: dict[str, float] | None = None

    @property
    def efficiency(self) -> float | None:
        return self.floor_us / self.simulated_us if self.floor_us and self.simulated_us else None

    @property
    def lost_us(self) -> float:
        return self.simulated_us - (self.floor_us or 0.0)


def kernel_cost(mlir: str) -> dict | None:
    """The cost model's estimate of the kernel in `mlir` (spyre.cost of its
    kernel op: flops, vector_ops, device_bytes, written_bytes and
    compute/memory/bound/floor cycles),
    None if it has none (an op without an estimate)."""
    from . import ir
    from .passmanager import PassManager
    with ir.Context():
        module = ir.Module.parse(mlir)
        PassManager.parse("builtin.module(spyre-annotate-cost)").run(module.operation)
        for op in module.body.operations:
            if "spyre.cost" in op.attributes:
                cost = op.attributes["spyre.cost"]
                keys = ("flops", "vector_ops", "device_bytes", "written_bytes",
                        "compute_cycles", "memory_cycles", "bound_cycles", "floor_cycles")
                return {k: (ir.IntegerAttr(cost[k]).value if k in keys[:4] else
                            ir.FloatAttr(cost[k]).value) for k in keys}
    return None


def _bound_by(cost: dict) -> str:
    if cost["memory_cycles"] >= cost["compute_cycles"]:
        return "device memory"
    units = [u for u, n in (("PT", cost["flops"]), ("SFU", cost["vector_ops"])) if n]
    return "compute (" + "+".join(units or ["none"]) + ")"


def kernel_rows(counters=None) -> list[Row]:
    """One row per kernel that ran since counters.reset(), sorted by time
    lost (the kernels to look at first come first)."""
    if counters is None:
        from .inductor import counters
    clock = sim.default_arch().clock_hz
    busy = getattr(counters, "busy_per_kernel", {})
    rows = []
    for kernel, (calls, cycles) in counters.per_kernel.items():
        if not hasattr(kernel, "_cost"):
            kernel._cost = kernel_cost(kernel.mlir)
        cost = kernel._cost
        rows.append(Row(
            f"{kernel.graph}.{kernel.name}", kernel.ops, kernel.sources, calls,
            calls * cost["flops"] if cost else 0.0,
            calls * cost["vector_ops"] if cost else 0.0,
            calls * cost["device_bytes"] if cost else 0.0,
            cycles / clock * 1e6,
            calls * cost["bound_cycles"] / clock * 1e6 if cost else None,
            _bound_by(cost) if cost else "no estimate",
            calls * cost["floor_cycles"] / clock * 1e6 if cost else None,
            {e: b / cycles for e, b in busy[kernel].items()} if kernel in busy and cycles
            else None))
    rows.sort(key=lambda r: -r.lost_us)
    return rows


COLUMNS = ("kernel", "calls", "aten ops", "source", "GFLOP", "device MB", "simulated us",
           "bound us", "floor us", "efficiency", "lost us", "bound by", "busy PT/SFU/DMA")


def _busy(r: Row) -> str:
    if not r.busy:
        return "-"
    return "/".join(f"{r.busy.get(e, 0.0) * 100:.0f}" for e in ("pt", "sfu", "dma")) + "%"


def _totals(rows: list[Row]) -> tuple[float, float, float]:
    """Simulated, bound and floor us of all the rows."""
    return (sum(r.simulated_us for r in rows), sum(r.bound_us or 0.0 for r in rows),
            sum(r.floor_us or 0.0 for r in rows))


def _cells(r: Row) -> list[str]:
    return [r.name, str(r.calls), ", ".join(o.removeprefix("aten.") for o in r.ops),
            ", ".join(r.sources), f"{r.flops / 1e9:.4f}", f"{r.device_bytes / 1e6:.3f}",
            f"{r.simulated_us:.2f}", "-" if r.bound_us is None else f"{r.bound_us:.2f}",
            "-" if r.floor_us is None else f"{r.floor_us:.2f}",
            "-" if r.efficiency is None else f"{r.efficiency:.0%}", f"{r.lost_us:.2f}",
            r.bound_by, _busy(r)]


def table(rows: list[Row], width: int = 48, limit: int | None = None) -> str:
    """The rows as a text table (the first `limit`), with a total line of all."""
    shown = rows if limit is None else rows[:limit]
    cells = [[c if len(c) <= width else c[:width - 3] + "..." for c in _cells(r)] for r in shown]
    if len(shown) < len(rows):
        cells.append([f"({len(rows) - len(shown)} more)"] + [""] * (len(COLUMNS) - 1))
    total_sim, total_bound, total_floor = _totals(rows)
    cells.append(["total", str(sum(r.calls for r in rows)), "", "",
                  f"{sum(r.flops for r in rows) / 1e9:.4f}",
                  f"{sum(r.device_bytes for r in rows) / 1e6:.3f}", f"{total_sim:.2f}",
                  f"{total_bound:.2f}", f"{total_floor:.2f}",
                  f"{total_floor / total_sim:.0%}" if total_sim else "-",
                  f"{total_sim - total_floor:.2f}", "", ""])
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(COLUMNS)]
    line = lambda cs: "  ".join(c.ljust(w) for c, w in zip(cs, widths)).rstrip()  # noqa: E731
    return "\n".join([line(COLUMNS), line(["-" * w for w in widths])] +
                     [line(c) for c in cells]) + "\n"


def plot(rows: list[Row], path: str) -> bool:
    """The roofline PNG: FLOP/s against FLOP/byte for kernels with matrix
    work under the card's roof, and every kernel's simulated time against its
    bound. False if matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    arch = sim.default_arch()
    peak, bandwidth = arch.peak_flops, arch.bandwidth_bytes_per_s
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    matrix = [r for r in rows if r.flops and r.device_bytes and r.simulated_us]
    ridge = peak / bandwidth
    xs = [r.flops / r.device_bytes for r in matrix] or [ridge]
    lo, hi = min(min(xs), ridge) / 4, max(max(xs), ridge) * 4
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    left.loglog(grid, [min(peak, x * bandwidth) for x in grid], "k-",
                label=f"roof: {peak / 1e12:.1f} TFLOP/s, {bandwidth / 1e9:.0f} GB/s")
    for r in matrix:
        left.loglog(r.flops / r.device_bytes, r.flops / (r.simulated_us * 1e-6), "o",
                    color="tab:blue")
        left.annotate(r.name.split(".")[-1].removeprefix("spyre_kernel_"),
                      (r.flops / r.device_bytes, r.flops / (r.simulated_us * 1e-6)), fontsize=7)
    left.set(xlabel="FLOP / device byte", ylabel="FLOP/s (simulated)",
             title="kernels with matrix work")
    left.legend(fontsize=8)
    colors = {"device memory": "tab:orange"}
    bounded = [r for r in rows if r.floor_us and r.simulated_us]
    for r in bounded:
        right.loglog(r.floor_us, r.simulated_us, "o",
                     color=colors.get(r.bound_by, "tab:green" if "SFU" in r.bound_by and
                                      "PT" not in r.bound_by else "tab:blue"))
    if bounded:
        ends = [min(r.floor_us for r in bounded) / 2, max(r.simulated_us for r in bounded) * 2]
        right.loglog(ends, ends, "k-", label="at the floor")
    for label, color in (("memory bound", "tab:orange"), ("SFU bound", "tab:green"),
                         ("PT bound", "tab:blue")):
        right.plot([], [], "o", color=color, label=label)
    right.set(xlabel="floor: roofline with the bus's turnaround (us)", ylabel="simulated (us)",
              title="every kernel: distance above the line is time lost")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write(out: str, counters=None, title: str = "spyre kernels") -> list[Row]:
    """Writes kernels.txt, roofline.png (if matplotlib is installed) and
    index.html into `out`; returns the rows."""
    rows = kernel_rows(counters)
    os.makedirs(out, exist_ok=True)
    text = table(rows)
    with open(os.path.join(out, "kernels.txt"), "w") as f:
        f.write(text)
    png = plot(rows, os.path.join(out, "roofline.png"))
    head = "".join(f"<th>{html.escape(h)}</th>" for h in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(r)) + "</tr>"
                   for r in rows)
    total, bound, floor = _totals(rows)
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(f"""<!doctype html><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif}}td,th{{padding:2px 8px;border-bottom:1px solid #ddd;
font-size:13px;text-align:left}}</style>
<h1>{html.escape(title)}</h1>
<p>{len(rows)} kernels, {total:.2f} us simulated, roofline bound {bound:.2f} us, floor
{floor:.2f} us ({floor / total if total else 0:.0%} efficiency), sorted by time lost.</p>
{'<img src="roofline.png" alt="roofline">' if png else '<p>(matplotlib not installed)</p>'}
<table><tr>{head}</tr>{body}</table>
""")
    return rows


def _model(name: str):
    import torch
    torch.manual_seed(0)
    if name == "demo":
        from . import models
        model = models.GPT(vocab=512, d_model=128, n_heads=4, n_layers=2, max_len=64).eval()
        return model, (torch.randint(0, 512, (2, 32)),)
    if name == "gpt2-block":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import transformers
        from transformers.models.gpt2.modeling_gpt2 import GPT2Block
        config = transformers.GPT2Config(n_embd=128, n_head=4, n_positions=64,
                                         attn_implementation="sdpa")
        return GPT2Block(config).eval(), (torch.randn(2, 32, 128),)
    raise ValueError(f"unknown model {name!r}")


def run_model(name: str):
    """Compiles `name` and runs it twice; the counters hold the second run."""
    import torch

    from .inductor import counters
    model, args = _model(name)
    compiled = torch.compile(model, backend="spyre")
    with torch.no_grad():
        compiled(*args)
        counters.reset()
        compiled(*args)
    return counters


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="demo", choices=["demo", "gpt2-block"])
    parser.add_argument("--out", default="spyre_report")
    args = parser.parse_args(argv)
    counters = run_model(args.model)
    rows = write(args.out, counters, title=f"spyre kernels: {args.model}")
    print(table(rows, limit=10), end="")
    print(f"wrote {args.out}/kernels.txt, roofline.png, index.html")


if __name__ == "__main__":
    main()
