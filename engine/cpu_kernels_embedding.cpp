#include "engine/cpu_kernels.h"

namespace bubblescope::engine::kernels {

template <class S>
void embeddingForward(S* out, const int32_t* tokens, const S* wte, const S* wpe, int64_t b,
                      int64_t t, int64_t c) {
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t ti = 0; ti < t; ++ti) {
      S* o = out + (bi * t + ti) * c;               // (C)
      const S* te = wte + tokens[bi * t + ti] * c;  // (C)
      const S* pe = wpe + ti * c;                   // (C)
      for (int64_t i = 0; i < c; ++i) o[i] = te[i] + pe[i];
    }
  }
}

template <class S>
void embeddingBackward(S* dwte, S* dwpe, const S* dout, const int32_t* tokens, int64_t b, int64_t t,
                       int64_t c) {
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t ti = 0; ti < t; ++ti) {
      const S* d = dout + (bi * t + ti) * c;    // (C)
      S* dte = dwte + tokens[bi * t + ti] * c;  // (C)
      S* dpe = dwpe + ti * c;                   // (C)
      for (int64_t i = 0; i < c; ++i) {
        dte[i] += d[i];
        dpe[i] += d[i];
      }
    }
  }
}

#define BS_INSTANTIATE(S)                                                                     \
  template void embeddingForward<S>(S*, const int32_t*, const S*, const S*, int64_t, int64_t, \
                                    int64_t);                                                 \
  template void embeddingBackward<S>(S*, S*, const S*, const int32_t*, int64_t, int64_t, int64_t);
BS_INSTANTIATE(float)
BS_INSTANTIATE(double)
#undef BS_INSTANTIATE

}  // namespace bubblescope::engine::kernels
