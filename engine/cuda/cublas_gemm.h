// Matrix products of the CUDA backend, through cuBLAS, with the row-major
// contract of the CPU gemm (engine/cpu_gemm.h):
//   C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C
// where op(X) is X or its transpose and lda/ldb/ldc are ROW strides in
// elements, so a sub-matrix of wider rows (one head of a (B, T, 3C) qkv
// buffer) is passed without a copy. All pointers are device pointers; the
// work is queued on the handle's stream (asynchronous).
//
// Precision: gemm() is fp32 in and out (cublasSgemm, default math mode: no
// TF32). gemmBf16() takes bf16 A and B, accumulates and writes fp32
// (cublasGemmEx, CUBLAS_COMPUTE_32F): the bf16 training path keeps fp32
// master weights and converts them with toBf16() (cuda_kernels.h) before use.
// Sizes must fit cuBLAS's 32-bit int arguments (else kInvalidArgument).
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "common/status.h"

namespace bubblescope::engine::cuda {

Status gemm(cublasHandle_t handle, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
            float* c, int64_t ldc);

// `batch` independent products; matrix i starts at a + i * strideA (and so
// on), strides in elements.
Status gemmStridedBatched(cublasHandle_t handle, bool transA, bool transB, int64_t m, int64_t n,
                          int64_t k, float alpha, const float* a, int64_t lda, int64_t strideA,
                          const float* b, int64_t ldb, int64_t strideB, float beta, float* c,
                          int64_t ldc, int64_t strideC, int64_t batch);

Status gemmBf16(cublasHandle_t handle, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                float alpha, const __nv_bfloat16* a, int64_t lda, const __nv_bfloat16* b,
                int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace bubblescope::engine::cuda
