#include "engine/allocator.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "engine/available_memory.h"

namespace bubblescope::engine {
namespace {
constexpr std::align_val_t kAlignment{64};

// A rank frees and allocates buffers of the same sizes every micro-batch
// (activations, ZeRO 2/3's gradient buckets and gathered parameters: 13 MB
// each on `small`). By default the C library serves such a buffer with a
// fresh mapping and returns it to the system on free, so each allocation
// pays a page fault per 4 KiB on its first touch (the memset below): a
// dp2 ZeRO-2 m4 run of `small` took 409k minor faults in 8 steps, 186k with
// the heap kept, and its step was the noisier for it on a VM. Buffers up to
// 32 MiB (glibc's largest mmap threshold on 64-bit) now come from the heap,
// and up to 1 GiB of freed heap is kept for the next allocation. The
// counted bytes (memory_counter.h) are what the rank holds either way.
// Results stay bit-identical with one BLAS thread, as ranks run
// (cpu_gemm.h); with more, OpenBLAS rounds differently for buffers at other
// places, which fresh mappings (always at the same offset of a page) hid.
// Once per process; false when the C library refused a setting.
bool keepFreedHostMemory() {
  return mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
}

}  // namespace

const char* deviceName(Device device) {
  return device == Device::kCuda ? "cuda" : "cpu";
}

void* Allocator::rawAllocate(size_t bytes) {
  [[maybe_unused]] static const bool kept = keepFreedHostMemory();
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void* ptr = ::operator new(rounded, kAlignment);
  std::memset(ptr, 0, rounded);
  return ptr;
}

void Allocator::rawRelease(void* ptr, size_t) {
  ::operator delete(ptr, kAlignment);
}

void* Allocator::allocate(size_t bytes, MemoryCategory category) {
  // Large host buffers are sized by the user (batch, width, layers): checked
  // against the memory available first, so the failure says what and how
  // much instead of a bare std::bad_alloc or the OOM killer.
  if (bytes >= kCheckedAllocationBytes && device() == Device::kHost) {
    const Status fits = checkFitsInMemory(std::string(toString(category)) + ": a buffer",
                                          static_cast<double>(bytes));
    if (!fits.isOk()) throw OutOfMemory(fits.message());
  }
  void* ptr = rawAllocate(bytes);
  counter_.add(category, static_cast<int64_t>(bytes));
  return ptr;
}

void Allocator::release(void* ptr, size_t bytes, MemoryCategory category) {
  if (ptr == nullptr) return;
  rawRelease(ptr, bytes);
  counter_.add(category, -static_cast<int64_t>(bytes));
}

}  // namespace bubblescope::engine
