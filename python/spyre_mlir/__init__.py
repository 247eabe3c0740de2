"""spyre-mlir: an MLIR compiler for the IBM Spyre accelerator.

``spyre_mlir.ir``, ``spyre_mlir.passmanager`` and ``spyre_mlir.dialects`` are
MLIR's own Python bindings, packaged here with the Spyre dialect loaded into
every ``Context``.
"""

import os as _os

__version__ = "0.1.0"


def _pick_openblas_kernels() -> None:
    """Debian's OpenBLAS 0.3.21 does not recognise some recent x86 CPUs and
    falls back to its slowest (Prescott) kernels; name the right family
    before the library loads, unless the user already did."""
    if "OPENBLAS_CORETYPE" in _os.environ:
        return
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return
    if "avx512f" in flags:
        _os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif "avx2" in flags and "fma" in flags:
        _os.environ["OPENBLAS_CORETYPE"] = "Haswell"


# Before any native module of the package can load OpenBLAS.
_pick_openblas_kernels()


def tools_dir() -> str:
    """Directory of the installed command-line tools (spyre-opt)."""
    return _os.path.join(_os.path.dirname(__file__), "bin")
