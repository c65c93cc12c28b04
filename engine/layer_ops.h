// LayerOpsT<S>: the compute operations the model's layers call, for scalar S.
//
// Contract:
// - LayerOpsT<float> forwards every op to a Backend (engine/backend.h), so
//   the float model runs wherever its backend runs (the CPU, one GPU). All
//   pointers must point into that backend's memory.
// - LayerOpsT<double> (the finite-difference reference model) calls the CPU
//   kernels (engine/cpu_kernels.h) directly on host memory; it holds no
//   backend.
// - Same conventions as the Backend's ops (forward ops overwrite, backward
//   ops add). With a CpuBackend the float ops compute exactly what the CPU
//   kernels compute, so a model on the CPU backend is bit for bit the model
//   that called the kernels directly.
// - Counts (`n`) are elements, never bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/result.h"
#include "engine/backend.h"
#include "engine/cpu_kernels.h"

namespace bubblescope::engine {

template <class S>
class LayerOpsT {
  static constexpr bool kOnBackend = std::is_same_v<S, float>;

 public:
  LayerOpsT() = default;
  // The backend float ops run on (ignored for double); not owned.
  explicit LayerOpsT(Backend* backend) : backend_(backend) {}
  Backend* backend() const { return backend_; }

  // ---- Memory --------------------------------------------------------------
  void copy(S* dst, const S* src, int64_t n) const {
    if constexpr (kOnBackend) {
      backend_->copy(dst, src, static_cast<size_t>(n) * sizeof(S));
    } else {
      std::copy(src, src + n, dst);
    }
  }
  void zero(S* x, int64_t n) const {
    if constexpr (kOnBackend) {
      backend_->fill(x, 0.0f, n);
    } else {
      std::fill(x, x + n, S(0));
    }
  }
  void zero(TensorT<S>& t) const { zero(t.data(), t.numel()); }
  // y (n) += alpha * x (n).
  void axpy(S* y, S alpha, const S* x, int64_t n) const {
    if constexpr (kOnBackend) {
      backend_->axpy(y, alpha, x, n);
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
    }
  }
  // Sum of x (n) in double, in index order: a synchronisation point.
  Result<double> sum(const S* x, int64_t n) const {
    if constexpr (kOnBackend) {
      return backend_->sum(x, n);
    } else {
      double s = 0.0;
      for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]);
      return s;
    }
  }
  // Whether the CPU reads and writes this ops' buffers in place (host
  // memory); false on a device, whose buffers only ops and copies touch.
  bool hostMemory() const {
    if constexpr (kOnBackend) {
      return backend_->device() == Device::kHost;
    } else {
      return true;
    }
  }
  // Values (n) from backend memory to the host: a synchronisation point.
  Status download(S* hostDst, const S* src, int64_t n) const {
    if constexpr (kOnBackend) {
      return backend_->copyToHost(hostDst, src, static_cast<size_t>(n) * sizeof(S));
    } else {
      std::copy(src, src + n, hostDst);
      return Status::ok();
    }
  }
  // Values (n) from the host into backend memory.
  void upload(S* dst, const S* hostSrc, int64_t n) const {
    if constexpr (kOnBackend) {
      backend_->copyToDevice(dst, hostSrc, static_cast<size_t>(n) * sizeof(S));
    } else {
      std::copy(hostSrc, hostSrc + n, dst);
    }
  }
  // Token ids (int32, n) from the host into backend memory.
  void uploadIds(int32_t* dst, const int32_t* hostSrc, int64_t n) const {
    if constexpr (kOnBackend) {
      backend_->copyToDevice(dst, hostSrc, static_cast<size_t>(n) * sizeof(int32_t));
    } else {
      std::copy(hostSrc, hostSrc + n, dst);
    }
  }

  // ---- Layers (see engine/backend.h) -----------------------------------------
  void linearForward(S* out, const S* inp, const S* weight, const S* bias, int64_t n, int64_t ic,
                     int64_t oc) const {
    if constexpr (kOnBackend) {
      backend_->linearForward(out, inp, weight, bias, n, ic, oc);
    } else {
      kernels::linearForward<S>(out, inp, weight, bias, n, ic, oc);
    }
  }
  void linearBackwardInput(S* dinp, const S* dout, const S* weight, int64_t n, int64_t ic,
                           int64_t oc) const {
    if constexpr (kOnBackend) {
      backend_->linearBackwardInput(dinp, dout, weight, n, ic, oc);
    } else {
      kernels::linearBackwardInput<S>(dinp, dout, weight, n, ic, oc);
    }
  }
  void linearBackwardWeight(S* dweight, S* dbias, const S* dout, const S* inp, int64_t n,
                            int64_t ic, int64_t oc) const {
    if constexpr (kOnBackend) {
      backend_->linearBackwardWeight(dweight, dbias, dout, inp, n, ic, oc);
    } else {
      kernels::linearBackwardWeight<S>(dweight, dbias, dout, inp, n, ic, oc);
    }
  }
  void layerNormForward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias,
                        int64_t n, int64_t c) const {
    if constexpr (kOnBackend) {
      backend_->layerNormForward(out, mean, rstd, inp, weight, bias, n, c);
    } else {
      kernels::layerNormForward<S>(out, mean, rstd, inp, weight, bias, n, c);
    }
  }
  void layerNormBackwardInput(S* dinp, const S* dout, const S* inp, const S* weight, const S* mean,
                              const S* rstd, int64_t n, int64_t c) const {
    if constexpr (kOnBackend) {
      backend_->layerNormBackwardInput(dinp, dout, inp, weight, mean, rstd, n, c);
    } else {
      kernels::layerNormBackwardInput<S>(dinp, dout, inp, weight, mean, rstd, n, c);
    }
  }
  void layerNormBackwardWeight(S* dweight, S* dbias, const S* dout, const S* inp, const S* mean,
                               const S* rstd, int64_t n, int64_t c) const {
    if constexpr (kOnBackend) {
      backend_->layerNormBackwardWeight(dweight, dbias, dout, inp, mean, rstd, n, c);
    } else {
      kernels::layerNormBackwardWeight<S>(dweight, dbias, dout, inp, mean, rstd, n, c);
    }
  }
  // The scratch attentionBackward needs for t tokens and nh heads.
  Shape attentionScratchShape(int64_t t, int64_t nh) const {
    if constexpr (kOnBackend) {
      return backend_->attentionScratchShape(t, nh);
    } else {
      return {t, t};
    }
  }
  void attentionForward(S* out, S* att, const S* qkv, int64_t b, int64_t t, int64_t c,
                        int64_t nh) const {
    if constexpr (kOnBackend) {
      backend_->attentionForward(out, att, qkv, b, t, c, nh);
    } else {
      kernels::attentionForward<S>(out, att, qkv, b, t, c, nh);
    }
  }
  void attentionBackward(S* dqkv, S* scratch, const S* dout, const S* qkv, const S* att, int64_t b,
                         int64_t t, int64_t c, int64_t nh) const {
    if constexpr (kOnBackend) {
      backend_->attentionBackward(dqkv, scratch, dout, qkv, att, b, t, c, nh);
    } else {
      kernels::attentionBackward<S>(dqkv, scratch, dout, qkv, att, b, t, c, nh);
    }
  }
  void geluForward(S* out, const S* inp, int64_t n) const {
    if constexpr (kOnBackend) {
      backend_->geluForward(out, inp, n);
    } else {
      kernels::geluForward<S>(out, inp, n);
    }
  }
  void geluBackward(S* dinp, const S* inp, const S* dout, int64_t n) const {
    if constexpr (kOnBackend) {
      backend_->geluBackward(dinp, inp, dout, n);
    } else {
      kernels::geluBackward<S>(dinp, inp, dout, n);
    }
  }
  void residualForward(S* out, const S* a, const S* b, int64_t n) const {
    if constexpr (kOnBackend) {
      backend_->residualForward(out, a, b, n);
    } else {
      kernels::residualForward<S>(out, a, b, n);
    }
  }
  void embeddingForward(S* out, const int32_t* tokens, const S* wte, const S* wpe, int64_t b,
                        int64_t t, int64_t c) const {
    if constexpr (kOnBackend) {
      backend_->embeddingForward(out, tokens, wte, wpe, b, t, c);
    } else {
      kernels::embeddingForward<S>(out, tokens, wte, wpe, b, t, c);
    }
  }
  void embeddingBackward(S* dwte, S* dwpe, const S* dout, const int32_t* tokens, int64_t b,
                         int64_t t, int64_t c) const {
    if constexpr (kOnBackend) {
      backend_->embeddingBackward(dwte, dwpe, dout, tokens, b, t, c);
    } else {
      kernels::embeddingBackward<S>(dwte, dwpe, dout, tokens, b, t, c);
    }
  }
  void crossEntropyForward(S* probsInOut, S* losses, const int32_t* targets, int64_t n,
                           int64_t v) const {
    if constexpr (kOnBackend) {
      backend_->crossEntropyForward(probsInOut, losses, targets, n, v);
    } else {
      kernels::crossEntropyForward<S>(probsInOut, losses, targets, n, v);
    }
  }
  void crossEntropyBackward(S* probsToDlogits, const int32_t* targets, S dloss, int64_t n,
                            int64_t v) const {
    if constexpr (kOnBackend) {
      backend_->crossEntropyBackward(probsToDlogits, targets, dloss, n, v);
    } else {
      kernels::crossEntropyBackward<S>(probsToDlogits, targets, dloss, n, v);
    }
  }

 private:
  Backend* backend_ = nullptr;
};

}  // namespace bubblescope::engine
