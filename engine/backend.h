// Backend: the compute operations the model's layers, the optimizer and the
// trainers need, on one device: the CPU (engine/cpu_backend.h, OpenBLAS and
// the kernels of engine/cpu_kernels.h) or one CUDA GPU
// (engine/cuda/cuda_backend.h, cuBLAS and engine/cuda/cuda_kernels.h).
//
// Contract:
// - One Backend per rank, used from one thread (the rank's training thread).
//   It owns the rank's Allocator: tensors made by newTensor() (or from
//   allocator()) live in the backend's memory (TensorT::device()), and every
//   pointer handed to an op must point into that memory. Host pointers are
//   only the ones named `host...` (copyToDevice, copyToHost).
// - Shapes, conventions and maths of every op are those of the CPU kernels
//   (engine/cpu_kernels.h): row-major contiguous fp32 buffers, forward ops
//   overwrite their outputs, backward ops ADD into every gradient they
//   produce (crossEntropyBackward overwrites). Token ids and targets are
//   int32 buffers in the backend's memory too (newIndexTensor).
// - Ops are queued and may run asynchronously (CUDA): they return nothing.
//   The first error (a bad argument, a failed launch, a fault inside a
//   kernel) is kept, later ops still run, and the next synchronisation
//   point returns it: synchronize(), copyToHost(), sum(), squaredSum(). A
//   step whose synchronisation fails is lost; the error says why.
// - Results: the CPU backend computes exactly what the CPU kernels compute
//   (tests/engine/cpu_backend_test.cpp checks bit for bit); the CUDA backend
//   matches within fp32 rounding (tests/gpu/cuda_backend_test.cpp states the
//   tolerances).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "engine/adamw.h"
#include "engine/allocator.h"
#include "engine/tensor.h"

namespace bubblescope::engine {

class Backend {
 public:
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // Where this backend's tensors live, and in words ("cpu (OpenBLAS, 1
  // thread)", "cuda:0 NVIDIA H200 (sm_90, 139 GiB)").
  virtual Device device() const = 0;
  virtual std::string description() const = 0;
  // The rank's allocator: its counts are the rank's memory report.
  virtual Allocator& allocator() = 0;

  // A zero-filled tensor in the backend's memory, counted under category.
  Tensor newTensor(Shape shape, MemoryCategory category) {
    return Tensor(std::move(shape), category, &allocator());
  }
  // Token ids or targets (int32) in the backend's memory.
  TensorT<int32_t> newIndexTensor(Shape shape, MemoryCategory category) {
    return TensorT<int32_t>(std::move(shape), category, &allocator());
  }

  // Waits for every queued op; returns the first error since the last
  // synchronisation point and forgets it.
  virtual Status synchronize() = 0;

  // ---- Memory ------------------------------------------------------------
  // dst (backend memory) = hostSrc; hostSrc may be reused once this returns.
  virtual void copyToDevice(void* dst, const void* hostSrc, size_t bytes) = 0;
  // hostDst = src (backend memory), after every queued op: a synchronisation
  // point (hostDst is valid when it returns ok).
  virtual Status copyToHost(void* hostDst, const void* src, size_t bytes) = 0;
  // dst = src, both in backend memory (may not overlap).
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  // x (n) = value.
  virtual void fill(float* x, float value, int64_t n) = 0;
  // y (n) += alpha * x (n).
  virtual void axpy(float* y, float alpha, const float* x, int64_t n) = 0;
  // x (n) *= alpha.
  virtual void scale(float* x, float alpha, int64_t n) = 0;
  // Sum and sum of squares of x (n), accumulated in double (the mean loss,
  // the global gradient norm). Synchronisation points.
  virtual Result<double> sum(const float* x, int64_t n) = 0;
  virtual Result<double> squaredSum(const float* x, int64_t n) = 0;

  // Typed conveniences over the copies (sizes checked: a mismatch is the
  // backend's next error).
  template <class T>
  void upload(TensorT<T>& dst, std::span<const T> host) {
    if (host.size() != static_cast<size_t>(dst.numel())) {
      fail(Status::invalidArgument("upload of " + std::to_string(host.size()) +
                                   " elements into a tensor of " + shapeToString(dst.shape())));
      return;
    }
    copyToDevice(dst.data(), host.data(), dst.bytes());
  }
  template <class T>
  Result<std::vector<T>> download(const TensorT<T>& src) {
    std::vector<T> host(static_cast<size_t>(src.numel()));
    BS_RETURN_IF_ERROR(copyToHost(host.data(), src.data(), src.bytes()));
    return host;
  }
  void zero(Tensor& t) { fill(t.data(), 0.0f, t.numel()); }

