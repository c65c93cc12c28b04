#include <algorithm>
#include <cmath>

#include "engine/cpu_gemm.h"
#include "engine/cpu_kernels.h"

namespace bubblescope::engine::kernels {

// Per (batch, head): scores (T, T) = q k^T / sqrt(HS) through one GEMM on
// strided views of qkv, causal softmax row by row, then out_h = att · v.
// The GEMM also fills the masked upper triangle, which is then zeroed: twice
// the minimal work, but at BLAS speed.
template <class S>
void attentionForward(S* out, S* att, const S* qkv, int64_t b, int64_t t, int64_t c, int64_t nh) {
  const int64_t hs = c / nh;
  const S scale = S(1) / std::sqrt(static_cast<S>(hs));
  for (int64_t bi = 0; bi < b; ++bi) {
    const S* base = qkv + bi * t * 3 * c;  // (T, 3C)
    for (int64_t h = 0; h < nh; ++h) {
      const S* q = base + h * hs;          // (T, HS), row stride 3C
      const S* k = base + c + h * hs;      // (T, HS), row stride 3C
      const S* v = base + 2 * c + h * hs;  // (T, HS), row stride 3C
      S* a = att + (bi * nh + h) * t * t;  // (T, T)
      gemm<S>(false, true, t, t, hs, scale, q, 3 * c, k, 3 * c, S(0), a, t);
      for (int64_t i = 0; i < t; ++i) {
        S* row = a + i * t;  // (T); keys 0..i are visible
        const S maxScore = *std::max_element(row, row + i + 1);
        S sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          row[j] = std::exp(row[j] - maxScore);
          sum += row[j];
        }
        const S inv = S(1) / sum;
        for (int64_t j = 0; j <= i; ++j) row[j] *= inv;
        for (int64_t j = i + 1; j < t; ++j) row[j] = S(0);
      }
      S* o = out + bi * t * c + h * hs;  // (T, HS), row stride C
      gemm<S>(false, false, t, hs, t, S(1), a, t, v, 3 * c, S(0), o, c);
    }
  }
}

// With P = att, dO = dout_h: dV += P^T dO; dP = dO V^T;
// dS = P * (dP - rowsum(P * dP)) (softmax backward, zero above the diagonal);
// dQ += dS K * scale; dK += dS^T Q * scale.
template <class S>
void attentionBackward(S* dqkv, S* scratch, const S* dout, const S* qkv, const S* att, int64_t b,
                       int64_t t, int64_t c, int64_t nh) {
  const int64_t hs = c / nh;
  const S scale = S(1) / std::sqrt(static_cast<S>(hs));
  for (int64_t bi = 0; bi < b; ++bi) {
    const S* base = qkv + bi * t * 3 * c;  // (T, 3C)
    S* dbase = dqkv + bi * t * 3 * c;      // (T, 3C)
    for (int64_t h = 0; h < nh; ++h) {
      const S* q = base + h * hs;                // (T, HS), stride 3C
      const S* k = base + c + h * hs;            // (T, HS), stride 3C
      const S* v = base + 2 * c + h * hs;        // (T, HS), stride 3C
      S* dq = dbase + h * hs;                    // (T, HS), stride 3C
      S* dk = dbase + c + h * hs;                // (T, HS), stride 3C
      S* dv = dbase + 2 * c + h * hs;            // (T, HS), stride 3C
      const S* p = att + (bi * nh + h) * t * t;  // (T, T)
      const S* dO = dout + bi * t * c + h * hs;  // (T, HS), stride C
      S* dp = scratch;                           // (T, T)
      gemm<S>(true, false, t, hs, t, S(1), p, t, dO, c, S(1), dv, 3 * c);
      gemm<S>(false, true, t, t, hs, S(1), dO, c, v, 3 * c, S(0), dp, t);
      for (int64_t i = 0; i < t; ++i) {
        const S* prow = p + i * t;
        S* drow = dp + i * t;
        S dot = 0;
        for (int64_t j = 0; j <= i; ++j) dot += prow[j] * drow[j];
        for (int64_t j = 0; j <= i; ++j) drow[j] = prow[j] * (drow[j] - dot);
        for (int64_t j = i + 1; j < t; ++j) drow[j] = S(0);
      }
      gemm<S>(false, false, t, hs, t, scale, dp, t, k, 3 * c, S(1), dq, 3 * c);
      gemm<S>(true, false, t, hs, t, scale, dp, t, q, 3 * c, S(1), dk, 3 * c);
    }
  }
}

#define BS_INSTANTIATE(S)                                                                    \
  template void attentionForward<S>(S*, S*, const S*, int64_t, int64_t, int64_t, int64_t);   \
  template void attentionBackward<S>(S*, S*, const S*, const S*, const S*, int64_t, int64_t, \
                                     int64_t, int64_t);
BS_INSTANTIATE(float)
BS_INSTANTIATE(double)
#undef BS_INSTANTIATE

}  // namespace bubblescope::engine::kernels
