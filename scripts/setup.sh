#!/usr/bin/env bash
# One command from a fresh clone: system packages (if missing), a virtual
# environment in .venv, the pinned toolchain, a build and install of
# spyre-mlir, then the demo. Re-running it rebuilds incrementally.
#
#   bash scripts/setup.sh            # install + demo
#   bash scripts/setup.sh --no-demo  # install only
set -euo pipefail
cd "$(dirname "$0")/.."

run_demo=1
[ "${1:-}" = "--no-demo" ] && run_demo=0

missing=()
command -v g++ >/dev/null || missing+=(g++)
command -v ccache >/dev/null || missing+=(ccache)
python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  || missing+=(python3-dev)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
[ -f /usr/include/toml++/toml.h ] || missing+=(libtomlplusplus-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
compgen -G "/usr/include/*/cblas.h" >/dev/null || [ -f /usr/include/cblas.h ] || missing+=(libopenblas-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing system packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}"
fi

[ -d .venv ] || python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip

# Build requirements come from pyproject.toml, so they are pinned in one place.
# torch (the `torch` extra) comes first too: the build compiles the device's
# and the process group's torch extensions when it can import torch.
echo "== installing the toolchain (pinned MLIR/LLVM wheels, nanobind, pybind11, torch)"
python - <<'PY' > build-requirements.txt
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))
print("\n".join(project["build-system"]["requires"] + project["project"]["optional-dependencies"]["torch"]))
PY
python -m pip install -q -r build-requirements.txt ninja "cmake>=3.20"
rm -f build-requirements.txt

# A stable build directory and no build isolation: ccache and ninja reuse
# earlier work, so rebuilds are cheap.
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Relative paths in the cache key: clones in other directories share hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
echo "== building and installing spyre-mlir (build dir build/py)"
start=$(date +%s)
python -m pip install -q --no-build-isolation -Cbuild-dir=build/py ".[torch,test]"
echo "== built and installed in $(( $(date +%s) - start )) s"

if [ "$run_demo" = 1 ]; then
  echo "== demo: python -m spyre_mlir.demo"
  python -m spyre_mlir.demo
fi
