// TensorT<T>: a contiguous, row-major, owning host buffer with a shape.
//
// Contract: move-only; owns its buffer, which is zero-filled on creation. When
// built with an Allocator, the bytes are counted under the given category and
// the Allocator must outlive the tensor; with a null Allocator the buffer is
// uncounted (scratch in tests). The engine trains in fp32 (`Tensor`); the
// double instantiation exists for the finite-difference reference path.
// A view (TensorT::view) owns nothing: it points into a buffer someone else
// keeps alive (ZeRO's flat parameter and gradient buffers); its data may be
// null while the values live elsewhere (a ZeRO-3 parameter between gathers).
//
// Device: a tensor lives where its Allocator's memory lives (device(): kHost,
// or kCuda for a tensor from a CUDA backend's allocator; a view says where
// its pointer points). data() is then a device pointer, handed to the
// Backend's ops (engine/backend.h) and never dereferenced by the CPU; span(),
// zero() and copyFrom() are for host tensors only.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/allocator.h"

namespace bubblescope::engine {

using Shape = std::vector<int64_t>;

inline int64_t shapeNumel(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}
std::string shapeToString(const Shape& shape);  // "(4, 32, 64)"

template <class T>
class TensorT {
 public:
  TensorT() = default;
  TensorT(Shape shape, MemoryCategory category, Allocator* allocator)
      : shape_(std::move(shape)), category_(category), allocator_(allocator) {
    numel_ = shapeNumel(shape_);
    device_ = allocator_ != nullptr ? allocator_->device() : Device::kHost;
    const size_t bytes = static_cast<size_t>(numel_) * sizeof(T);
    if (allocator_ != nullptr) {
      data_ = static_cast<T*>(allocator_->allocate(bytes, category_));
    } else {
      data_ = static_cast<T*>(::operator new (bytes + 64, std::align_val_t{64}));
      std::memset(data_, 0, bytes);
    }
  }
  // A non-owning tensor over `data` (may be null: shape only, no values)
  // in `device`'s memory.
  static TensorT view(Shape shape, T* data, Device device = Device::kHost) {
    TensorT t;
    t.device_ = device;
    t.shape_ = std::move(shape);
    t.numel_ = shapeNumel(t.shape_);
    t.data_ = data;
    t.owning_ = false;
    return t;
  }
  ~TensorT() { reset(); }
  TensorT(TensorT&& other) noexcept { *this = std::move(other); }
  TensorT& operator=(TensorT&& other) noexcept {
    if (this != &other) {
      reset();
      shape_ = std::move(other.shape_);
      numel_ = std::exchange(other.numel_, 0);
      data_ = std::exchange(other.data_, nullptr);
      category_ = other.category_;
      device_ = other.device_;
      allocator_ = std::exchange(other.allocator_, nullptr);
      owning_ = std::exchange(other.owning_, true);
    }
    return *this;
  }
  TensorT(const TensorT&) = delete;
  TensorT& operator=(const TensorT&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::span<T> span() { return {data_, static_cast<size_t>(numel_)}; }
  std::span<const T> span() const { return {data_, static_cast<size_t>(numel_)}; }
  int64_t numel() const { return numel_; }
  size_t bytes() const { return static_cast<size_t>(numel_) * sizeof(T); }
  const Shape& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  bool empty() const { return data_ == nullptr; }
  bool isView() const { return !owning_; }
  MemoryCategory category() const { return category_; }
  Device device() const { return device_; }

  // Host tensors only (a device tensor goes through its Backend).
  void zero() {
    if (data_ != nullptr) std::memset(data_, 0, bytes());
  }
  void copyFrom(std::span<const T> src) {  // precondition: src.size() == numel()
    if (!src.empty()) std::memcpy(data_, src.data(), bytes());
  }

 private:
  void reset() {
    if (data_ == nullptr) return;
    if (!owning_) {
      data_ = nullptr;
      return;
    }
    if (allocator_ != nullptr) {
      allocator_->release(data_, bytes(), category_);
    } else {
      ::operator delete (data_, std::align_val_t{64});
    }
    data_ = nullptr;
  }

  Shape shape_;
  int64_t numel_ = 0;
  T* data_ = nullptr;
  MemoryCategory category_ = MemoryCategory::kOther;
  Device device_ = Device::kHost;
  Allocator* allocator_ = nullptr;
  bool owning_ = true;
};

using Tensor = TensorT<float>;

}  // namespace bubblescope::engine
