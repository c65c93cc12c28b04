#include <cmath>

#include "engine/cpu_kernels.h"

namespace bubblescope::engine::kernels {
namespace {
constexpr double kLayerNormEps = 1e-5;
}  // namespace

template <class S>
void layerNormForward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias,
                      int64_t n, int64_t c) {
  for (int64_t r = 0; r < n; ++r) {
    const S* x = inp + r * c;  // (C)
    S* o = out + r * c;        // (C)
    S m = 0;
    for (int64_t i = 0; i < c; ++i) m += x[i];
    m /= static_cast<S>(c);
    S var = 0;
    for (int64_t i = 0; i < c; ++i) var += (x[i] - m) * (x[i] - m);
    var /= static_cast<S>(c);
    const S s = static_cast<S>(1) / std::sqrt(var + static_cast<S>(kLayerNormEps));
    for (int64_t i = 0; i < c; ++i) o[i] = (x[i] - m) * s * weight[i] + bias[i];
    mean[r] = m;
    rstd[r] = s;
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
  for (int64_t r = 0; r < n; ++r) {
    const S* x = inp + r * c;   // (C)
    const S* d = dout + r * c;  // (C)
    S* dx = dinp + r * c;       // (C)
    const S m = mean[r], s = rstd[r];
    S gMean = 0, gxMean = 0;
    for (int64_t i = 0; i < c; ++i) {
      const S xhat = (x[i] - m) * s;
      const S g = d[i] * weight[i];
      gMean += g;
      gxMean += g * xhat;
    }
    gMean /= static_cast<S>(c);
    gxMean /= static_cast<S>(c);
    for (int64_t i = 0; i < c; ++i) {
      const S xhat = (x[i] - m) * s;
      const S g = d[i] * weight[i];
      dx[i] += s * (g - gMean - xhat * gxMean);
    }
  }
}

template <class S>
void layerNormBackwardWeight(S* dweight, S* dbias, const S* dout, const S* inp, const S* mean,
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
