#include "engine/cuda/cuda_backend.h"

#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <new>

#include "engine/cuda/cublas_gemm.h"
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_kernels.h"
#include "engine/cuda/cuda_math.h"

namespace bubblescope::engine::cuda {
namespace {

// cuBLAS level-1 calls take int counts: longer vectors go in chunks.
constexpr int64_t kChunk = INT_MAX / 2;

}  // namespace

Result<std::unique_ptr<CudaBackend>> CudaBackend::create(int device, MatmulPrecision precision) {
  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->precision_ = precision;
  BS_ASSIGN_OR_RETURN(b->context_, CudaContext::create(device));
  BS_ASSIGN_OR_RETURN(const std::string what, deviceDescription(device));
  b->description_ = "cuda:" + std::to_string(device) + " " + what +
                    (precision == MatmulPrecision::kBf16 ? ", bf16 linear layers" : "");
  b->sumScratchBytes_ = (kSumPartials + 1) * sizeof(double);
  try {
    b->sumScratch_ = b->allocator_.allocate(b->sumScratchBytes_, MemoryCategory::kOther);
  } catch (const std::bad_alloc&) {
    return Status::internal("cannot allocate " + std::to_string(b->sumScratchBytes_) +
                            " bytes on " + b->description_);
  }
  return b;
}

CudaBackend::~CudaBackend() {
  if (sumScratch_ != nullptr) {
    allocator_.release(sumScratch_, sumScratchBytes_, MemoryCategory::kOther);
  }
  for (int i = 0; i < 2; ++i) {
    if (bf16Scratch_[i] != nullptr) {
      allocator_.release(bf16Scratch_[i], bf16ScratchBytes_[i], MemoryCategory::kActivations);
    }
  }
}

__nv_bfloat16* CudaBackend::bf16Scratch(int slot, int64_t elements) {
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(elements, 1)) * sizeof(__nv_bfloat16);
  if (bytes > bf16ScratchBytes_[slot]) {
    if (bf16Scratch_[slot] != nullptr) {  // cudaFree waits for the kernels still using it
      allocator_.release(bf16Scratch_[slot], bf16ScratchBytes_[slot], MemoryCategory::kActivations);
      bf16Scratch_[slot] = nullptr;
      bf16ScratchBytes_[slot] = 0;
    }
    try {
      bf16Scratch_[slot] = allocator_.allocate(bytes, MemoryCategory::kActivations);
    } catch (const std::bad_alloc&) {
      fail(Status::internal("cannot allocate " + std::to_string(bytes) +
                            " bytes of bf16 scratch on " + description_));
      return nullptr;
    }
    bf16ScratchBytes_[slot] = bytes;
  }
  return static_cast<__nv_bfloat16*>(bf16Scratch_[slot]);
}

std::pair<__nv_bfloat16*, __nv_bfloat16*> CudaBackend::toBf16Pair(const float* a, int64_t na,
                                                                  const float* b, int64_t nb) {
  __nv_bfloat16* ab = bf16Scratch(0, na);
  __nv_bfloat16* bb = bf16Scratch(1, nb);
  if (ab == nullptr || bb == nullptr) return {nullptr, nullptr};
  const Status sa = toBf16(ab, a, na, stream());
  const Status sb = toBf16(bb, b, nb, stream());
  if (!sa.isOk() || !sb.isOk()) {
    fail(sa.isOk() ? sb : sa);
    return {nullptr, nullptr};
  }
  return {ab, bb};
}

Status CudaBackend::synchronize() {
  fail(context_->synchronize());
  return takeError();
}

void CudaBackend::copyToDevice(void* dst, const void* hostSrc, size_t bytes) {
  if (bytes == 0) return;
  // From pageable memory: returns once hostSrc has been staged.
  const cudaError_t rc = cudaMemcpyAsync(dst, hostSrc, bytes, cudaMemcpyHostToDevice, stream());
  if (rc != cudaSuccess) fail(cudaError(rc, "cudaMemcpyAsync(host to device)", __FILE__, __LINE__));
}

Status CudaBackend::copyToHost(void* hostDst, const void* src, size_t bytes) {
  if (bytes > 0) {
    const cudaError_t rc = cudaMemcpyAsync(hostDst, src, bytes, cudaMemcpyDeviceToHost, stream());
    if (rc != cudaSuccess) {
      fail(cudaError(rc, "cudaMemcpyAsync(device to host)", __FILE__, __LINE__));
    }
  }
  return synchronize();
}