  // ---- Matrix products -----------------------------------------------------
  // C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C, row-major with
  // row strides lda, ldb, ldc (engine/cpu_gemm.h).
  virtual void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                    int64_t ldc) = 0;
  // out (N, OC) = inp (N, IC) · weight (OC, IC)^T + bias (OC); bias may be null.
  virtual void linearForward(float* out, const float* inp, const float* weight, const float* bias,
                             int64_t n, int64_t ic, int64_t oc) = 0;
  // dinp (N, IC) += dout (N, OC) · weight (OC, IC). (Zero-bubble "B" half.)
  virtual void linearBackwardInput(float* dinp, const float* dout, const float* weight, int64_t n,
                                   int64_t ic, int64_t oc) = 0;
  // dweight (OC, IC) += dout^T · inp; dbias (OC) += column sums of dout; dbias
  // may be null. (Zero-bubble "W" half.)
  virtual void linearBackwardWeight(float* dweight, float* dbias, const float* dout,
                                    const float* inp, int64_t n, int64_t ic, int64_t oc) = 0;

  // ---- Layer norm ------------------------------------------------------------
  // out (N, C), mean (N), rstd (N) from inp (N, C), weight (C), bias (C).
  virtual void layerNormForward(float* out, float* mean, float* rstd, const float* inp,
                                const float* weight, const float* bias, int64_t n, int64_t c) = 0;
  // dinp (N, C), dweight (C), dbias (C) += gradients given dout (N, C).
  virtual void layerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                                 const float* inp, const float* weight, const float* mean,
                                 const float* rstd, int64_t n, int64_t c) = 0;
  // The two halves of layerNormBackward: dinp += input gradient (zero-bubble
  // "B"); dweight, dbias += parameter gradients, reading no weight (zero-
  // bubble "W").
  virtual void layerNormBackwardInput(float* dinp, const float* dout, const float* inp,
                                      const float* weight, const float* mean, const float* rstd,
                                      int64_t n, int64_t c) = 0;
  virtual void layerNormBackwardWeight(float* dweight, float* dbias, const float* dout,
                                       const float* inp, const float* mean, const float* rstd,
                                       int64_t n, int64_t c) = 0;

  // ---- Causal multi-head attention -----------------------------------------
  // The scratch attentionBackward needs for sequences of t tokens and nh
  // heads: (T, T) on the CPU, (NH, T, T) on CUDA (all heads at once).
  virtual Shape attentionScratchShape(int64_t t, int64_t nh) const = 0;
  // qkv (B, T, 3C) -> att (B, NH, T, T) probabilities, out (B, T, C).
  virtual void attentionForward(float* out, float* att, const float* qkv, int64_t b, int64_t t,
                                int64_t c, int64_t nh) = 0;
  // dqkv (B, T, 3C) += gradient given dout (B, T, C); scratch
  // (attentionScratchShape) is overwritten.
  virtual void attentionBackward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                                 const float* att, int64_t b, int64_t t, int64_t c, int64_t nh) = 0;

  // ---- Pointwise -------------------------------------------------------------
  virtual void geluForward(float* out, const float* inp, int64_t n) = 0;
  virtual void geluBackward(float* dinp, const float* inp, const float* dout, int64_t n) = 0;
  // out (n) = a + b; out may alias a or b.
  virtual void residualForward(float* out, const float* a, const float* b, int64_t n) = 0;
  // da (n) += dout; db (n) += dout.
  virtual void residualBackward(float* da, float* db, const float* dout, int64_t n) = 0;

  // ---- Embedding ---------------------------------------------------------------
  // out (B, T, C) = wte[tokens] (V, C) + wpe[t] (maxT, C); tokens (B, T) in
  // backend memory, 0 <= tokens < V (not checked on a device).
  virtual void embeddingForward(float* out, const int32_t* tokens, const float* wte,
                                const float* wpe, int64_t b, int64_t t, int64_t c) = 0;
  // dwte, dwpe += scatter of dout (B, T, C).
  virtual void embeddingBackward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                                 int64_t b, int64_t t, int64_t c) = 0;

  // ---- Softmax cross-entropy -------------------------------------------------
  // In place: logits (N, V) become probabilities; losses (N) = -log p[target].
  virtual void crossEntropyForward(float* probsInOut, float* losses, const int32_t* targets,
                                   int64_t n, int64_t v) = 0;
  // In place: probs (N, V) become (probs - onehot(target)) * dloss (overwrites).
  virtual void crossEntropyBackward(float* probsToDlogits, const int32_t* targets, float dloss,
                                    int64_t n, int64_t v) = 0;

  // ---- Optimizer ---------------------------------------------------------------
  // One AdamW update of n elements at (1-based) step t, exactly the
  // arithmetic of engine/adamw.h adamwUpdate().
  virtual void adamwUpdate(float* param, const float* grad, float* m, float* v, int64_t n,
                           const AdamWConfig& config, double lr, int64_t t, bool decay) = 0;

 protected:
  Backend() = default;
  // Keeps the first error until the next synchronisation point.
  void fail(Status status) {
    if (firstError_.isOk() && !status.isOk()) firstError_ = std::move(status);
  }
  // The kept error, forgotten (ok when there was none).
  Status takeError() { return std::exchange(firstError_, Status::ok()); }

 private:
  Status firstError_;
};

}  // namespace bubblescope::engine
