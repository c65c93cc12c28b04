// DeviceBuffer<T>: an owning, typed, contiguous device buffer counted by a
// DeviceAllocator under one category.
//
// Contract: move-only; the allocator must outlive the buffer. Built only
// through create(), which fails (no GPU, out of memory) with a Status, so a
// live buffer always holds size() elements (null data when size() is 0).
// The destructor frees the memory and cannot report a cudaFree error; call
// reset() where that matters. Copies are synchronous (cudaMemcpy: ordered
// after all earlier work on blocking streams).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "common/result.h"
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/device_allocator.h"

namespace bubblescope::engine::cuda {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      (void)reset();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      category_ = o.category_;
      allocator_ = std::exchange(o.allocator_, nullptr);
    }
    return *this;
  }
  ~DeviceBuffer() { (void)reset(); }

  // size zero-filled elements on the current device.
  static Result<DeviceBuffer> create(DeviceAllocator* allocator, int64_t size,
                                     MemoryCategory category) {
    BS_ASSIGN_OR_RETURN(void* ptr, allocator->allocate(bytesOf(size), category));
    DeviceBuffer b;
    b.data_ = static_cast<T*>(ptr);
    b.size_ = size;
    b.category_ = category;
    b.allocator_ = allocator;
    return b;
  }
  // A buffer holding a copy of host.
  static Result<DeviceBuffer> fromHost(DeviceAllocator* allocator, std::span<const T> host,
                                       MemoryCategory category) {
    BS_ASSIGN_OR_RETURN(DeviceBuffer b,
                        create(allocator, static_cast<int64_t>(host.size()), category));
    BS_RETURN_IF_ERROR(b.copyFromHost(host));
    return b;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  int64_t size() const { return size_; }
  size_t bytes() const { return bytesOf(size_); }

  // Precondition: host.size() == size().
  Status copyFromHost(std::span<const T> host) {
    if (static_cast<int64_t>(host.size()) != size_) {
      return Status::invalidArgument("copyFromHost: size mismatch");
    }
    if (size_ == 0) return Status::ok();
    BS_CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
    return Status::ok();
  }
  Status copyToHost(std::span<T> host) const {
    if (static_cast<int64_t>(host.size()) != size_) {
      return Status::invalidArgument("copyToHost: size mismatch");
    }
    if (size_ == 0) return Status::ok();
    BS_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return Status::ok();
  }
  Result<std::vector<T>> toHost() const {
    std::vector<T> host(static_cast<size_t>(size_));
    BS_RETURN_IF_ERROR(copyToHost(host));
    return host;
  }

  // Frees the memory now; the buffer becomes empty.
  Status reset() {
    if (allocator_ == nullptr) return Status::ok();
    Status s = allocator_->release(data_, bytes(), category_);
    data_ = nullptr;
    size_ = 0;
    allocator_ = nullptr;
    return s;
  }

 private:
  static size_t bytesOf(int64_t n) { return static_cast<size_t>(n) * sizeof(T); }
  T* data_ = nullptr;
  int64_t size_ = 0;
  MemoryCategory category_ = MemoryCategory::kOther;
  DeviceAllocator* allocator_ = nullptr;
};

}  // namespace bubblescope::engine::cuda
