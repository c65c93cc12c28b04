// Matrix products of the CPU backend, through OpenBLAS (row-major).
//
// Contract: C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C, where
// op(X) is X or its transpose; lda/ldb/ldc are row strides in elements, so
// sub-matrices of wider rows (one head of a (B, T, 3C) qkv buffer) can be
// passed without copies. float uses sgemm, double dgemm (reference path).
#pragma once

#include <cstdint>

namespace bubblescope::engine {

template <class T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// Makes OpenBLAS use one thread in this process (one rank per core). Safe to
// call more than once.
void useSingleBlasThread();

// Measures single-threaded sgemm throughput for C (m, n) = A (m, k) B (k, n),
// repeating for at least `minSeconds`. Returns GFLOP/s (2·m·n·k per product).
double measureSgemmGflops(int64_t m, int64_t n, int64_t k, double minSeconds);

}  // namespace bubblescope::engine
