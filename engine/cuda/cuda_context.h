// Finding a GPU, and the per-rank CUDA context: the device, one compute stream
// and a cuBLAS handle bound to that stream.
//
// Contract: "no GPU" is any CUDA error from the device query or zero devices
// (without a driver, cudaGetDeviceCount returns error 35); nothing here
// aborts. A CudaContext is owned by one thread (the rank's training thread);
// it makes its device current when created and leaves it current.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "common/result.h"

namespace bubblescope::engine::cuda {

// Number of usable CUDA devices, or the CUDA error that says why there are
// none (kFailedPrecondition for "no driver / no device").
Result<int> cudaDeviceCount();
// True when at least one device is usable.
bool haveGpu();
// "NVIDIA H200 (sm_90, 139 GiB)" for device, or the CUDA error.
Result<std::string> deviceDescription(int device);

class CudaContext {
 public:
  // Selects device, creates a blocking compute stream (ordered with the
  // legacy default stream, where DeviceAllocator zero-fills) and a cuBLAS
  // handle on it in the default fp32 math mode (no TF32).
  static Result<std::unique_ptr<CudaContext>> create(int device);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  // Waits for all work queued on the stream; reports asynchronous errors.
  Status synchronize() const;

 private:
  CudaContext() = default;
  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace bubblescope::engine::cuda
