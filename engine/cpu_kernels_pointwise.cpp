#include <algorithm>
#include <cmath>
#include <type_traits>

#include "engine/cpu_kernels.h"
#include "engine/cpu_vector_math.h"

namespace bubblescope::engine::kernels {
namespace {
constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluCube = 0.044715;
// tanh for the GELU. glibc's tanhf dominated a training step (a quarter of
// it), so fp32 uses (e - 1) / (e + 1) with e = exp(2u), exp by vexp
// (cpu_vector_math.h, no libm call, so the loops vectorise): absolute error
// below 1e-6, and tanh saturates to +-1 in fp32 beyond |u| = 9. The double
// reference keeps std::tanh.
template <class S>
inline S geluTanh(S u) {
  if constexpr (std::is_same_v<S, double>) {
    return std::tanh(u);
  } else {
    const float e = vexp(2.0f * std::clamp(u, -9.0f, 9.0f));
    return (e - 1.0f) / (e + 1.0f);
  }
}

template <class S>
inline S gelu(S x) {
  const S k = static_cast<S>(kGeluScale), a = static_cast<S>(kGeluCube);
  return S(0.5) * x * (S(1) + geluTanh(k * (x + a * x * x * x)));
}

template <class S>
inline S geluGrad(S x) {
  const S k = static_cast<S>(kGeluScale), a = static_cast<S>(kGeluCube);
  const S th = geluTanh(k * (x + a * x * x * x));
  const S du = k * (S(1) + S(3) * a * x * x);
  return S(0.5) * (S(1) + th) + S(0.5) * x * (S(1) - th * th) * du;
}

// The fp32 loops, built per vector width (BS_VECTOR_CLONES).
BS_VECTOR_CLONES void geluForwardF32(float* out, const float* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gelu(inp[i]);
}

BS_VECTOR_CLONES void geluBackwardF32(float* dinp, const float* inp, const float* dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dinp[i] += geluGrad(inp[i]) * dout[i];
}

BS_VECTOR_CLONES void residualForwardF32(float* out, const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

BS_VECTOR_CLONES void residualBackwardF32(float* da, float* db, const float* dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    da[i] += dout[i];
    db[i] += dout[i];
  }
}
}  // namespace

// gelu(x) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3)
template <class S>
void geluForward(S* out, const S* inp, int64_t n) {
  if constexpr (std::is_same_v<S, float>) {
    geluForwardF32(out, inp, n);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = gelu(inp[i]);
  }
}

template <class S>
void geluBackward(S* dinp, const S* inp, const S* dout, int64_t n) {
  if constexpr (std::is_same_v<S, float>) {
    geluBackwardF32(dinp, inp, dout, n);
  } else {
    for (int64_t i = 0; i < n; ++i) dinp[i] += geluGrad(inp[i]) * dout[i];
  }
}

template <class S>
void residualForward(S* out, const S* a, const S* b, int64_t n) {
  if constexpr (std::is_same_v<S, float>) {
    residualForwardF32(out, a, b, n);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  }
}

template <class S>
void residualBackward(S* da, S* db, const S* dout, int64_t n) {
  if constexpr (std::is_same_v<S, float>) {
    residualBackwardF32(da, db, dout, n);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      da[i] += dout[i];
      db[i] += dout[i];
    }
  }
}

#define BS_INSTANTIATE(S)                                            \
  template void geluForward<S>(S*, const S*, int64_t);               \
  template void geluBackward<S>(S*, const S*, const S*, int64_t);    \
  template void residualForward<S>(S*, const S*, const S*, int64_t); \
  template void residualBackward<S>(S*, S*, const S*, int64_t);
BS_INSTANTIATE(float)
BS_INSTANTIATE(double)
#undef BS_INSTANTIATE

}  // namespace bubblescope::engine::kernels
