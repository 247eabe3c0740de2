"""Simulated cycles of compiled kernels against the card's roofline bound.

For each kernel: the C++ pipeline compiles kernel-level IR, the simulator
runs it, and the cost model (spyre-annotate-cost, from the architecture
description) gives the roofline bound of the whole kernel: its compute at the
card's peak, or its arguments moved once at full device bandwidth, whichever
is larger. The ratio simulated / bound is how far the schedule is from the
roofline (1.0 is the best possible).

    python bench/bench_lowering_roofline.py [--quick]
"""

import argparse
import time

import numpy as np

from spyre_mlir import compiler, ir
from spyre_mlir import simulator as sim
from spyre_mlir.passmanager import PassManager
from spyre_mlir.testing import amap, generic, kernel, matmul, softmax


def elementwise_chain(elements: int) -> str:
    """y = tanh(x * 0.5 + b) * x over `elements` f16 values, viewed as 4096 wide."""
    n = 4096
    m = elements // n
    body = generic((m, n), [("%x", (m, n), "f16"), ("%b", (n,), "f16")], [("%y", (m, n), "f16")],
                   [amap(2, "d0, d1"), amap(2, "d1"), amap(2, "d0, d1")], """
%half = arith.constant 0.5 : f16
%s = arith.mulf %a0, %half : f16
%t = arith.addf %s, %a1 : f16
%h = math.tanh %t : f16
%r = arith.mulf %h, %a0 : f16
spyre.yield %r : f16""")
    return kernel("chain", [("x", (m, n), "f16"), ("b", (n,), "f16"), ("y", (m, n), "f16")], body)


def bound_cycles(source: str) -> float:
    with ir.Context():
        module = ir.Module.parse(source)
        PassManager.parse("builtin.module(spyre-annotate-cost)").run(module.operation)
        kernel_op = module.body.operations[0]
        cost = kernel_op.attributes["spyre.cost"]
        return ir.FloatAttr(cost["bound_cycles"]).value


def measure(name: str, source: str, inputs: dict):
    start = time.perf_counter()
    binary = compiler.compile_kernel(source)
    compiled = time.perf_counter()
    result = sim.run(binary, inputs)
    ran = time.perf_counter()
    bound = bound_cycles(source)
    print(f"{name:<28} simulated {result.cycles:>12,.0f} cycles   roofline {bound:>12,.0f}   "
          f"ratio {result.cycles / bound:6.2f}x   (compile {compiled - start:.2f} s, "
          f"simulate {ran - compiled:.2f} s, binary {len(binary) / 1e6:.1f} MB)")
    return result.cycles / bound


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="quarter-size problems")
    args = parser.parse_args()
    scale = 2 if args.quick else 1
    rng = np.random.default_rng(0)

    size = 2048 // scale
    a = rng.standard_normal((size, size)).astype(np.float16)
    b = rng.standard_normal((size, size)).astype(np.float16)
    measure(f"matmul {size}^3 f16", matmul((size, size), (size, size), (size, size), out="f16"),
            {"arg0": a, "arg1": b})

    rows = 4096 // scale
    x = rng.standard_normal((rows, 4096)).astype(np.float16)
    measure(f"softmax {rows}x4096 f16", softmax(rows, 4096), {"arg0": x})

    elements = (1 << 24) // (scale * scale)
    x = rng.standard_normal((elements // 4096, 4096)).astype(np.float16)
    bias = rng.standard_normal(4096).astype(np.float16)
    measure(f"elementwise {elements >> 20}M f16", elementwise_chain(elements),
            {"arg0": x, "arg1": bias})


if __name__ == "__main__":
    main()
