"""The compiler does not link the simulator's heavy dependencies.

The passes, spyre-opt and spyre-translate write programs through the ISA
library (lib/Isa) only; OpenBLAS and OpenMP belong to the simulator
(lib/Simulator). A link of the compiler that pulls the simulator in again
shows up here as a shared-library dependency.
"""

import glob
import os
import shutil
import subprocess

import pytest

import spyre_mlir

PACKAGE = os.path.dirname(spyre_mlir.__file__)
FORBIDDEN = ("libopenblas", "libgomp", "libomp", "libiomp")


def _compiler_binaries():
    yield os.path.join(PACKAGE, "bin", "spyre-opt")
    yield os.path.join(PACKAGE, "bin", "spyre-translate")
    # The passes and the C API, and the extensions that embed them.
    yield from glob.glob(os.path.join(PACKAGE, "_mlir_libs", "libSpyrePythonCAPI*.so*"))
    yield from glob.glob(os.path.join(PACKAGE, "_mlir_libs", "_spyre*.so"))
    yield from glob.glob(os.path.join(PACKAGE, "_mlir_libs", "_site_initialize_*.so"))


@pytest.mark.skipif(shutil.which("ldd") is None, reason="ldd is not installed")
@pytest.mark.parametrize("binary", sorted(_compiler_binaries()), ids=os.path.basename)
def test_compiler_links_neither_blas_nor_openmp(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    assert "not found" not in out, out
    linked = [line.split()[0] for line in out.splitlines() if line.strip()]
    assert not [lib for lib in linked if lib.startswith(FORBIDDEN)], out


@pytest.mark.skipif(shutil.which("ldd") is None, reason="ldd is not installed")
def test_the_check_sees_the_simulator():
    # The simulator module does link OpenBLAS: the check above would see it.
    (module,) = glob.glob(os.path.join(PACKAGE, "_simulator*.so"))
    out = subprocess.run(["ldd", module], capture_output=True, text=True, check=True).stdout
    assert "libopenblas" in out, out
