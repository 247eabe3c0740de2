"""Builds one of spyre_mlir's C++ extensions of torch, for
python/CMakeLists.txt:

    build_torch_extension.py NAME SOURCE DIRECTORY

with spyre_mlir/cpp_extensions.py's flags (that file is loaded by its path:
the package is not built yet). torch's cpp_extension puts ccache in front of
the compiler by itself when it finds it.
"""

import importlib.util
import os
import sys

name, source, directory = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "cpp_extensions", os.path.join(here, "spyre_mlir", "cpp_extensions.py"))
cpp_extensions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cpp_extensions)
cpp_extensions.build(name, source, directory)
