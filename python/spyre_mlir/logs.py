"""TORCH_LOGS="spyre" / "+spyre": the backend's decisions through PyTorch's
logging (kernels formed, groups fused, fallbacks with their reasons, kernel
cache hits and compiles; INFO gives progress and summaries, DEBUG each
decision).

torch parses TORCH_LOGS while it is imported and rejects names it does not
know, so the name must be registered before that: our `torch.backends`
entry point (autoload.py), which torch calls during its import (device
backend autoload) just before it parses the variable, calls `register`. It
imports nothing of ours but this module, so that importing torch stays cheap.
"""

from __future__ import annotations

import logging

#: The backend's modules log under this logger (logging.getLogger(__name__));
#: not the whole package: MLIR's bindings (spyre_mlir._mlir_libs) log their
#: own start-up at DEBUG.
ROOT = "spyre_mlir.inductor"
SETTING = "spyre"


def register() -> None:
    """Registers TORCH_LOGS="spyre" (idempotent). Never raises: a failure
    here would make `import torch` fail for every user of the environment."""
    try:
        from torch._logging._internal import log_registry, register_log
        if not log_registry.is_log(SETTING):
            register_log(SETTING, ROOT)
    except Exception as e:  # noqa: BLE001
        logging.getLogger(ROOT).debug("TORCH_LOGS=spyre not registered: %s", e)
