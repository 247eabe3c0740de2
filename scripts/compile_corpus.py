"""Compiles a corpus of kernel-level IR files (the kernels a test run
produced: $SPYRE_KERNEL_CORPUS) with spyre-opt, and fails on a crash or a
sanitizer report. A kernel the pipeline refuses with a diagnostic is fine:
what is checked is that the compiler neither crashes nor touches memory it
must not, on kernels the lit tests do not have.

    python scripts/compile_corpus.py build/kernel-corpus --tools build/sanitize-opt/bin --sample 4
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import subprocess
import sys
import time

# What a sanitizer prints; a refused kernel prints an MLIR diagnostic and exits 1.
REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def compile_one(spyre_opt: str, path: str, timeout: float) -> tuple[str, str]:
    """('ok' | 'refused' | 'failed', detail) for one kernel."""
    try:
        done = subprocess.run([spyre_opt, "--spyre-compile", path, "-o", os.devnull],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "failed", f"no result after {timeout:.0f} s"
    report = next((line for line in done.stderr.splitlines()
                   if any(r in line for r in REPORTS)), None)
    if report or done.returncode not in (0, 1):
        tail = "\n".join(done.stderr.splitlines()[:12])
        return "failed", f"exit {done.returncode}: {report or ''}\n{tail}"
    return ("ok", "") if done.returncode == 0 else ("refused", "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", help="a directory of <hash>.mlir files")
    parser.add_argument("--tools", required=True, help="the directory holding spyre-opt")
    parser.add_argument("--sample", type=int, default=1,
                        help="compile one kernel in N, chosen by the hash in its name")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per kernel")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if not os.path.isdir(args.corpus):
        print(f"compile_corpus: no corpus at {args.corpus} (scripts/test.sh collects one): "
              "nothing compiled")
        return 0
    names = sorted(n for n in os.listdir(args.corpus) if n.endswith(".mlir"))
    chosen = [n for n in names if int(n[:8], 16) % args.sample == 0] if args.sample > 1 \
        else names
    spyre_opt = os.path.join(args.tools, "spyre-opt")
    start = time.perf_counter()
    counts = {"ok": 0, "refused": 0, "failed": 0}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda n: (n, compile_one(spyre_opt, os.path.join(args.corpus, n),
                                                     args.timeout)), chosen)
        for name, (outcome, detail) in results:
            counts[outcome] += 1
            if outcome == "failed":
                print(f"FAILED {os.path.join(args.corpus, name)}: {detail}", file=sys.stderr)
    print(f"compile_corpus: {len(chosen)} of {len(names)} kernels through {spyre_opt} in "
          f"{time.perf_counter() - start:.0f} s: {counts['ok']} compiled, "
          f"{counts['refused']} refused with a diagnostic, {counts['failed']} failed")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
