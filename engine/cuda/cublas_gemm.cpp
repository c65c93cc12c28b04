#include "engine/cuda/cublas_gemm.h"

#include <climits>
#include <initializer_list>
#include <string>

#include "engine/cuda/cuda_check.h"

namespace bubblescope::engine::cuda {
namespace {

// cuBLAS is column-major. A row-major X with row stride ld is the
// column-major X^T with leading dimension ld, so row-major C = op(A) op(B)
// is computed as column-major C^T = op(B)^T op(A)^T: swap the operands and
// M with N, keep each operand's transpose flag.
cublasOperation_t op(bool trans) {
  return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

Status checkSizes(std::initializer_list<int64_t> sizes) {
  for (int64_t s : sizes) {
    if (s < 0 || s > INT_MAX) {
      return Status::invalidArgument("cuBLAS GEMM size " + std::to_string(s) +
                                     " is outside 0..INT_MAX");
    }
  }
  return Status::ok();
}

}  // namespace

Status gemm(cublasHandle_t handle, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
            float* c, int64_t ldc) {
  BS_RETURN_IF_ERROR(checkSizes({m, n, k, lda, ldb, ldc}));
  if (m == 0 || n == 0) return Status::ok();
  BS_CUBLAS_CHECK(cublasSgemm(
      handle, op(transB), op(transA), static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
      &alpha, b, static_cast<int>(ldb), a, static_cast<int>(lda), &beta, c, static_cast<int>(ldc)));
  return Status::ok();
}

Status gemmStridedBatched(cublasHandle_t handle, bool transA, bool transB, int64_t m, int64_t n,
                          int64_t k, float alpha, const float* a, int64_t lda, int64_t strideA,
                          const float* b, int64_t ldb, int64_t strideB, float beta, float* c,
                          int64_t ldc, int64_t strideC, int64_t batch) {
  BS_RETURN_IF_ERROR(checkSizes({m, n, k, lda, ldb, ldc, batch}));
  if (m == 0 || n == 0 || batch == 0) return Status::ok();
  BS_CUBLAS_CHECK(cublasSgemmStridedBatched(
      handle, op(transB), op(transA), static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
      &alpha, b, static_cast<int>(ldb), strideB, a, static_cast<int>(lda), strideA, &beta, c,
      static_cast<int>(ldc), strideC, static_cast<int>(batch)));
  return Status::ok();
}

Status gemmBf16(cublasHandle_t handle, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                float alpha, const __nv_bfloat16* a, int64_t lda, const __nv_bfloat16* b,
                int64_t ldb, float beta, float* c, int64_t ldc) {
  BS_RETURN_IF_ERROR(checkSizes({m, n, k, lda, ldb, ldc}));
  if (m == 0 || n == 0) return Status::ok();
  BS_CUBLAS_CHECK(cublasGemmEx(
      handle, op(transB), op(transA), static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
      &alpha, b, CUDA_R_16BF, static_cast<int>(ldb), a, CUDA_R_16BF, static_cast<int>(lda), &beta,
      c, CUDA_R_32F, static_cast<int>(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return Status::ok();
}

}  // namespace bubblescope::engine::cuda