void CudaBackend::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  const cudaError_t rc = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream());
  if (rc != cudaSuccess) {
    fail(cudaError(rc, "cudaMemcpyAsync(device to device)", __FILE__, __LINE__));
  }
}

void CudaBackend::fill(float* x, float value, int64_t n) {
  if (value == 0.0f && n > 0) {  // all-zero bits: a memset
    const cudaError_t rc = cudaMemsetAsync(x, 0, static_cast<size_t>(n) * sizeof(float), stream());
    if (rc != cudaSuccess) fail(cudaError(rc, "cudaMemsetAsync", __FILE__, __LINE__));
    return;
  }
  fail(cuda::fill(x, value, n, stream()));
}

void CudaBackend::axpy(float* y, float alpha, const float* x, int64_t n) {
  if (n < 0) return fail(Status::invalidArgument("axpy: negative size"));
  for (int64_t off = 0; off < n; off += kChunk) {
    const int len = static_cast<int>(std::min(kChunk, n - off));
    const cublasStatus_t rc = cublasSaxpy(context_->cublas(), len, &alpha, x + off, 1, y + off, 1);
    if (rc != CUBLAS_STATUS_SUCCESS)
      return fail(cublasError(rc, "cublasSaxpy", __FILE__, __LINE__));
  }
}

void CudaBackend::scale(float* x, float alpha, int64_t n) {
  if (n < 0) return fail(Status::invalidArgument("scale: negative size"));
  for (int64_t off = 0; off < n; off += kChunk) {
    const int len = static_cast<int>(std::min(kChunk, n - off));
    const cublasStatus_t rc = cublasSscal(context_->cublas(), len, &alpha, x + off, 1);
    if (rc != CUBLAS_STATUS_SUCCESS)
      return fail(cublasError(rc, "cublasSscal", __FILE__, __LINE__));
  }
}

Result<double> CudaBackend::reduce(const float* x, int64_t n, bool squares) {
  auto* partials = static_cast<double*>(sumScratch_);
  double* out = partials + kSumPartials;
  fail(sumDouble(out, partials, x, n, squares, stream()));
  double host = 0.0;
  BS_RETURN_IF_ERROR(copyToHost(&host, out, sizeof(double)));
  return host;
}

Result<double> CudaBackend::sum(const float* x, int64_t n) {
  return reduce(x, n, /*squares=*/false);
}

Result<double> CudaBackend::squaredSum(const float* x, int64_t n) {
  return reduce(x, n, /*squares=*/true);
}

