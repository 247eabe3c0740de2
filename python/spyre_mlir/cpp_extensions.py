"""The package's C++ extensions of torch: the "spyre" device's allocator
(device/spyre_device.cpp) and the "spyre" process group
(distributed/spyre_backend.cpp).

They are built with the package when torch is importable at build time
(python/CMakeLists.txt runs `build` on each), and installed beside their
sources. Otherwise, or when the installed one was built for another torch,
`load` compiles the extension on first use with torch's cpp_extension, which
caches it in ~/.cache/torch_extensions: about 25 s each on 2 cores.
"""

from __future__ import annotations

import importlib.util
import os

#: The same flags whether built with the package or on first use.
CFLAGS = ["-O1"]


def build(name: str, source: str, directory: str | None = None):
    """Compiles `source` into `directory`/`name`.so (default: torch's cache)
    with torch's own flags, and imports it."""
    from torch.utils import cpp_extension
    if directory is not None:
        os.makedirs(directory, exist_ok=True)
    return cpp_extension.load(name=name, sources=[source], extra_cflags=CFLAGS,
                              build_directory=directory, verbose=False)


def load(name: str, source: str):
    """The extension `name`: the one installed beside `source`, else compiled
    now (torch must already be imported: the extension links its libraries)."""
    prebuilt = os.path.join(os.path.dirname(source), name + ".so")
    if os.path.exists(prebuilt):
        spec = importlib.util.spec_from_file_location(name, prebuilt)
        try:
            module = importlib.util.module_from_spec(spec)  # loads the library
            spec.loader.exec_module(module)
            return module
        except ImportError:  # built against another torch: compile for this one
            pass
    return build(name, source)
