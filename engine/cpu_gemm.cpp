#include "engine/cpu_gemm.h"

#include <cblas.h>

#include <chrono>
#include <vector>

namespace bubblescope::engine {
namespace {
CBLAS_TRANSPOSE op(bool t) {
  return t ? CblasTrans : CblasNoTrans;
}
}  // namespace

template <>
void gemm<float>(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                 int64_t ldc) {
  cblas_sgemm(CblasRowMajor, op(transA), op(transB), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

template <>
void gemm<double>(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
                  const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                  double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, op(transA), op(transB), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void useSingleBlasThread() {
  openblas_set_num_threads(1);
}

double measureSgemmGflops(int64_t m, int64_t n, int64_t k, double minSeconds) {
  useSingleBlasThread();
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)),
      c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i % 17) - 8) * 0.01f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i % 13) - 6) * 0.01f;
  gemm<float>(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);  // warm
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int64_t reps = 0;
  double seconds = 0.0;
  do {
    gemm<float>(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    ++reps;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } while (seconds < minSeconds);
  return 2.0 * static_cast<double>(m) * n * k * reps / seconds / 1e9;
}

}  // namespace bubblescope::engine
