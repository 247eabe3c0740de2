"""First-call time of a GPT-2 style block compiled with backend="spyre", as a
ratio to backend="inductor" (CPU) in the same run, cold (empty caches) and
warm (a second process with the caches the first one filled).

Each measurement runs in a fresh process with its own cache directories, so
the two backends never share Inductor's caches.

    python bench/bench_compile_time.py [--repeat 2]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
import torch
from spyre_mlir import models
torch.manual_seed(0)
model = models.GPTBlock().eval()
x = torch.randn(2, 16, 128)
with torch.no_grad():
    start = time.perf_counter()
    torch.compile(model, backend=sys.argv[1])(x)
    print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def first_call(backend: str, caches: str) -> float:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, "inductor"),
               SPYRE_CACHE_DIR=os.path.join(caches, "spyre"))
    out = subprocess.run([sys.executable, "-c", CHILD, backend], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["seconds"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    times = {(b, w): [] for b in ("inductor", "spyre") for w in ("cold", "warm")}
    for _ in range(args.repeat):
        for backend in ("inductor", "spyre"):  # interleaved: the machine is noisy
            with tempfile.TemporaryDirectory() as caches:
                times[backend, "cold"].append(first_call(backend, caches))
                times[backend, "warm"].append(first_call(backend, caches))
    med = {k: statistics.median(v) for k, v in times.items()}
    for w in ("cold", "warm"):
        print(f"{w:4} first call: spyre {med['spyre', w]:6.2f} s   inductor (CPU) "
              f"{med['inductor', w]:6.2f} s   ratio {med['spyre', w] / med['inductor', w]:.2f}x")


if __name__ == "__main__":
    main()
