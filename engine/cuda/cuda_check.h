// CUDA runtime and cuBLAS error codes as Status values.
//
// BS_CUDA_CHECK(cudaMalloc(...)) and BS_CUBLAS_CHECK(cublasSgemm(...)) return
// from the enclosing function (returning Status or Result<T>) with a message
// naming the call, the source line and the library's error text. The rank is
// not known here: callers that have one add it with Status::withContext().
// Nothing in engine/cuda exits or throws.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "common/status.h"

namespace bubblescope::engine::cuda {

// "cudaMalloc(&p, bytes) failed (engine/cuda/x.cpp:42): out of memory
// (cudaErrorMemoryAllocation)". No device or no usable driver gives
// kFailedPrecondition, anything else kInternal. Clears the runtime's
// last error (cudaGetLastError), which would otherwise resurface at the next
// BS_CUDA_CHECK_LAUNCH.
Status cudaError(cudaError_t code, const char* call, const char* file, int line);
// The same for cuBLAS status codes (always kInternal).
Status cublasError(cublasStatus_t code, const char* call, const char* file, int line);

// True for the errors that mean "this machine has no usable GPU" (no device,
// no driver, driver too old, devices unavailable).
bool isNoGpuError(cudaError_t code);

}  // namespace bubblescope::engine::cuda

#define BS_CUDA_CHECK(call)                                                                  \
  do {                                                                                       \
    const cudaError_t bs_cuda_rc_ = (call);                                                  \
    if (bs_cuda_rc_ != cudaSuccess) {                                                        \
      return ::bubblescope::engine::cuda::cudaError(bs_cuda_rc_, #call, __FILE__, __LINE__); \
    }                                                                                        \
  } while (0)

#define BS_CUBLAS_CHECK(call)                                                                    \
  do {                                                                                           \
    const cublasStatus_t bs_cublas_rc_ = (call);                                                 \
    if (bs_cublas_rc_ != CUBLAS_STATUS_SUCCESS) {                                                \
      return ::bubblescope::engine::cuda::cublasError(bs_cublas_rc_, #call, __FILE__, __LINE__); \
    }                                                                                            \
  } while (0)

// After a kernel launch: reports a bad launch configuration (the launch itself
// is asynchronous; faults inside the kernel surface at the next sync).
#define BS_CUDA_CHECK_LAUNCH() BS_CUDA_CHECK(cudaGetLastError())
