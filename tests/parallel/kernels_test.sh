#!/usr/bin/env bash
# The parallel correctness suites under every OpenBLAS kernel family this CPU
# can run (OPENBLAS_CORETYPE: SSE3 (cpuinfo "pni") Prescott, SSE4.2 Nehalem, AVX Sandybridge,
# AVX2+FMA Haswell and Zen, AVX-512 SkylakeX): the agreement criterion
# (tests/parallel/agreement.h) must hold whatever the summation order, FMA
# use and vector width of the GEMMs. Prints one summary line per kernel (the
# worst loss, norm and gradient errors (step 0, later steps), off elements
# and bulk rms over every case) and
# fails when any suite fails or OpenBLAS does not take the kernel.
#
# Usage: kernels_test.sh MPIRUN NP:TEST_BINARY...
# ctest runs it as parallel.kernels, only with `ctest -C kernels -L kernels`
# (about 3 minutes on 2 cores; not in the default run).
set -uo pipefail
mpirun=$1
shift
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " $cpu_flags " == *" $1 "* ]]; }

# The kernel families and the instruction each needs.
kernels=(Prescott:pni Nehalem:sse4_2 Sandybridge:avx Haswell:avx2 Zen:avx2 SkylakeX:avx512f)

# The core OpenBLAS actually uses under OPENBLAS_CORETYPE=$1 (the library
# the suites load), or "?" when python3 cannot ask it.
corename() {
  OPENBLAS_CORETYPE=$1 python3 -c "import ctypes
l = ctypes.CDLL('libopenblas.so.0'); l.openblas_get_corename.restype = ctypes.c_char_p
print(l.openblas_get_corename().decode())" 2>/dev/null || echo "?"
}

export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for entry in "${kernels[@]}"; do
  kernel=${entry%%:*}
  needs=${entry##*:}
  if ! has "$needs"; then
    echo "$kernel: skipped (this CPU lacks $needs)"
    continue
  fi
  got=$(corename "$kernel")
  if [[ $got != "?" && ${got,,} != "${kernel,,}" ]]; then
    echo "$kernel: FAILED: OpenBLAS runs $got under OPENBLAS_CORETYPE=$kernel"
    failed=1
    continue
  fi
  start=$(date +%s)
  : >"$log"
  status=ok
  for suite in "$@"; do
    np=${suite%%:*}
    binary=${suite#*:}
    if ! OPENBLAS_CORETYPE=$kernel "$mpirun" --oversubscribe -np "$np" "$binary" >>"$log" 2>&1; then
      status=FAILED
      echo "$kernel: $(basename "$binary") failed:"
      grep -E 'Failure|agreement \]|Expected|Which is|FAILED' "$log" | tail -40
    fi
  done
  [[ $status == ok ]] || failed=1
  # Worst over every "[ agreement ]" line: loss, norm, off fraction, bulk rms.
  awk -v k="$kernel" -v s="$status" -v t=$(($(date +%s) - start)) '
    /\[ agreement \]/ && !/NaN|one bucket/ {
      for (i = 1; i <= NF; ++i) {
        if ($i == "loss" && $(i + 1) + 0 > loss) loss = $(i + 1) + 0
        if ($i == "norm" && $(i + 1) + 0 > norm) norm = $(i + 1) + 0
        if ($i == "grads") {
          g0 = $(i + 1); sub(/,/, "", g0)
          if (g0 + 0 > grad0) grad0 = g0 + 0
          if ($(i + 2) + 0 > grads) grads = $(i + 2) + 0
        }
        if ($i == "off") { split($(i + 1), f, "/"); if (f[1] / f[2] > off) off = f[1] / f[2] }
        if ($i == "rms" && $(i + 1) + 0 > rms) rms = $(i + 1) + 0
      }
      ++cases
    }
    END {
      printf "%-12s %-6s %3d s  %3d cases | worst loss rel %.1e | norm rel %.1e | grads %.1e, %.1e | off %.2e | bulk rms %.1e lr\n",
             k, s, t, cases, loss, norm, grad0, grads, off, rms
    }' "$log"
done
exit $failed
