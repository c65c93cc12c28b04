// CudaAllocator: the engine's counting Allocator (engine/allocator.h) over
// device memory, so tensors of a CUDA rank (TensorT with device() kCuda) are
// counted by category exactly like a CPU rank's, and the same memory reports
// and gauges read them.
//
// Contract: buffers are cudaMalloc'd on the device current when allocate()
// is called (the backend's; CudaBackend makes it current) and zero-filled
// synchronously; memory that cannot be had (out of memory, no GPU) is
// std::bad_alloc, as on the host. Same threading rules as Allocator. The
// CUDA runtime must still be alive when buffers are released (destroy the
// allocator's tensors before the process exits).
#pragma once

#include "engine/allocator.h"

namespace bubblescope::engine::cuda {

class CudaAllocator final : public Allocator {
 public:
  Device device() const override { return Device::kCuda; }

 protected:
  void* rawAllocate(size_t bytes) override;
  void rawRelease(void* ptr, size_t bytes) override;
};

}  // namespace bubblescope::engine::cuda
