"""README's demo runs and produces verified, transformed IR."""

import subprocess
import sys


def test_demo_runs():
    out = subprocess.run([sys.executable, "-m", "spyre_mlir.demo"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "5 spyre.generic ops" in out.stdout
    assert "spyre.permute" in out.stdout  # before the pipeline
