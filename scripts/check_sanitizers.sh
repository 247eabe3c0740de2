#!/usr/bin/env bash
# Runs the simulator's tests against a build of the simulator module with
# AddressSanitizer and UndefinedBehaviorSanitizer. The simulator builds alone
# (SPYRE_BUILD_COMPILER=OFF): it depends on no MLIR. Then builds spyre-opt and
# spyre-translate with the same sanitizers (our dialect and passes; MLIR's
# libraries come uninstrumented from the wheel) and runs the lit suite and
# the fuzzing regression inputs through them. Needs the package installed
# (scripts/setup.sh) for the pure-Python parts.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ] && . .venv/bin/activate
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"

# With -g, ccache keys an object on the directory it was compiled in, so a
# clone elsewhere (CI's) missed the cache for every simulator object (a cold
# ASan build of the simulator: minutes). Debug info with paths relative to the
# checkout makes the directory irrelevant, and ccache is told so.
export CCACHE_NOHASHDIR=1
# Each phase's time and the cache's counts, so that a slow CI run says which
# phase was slow and whether it compiled or hit the cache.
phase() { echo "-- sanitizers: $1 after ${SECONDS} s; ccache: $(ccache -s 2>/dev/null | grep -E '^ +(Hits|Misses):' | tr -s ' ' | tr '\n' ';')"; }
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -G Ninja -S . -B build/sanitize -DSPYRE_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags -fdebug-prefix-map=$PWD=." -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
ninja -C build/sanitize -j2 _simulator
phase "simulator built"

# A copy of the installed package with the sanitized module in it.
installed=$(python -c "import os, spyre_mlir; print(os.path.dirname(spyre_mlir.__file__))")
pkg=build/sanitize/pkg
# Whole, since some simulator tests compile their programs (MLIR's libraries
# stay uninstrumented); only the simulator module is replaced. _mlir_libs is
# linked, not copied: its libraries find libLLVM.so relative to where they are.
rm -rf "$pkg" && mkdir -p "$pkg"
cp -r "$installed" "$pkg/spyre_mlir"
rm -rf "$pkg/spyre_mlir/_mlir_libs" && ln -s "$installed/_mlir_libs" "$pkg/spyre_mlir/_mlir_libs"
cp build/sanitize/python/_simulator*.so "$pkg/spyre_mlir/"

export LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)"
# Python itself leaks by design at exit; leaks are not what this checks.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
PYTHONPATH="$PWD/$pkg" python -m pytest -q -p no:cacheprovider \
  test/python/test_dlfloat16.py test/python/test_simulator_*.py
phase "simulator tested"

# The compiler: our code sanitized, linked against the wheel's MLIR. UBSan's
# vptr check needs RTTI, which LLVM is built without.
# Inline LLVM code compiled with ASan poisons memory that the uninstrumented
# libraries then touch (false use-after-poison): manual poisoning is ignored.
unset LD_PRELOAD
export ASAN_OPTIONS=$ASAN_OPTIONS:allow_user_poisoning=0
# -O1 without debug info: a cold build of the passes is CI's longest step, and
# ASan reports still name the functions (frame pointers, symbols).
cflags="$flags -fno-sanitize=vptr -O1"
cmake -G Ninja -S . -B build/sanitize-opt -DSPYRE_ENABLE_PYTHON=OFF -DCMAKE_BUILD_TYPE= \
  -DCMAKE_CXX_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$cflags" -DCMAKE_SHARED_LINKER_FLAGS="$cflags" >/dev/null
ninja -C build/sanitize-opt -j2 spyre-opt spyre-translate
phase "compiler built"
SPYRE_TOOLS_DIR="$PWD/build/sanitize-opt/bin" lit -s test
SPYRE_FUZZ_MEMORY_LIMIT=0 SPYRE_TOOLS_DIR="$PWD/build/sanitize-opt/bin" python -m pytest -q -p no:cacheprovider \
  test/python/test_fuzz_regressions.py
phase "lit and fuzzing inputs checked"

# The kernels the pytest run compiled (scripts/test.sh keeps them), through
# the sanitized pipeline: the compiler inside the Python module is never
# sanitized, and real kernels reach code the lit tests do not (a freed
# reference read in the body planner showed only on a max-pool window with
# dozens of loads). A sample by content hash keeps this step short.
python scripts/compile_corpus.py "${SPYRE_KERNEL_CORPUS:-build/kernel-corpus}" \
  --tools "$PWD/build/sanitize-opt/bin" --sample 4
phase "corpus compiled"
