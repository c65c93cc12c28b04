#include "engine/cuda/cuda_allocator.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <new>

namespace bubblescope::engine::cuda {

void* CudaAllocator::rawAllocate(size_t bytes) {
  // At least 256 bytes: a zero-byte request still gets a unique pointer.
  const size_t rounded = std::max<size_t>(256, bytes);
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, rounded) != cudaSuccess) {
    (void)cudaGetLastError();  // do not let it resurface at the next launch check
    throw std::bad_alloc();
  }
  if (cudaMemset(ptr, 0, rounded) != cudaSuccess) {
    (void)cudaGetLastError();
    cudaFree(ptr);
    throw std::bad_alloc();
  }
  return ptr;
}

void CudaAllocator::rawRelease(void* ptr, size_t) {
  cudaFree(ptr);  // an error here (runtime shutting down) cannot be reported
}

}  // namespace bubblescope::engine::cuda
