// DeviceAllocator: device memory through plain cudaMalloc, counted by category
// like the host Allocator (engine/allocator.h), so a GPU rank reports its
// parameters, gradients, optimizer state and activations the same way
// (engine/memory_counter.h).
//
// Contract: one per rank and device (instance-based, never global); it must
// outlive every buffer it handed out. allocate() and release() belong to one
// thread (the rank's training thread); the byte counts may be read from any
// thread. Counts are in bytes of what was asked for (cudaMalloc rounds up).
// The current device is the caller's (cudaSetDevice) and stays unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/result.h"
#include "engine/memory_counter.h"

namespace bubblescope::engine::cuda {

class DeviceAllocator {
 public:
  DeviceAllocator() = default;
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // A zero-filled device buffer of `bytes` bytes (bytes 0 gives a null
  // pointer and counts nothing). Fails with the CUDA error (out of memory, no
  // GPU) and counts nothing then.
  Result<void*> allocate(size_t bytes, MemoryCategory category);
  // Frees a buffer from allocate() with the same size and category; null is
  // a no-op. The counts drop even when cudaFree reports an error.
  Status release(void* ptr, size_t bytes, MemoryCategory category);

  int64_t currentBytes(MemoryCategory category) const { return counter_.currentBytes(category); }
  int64_t peakBytes(MemoryCategory category) const { return counter_.peakBytes(category); }
  int64_t totalCurrentBytes() const { return counter_.totalCurrentBytes(); }
  // Peak of the total (not the sum of the per-category peaks).
  int64_t totalPeakBytes() const { return counter_.totalPeakBytes(); }

 private:
  MemoryCounter counter_;
};

}  // namespace bubblescope::engine::cuda
