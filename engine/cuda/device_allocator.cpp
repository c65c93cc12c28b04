#include "engine/cuda/device_allocator.h"

#include <cuda_runtime_api.h>

#include <algorithm>

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
  count(category, static_cast<int64_t>(bytes));
  return ptr;
}

Status DeviceAllocator::release(void* ptr, size_t bytes, MemoryCategory category) {
  if (ptr == nullptr) return Status::ok();
  count(category, -static_cast<int64_t>(bytes));
  BS_CUDA_CHECK(cudaFree(ptr));
  return Status::ok();
}

int64_t DeviceAllocator::totalCurrentBytes() const {
  int64_t total = 0;
  for (const auto& c : current_) total += c.load(std::memory_order_relaxed);
  return total;
}

void DeviceAllocator::count(MemoryCategory category, int64_t deltaBytes) {
  const size_t i = index(category);
  const int64_t now = current_[i].load(std::memory_order_relaxed) + deltaBytes;
  current_[i].store(now, std::memory_order_relaxed);
  peak_[i].store(std::max(peak_[i].load(std::memory_order_relaxed), now),
                 std::memory_order_relaxed);
  totalPeak_.store(std::max(totalPeak_.load(std::memory_order_relaxed), totalCurrentBytes()),
                   std::memory_order_relaxed);
}

}  // namespace bubblescope::engine::cuda
