"""The spyre-mlir demo: a small GPT compiled with torch.compile(backend="spyre"),
run on the simulated card, checked against eager PyTorch.

Every kernel of the compiled graph is exported from Inductor's scheduled
graph to the Spyre dialect, compiled by the C++ pipeline and run by the
simulator; the counters say how many kernels ran there, whether anything
fell back to the CPU, and how long the card would have taken.

Run with ``python -m spyre_mlir.demo``.
"""

import time

import torch

from spyre_mlir import models
from spyre_mlir import simulator as sim
from spyre_mlir.inductor import counters


def main() -> None:
    torch.manual_seed(0)
    model = models.GPT(vocab=512, d_model=128, n_heads=4, n_layers=2, max_len=64).eval()
    ids = torch.randint(0, 512, (2, 32))
    with torch.no_grad():
        expected = model(ids)
        start = time.perf_counter()
        compiled = torch.compile(model, backend="spyre")
        logits = compiled(ids)
        first = time.perf_counter() - start
        counters.reset()
        start = time.perf_counter()
        logits = compiled(ids)
        second = time.perf_counter() - start
    error = (logits - expected).abs().max().item()
    scale = expected.abs().max().item()
    arch = sim.default_arch()
    cycles = counters.simulated_cycles
    print(f"GPT ({sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters), "
          f"batch 2 x 32 tokens, compiled with torch.compile(backend='spyre')")
    print(f"  kernels run on the simulated card: {counters.kernels_run}")
    print(f"  operations that fell back to the CPU: {sum(counters.fallbacks.values())}"
          f" {dict(counters.fallbacks) or ''}")
    print(f"  simulated time per forward pass: {cycles:,.0f} cycles = "
          f"{cycles / arch.clock_hz * 1e6:.1f} us at {arch.clock_hz / 1e9:g} GHz")
    print(f"  max |logits - eager| = {error:.2e} (logits up to {scale:.2f}; the card computes "
          f"matrix products from DLFloat16 inputs)")
    print(f"  host time: first call (compile + run) {first:.1f} s, second call {second:.2f} s")
    if error > 2e-2 * max(scale, 1.0):
        raise SystemExit("the compiled model does not match eager")


if __name__ == "__main__":
    main()
