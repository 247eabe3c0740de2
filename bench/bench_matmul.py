"""Matrix products of issue 13 against the calibrated card's roofline.

Each product is compiled with torch.compile(fn, backend="spyre") in fp16, run
once on the simulator, and its simulated time (the counters' cycles / clock)
compared with the roofline bound of the same product: the cost model's
(spyre-annotate-cost, from the card description) max(FLOPs / peak,
compulsory bytes / bandwidth) of a kernel holding the product, with the
bias as an extra argument where there is one. `moved/compulsory` is the
bytes the kernels moved over the device-memory bus (a broadcast operand
read once for all its cores) over the bytes of reading each operand and
writing the result once. Where IBM published a device time for the shape
it is printed too.

    python bench/bench_matmul.py [--quick] [--only NAME,...] [--tune]

--quick divides every dimension above 64 by 4 (CI-sized shapes; no published
times apply). --tune also compiles each product in tuning mode
(spyre_mlir.tuning: the fastest of the estimate's best tiles on the
simulator, recorded per shape) and prints its time and ratio beside the
default compile's.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_lowering_roofline import bound_cycles  # noqa: E402

# (name, M, K, N, what, published device us (source) or None)
SHAPES = [
    ("2048^3", 2048, 2048, 2048, "mm", "388 torch-spyre"),
    ("granite-mlp", 512, 4096, 12800, "mm", "959 sendnn, 1016 torch-spyre"),
    ("prefill", 512, 4096, 4096, "mm", None),
    ("gpt2-mlp-up", 4096, 768, 3072, "mm", None),
    ("decode", 1, 4096, 4096, "mm", None),
    ("decode-64", 64, 4096, 12800, "mm", None),
    ("decode-16", 16, 4096, 11008, "mm", None),
    ("linear+bias+gelu", 512, 4096, 4096, "linear_gelu", None),
    ("x@W", 512, 4096, 4096, "mm", None),
    ("x@W.T", 512, 4096, 4096, "mm_t", None),
]


def roofline(m: int, k: int, n: int, what: str) -> float:
    from spyre_mlir.testing import buf, kernel
    rhs = (n, k) if what == "mm_t" else (k, n)
    flags = "transpose_rhs" if what == "mm_t" else ""
    args = [("a", (m, k), "f16"), ("b", rhs, "f16"), ("c", (m, n), "f16")]
    if what == "linear_gelu":
        args.append(("bias", (n,), "f16"))
    body = (f"  spyre.matmul {flags} ins(%a, %b : {buf((m, k), 'f16')}, {buf(rhs, 'f16')}) "
            f"outs(%c : {buf((m, n), 'f16')})\n")
    return bound_cycles(kernel("mm", args, body))


def run(m: int, k: int, n: int, what: str, tune: bool = False):
    """Simulated cycles, kernels run and CPU fallbacks of one product."""
    import torch
    from spyre_mlir import tuning
    from spyre_mlir.inductor import counters
    tuning.force(tune)
    g = torch.Generator().manual_seed(0)

    def rand(*size):
        return (torch.randn(*size, generator=g) / size[-1] ** 0.25).to(torch.float16)

    x = rand(m, k)
    if what == "mm":
        fn, inputs = (lambda a, b: a @ b), (x, rand(k, n))
    elif what == "mm_t":
        fn, inputs = (lambda a, w: a @ w.T), (x, rand(n, k))
    else:
        fn = lambda a, w, b: torch.nn.functional.gelu(torch.nn.functional.linear(a, w, b))
        inputs = (x, rand(n, k), rand(n))
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        torch.compile(fn, backend="spyre")(*inputs)
    moved = counters.bus_read_bytes + counters.bus_write_bytes
    return (counters.simulated_cycles, counters.kernels_run, sum(counters.fallbacks.values()),
            moved)


def compulsory_bytes(m: int, k: int, n: int, what: str) -> int:
    """Each operand read once and the result written once (f16)."""
    return 2 * (m * k + k * n + m * n + (n if what == "linear_gelu" else 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="dimensions above 64 divided by 4")
    parser.add_argument("--only", help="only these shape names, comma separated")
    parser.add_argument("--tune", action="store_true",
                        help="also the tuned compile's time and ratio")
    args = parser.parse_args()
    os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
    from spyre_mlir import simulator as sim
    clock = sim.default_arch().clock_hz
    shapes = SHAPES
    if args.only:
        shapes = [s for s in SHAPES if s[0] in args.only.split(",")]
    tuned_header = f"{'tuned us':>10}{'ratio':>8}" if args.tune else ""
    print(f"{'product':<18}{'M x K x N':>20}{'sim us':>10}{'roofline us':>13}{'ratio':>8}"
          f"{tuned_header}{'moved/compulsory':>18}{'kernels':>9}  published device us")
    for name, m, k, n, what, published in shapes:
        if args.quick:
            m, k, n = (d // 4 if d > 64 else d for d in (m, k, n))
            published = None
        start = time.perf_counter()
        cycles, kernels, fallbacks, moved = run(m, k, n, what)
        bound = roofline(m, k, n, what)
        note = f"  ({fallbacks} CPU fallbacks)" if fallbacks else ""
        tuned = ""
        if args.tune:
            tuned_cycles = run(m, k, n, what, tune=True)[0]
            tuned = f"{tuned_cycles / clock * 1e6:>10.1f}{tuned_cycles / bound:>8.2f}"
        print(f"{name:<18}{f'{m} x {k} x {n}':>20}{cycles / clock * 1e6:>10.1f}"
              f"{bound / clock * 1e6:>13.1f}{cycles / bound:>8.2f}{tuned}"
              f"{moved / compulsory_bytes(m, k, n, what):>18.3f}{kernels:>9}  "
              f"{published or '-'}{note}   [{time.perf_counter() - start:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
