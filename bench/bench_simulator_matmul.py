"""Host time of the simulator for a 1024x1024x1024 f16 matmul on 32 cores,
as a ratio to torch.matmul in f32 on the same inputs, measured side by side
in one run (medians of interleaved repetitions).

    python bench/bench_simulator_matmul.py [--size 1024] [--repeat 5]
"""

import argparse
import statistics
import time

import numpy as np
import torch

from spyre_mlir import simulator as sim
from spyre_mlir.simulator_programs import matmul_program


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    arch = sim.default_arch()
    size = args.size
    program = matmul_program(arch, size, size, size, (4, 8))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float16)
    b = rng.standard_normal((size, size)).astype(np.float16)
    ta, tb = torch.from_numpy(a.astype(np.float32)), torch.from_numpy(b.astype(np.float32))

    def simulate():
        return sim.run(program, {"a": a, "b": b})

    def reference():
        return torch.matmul(ta, tb)

    simulate(), reference()  # warm up
    sim_times, torch_times = [], []
    for _ in range(args.repeat):
        for fn, times in ((simulate, sim_times), (reference, torch_times)):
            # OpenBLAS threads spin for a while after the simulator's last
            # matmul; let them park so that they do not slow torch down.
            time.sleep(0.3)
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    result = simulate()
    t_sim, t_torch = statistics.median(sim_times), statistics.median(torch_times)
    cycles = result.cycles
    flops = 2 * size ** 3
    print(f"matmul {size}^3, f16 inputs, 32 cores; torch threads: {torch.get_num_threads()}")
    print(f"simulator host time   {t_sim * 1e3:9.1f} ms")
    print(f"torch.matmul f32      {t_torch * 1e3:9.1f} ms")
    print(f"ratio simulator/torch {t_sim / t_torch:9.2f}x   (target <= 4x)")
    print(f"simulated time        {cycles:9.0f} cycles = {cycles / arch.clock_hz * 1e6:.1f} us, "
          f"{flops / (cycles / arch.clock_hz) / 1e12:.1f} TFLOP/s "
          f"({100 * flops / (cycles / arch.clock_hz) / arch.peak_flops:.1f}% of peak)")


if __name__ == "__main__":
    main()
