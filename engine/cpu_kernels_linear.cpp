#include <algorithm>

#include "engine/cpu_gemm.h"
#include "engine/cpu_kernels.h"

namespace bubblescope::engine::kernels {

template <class S>
void linearForward(S* out, const S* inp, const S* weight, const S* bias, int64_t n, int64_t ic,
                   int64_t oc) {
  // out (N, OC) = inp (N, IC) · weight^T (IC, OC) + bias: the bias rows are
  // written first and the GEMM adds into them (beta 1), so the bias costs no
  // pass of its own over out (the GEMM would clear out with beta 0 anyway).
  if (bias != nullptr) {
    for (int64_t r = 0; r < n; ++r) std::copy(bias, bias + oc, out + r * oc);
  }
  gemm<S>(false, true, n, oc, ic, S(1), inp, ic, weight, ic, bias != nullptr ? S(1) : S(0), out,
          oc);
}

template <class S>
void linearBackwardInput(S* dinp, const S* dout, const S* weight, int64_t n, int64_t ic,
                         int64_t oc) {
  // dinp (N, IC) += dout (N, OC) · weight (OC, IC)
  gemm<S>(false, false, n, ic, oc, S(1), dout, oc, weight, ic, S(1), dinp, ic);
}

template <class S>
void linearBackwardWeight(S* dweight, S* dbias, const S* dout, const S* inp, int64_t n, int64_t ic,
                          int64_t oc) {
  // dweight (OC, IC) += dout^T (OC, N) · inp (N, IC)
  gemm<S>(true, false, oc, ic, n, S(1), dout, oc, inp, ic, S(1), dweight, ic);
  if (dbias == nullptr) return;
  for (int64_t r = 0; r < n; ++r) {
    const S* d = dout + r * oc;  // (OC)
    for (int64_t j = 0; j < oc; ++j) dbias[j] += d[j];
  }
}

#define BS_INSTANTIATE(S)                                                                      \
  template void linearForward<S>(S*, const S*, const S*, const S*, int64_t, int64_t, int64_t); \
  template void linearBackwardInput<S>(S*, const S*, const S*, int64_t, int64_t, int64_t);     \
  template void linearBackwardWeight<S>(S*, S*, const S*, const S*, int64_t, int64_t, int64_t);
BS_INSTANTIATE(float)
BS_INSTANTIATE(double)
#undef BS_INSTANTIATE

}  // namespace bubblescope::engine::kernels
