#include <algorithm>
#include <cmath>
#include <type_traits>

#include "engine/cpu_gemm.h"
#include "engine/cpu_kernels.h"
#include "engine/cpu_vector_math.h"

namespace bubblescope::engine::kernels {

namespace {
// Query rows per block. Row block I (rows i0 .. i0 + R − 1) sees keys
// 0 .. i0 + R − 1 only, so each GEMM covers the lower triangle plus the
// diagonal block: (nb + 1) / (2 nb) of the full T × T work for nb blocks
// (T = 1024: 0.52; T = 128: 0.63). A block's scores, R × T floats (128 KiB
// at T = 1024), stay in L2 from the GEMM that writes them through the
// softmax to the GEMM that reads them.
constexpr int64_t kQueryBlock = 32;

// e^x: vexp in fp32 (cpu_vector_math.h: no libm call), std::exp in double.
template <class S>
inline S expOf(S x) {
  if constexpr (std::is_same_v<S, float>) {
    return vexp(x);
  } else {
    return std::exp(x);
  }
}

// Causal softmax of a block's rows in place: row r (query i0 + r) over keys
// 0 .. i0 + r, zero to the end of the row (T).
template <class S>
inline void softmaxBlock(S* a, int64_t rows, int64_t i0, int64_t t) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    S* row = a + r * t;  // (T); keys 0..i are visible
    const S maxScore = *std::max_element(row, row + i + 1);
    for (int64_t j = 0; j <= i; ++j) row[j] = expOf(row[j] - maxScore);
    const S inv = S(1) / laneSum<S>(i + 1, [&](int64_t j) { return row[j]; });
    for (int64_t j = 0; j <= i; ++j) row[j] *= inv;
    std::fill(row + i + 1, row + t, S(0));
  }
}

// Softmax backward of a block's rows: dP_I (in place, stride T) becomes
// P * (dP - rowsum(P * dP)) over each row's visible keys, zero after them up
// to the block's last key (i0 + rows − 1).
template <class S>
inline void softmaxBackwardBlock(S* dp, const S* p, int64_t rows, int64_t i0, int64_t t) {
  const int64_t keys = i0 + rows;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    const S* prow = p + r * t;
    S* drow = dp + r * t;
    const S dot = laneSum<S>(i + 1, [&](int64_t j) { return prow[j] * drow[j]; });
    for (int64_t j = 0; j <= i; ++j) drow[j] = prow[j] * (drow[j] - dot);
    std::fill(drow + i + 1, drow + keys, S(0));
  }
}

BS_VECTOR_CLONES void softmaxBlockF32(float* a, int64_t rows, int64_t i0, int64_t t) {
  softmaxBlock(a, rows, i0, t);
}

BS_VECTOR_CLONES void softmaxBackwardBlockF32(float* dp, const float* p, int64_t rows, int64_t i0,
                                              int64_t t) {
  softmaxBackwardBlock(dp, p, rows, i0, t);
}

// The fp32 blocks per vector width, the double reference as it is.
template <class S>
void softmaxRows(S* a, int64_t rows, int64_t i0, int64_t t) {
  if constexpr (std::is_same_v<S, float>) {
    softmaxBlockF32(a, rows, i0, t);
  } else {
    softmaxBlock(a, rows, i0, t);
  }
}

template <class S>
void softmaxBackwardRows(S* dp, const S* p, int64_t rows, int64_t i0, int64_t t) {
  if constexpr (std::is_same_v<S, float>) {
    softmaxBackwardBlockF32(dp, p, rows, i0, t);
  } else {
    softmaxBackwardBlock(dp, p, rows, i0, t);
  }
}
}  // namespace

// Per (batch, head) and query block: scores (R, i0 + R) = q_I k^T / sqrt(HS)
// through one GEMM on strided views of qkv, causal softmax row by row (zero
// above the diagonal, to the end of the row), then out_I = att_I · v.
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
      S* o = out + bi * t * c + h * hs;    // (T, HS), row stride C
      for (int64_t i0 = 0; i0 < t; i0 += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, t - i0), keys = i0 + rows;
        S* a = att + ((bi * nh + h) * t + i0) * t;  // (R, T), keys 0 .. keys − 1 computed
        gemm<S>(false, true, rows, keys, hs, scale, q + i0 * 3 * c, 3 * c, k, 3 * c, S(0), a, t);
        softmaxRows(a, rows, i0, t);
        gemm<S>(false, false, rows, hs, keys, S(1), a, t, v, 3 * c, S(0), o + i0 * c, c);
      }
    }
  }
}

// With P = att, dO = dout_h, per query block I (keys 0 .. K − 1 = i0 + R − 1):
// dV[0:K] += P_I^T dO_I; dP_I = dO_I V[0:K]^T;
// dS_I = P_I * (dP_I - rowsum(P_I * dP_I)) (softmax backward, zero above the
// diagonal); dQ_I += dS_I K[0:K] * scale; dK[0:K] += dS_I^T Q_I * scale.
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
      for (int64_t i0 = 0; i0 < t; i0 += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, t - i0), keys = i0 + rows;
        const S* pI = p + i0 * t;    // (R, T)
        const S* dOI = dO + i0 * c;  // (R, HS), stride C
        S* dpI = scratch + i0 * t;   // (R, T), keys 0 .. keys − 1 used
        gemm<S>(true, false, keys, hs, rows, S(1), pI, t, dOI, c, S(1), dv, 3 * c);
        gemm<S>(false, true, rows, keys, hs, S(1), dOI, c, v, 3 * c, S(0), dpI, t);
        softmaxBackwardRows(dpI, pI, rows, i0, t);
        gemm<S>(false, false, rows, hs, keys, scale, dpI, t, k, 3 * c, S(1), dq + i0 * 3 * c,
                3 * c);
        gemm<S>(true, false, keys, hs, rows, scale, dpI, t, q + i0 * 3 * c, 3 * c, S(1), dk, 3 * c);
      }
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
