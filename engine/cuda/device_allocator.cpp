#include "engine/cuda/device_allocator.h"

#include <cuda_runtime_api.h>

#include "engine/cuda/cuda_check.h"

namespace bubblescope::engine::cuda {

Result<void*> DeviceAllocator::allocate(size_t bytes, MemoryCategory category) {
  if (bytes == 0) return static_cast<void*>(nullptr);
  void* ptr = nullptr;
  BS_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  const cudaError_t rc = cudaMemset(ptr, 0, bytes);
  if (rc != cudaSuccess) {
    cudaFree(ptr);
    return cudaError(rc, "cudaMemset(ptr, 0, bytes)", __FILE__, __LINE__);
  }
  counter_.add(category, static_cast<int64_t>(bytes));
  return ptr;
}

Status DeviceAllocator::release(void* ptr, size_t bytes, MemoryCategory category) {
  if (ptr == nullptr) return Status::ok();
  counter_.add(category, -static_cast<int64_t>(bytes));
  BS_CUDA_CHECK(cudaFree(ptr));
  return Status::ok();
}

}  // namespace bubblescope::engine::cuda
