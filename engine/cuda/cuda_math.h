// Per-element maths of the CUDA kernels, callable on the host and the device.
//
// Contract: every function here computes, in fp32, the same expression in the
// same order as the CPU kernels (engine/cpu_kernels_*.cpp, engine/adamw.cpp),
// so a host build of this header reproduces the CPU results bit for bit
// (tests/gpu/cuda_math_test.cpp checks that in CI, without a GPU). On the
// device nvcc may fuse multiply-adds and expf/logf differ by an ulp or two,
// which is why the GPU tests compare with a tolerance.
//
// The header needs no CUDA headers: compiled by a C++ compiler the qualifiers
// vanish; compiled by nvcc the functions are __host__ __device__.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define BS_HOST_DEVICE __host__ __device__
#else
#define BS_HOST_DEVICE
#endif

namespace bubblescope::engine::cuda {

// ---- GELU (tanh approximation, as engine/cpu_kernels_pointwise.cpp) --------
inline constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
inline constexpr float kGeluCube = 0.044715f;

// tanh(u) as the fp32 CPU kernel computes it: (e - 1) / (e + 1) with
// e = exp(2 clamp(u, -9, 9)) (absolute error below 1e-6).
BS_HOST_DEVICE inline float geluTanh(float u) {
  const float c = (u < -9.0f) ? -9.0f : (9.0f < u) ? 9.0f : u;  // std::clamp's order
  const float e = expf(2.0f * c);
  return (e - 1.0f) / (e + 1.0f);
}

// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
BS_HOST_DEVICE inline float gelu(float x) {
  return 0.5f * x * (1.0f + geluTanh(kGeluScale * (x + kGeluCube * x * x * x)));
}

// d gelu / dx at x.
BS_HOST_DEVICE inline float geluGrad(float x) {
  const float th = geluTanh(kGeluScale * (x + kGeluCube * x * x * x));
  const float du = kGeluScale * (1.0f + 3.0f * kGeluCube * x * x);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

// ---- Numerically stable softmax -------------------------------------------
// A running (max, sum of exp(x - max)) over a row, for one pass over logits;
// two partial states merge exactly like concatenating their rows.
struct SoftmaxState {
  float max = -INFINITY;
  float sum = 0.0f;
};

BS_HOST_DEVICE inline SoftmaxState softmaxAdd(SoftmaxState s, float x) {
  if (x > s.max) {
    s.sum = s.sum * expf(s.max - x) + 1.0f;  // exp(-inf) = 0 on the first element
    s.max = x;
  } else {
    s.sum += expf(x - s.max);
  }
  return s;
}

BS_HOST_DEVICE inline SoftmaxState softmaxMerge(SoftmaxState a, SoftmaxState b) {
  if (b.sum == 0.0f) return a;
  if (a.sum == 0.0f) return b;
  if (a.max >= b.max) return {a.max, a.sum + b.sum * expf(b.max - a.max)};
  return {b.max, b.sum + a.sum * expf(a.max - b.max)};
}

// -log softmax(x)[target] = log(sum exp(x - max)) - (x[target] - max): finite
// even where the probability underflows (as crossEntropyForward).
BS_HOST_DEVICE inline float crossEntropyLoss(float sumExp, float maxLogit, float targetLogit) {
  return logf(sumExp) - (targetLogit - maxLogit);
}

// One element of the softmax backward: p (dp - sum_j p_j dp_j).
BS_HOST_DEVICE inline float softmaxGrad(float p, float dp, float dot) {
  return p * (dp - dot);
}

// dlogit of softmax cross-entropy with loss weight dloss, as
// crossEntropyBackward: (p - [j == target]) * dloss.
BS_HOST_DEVICE inline float crossEntropyGrad(float p, bool isTarget, float dloss) {
  return (isTarget ? p - 1.0f : p) * dloss;
}

// ---- Layer norm (eps 1e-5, biased variance) --------------------------------
inline constexpr float kLayerNormEps = 1e-5f;

// Mean and 1 / sqrt(var + eps) of one row x (C), two passes in index order
// exactly as layerNormForward. The device kernels split the sums over a warp;
// this sequential form is the host reference.
struct RowStats {
  float mean = 0.0f;
  float rstd = 0.0f;
};
BS_HOST_DEVICE inline float layerNormRstd(float var) {
  return 1.0f / sqrtf(var + kLayerNormEps);
}
BS_HOST_DEVICE inline RowStats layerNormRowStats(const float* x, int64_t c) {
  float m = 0.0f;
  for (int64_t i = 0; i < c; ++i) m += x[i];
  m /= static_cast<float>(c);
  float var = 0.0f;
  for (int64_t i = 0; i < c; ++i) var += (x[i] - m) * (x[i] - m);
  var /= static_cast<float>(c);
  return {m, layerNormRstd(var)};
}

// out = (x - mean) * rstd * weight + bias.
BS_HOST_DEVICE inline float layerNormOut(float x, RowStats s, float weight, float bias) {
  return (x - s.mean) * s.rstd * weight + bias;
}

// dx of one element given xhat = (x - mean) * rstd, g = dout * weight and the
// row means gMean = mean(g), gxMean = mean(g * xhat).
BS_HOST_DEVICE inline float layerNormInputGrad(float g, float xhat, float rstd, float gMean,
                                               float gxMean) {
  return rstd * (g - gMean - xhat * gxMean);
}

// ---- AdamW (as engine/adamw.cpp adamwUpdate) -------------------------------
// Per-step scalars, computed on the host once per update.
struct AdamWScalars {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float correction1 = 1.0f;  // 1 - beta1^t
  float correction2 = 1.0f;  // 1 - beta2^t
  float lr = 0.0f;
  float eps = 1e-8f;
  float weightDecay = 0.0f;  // 0 for parameters without decay
};

// Builds the scalars of update t (1-based) exactly as adamwUpdate does.
inline AdamWScalars adamwScalars(double beta1, double beta2, double eps, double weightDecay,
                                 double lr, int64_t t, bool decay) {
  AdamWScalars s;
  s.beta1 = static_cast<float>(beta1);
  s.beta2 = static_cast<float>(beta2);
  s.correction1 = static_cast<float>(1.0 - std::pow(beta1, static_cast<double>(t)));
  s.correction2 = static_cast<float>(1.0 - std::pow(beta2, static_cast<double>(t)));
  s.lr = static_cast<float>(lr);
  s.eps = static_cast<float>(eps);
  s.weightDecay = decay ? static_cast<float>(weightDecay) : 0.0f;
  return s;
}

// One element: moments m, v and the parameter p in place, gradient g.
BS_HOST_DEVICE inline void adamwElement(float& p, float g, float& m, float& v,
                                        const AdamWScalars& s) {
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  const float mHat = m / s.correction1;
  const float vHat = v / s.correction2;
  p -= s.lr * (mHat / (sqrtf(vHat) + s.eps) + s.weightDecay * p);
}

}  // namespace bubblescope::engine::cuda
