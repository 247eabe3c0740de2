"""Console entry points for the native tools installed with the package."""

import os
import sys

from . import tools_dir


def _exec(name: str) -> None:
    path = os.path.join(tools_dir(), name)
    os.execv(path, [path, *sys.argv[1:]])


def spyre_opt() -> None:
    _exec("spyre-opt")
