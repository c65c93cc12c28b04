#include "engine/allocator.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "engine/available_memory.h"

namespace bubblescope::engine {
namespace {
constexpr std::align_val_t kAlignment{64};
}  // namespace

const char* deviceName(Device device) {
  return device == Device::kCuda ? "cuda" : "cpu";
}

void* Allocator::rawAllocate(size_t bytes) {
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
