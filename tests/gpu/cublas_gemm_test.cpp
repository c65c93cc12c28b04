// cuBLAS GEMMs against the CPU backend's cblas GEMM (engine/cpu_gemm.h), with
// the same row-major contract. Tolerances: fp32 1e-5 (cuda_test_util.h);
// bf16 inputs with fp32 accumulation: 1e-4 against cblas on the same
// bf16-rounded inputs (the products are exact in fp32; only the summation
// order differs), and 1e-2 of max|C| against cblas on the unrounded fp32
// inputs (bf16 keeps 8 significant bits).
#include "engine/cuda/cublas_gemm.h"

#include <gtest/gtest.h>

#include "engine/cpu_gemm.h"
#include "tests/gpu/cuda_test_util.h"

namespace bubblescope::engine::cuda {
namespace {

using testing::expectClose;
using testing::randomFloats;

struct GemmCase {
  bool transA, transB;
  int64_t m, n, k;
};

// Row strides with padding, so a wrong leading dimension shows.
struct Strides {
  int64_t lda, ldb, ldc;
  int64_t aRows, bRows;
};
Strides stridesFor(const GemmCase& g) {
  const int64_t aCols = g.transA ? g.m : g.k, aRows = g.transA ? g.k : g.m;
  const int64_t bCols = g.transB ? g.k : g.n, bRows = g.transB ? g.n : g.k;
  return {aCols + 3, bCols + 5, g.n + 2, aRows, bRows};
}

class CublasGemmTest : public testing::CudaTest {};

TEST_F(CublasGemmTest, Fp32MatchesCblasForEveryTransposeWithStridesAlphaAndBeta) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const GemmCase g{ta, tb, 67, 45, 129};
      const Strides s = stridesFor(g);
      const auto a = randomFloats(s.aRows * s.lda, 1), b = randomFloats(s.bRows * s.ldb, 2);
      auto c = randomFloats(g.m * s.ldc, 3);
      float* dc = upload(c);
      BS_ASSERT_OK(gemm(cublas(), ta, tb, g.m, g.n, g.k, 0.75f, upload(a), s.lda, upload(b), s.ldb,
                        0.5f, dc, s.ldc));
      engine::gemm<float>(ta, tb, g.m, g.n, g.k, 0.75f, a.data(), s.lda, b.data(), s.ldb, 0.5f,
                          c.data(), s.ldc);
      expectClose("C transA=" + std::to_string(ta) + " transB=" + std::to_string(tb),
                  download(dc, c.size()), c, 1e-5f);
    }
  }
}

TEST_F(CublasGemmTest, StridedBatchedMatchesOneCblasCallPerMatrix) {
  const int64_t m = 33, n = 17, k = 40, batch = 5;
  const int64_t strideA = m * k + 7, strideB = k * n + 3, strideC = m * n + 1;
  const auto a = randomFloats(batch * strideA, 4), b = randomFloats(batch * strideB, 5);
  auto c = randomFloats(batch * strideC, 6);
  float* dc = upload(c);
  // A^T stored (K, M), B stored (K, N): transA only.
  BS_ASSERT_OK(gemmStridedBatched(cublas(), true, false, m, n, k, 1.0f, upload(a), m, strideA,
                                  upload(b), n, strideB, 1.0f, dc, n, strideC, batch));
  for (int64_t i = 0; i < batch; ++i) {
    engine::gemm<float>(true, false, m, n, k, 1.0f, a.data() + i * strideA, m,
                        b.data() + i * strideB, n, 1.0f, c.data() + i * strideC, n);
  }
  expectClose("batched C", download(dc, c.size()), c, 1e-5f);
}

TEST_F(CublasGemmTest, Bf16WithFp32AccumulationWithinStatedBounds) {
  for (bool tb : {false, true}) {
    const GemmCase g{false, tb, 128, 96, 256};
    const Strides s = stridesFor(g);
    const auto a = randomFloats(s.aRows * s.lda, 7), b = randomFloats(s.bRows * s.ldb, 8);
    std::vector<float> c(g.m * s.ldc, 0.0f);
    float* dc = upload(c);
    BS_ASSERT_OK(gemmBf16(cublas(), false, tb, g.m, g.n, g.k, 1.0f, uploadBf16(a), s.lda,
                          uploadBf16(b), s.ldb, 0.0f, dc, s.ldc));
    const std::vector<float> gpu = download(dc, c.size());
    // Same bf16-rounded inputs on the CPU: only the summation order differs.
    const auto ar = testing::roundToBf16(a), br = testing::roundToBf16(b);
    std::vector<float> exact(c.size(), 0.0f), fp32(c.size(), 0.0f);
    engine::gemm<float>(false, tb, g.m, g.n, g.k, 1.0f, ar.data(), s.lda, br.data(), s.ldb, 0.0f,
                        exact.data(), s.ldc);
    expectClose("bf16 C vs rounded inputs", gpu, exact, 1e-4f);
    // Against unrounded fp32 inputs: bf16's 8-bit significand, normwise.
    engine::gemm<float>(false, tb, g.m, g.n, g.k, 1.0f, a.data(), s.lda, b.data(), s.ldb, 0.0f,
                        fp32.data(), s.ldc);
    float maxRef = 0.0f, maxErr = 0.0f;
    for (size_t i = 0; i < fp32.size(); ++i) {
      maxRef = std::max(maxRef, std::abs(fp32[i]));
      maxErr = std::max(maxErr, std::abs(gpu[i] - fp32[i]));
    }
    EXPECT_LE(maxErr, 1e-2f * maxRef) << "bf16 vs fp32 inputs, transB=" << tb;
  }
}

TEST_F(CublasGemmTest, SizesBeyondCublasIntsAreRejected) {
  const Status s = gemm(cublas(), false, false, int64_t{1} << 32, 1, 1, 1.0f, nullptr, 1, nullptr,
                        1, 0.0f, nullptr, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
}

}  // namespace
}  // namespace bubblescope::engine::cuda
