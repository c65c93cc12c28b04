#include <algorithm>
#include <cmath>

#include "engine/cpu_kernels.h"

namespace bubblescope::engine::kernels {

template <class S>
void crossEntropyForward(S* probsInOut, S* losses, const int32_t* targets, int64_t n, int64_t v) {
  for (int64_t r = 0; r < n; ++r) {
    S* p = probsInOut + r * v;  // (V)
    const S maxLogit = *std::max_element(p, p + v);
    const S targetLogit = p[targets[r]];
    S sum = 0;
    for (int64_t j = 0; j < v; ++j) {
      p[j] = std::exp(p[j] - maxLogit);
      sum += p[j];
    }
    const S inv = S(1) / sum;
    for (int64_t j = 0; j < v; ++j) p[j] *= inv;
    // -log p[target] = log(sum) - (logit[target] - max): finite even when p underflows.
    losses[r] = std::log(sum) - (targetLogit - maxLogit);
  }
}

template <class S>
void crossEntropyBackward(S* probsToDlogits, const int32_t* targets, S dloss, int64_t n,
                          int64_t v) {
  for (int64_t r = 0; r < n; ++r) {
    S* p = probsToDlogits + r * v;  // (V)
    p[targets[r]] -= S(1);
    for (int64_t j = 0; j < v; ++j) p[j] *= dloss;
  }
}

#define BS_INSTANTIATE(S)                                                         \
  template void crossEntropyForward<S>(S*, S*, const int32_t*, int64_t, int64_t); \
  template void crossEntropyBackward<S>(S*, const int32_t*, S, int64_t, int64_t);
BS_INSTANTIATE(float)
BS_INSTANTIATE(double)
#undef BS_INSTANTIATE

}  // namespace bubblescope::engine::kernels
