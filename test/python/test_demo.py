"""README's demo: a small GPT compiled with backend="spyre" runs on the
simulator, matches eager and reports no CPU fallback."""

import subprocess
import sys


def test_demo_runs():
    out = subprocess.run([sys.executable, "-m", "spyre_mlir.demo"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "operations that fell back to the CPU: 0" in out.stdout
    assert "simulated time per forward pass" in out.stdout
