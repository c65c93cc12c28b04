#include "engine/cuda/cuda_context.h"

#include "engine/cuda/cuda_check.h"

namespace bubblescope::engine::cuda {

Result<int> cudaDeviceCount() {
  int n = 0;
  BS_CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

bool haveGpu() {
  Result<int> n = cudaDeviceCount();
  return n.isOk() && *n > 0;
}

Result<std::string> deviceDescription(int device) {
  cudaDeviceProp prop{};
  BS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const int64_t gib = static_cast<int64_t>(prop.totalGlobalMem >> 30);
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ", " + std::to_string(gib) + " GiB)";
}

Result<std::unique_ptr<CudaContext>> CudaContext::create(int device) {
  BS_ASSIGN_OR_RETURN(const int count, cudaDeviceCount());
  if (device < 0 || device >= count) {
    return Status::invalidArgument("CUDA device " + std::to_string(device) +
                                   " does not exist (this machine has " + std::to_string(count) +
                                   ")");
  }
  BS_CUDA_CHECK(cudaSetDevice(device));
  std::unique_ptr<CudaContext> ctx(new CudaContext());
  ctx->device_ = device;
  BS_CUDA_CHECK(cudaStreamCreate(&ctx->stream_));
  BS_CUBLAS_CHECK(cublasCreate(&ctx->cublas_));
  BS_CUBLAS_CHECK(cublasSetStream(ctx->cublas_, ctx->stream_));
  BS_CUBLAS_CHECK(cublasSetMathMode(ctx->cublas_, CUBLAS_DEFAULT_MATH));
  return ctx;
}

CudaContext::~CudaContext() {
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status CudaContext::synchronize() const {
  BS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return Status::ok();
}

}  // namespace bubblescope::engine::cuda
