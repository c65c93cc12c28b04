#!/usr/bin/env bash
# Configures (once) and builds the Release build in build/. Extra arguments go
# to CMake's configure step, e.g. -DBUBBLESCOPE_WITH_GUI=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."

# CUDA 13 lives outside PATH on some machines; CMake finds nvcc through PATH.
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
# BUBBLESCOPE_TARGETS="a b": build only those targets (demo.sh: the CLI and
# the app); BUBBLESCOPE_WERROR=1: warnings are errors (CI).
jobs="${BUBBLESCOPE_JOBS:-$(nproc)}"
werror="-DBUBBLESCOPE_WERROR=$([ "${BUBBLESCOPE_WERROR:-0}" = 1 ] && echo ON || echo OFF)"
mkdir -p build
if [ ! -f build/CMakeCache.txt ] || [ $# -gt 0 ] ||
   ! grep -q "^BUBBLESCOPE_WERROR:BOOL=${werror#*=}\$" build/CMakeCache.txt; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$werror" "$@" >build/configure.log 2>&1 \
    || { mkdir -p build; cat build/configure.log; exit 1; }
fi
targets=()
for t in ${BUBBLESCOPE_TARGETS:-}; do  # those this configuration has (no app without Qt)
  if ninja -C build -t query "$t" >/dev/null 2>&1; then targets+=("$t"); fi
done
echo "Building ${BUBBLESCOPE_TARGETS:-Bubblescope} in build/ ($jobs jobs)"
ninja -C build -j "$jobs" --quiet "${targets[@]}"
