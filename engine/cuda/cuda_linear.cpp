// Linear layers on cuBLAS: the products through cublas_gemm.h, bias rows and
// bias gradients through the pointwise kernels, on the handle's stream.
#include "common/result.h"
#include "engine/cuda/cublas_gemm.h"
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_kernels.h"

namespace bubblescope::engine::cuda {
namespace {

Result<cudaStream_t> streamOf(cublasHandle_t handle) {
  cudaStream_t stream = nullptr;
  BS_CUBLAS_CHECK(cublasGetStream(handle, &stream));
  return stream;
}

}  // namespace

Status linearForward(cublasHandle_t handle, float* out, const float* inp, const float* weight,
                     const float* bias, int64_t n, int64_t ic, int64_t oc) {
  // out (N, OC) = inp (N, IC) · weight^T (IC, OC)
  BS_RETURN_IF_ERROR(
      gemm(handle, false, true, n, oc, ic, 1.0f, inp, ic, weight, ic, 0.0f, out, oc));
  if (bias == nullptr) return Status::ok();
  BS_ASSIGN_OR_RETURN(cudaStream_t stream, streamOf(handle));
  return biasForward(out, bias, n, oc, stream);
}

Status linearBackwardInput(cublasHandle_t handle, float* dinp, const float* dout,
                           const float* weight, int64_t n, int64_t ic, int64_t oc) {
  // dinp (N, IC) += dout (N, OC) · weight (OC, IC)
  return gemm(handle, false, false, n, ic, oc, 1.0f, dout, oc, weight, ic, 1.0f, dinp, ic);
}

Status linearBackwardWeight(cublasHandle_t handle, float* dweight, float* dbias, const float* dout,
                            const float* inp, int64_t n, int64_t ic, int64_t oc) {
  // dweight (OC, IC) += dout^T (OC, N) · inp (N, IC)
  BS_RETURN_IF_ERROR(
      gemm(handle, true, false, oc, ic, n, 1.0f, dout, oc, inp, ic, 1.0f, dweight, ic));
  if (dbias == nullptr) return Status::ok();
  BS_ASSIGN_OR_RETURN(cudaStream_t stream, streamOf(handle));
  return biasBackward(dbias, dout, n, oc, stream);
}

Status linearForwardBf16(cublasHandle_t handle, float* out, const __nv_bfloat16* inp,
                         const __nv_bfloat16* weight, const float* bias, int64_t n, int64_t ic,
                         int64_t oc) {
  BS_RETURN_IF_ERROR(
      gemmBf16(handle, false, true, n, oc, ic, 1.0f, inp, ic, weight, ic, 0.0f, out, oc));
  if (bias == nullptr) return Status::ok();
  BS_ASSIGN_OR_RETURN(cudaStream_t stream, streamOf(handle));
  return biasForward(out, bias, n, oc, stream);
}

Status linearBackwardInputBf16(cublasHandle_t handle, float* dinp, const __nv_bfloat16* dout,
                               const __nv_bfloat16* weight, int64_t n, int64_t ic, int64_t oc) {
  return gemmBf16(handle, false, false, n, ic, oc, 1.0f, dout, oc, weight, ic, 1.0f, dinp, ic);
}

Status linearBackwardWeightBf16(cublasHandle_t handle, float* dweight, const __nv_bfloat16* dout,
                                const __nv_bfloat16* inp, int64_t n, int64_t ic, int64_t oc) {
  return gemmBf16(handle, true, false, oc, ic, n, 1.0f, dout, oc, inp, ic, 1.0f, dweight, ic);
}

}  // namespace bubblescope::engine::cuda
