"""Our `torch.backends` entry point, which torch calls while it is imported
(device backend autoload): registers what must exist before user code runs,
TORCH_LOGS="spyre" (logs.py) and the "spyre" torch.distributed backend
(distributed/__init__.py). Imports nothing heavier, so that importing torch
stays cheap, and never raises: a failure here would make `import torch`
fail for every user of the environment."""

from __future__ import annotations

import logging


def register() -> None:
    from . import logs
    logs.register()
    try:
        from . import distributed
        distributed.register()
    except Exception as e:  # noqa: BLE001
        logging.getLogger(logs.ROOT).debug("torch.distributed backend not registered: %s", e)
