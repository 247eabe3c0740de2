"""spyre-mlir: an MLIR compiler for the IBM Spyre accelerator.

``spyre_mlir.ir``, ``spyre_mlir.passmanager`` and ``spyre_mlir.dialects`` are
MLIR's own Python bindings, packaged here with the Spyre dialect loaded into
every ``Context``.
"""

import os as _os

__version__ = "0.1.0"


def tools_dir() -> str:
    """Directory of the installed command-line tools (spyre-opt)."""
    return _os.path.join(_os.path.dirname(__file__), "bin")
