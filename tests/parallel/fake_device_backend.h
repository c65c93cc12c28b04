// FakeDeviceBackend: a Backend that behaves like a GPU's towards the
// trainer and computes on the CPU, for testing the device path of parallel
// training without a GPU (device_step_test.cpp).
//
// - device() is kCuda, so the trainer takes every device branch.
// - Its memory (FakeDeviceAllocator) is host memory handed out under a tag
//   (bit 62 set: a non-canonical address), so the CPU cannot dereference a
//   "device" pointer: code that touches a device tensor's data directly,
//   instead of through a Backend op or a communicator, crashes the test, as
//   it would fault on a GPU. Only this backend's ops (which strip the tag
//   and run the CpuBackend's maths, bit for bit) and FakeDeviceCommunicator
//   (fake_device_communicator.h) read it.
// - Every op is recorded in the DeviceLog (device_log.h) with the device
//   byte ranges it reads and writes; frees too.
//
// Test-only. The log must outlive the backend.
#pragma once

#include <cstdint>

#include "device_log.h"
#include "engine/cpu_backend.h"

namespace bubblescope::engine::testing {

inline constexpr uintptr_t kFakeDeviceTag = uintptr_t{1} << 62;
inline bool isFakeDevice(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & kFakeDeviceTag) != 0;
}
// The host address behind a fake device pointer (host pointers unchanged).
template <class T>
T* hostAddress(T* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<T*>(a & ~kFakeDeviceTag);
}
// A fake device pointer's bytes [p, p + bytes) (none for a host pointer).
std::vector<ByteRange> deviceRange(const void* p, size_t bytes);

class FakeDeviceAllocator final : public Allocator {
 public:
  explicit FakeDeviceAllocator(DeviceLog& log) : log_(log) {}
  Device device() const override { return Device::kCuda; }

 protected:
  void* rawAllocate(size_t bytes) override;
  void rawRelease(void* ptr, size_t bytes) override;

 private:
  DeviceLog& log_;
};

class FakeDeviceBackend final : public Backend {
 public:
  explicit FakeDeviceBackend(DeviceLog& log) : log_(log), allocator_(log) {}

  Device device() const override { return Device::kCuda; }
  std::string description() const override { return "fake cuda (CPU maths, recorded)"; }
  Allocator& allocator() override { return allocator_; }
  Status synchronize() override;

  void copyToDevice(void* dst, const void* hostSrc, size_t bytes) override;
  Status copyToHost(void* hostDst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill(float* x, float value, int64_t n) override;
  void axpy(float* y, float alpha, const float* x, int64_t n) override;
  void scale(float* x, float alpha, int64_t n) override;
  Result<double> sum(const float* x, int64_t n) override;
  Result<double> squaredSum(const float* x, int64_t n) override;

  void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
            int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override;
  void linearForward(float* out, const float* inp, const float* weight, const float* bias,
                     int64_t n, int64_t ic, int64_t oc) override;
  void linearBackwardInput(float* dinp, const float* dout, const float* weight, int64_t n,
                           int64_t ic, int64_t oc) override;
  void linearBackwardWeight(float* dweight, float* dbias, const float* dout, const float* inp,
                            int64_t n, int64_t ic, int64_t oc) override;
  void layerNormForward(float* out, float* mean, float* rstd, const float* inp,
                        const float* weight, const float* bias, int64_t n, int64_t c) override;
  void layerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                         const float* inp, const float* weight, const float* mean,
                         const float* rstd, int64_t n, int64_t c) override;
  void layerNormBackwardInput(float* dinp, const float* dout, const float* inp,
                              const float* weight, const float* mean, const float* rstd, int64_t n,
                              int64_t c) override;
  void layerNormBackwardWeight(float* dweight, float* dbias, const float* dout, const float* inp,
                               const float* mean, const float* rstd, int64_t n,
                               int64_t c) override;
  Shape attentionScratchShape(int64_t t, int64_t nh) const override {
    return cpu_.attentionScratchShape(t, nh);
  }
  void attentionForward(float* out, float* att, const float* qkv, int64_t b, int64_t t, int64_t c,
                        int64_t nh) override;
  void attentionBackward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                         const float* att, int64_t b, int64_t t, int64_t c, int64_t nh) override;
  void geluForward(float* out, const float* inp, int64_t n) override;
  void geluBackward(float* dinp, const float* inp, const float* dout, int64_t n) override;
  void residualForward(float* out, const float* a, const float* b, int64_t n) override;
  void residualBackward(float* da, float* db, const float* dout, int64_t n) override;
  void embeddingForward(float* out, const int32_t* tokens, const float* wte, const float* wpe,
                        int64_t b, int64_t t, int64_t c) override;
  void embeddingBackward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                         int64_t b, int64_t t, int64_t c) override;
  void crossEntropyForward(float* probsInOut, float* losses, const int32_t* targets, int64_t n,
                           int64_t v) override;
  void crossEntropyBackward(float* probsToDlogits, const int32_t* targets, float dloss, int64_t n,
                            int64_t v) override;
  void adamwUpdate(float* param, const float* grad, float* m, float* v, int64_t n,
                   const AdamWConfig& config, double lr, int64_t t, bool decay) override;

 private:
  // The rows of a (V, C) table that `tokens` (b·t ids) touch: [0, max + 1).
  int64_t rowsTouched(const int32_t* tokens, int64_t count) const;

  DeviceLog& log_;
  FakeDeviceAllocator allocator_;
  CpuBackend cpu_;  // the maths
};

}  // namespace bubblescope::engine::testing
