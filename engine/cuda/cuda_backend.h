// CudaBackend: the Backend (engine/backend.h) of a GPU rank: device memory
// from a CudaAllocator, matrix products through cuBLAS (fp32, no TF32), the
// kernels of engine/cuda/cuda_kernels.h, all queued on one compute stream.
//
// Contract: create() selects the device and leaves it current on the calling
// thread, which then owns the backend. Ops are asynchronous (queued on
// stream()); errors are kept until the next synchronisation point
// (Backend's contract). Results match the CPU backend within fp32 rounding,
// except embeddingBackward's dwte, whose atomic adds are not ordered.
// Destroy every tensor made from the backend before the backend.
//
// Precision: kFp32 (default) runs every product in fp32 (no TF32). kBf16 is
// the mixed-precision path of the linear layers: parameters, gradients,
// optimizer state and activations stay fp32 (fp32 master weights); each
// linear op rounds its operands (input and weight, or dout and weight, or
// dout and input) to bf16 copies in scratch buffers (toBf16, counted as
// activations) and multiplies them with fp32 accumulation and fp32 results
// (gemmBf16); bias gradients come from fp32 dout. gemm(), attention and
// everything else stay fp32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "engine/backend.h"
#include "engine/cuda/cuda_allocator.h"
#include "engine/cuda/cuda_context.h"

namespace bubblescope::engine::cuda {

enum class MatmulPrecision : uint8_t { kFp32, kBf16 };

class CudaBackend final : public Backend {
 public:
  // Fails (kFailedPrecondition: no GPU) with the CUDA error.
  static Result<std::unique_ptr<CudaBackend>> create(
      int device, MatmulPrecision precision = MatmulPrecision::kFp32);
  ~CudaBackend() override;

  // The compute stream every op is queued on (communicators order their
  // work after it with events).
  cudaStream_t stream() const { return context_->stream(); }
  CudaContext& context() { return *context_; }
  MatmulPrecision precision() const { return precision_; }

  Device device() const override { return Device::kCuda; }
  std::string description() const override { return description_; }
  Allocator& allocator() override { return allocator_; }
  Status synchronize() override;

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
  CudaBackend() = default;
  Result<double> reduce(const float* x, int64_t n, bool squares);
  // bf16 copies of two operands in the scratch buffers (grown as needed);
  // null (and the error kept) on failure.
  std::pair<__nv_bfloat16*, __nv_bfloat16*> toBf16Pair(const float* a, int64_t na, const float* b,
                                                       int64_t nb);
  __nv_bfloat16* bf16Scratch(int slot, int64_t elements);

  std::unique_ptr<CudaContext> context_;
  CudaAllocator allocator_;
  std::string description_;
  // Device scratch of the sums: kSumPartials partials and the result.
  void* sumScratch_ = nullptr;
  size_t sumScratchBytes_ = 0;
  MatmulPrecision precision_ = MatmulPrecision::kFp32;
  // Two bf16 operand buffers of the kBf16 linear ops.
  void* bf16Scratch_[2] = {nullptr, nullptr};
  size_t bf16ScratchBytes_[2] = {0, 0};
};

}  // namespace bubblescope::engine::cuda
