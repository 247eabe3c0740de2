#!/usr/bin/env bash
# C++-only build against Debian's libmlir-22-dev, then the lit tests with
# that spyre-opt (`ninja check-spyre`: lit on the build tree). It checks that we stay on upstream MLIR API and do not
# depend on the xtc wheels' local patches (assertions on, RTTI off, ...).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d /usr/lib/llvm-22/lib/cmake/mlir ] || [ ! -d /usr/lib/llvm-22/lib/cmake/llvm ]; then
  if ! apt-cache show libmlir-22-dev >/dev/null 2>&1; then
    echo "skipped: libmlir-22-dev is not available from this machine's apt sources"
    exit 0
  fi
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y -qq --no-install-recommends libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools >/dev/null
fi

[ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ] && . .venv/bin/activate
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Relative paths in the cache key: clones in other directories share hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
start=$(date +%s)
cmake -G Ninja -S . -B build/debian -DSPYRE_ENABLE_PYTHON=OFF -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm >/dev/null
ninja -C build/debian -j2 spyre-opt spyre-translate
echo "== Debian LLVM build took $(( $(date +%s) - start )) s"
ninja -C build/debian -j2 check-spyre
