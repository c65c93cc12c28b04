// Allocator: hands out zero-filled buffers and counts their bytes by category.
//
// Contract: one Allocator per rank (instance-based, never global) so each rank
// can report its own memory. It must outlive every tensor allocated from it.
// allocate() and release() belong to one thread (the rank's training
// thread); the byte counts may be read from any thread (the tracer's gauges)
// while it runs. Counts are in bytes.
//
// The base class hands out 64-byte aligned host memory. A back end with its
// own memory (engine/cuda/cuda_allocator.h: device memory through cudaMalloc)
// derives from it and overrides device(), rawAllocate() and rawRelease(); the
// counting (engine/memory_counter.h) stays here, so memory reports and gauges
// read every back end the same way. Memory that cannot be had is std::bad_alloc on every back end
// (as ::operator new on the host).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

#include "engine/memory_counter.h"

namespace bubblescope::engine {

// Where a buffer lives. Host pointers may be dereferenced by the CPU; kCuda
// pointers are device pointers of the rank's current CUDA device.
enum class Device : uint8_t { kHost = 0, kCuda = 1 };
const char* deviceName(Device device);  // "cpu", "cuda"

// The std::bad_alloc a host allocation of at least kCheckedAllocationBytes
// throws, before trying, when it exceeds the memory available
// (engine/available_memory.h); what() names the category and the bytes:
// "activations: a buffer of 40.0 GiB (42949672960 bytes), more than ...".
class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};
inline constexpr size_t kCheckedAllocationBytes = size_t{64} << 20;

class Allocator {
 public:
  Allocator() = default;
  virtual ~Allocator() = default;
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // Where this allocator's buffers live.
  virtual Device device() const { return Device::kHost; }

  // Returns a zero-filled buffer of `bytes` bytes (never null; bytes 0 gives
  // a valid unique pointer), 64-byte aligned on the host. Throws
  // std::bad_alloc when the memory cannot be had. Free it with release().
  void* allocate(size_t bytes, MemoryCategory category);
  // Frees a buffer from allocate() with the same size and category.
  void release(void* ptr, size_t bytes, MemoryCategory category);

  int64_t currentBytes(MemoryCategory category) const { return counter_.currentBytes(category); }
  int64_t peakBytes(MemoryCategory category) const { return counter_.peakBytes(category); }
  int64_t totalCurrentBytes() const { return counter_.totalCurrentBytes(); }
  // Peak of the total (not the sum of the per-category peaks).
  int64_t totalPeakBytes() const { return counter_.totalPeakBytes(); }
  // Starts the peaks again from the current counts (e.g. after set-up, so a
  // peak describes training steps only).
  void resetPeaks() { counter_.resetPeaks(); }

 protected:
  // The memory itself: a zero-filled buffer of at least `bytes` bytes, or
  // std::bad_alloc. rawRelease() frees what rawAllocate() returned.
  virtual void* rawAllocate(size_t bytes);
  virtual void rawRelease(void* ptr, size_t bytes);

 private:
  MemoryCounter counter_;
};

}  // namespace bubblescope::engine
