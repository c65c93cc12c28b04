#!/usr/bin/env bash
# Configures (once) and builds the Release build in build/. Extra arguments go
# to CMake's configure step, e.g. -DBUBBLESCOPE_WITH_GUI=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."

# CUDA 13 lives outside PATH on some machines; CMake finds nvcc through PATH.
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
jobs="${BUBBLESCOPE_JOBS:-$(nproc)}"
mkdir -p build
if [ ! -f build/CMakeCache.txt ] || [ $# -gt 0 ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >build/configure.log 2>&1 \
    || { mkdir -p build; cat build/configure.log; exit 1; }
fi
echo "Building Bubblescope in build/ ($jobs jobs)"
ninja -C build -j "$jobs" --quiet
