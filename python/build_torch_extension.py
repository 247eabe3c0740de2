"""Builds one of spyre_mlir's C++ extensions of torch, for
python/CMakeLists.txt:

    build_torch_extension.py NAME SOURCE DIRECTORY [LAUNCHER]

with spyre_mlir/cpp_extensions.py's flags (that file is loaded by its path:
the package is not built yet). LAUNCHER (ccache) goes in front of the
compiler, through a wrapper, since torch takes $CXX as one program.
"""

import importlib.util
import os
import sys

name, source, directory = sys.argv[1:4]
launcher = sys.argv[4] if len(sys.argv) > 4 else ""
os.makedirs(directory, exist_ok=True)
if launcher:
    wrapper = os.path.join(directory, "cxx")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec "{launcher}" {os.environ.get("CXX", "c++")} "$@"\n')
    os.chmod(wrapper, 0o755)
    os.environ["CXX"] = wrapper

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "cpp_extensions", os.path.join(here, "spyre_mlir", "cpp_extensions.py"))
cpp_extensions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cpp_extensions)
cpp_extensions.build(name, source, directory)
