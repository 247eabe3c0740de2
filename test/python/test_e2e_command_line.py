"""The command-line path without torch or Python compile APIs:
kernel-level .mlir -> spyre-opt --spyre-compile -> spyre-translate -> spyre-run
with .npy inputs."""

import subprocess
import sys

import numpy as np

from kernels import rounded, softmax

RUN = [sys.executable, "-c", "from spyre_mlir.tools import spyre_run_main; spyre_run_main()"]


def test_kernel_file_to_binary_to_spyre_run(spyre_opt, spyre_translate, tmp_path):
    (tmp_path / "softmax.mlir").write_text(softmax(48, 1000))
    hw = subprocess.run([spyre_opt, str(tmp_path / "softmax.mlir"), "--spyre-compile"],
                        check=True, capture_output=True, text=True).stdout
    (tmp_path / "softmax.hw.mlir").write_text(hw)
    subprocess.run([spyre_translate, "--spyre-hw-to-binary", str(tmp_path / "softmax.hw.mlir"),
                    "-o", str(tmp_path / "softmax.spyre")], check=True)
    x = np.random.default_rng(0).standard_normal((48, 1000)).astype(np.float16)
    np.save(tmp_path / "x.npy", x)
    out = subprocess.run(RUN + [str(tmp_path / "softmax.spyre"), "-i", f"arg0={tmp_path / 'x.npy'}",
                                "-o", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "simulated:" in out.stdout
    y = np.load(tmp_path / "arg1.npy")
    r = rounded(x).astype(np.float64)
    e = np.exp(r - r.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=2 ** -7, atol=1e-4)


def test_a_kernel_the_card_cannot_run_is_a_diagnostic(spyre_opt, tmp_path):
    source = tmp_path / "bad.mlir"
    source.write_text(softmax(4, 8).replace("math.exp", "math.fpowi_unknown"))
    out = subprocess.run([spyre_opt, str(source), "--spyre-compile"], capture_output=True,
                         text=True)
    assert out.returncode != 0 and out.returncode < 128  # a diagnostic, not a signal
    source.write_text(softmax(4, 8).replace("arith.divf", "arith.remf").replace(
        "math.exp %d", "math.cbrt %d"))
    out = subprocess.run([spyre_opt, str(source), "--spyre-compile"], capture_output=True,
                         text=True)
    assert out.returncode == 1
    assert "body op 'math.cbrt' has no vector-unit instruction" in out.stderr
