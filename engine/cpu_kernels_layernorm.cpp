#include <cmath>
#include <type_traits>

#include "engine/cpu_kernels.h"
#include "engine/cpu_vector_math.h"

namespace bubblescope::engine::kernels {
namespace {
constexpr double kLayerNormEps = 1e-5;

// The kernels' bodies; the fp32 entry points below build them per vector
// width (BS_VECTOR_CLONES), the double reference calls them as they are.
// Row sums go through laneSum (cpu_vector_math.h): the same sums, added in
// kSumLanes interleaved partial sums so they vectorise.
template <class S>
inline void forwardRows(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias,
                        int64_t n, int64_t c) {
  for (int64_t r = 0; r < n; ++r) {
    const S* x = inp + r * c;  // (C)
    S* o = out + r * c;        // (C)
    const S m = laneSum<S>(c, [&](int64_t i) { return x[i]; }) / static_cast<S>(c);
    const S var =
        laneSum<S>(c, [&](int64_t i) { return (x[i] - m) * (x[i] - m); }) / static_cast<S>(c);
    const S s = static_cast<S>(1) / std::sqrt(var + static_cast<S>(kLayerNormEps));
    for (int64_t i = 0; i < c; ++i) o[i] = (x[i] - m) * s * weight[i] + bias[i];
    mean[r] = m;
    rstd[r] = s;
  }
}

template <class S>
inline void backwardInputRows(S* dinp, const S* dout, const S* inp, const S* weight, const S* mean,
                              const S* rstd, int64_t n, int64_t c) {
  for (int64_t r = 0; r < n; ++r) {
    const S* x = inp + r * c;   // (C)
    const S* d = dout + r * c;  // (C)
    S* dx = dinp + r * c;       // (C)
    const S m = mean[r], s = rstd[r];
    const S gMean = laneSum<S>(c, [&](int64_t i) { return d[i] * weight[i]; }) / static_cast<S>(c);
    const S gxMean = laneSum<S>(c, [&](int64_t i) { return d[i] * weight[i] * ((x[i] - m) * s); }) /
                     static_cast<S>(c);
    for (int64_t i = 0; i < c; ++i) {
      const S xhat = (x[i] - m) * s;
      const S g = d[i] * weight[i];
      dx[i] += s * (g - gMean - xhat * gxMean);
    }
  }
}

template <class S>
inline void backwardWeightRows(S* dweight, S* dbias, const S* dout, const S* inp, const S* mean,
                               const S* rstd, int64_t n, int64_t c) {
  for (int64_t r = 0; r < n; ++r) {
    const S* x = inp + r * c;   // (C)
    const S* d = dout + r * c;  // (C)
    const S m = mean[r], s = rstd[r];
    for (int64_t i = 0; i < c; ++i) {
      const S xhat = (x[i] - m) * s;
      dbias[i] += d[i];
      dweight[i] += d[i] * xhat;
    }
  }
}

BS_VECTOR_CLONES void forwardF32(float* out, float* mean, float* rstd, const float* inp,
                                 const float* weight, const float* bias, int64_t n, int64_t c) {
  forwardRows(out, mean, rstd, inp, weight, bias, n, c);
}

BS_VECTOR_CLONES void backwardInputF32(float* dinp, const float* dout, const float* inp,
                                       const float* weight, const float* mean, const float* rstd,
                                       int64_t n, int64_t c) {
  backwardInputRows(dinp, dout, inp, weight, mean, rstd, n, c);
}

BS_VECTOR_CLONES void backwardWeightF32(float* dweight, float* dbias, const float* dout,
                                        const float* inp, const float* mean, const float* rstd,
                                        int64_t n, int64_t c) {
  backwardWeightRows(dweight, dbias, dout, inp, mean, rstd, n, c);
}
}  // namespace

template <class S>
void layerNormForward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias,
                      int64_t n, int64_t c) {
  if constexpr (std::is_same_v<S, float>) {
    forwardF32(out, mean, rstd, inp, weight, bias, n, c);
  } else {
    forwardRows(out, mean, rstd, inp, weight, bias, n, c);
  }
}

// With xhat = (x - mean) * rstd and g = dout * weight:
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)); the two halves below.
template <class S>
void layerNormBackward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                       const S* mean, const S* rstd, int64_t n, int64_t c) {
  layerNormBackwardInput(dinp, dout, inp, weight, mean, rstd, n, c);
  layerNormBackwardWeight(dweight, dbias, dout, inp, mean, rstd, n, c);
}

template <class S>
void layerNormBackwardInput(S* dinp, const S* dout, const S* inp, const S* weight, const S* mean,
                            const S* rstd, int64_t n, int64_t c) {
  if constexpr (std::is_same_v<S, float>) {
    backwardInputF32(dinp, dout, inp, weight, mean, rstd, n, c);
  } else {
    backwardInputRows(dinp, dout, inp, weight, mean, rstd, n, c);
  }
}

template <class S>
void layerNormBackwardWeight(S* dweight, S* dbias, const S* dout, const S* inp, const S* mean,
                             const S* rstd, int64_t n, int64_t c) {
  if constexpr (std::is_same_v<S, float>) {
    backwardWeightF32(dweight, dbias, dout, inp, mean, rstd, n, c);
  } else {
    backwardWeightRows(dweight, dbias, dout, inp, mean, rstd, n, c);
  }
}

#define BS_INSTANTIATE(S)                                                                          \
  template void layerNormForward<S>(S*, S*, S*, const S*, const S*, const S*, int64_t, int64_t);   \
  template void layerNormBackward<S>(S*, S*, S*, const S*, const S*, const S*, const S*, const S*, \
                                     int64_t, int64_t);                                            \
  template void layerNormBackwardInput<S>(S*, const S*, const S*, const S*, const S*, const S*,    \
                                          int64_t, int64_t);                                       \
  template void layerNormBackwardWeight<S>(S*, S*, const S*, const S*, const S*, const S*,         \
                                           int64_t, int64_t);
BS_INSTANTIATE(float)
BS_INSTANTIATE(double)
#undef BS_INSTANTIATE

}  // namespace bubblescope::engine::kernels