void CudaBackend::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                       const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                       float* c, int64_t ldc) {
  fail(
      cuda::gemm(context_->cublas(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
}

void CudaBackend::linearForward(float* out, const float* inp, const float* weight,
                                const float* bias, int64_t n, int64_t ic, int64_t oc) {
  if (precision_ == MatmulPrecision::kBf16) {
    const auto [inpBf16, weightBf16] = toBf16Pair(inp, n * ic, weight, oc * ic);
    if (inpBf16 == nullptr) return;
    fail(cuda::linearForwardBf16(context_->cublas(), out, inpBf16, weightBf16, bias, n, ic, oc));
    return;
  }
  fail(cuda::linearForward(context_->cublas(), out, inp, weight, bias, n, ic, oc));
}

void CudaBackend::linearBackwardInput(float* dinp, const float* dout, const float* weight,
                                      int64_t n, int64_t ic, int64_t oc) {
  if (precision_ == MatmulPrecision::kBf16) {
    const auto [doutBf16, weightBf16] = toBf16Pair(dout, n * oc, weight, oc * ic);
    if (doutBf16 == nullptr) return;
    fail(cuda::linearBackwardInputBf16(context_->cublas(), dinp, doutBf16, weightBf16, n, ic, oc));
    return;
  }
  fail(cuda::linearBackwardInput(context_->cublas(), dinp, dout, weight, n, ic, oc));
}

void CudaBackend::linearBackwardWeight(float* dweight, float* dbias, const float* dout,
                                       const float* inp, int64_t n, int64_t ic, int64_t oc) {
  if (precision_ == MatmulPrecision::kBf16) {
    const auto [doutBf16, inpBf16] = toBf16Pair(dout, n * oc, inp, n * ic);
    if (doutBf16 == nullptr) return;
    fail(cuda::linearBackwardWeightBf16(context_->cublas(), dweight, doutBf16, inpBf16, n, ic, oc));
    if (dbias != nullptr) fail(cuda::biasBackward(dbias, dout, n, oc, stream()));
    return;
  }
  fail(cuda::linearBackwardWeight(context_->cublas(), dweight, dbias, dout, inp, n, ic, oc));
}

void CudaBackend::layerNormForward(float* out, float* mean, float* rstd, const float* inp,
                                   const float* weight, const float* bias, int64_t n, int64_t c) {
  fail(cuda::layerNormForward(out, mean, rstd, inp, weight, bias, n, c, stream()));
}

void CudaBackend::layerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                                    const float* inp, const float* weight, const float* mean,
                                    const float* rstd, int64_t n, int64_t c) {
  fail(
      cuda::layerNormBackward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, n, c, stream()));
}

void CudaBackend::layerNormBackwardInput(float* dinp, const float* dout, const float* inp,
                                         const float* weight, const float* mean, const float* rstd,
                                         int64_t n, int64_t c) {
  fail(cuda::layerNormBackwardInput(dinp, dout, inp, weight, mean, rstd, n, c, stream()));
}

void CudaBackend::layerNormBackwardWeight(float* dweight, float* dbias, const float* dout,
                                          const float* inp, const float* mean, const float* rstd,
                                          int64_t n, int64_t c) {
  fail(cuda::layerNormBackwardWeight(dweight, dbias, dout, inp, mean, rstd, n, c, stream()));
}

Shape CudaBackend::attentionScratchShape(int64_t t, int64_t nh) const {
  return {nh, t, t};
}

void CudaBackend::attentionForward(float* out, float* att, const float* qkv, int64_t b, int64_t t,
                                   int64_t c, int64_t nh) {
  fail(cuda::attentionForward(context_->cublas(), out, att, qkv, b, t, c, nh));
}

void CudaBackend::attentionBackward(float* dqkv, float* scratch, const float* dout,
                                    const float* qkv, const float* att, int64_t b, int64_t t,
                                    int64_t c, int64_t nh) {
  fail(cuda::attentionBackward(context_->cublas(), dqkv, scratch, dout, qkv, att, b, t, c, nh));
}

void CudaBackend::geluForward(float* out, const float* inp, int64_t n) {
  fail(cuda::geluForward(out, inp, n, stream()));
}

void CudaBackend::geluBackward(float* dinp, const float* inp, const float* dout, int64_t n) {
  fail(cuda::geluBackward(dinp, inp, dout, n, stream()));
}

void CudaBackend::residualForward(float* out, const float* a, const float* b, int64_t n) {
  fail(cuda::residualForward(out, a, b, n, stream()));
}

void CudaBackend::residualBackward(float* da, float* db, const float* dout, int64_t n) {
  fail(cuda::residualBackward(da, db, dout, n, stream()));
}

void CudaBackend::embeddingForward(float* out, const int32_t* tokens, const float* wte,
                                   const float* wpe, int64_t b, int64_t t, int64_t c) {
  fail(cuda::embeddingForward(out, tokens, wte, wpe, b, t, c, stream()));
}

void CudaBackend::embeddingBackward(float* dwte, float* dwpe, const float* dout,
                                    const int32_t* tokens, int64_t b, int64_t t, int64_t c) {
  fail(cuda::embeddingBackward(dwte, dwpe, dout, tokens, b, t, c, stream()));
}

void CudaBackend::crossEntropyForward(float* probsInOut, float* losses, const int32_t* targets,
                                      int64_t n, int64_t v) {
  fail(cuda::crossEntropyForward(probsInOut, losses, targets, n, v, stream()));
}

void CudaBackend::crossEntropyBackward(float* probsToDlogits, const int32_t* targets, float dloss,
                                       int64_t n, int64_t v) {
  fail(cuda::crossEntropyBackward(probsToDlogits, targets, dloss, n, v, stream()));
}

void CudaBackend::adamwUpdate(float* param, const float* grad, float* m, float* v, int64_t n,
                              const AdamWConfig& c, double lr, int64_t t, bool decay) {
  const AdamWScalars s = adamwScalars(c.beta1, c.beta2, c.eps, c.weightDecay, lr, t, decay);
  fail(cuda::adamwUpdate(param, grad, m, v, n, s, stream()));
}

}  // namespace bubblescope::engine::cuda
