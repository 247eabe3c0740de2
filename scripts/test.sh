#!/usr/bin/env bash
# Runs every test: the lit/FileCheck IR tests, then pytest. Needs the package
# installed (scripts/setup.sh). Exits non-zero if either suite fails.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then
  . .venv/bin/activate
fi
status=0
# The committed dialect and pass docs must match TableGen; CI's Debian build
# checks this too, but only after the half-hour test run.
if [ -f build/py/build.ninja ]; then
  echo "== docs/generated matches TableGen =="
  cmake --build build/py --target check-spyre-docs >/dev/null || {
    echo "docs/generated is stale: run 'ninja -C build/py spyre-docs' and commit"; status=1; }
fi
echo "== lit: FileCheck IR tests =="
lit -sv test || status=1
echo "== pytest =="
# One worker per core (pytest-xdist): most of the ~2,500 tests are compiles.
# Every kernel the tests compile is kept (by content) for
# scripts/check_sanitizers.sh, which compiles them again under ASan/UBSan.
export SPYRE_KERNEL_CORPUS="${SPYRE_KERNEL_CORPUS:-$PWD/build/kernel-corpus}"
# Inductor compiles the CPU fallbacks' C++ (after probing the host's vector
# instructions and building a precompiled header: ~25 s of the first test that
# needs one) into its cache directory, by content. Kept beside ccache's, so a
# later run reuses what a fresh /tmp would build again. Its compiled graphs
# are keyed by the installed compiler (spyre_mlir.inductor.kernel_cache), so a
# later install never reads them: they are removed after the run (unless the
# caller chose the directory).
own_inductor_cache=""
if [ -z "${TORCHINDUCTOR_CACHE_DIR:-}" ]; then
  own_inductor_cache="$HOME/.cache/spyre_mlir/torchinductor"
  export TORCHINDUCTOR_CACHE_DIR="$own_inductor_cache"
fi
# The slowest tests are listed: CI's time is mostly theirs.
python -m pytest -q -n auto --dist worksteal --durations=25 test/python || status=1
if [ -n "$own_inductor_cache" ]; then
  rm -rf "$own_inductor_cache/fxgraph" "$own_inductor_cache/aotautograd"
fi
exit $status
