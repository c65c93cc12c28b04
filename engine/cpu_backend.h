// CpuBackend: the Backend (engine/backend.h) of a CPU rank: host memory from
// a counting Allocator, matrix products through OpenBLAS, the hand-written
// kernels of engine/cpu_kernels.h.
//
// Contract: every op calls the float kernel of engine/cpu_kernels.h (or
// engine/adamw.h adamwUpdate, engine/cpu_gemm.h gemm) with the same
// arguments, so results are bit for bit those of calling the kernels
// directly. Ops run synchronously on the calling thread; the only errors are
// negative sizes (the op then does nothing), kept
// until the next synchronisation point like any backend's.
#pragma once

#include <initializer_list>

#include "engine/backend.h"

namespace bubblescope::engine {

class CpuBackend final : public Backend {
 public:
  CpuBackend() = default;

  Device device() const override { return Device::kHost; }
  std::string description() const override;
  Allocator& allocator() override { return allocator_; }
  Status synchronize() override { return takeError(); }

  void copyToDevice(void* dst, const void* hostSrc, size_t bytes) override;
  Status copyToHost(void* hostDst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill(float* x, float value, int64_t n) override;
  void axpy(float* y, float alpha, const float* x, int64_t n) override;
  void scale(float* x, float alpha, int64_t n) override;
  Result<double> sum(const float* x, int64_t n) override;
  Result<double> squaredSum(const float* x, int64_t n) override;

  void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
            int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override;
  void linearForward(float* out, const float* inp, const float* weight, const float* bias,
                     int64_t n, int64_t ic, int64_t oc) override;
  void linearBackwardInput(float* dinp, const float* dout, const float* weight, int64_t n,
                           int64_t ic, int64_t oc) override;
  void linearBackwardWeight(float* dweight, float* dbias, const float* dout, const float* inp,
                            int64_t n, int64_t ic, int64_t oc) override;
  void layerNormForward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                        const float* bias, int64_t n, int64_t c) override;
  void layerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                         const float* inp, const float* weight, const float* mean,
                         const float* rstd, int64_t n, int64_t c) override;
  void layerNormBackwardInput(float* dinp, const float* dout, const float* inp, const float* weight,
                              const float* mean, const float* rstd, int64_t n, int64_t c) override;
  void layerNormBackwardWeight(float* dweight, float* dbias, const float* dout, const float* inp,
                               const float* mean, const float* rstd, int64_t n, int64_t c) override;
  Shape attentionScratchShape(int64_t t, int64_t nh) const override;
  void attentionForward(float* out, float* att, const float* qkv, int64_t b, int64_t t, int64_t c,
                        int64_t nh) override;
  void attentionBackward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                         const float* att, int64_t b, int64_t t, int64_t c, int64_t nh) override;
  void geluForward(float* out, const float* inp, int64_t n) override;
  void geluBackward(float* dinp, const float* inp, const float* dout, int64_t n) override;
  void residualForward(float* out, const float* a, const float* b, int64_t n) override;
  void residualBackward(float* da, float* db, const float* dout, int64_t n) override;
  void embeddingForward(float* out, const int32_t* tokens, const float* wte, const float* wpe,
                        int64_t b, int64_t t, int64_t c) override;
  void embeddingBackward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                         int64_t b, int64_t t, int64_t c) override;
  void crossEntropyForward(float* probsInOut, float* losses, const int32_t* targets, int64_t n,
                           int64_t v) override;
  void crossEntropyBackward(float* probsToDlogits, const int32_t* targets, float dloss, int64_t n,
                            int64_t v) override;
  void adamwUpdate(float* param, const float* grad, float* m, float* v, int64_t n,
                   const AdamWConfig& config, double lr, int64_t t, bool decay) override;

 private:
  // False (and the error kept) when a size is negative.
  bool sizesOk(const char* op, std::initializer_list<int64_t> sizes);
  Allocator allocator_;
};

}  // namespace bubblescope::engine
