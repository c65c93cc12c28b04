// The cuBLAS-backed layers against the CPU kernels: linear (fp32 and bf16)
// and causal multi-head attention, forward and backward, on random inputs.
// Tolerances: fp32 1e-5 relative (cuda_test_util.h); bf16 linear 1e-4
// against the CPU on the same bf16-rounded operands (fp32 accumulation in
// both, the summation order differs).
#include <gtest/gtest.h>

#include "engine/cpu_kernels.h"
#include "engine/cuda/cuda_kernels.h"
#include "tests/gpu/cuda_test_util.h"

namespace bubblescope::engine::cuda {
namespace {

namespace k = kernels;
using testing::expectClose;
using testing::randomFloats;
using testing::roundToBf16;

constexpr float kTol = 1e-5f;

class CudaLayersTest : public testing::CudaTest {};

TEST_F(CudaLayersTest, LinearWithAndWithoutBias) {
  const int64_t n = 201, ic = 100, oc = 300;  // OC != IC so a transposed index breaks
  const auto x = randomFloats(n * ic, 1), w = randomFloats(oc * ic, 2), b = randomFloats(oc, 3);
  const auto dout = randomFloats(n * oc, 4);
  const float *dX = upload(x), *dW = upload(w), *dB = upload(b), *dDout = upload(dout);
  for (bool withBias : {true, false}) {
    const std::string tag = withBias ? " (bias)" : " (no bias)";
    std::vector<float> out(n * oc);
    float* dOut = upload(out);
    BS_ASSERT_OK(linearForward(cublas(), dOut, dX, dW, withBias ? dB : nullptr, n, ic, oc));
    k::linearForward(out.data(), x.data(), w.data(), withBias ? b.data() : nullptr, n, ic, oc);
    expectClose("out" + tag, download(dOut, out.size()), out, kTol);

    auto dx = randomFloats(n * ic, 5), dw = randomFloats(oc * ic, 6), db = randomFloats(oc, 7);
    float *dDx = upload(dx), *dDw = upload(dw), *dDb = upload(db);
    BS_ASSERT_OK(linearBackwardInput(cublas(), dDx, dDout, dW, n, ic, oc));
    BS_ASSERT_OK(
        linearBackwardWeight(cublas(), dDw, withBias ? dDb : nullptr, dDout, dX, n, ic, oc));
    k::linearBackwardInput(dx.data(), dout.data(), w.data(), n, ic, oc);
    k::linearBackwardWeight(dw.data(), withBias ? db.data() : nullptr, dout.data(), x.data(), n, ic,
                            oc);
    expectClose("dinp" + tag, download(dDx, dx.size()), dx, kTol);
    expectClose("dweight" + tag, download(dDw, dw.size()), dw, kTol);
    expectClose("dbias" + tag, download(dDb, db.size()), db, kTol);
  }
}

TEST_F(CudaLayersTest, LinearBf16AgainstTheCpuOnRoundedOperands) {
  const int64_t n = 128, ic = 96, oc = 160;
  const auto x = randomFloats(n * ic, 8), w = randomFloats(oc * ic, 9), b = randomFloats(oc, 10);
  const auto dout = randomFloats(n * oc, 11);
  const auto xr = roundToBf16(x), wr = roundToBf16(w), doutr = roundToBf16(dout);
  // The master weights stay fp32 on the device; toBf16 makes the copy.
  __nv_bfloat16* wBf16 = allocBf16(w.size());
  BS_ASSERT_OK(toBf16(wBf16, upload(w), static_cast<int64_t>(w.size()), stream()));
  const __nv_bfloat16 *xBf16 = uploadBf16(x), *doutBf16 = uploadBf16(dout);

  std::vector<float> out(n * oc);
  float* dOut = upload(out);
  BS_ASSERT_OK(linearForwardBf16(cublas(), dOut, xBf16, wBf16, upload(b), n, ic, oc));
  k::linearForward(out.data(), xr.data(), wr.data(), b.data(), n, ic, oc);
  expectClose("out", download(dOut, out.size()), out, 1e-4f);

  auto dx = randomFloats(n * ic, 12), dw = randomFloats(oc * ic, 13);
  float *dDx = upload(dx), *dDw = upload(dw);
  BS_ASSERT_OK(linearBackwardInputBf16(cublas(), dDx, doutBf16, wBf16, n, ic, oc));
  BS_ASSERT_OK(linearBackwardWeightBf16(cublas(), dDw, doutBf16, xBf16, n, ic, oc));
  k::linearBackwardInput(dx.data(), doutr.data(), wr.data(), n, ic, oc);
  k::linearBackwardWeight<float>(dw.data(), nullptr, doutr.data(), xr.data(), n, ic, oc);
  expectClose("dinp", download(dDx, dx.size()), dx, 1e-4f);
  expectClose("dweight", download(dDw, dw.size()), dw, 1e-4f);
}

TEST_F(CudaLayersTest, CausalAttentionForwardAndBackward) {
  // T not a multiple of 32; two head sizes.
  for (const int64_t nh : {int64_t{4}, int64_t{3}}) {
    const int64_t b = 3, t = 67, c = 96;
    const std::string tag = " (NH = " + std::to_string(nh) + ")";
    const auto qkv = randomFloats(b * t * 3 * c, 14);
    std::vector<float> out(b * t * c), att(b * nh * t * t);
    float *dOut = upload(out), *dAtt = upload(att);
    const float* dQkv = upload(qkv);
    BS_ASSERT_OK(attentionForward(cublas(), dOut, dAtt, dQkv, b, t, c, nh));
    k::attentionForward(out.data(), att.data(), qkv.data(), b, t, c, nh);
    expectClose("att" + tag, download(dAtt, att.size()), att, kTol);
    expectClose("out" + tag, download(dOut, out.size()), out, kTol);

    const auto dout = randomFloats(b * t * c, 15);
    auto dqkv = randomFloats(b * t * 3 * c, 16);
    float* dDqkv = upload(dqkv);
    std::vector<float> scratch(nh * t * t), cpuScratch(t * t);
    BS_ASSERT_OK(
        attentionBackward(cublas(), dDqkv, upload(scratch), upload(dout), dQkv, dAtt, b, t, c, nh));
    k::attentionBackward(dqkv.data(), cpuScratch.data(), dout.data(), qkv.data(), att.data(), b, t,
                         c, nh);
    expectClose("dqkv" + tag, download(dDqkv, dqkv.size()), dqkv, kTol);
  }
}

TEST_F(CudaLayersTest, AttentionRejectsHeadsThatDoNotDivideC) {
  const Status s = attentionForward(cublas(), nullptr, nullptr, nullptr, 1, 4, 10, 3);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
}

}  // namespace
}  // namespace bubblescope::engine::cuda
