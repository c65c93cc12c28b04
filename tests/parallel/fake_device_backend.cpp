#include "fake_device_backend.h"

#include <algorithm>
#include <initializer_list>

namespace bubblescope::engine::testing {
namespace {

using Ranges = std::vector<ByteRange>;

// The device ranges of `count` elements of T at each pointer.
template <class T = float>
ByteRange span(const T* p, int64_t count) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return {a, a + static_cast<uintptr_t>(std::max<int64_t>(count, 0)) * sizeof(T)};
}

Ranges on(std::initializer_list<ByteRange> ranges) {
  Ranges out;
  for (const ByteRange& r : ranges) {
    if ((r.lo & kFakeDeviceTag) != 0 && r.hi > r.lo) out.push_back(r);
  }
  return out;
}

// Elements a row-major (rows, cols) operand with row stride ld spans.
int64_t extent(int64_t rows, int64_t cols, int64_t ld) {
  return rows > 0 && cols > 0 ? (rows - 1) * ld + cols : 0;
}

template <class T>
T* h(T* p) {
  return hostAddress(p);
}

}  // namespace

std::vector<ByteRange> deviceRange(const void* p, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return on({{a, a + bytes}});
}

void* FakeDeviceAllocator::rawAllocate(size_t bytes) {
  void* host = Allocator::rawAllocate(bytes);
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(host) | kFakeDeviceTag);
}

void FakeDeviceAllocator::rawRelease(void* ptr, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  log_.free({a, a + bytes});
  Allocator::rawRelease(hostAddress(ptr), bytes);
}

Status FakeDeviceBackend::synchronize() {
  return cpu_.synchronize();
}

void FakeDeviceBackend::copyToDevice(void* dst, const void* hostSrc, size_t bytes) {
  log_.op("copyToDevice", {}, deviceRange(dst, bytes));
  cpu_.copyToDevice(h(dst), hostSrc, bytes);
}

Status FakeDeviceBackend::copyToHost(void* hostDst, const void* src, size_t bytes) {
  log_.op("copyToHost", deviceRange(src, bytes), {});
  return cpu_.copyToHost(hostDst, h(src), bytes);
}

void FakeDeviceBackend::copy(void* dst, const void* src, size_t bytes) {
  log_.op("copy", deviceRange(src, bytes), deviceRange(dst, bytes));
  cpu_.copy(h(dst), h(src), bytes);
}

void FakeDeviceBackend::fill(float* x, float value, int64_t n) {
  log_.op("fill", {}, on({span(x, n)}));
  cpu_.fill(h(x), value, n);
}

void FakeDeviceBackend::axpy(float* y, float alpha, const float* x, int64_t n) {
  log_.op("axpy", on({span(x, n), span<float>(y, n)}), on({span<float>(y, n)}));
  cpu_.axpy(h(y), alpha, h(x), n);
}

void FakeDeviceBackend::scale(float* x, float alpha, int64_t n) {
  log_.op("scale", on({span<float>(x, n)}), on({span<float>(x, n)}));
  cpu_.scale(h(x), alpha, n);
}

Result<double> FakeDeviceBackend::sum(const float* x, int64_t n) {
  log_.op("sum", on({span(x, n)}), {});
  return cpu_.sum(h(x), n);
}

Result<double> FakeDeviceBackend::squaredSum(const float* x, int64_t n) {
  log_.op("squaredSum", on({span(x, n)}), {});
  return cpu_.squaredSum(h(x), n);
}

void FakeDeviceBackend::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                             float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                             float beta, float* c, int64_t ldc) {
  const int64_t aSpan = transA ? extent(k, m, lda) : extent(m, k, lda);
  const int64_t bSpan = transB ? extent(n, k, ldb) : extent(k, n, ldb);
  const int64_t cSpan = extent(m, n, ldc);
  Ranges reads = on({span(a, aSpan), span(b, bSpan)});
  if (beta != 0.0f) {
    for (const ByteRange& r : on({span<float>(c, cSpan)})) reads.push_back(r);
  }
  log_.op("gemm", std::move(reads), on({span<float>(c, cSpan)}));
  cpu_.gemm(transA, transB, m, n, k, alpha, h(a), lda, h(b), ldb, beta, h(c), ldc);
}

void FakeDeviceBackend::linearForward(float* out, const float* inp, const float* weight,
                                      const float* bias, int64_t n, int64_t ic, int64_t oc) {
  log_.op("linearForward", on({span(inp, n * ic), span(weight, oc * ic), span(bias, oc)}),
          on({span<float>(out, n * oc)}));
  cpu_.linearForward(h(out), h(inp), h(weight), h(bias), n, ic, oc);
}

void FakeDeviceBackend::linearBackwardInput(float* dinp, const float* dout, const float* weight,
                                            int64_t n, int64_t ic, int64_t oc) {
  log_.op("linearBackwardInput",
          on({span(dout, n * oc), span(weight, oc * ic), span<float>(dinp, n * ic)}),
          on({span<float>(dinp, n * ic)}));
  cpu_.linearBackwardInput(h(dinp), h(dout), h(weight), n, ic, oc);
}

void FakeDeviceBackend::linearBackwardWeight(float* dweight, float* dbias, const float* dout,
                                             const float* inp, int64_t n, int64_t ic,
                                             int64_t oc) {
  log_.op("linearBackwardWeight",
          on({span(dout, n * oc), span(inp, n * ic), span<float>(dweight, oc * ic),
              span<float>(dbias, oc)}),
          on({span<float>(dweight, oc * ic), span<float>(dbias, oc)}));
  cpu_.linearBackwardWeight(h(dweight), h(dbias), h(dout), h(inp), n, ic, oc);
}

void FakeDeviceBackend::layerNormForward(float* out, float* mean, float* rstd, const float* inp,
                                         const float* weight, const float* bias, int64_t n,
                                         int64_t c) {
  log_.op("layerNormForward", on({span(inp, n * c), span(weight, c), span(bias, c)}),
          on({span<float>(out, n * c), span<float>(mean, n), span<float>(rstd, n)}));
  cpu_.layerNormForward(h(out), h(mean), h(rstd), h(inp), h(weight), h(bias), n, c);
}

void FakeDeviceBackend::layerNormBackward(float* dinp, float* dweight, float* dbias,
                                          const float* dout, const float* inp, const float* weight,
                                          const float* mean, const float* rstd, int64_t n,
                                          int64_t c) {
  log_.op("layerNormBackward",
          on({span(dout, n * c), span(inp, n * c), span(weight, c), span(mean, n), span(rstd, n),
              span<float>(dinp, n * c), span<float>(dweight, c), span<float>(dbias, c)}),
          on({span<float>(dinp, n * c), span<float>(dweight, c), span<float>(dbias, c)}));
  cpu_.layerNormBackward(h(dinp), h(dweight), h(dbias), h(dout), h(inp), h(weight), h(mean),
                         h(rstd), n, c);
}

void FakeDeviceBackend::layerNormBackwardInput(float* dinp, const float* dout, const float* inp,
                                               const float* weight, const float* mean,
                                               const float* rstd, int64_t n, int64_t c) {
  log_.op("layerNormBackwardInput",
          on({span(dout, n * c), span(inp, n * c), span(weight, c), span(mean, n), span(rstd, n),
              span<float>(dinp, n * c)}),
          on({span<float>(dinp, n * c)}));
  cpu_.layerNormBackwardInput(h(dinp), h(dout), h(inp), h(weight), h(mean), h(rstd), n, c);
}

void FakeDeviceBackend::layerNormBackwardWeight(float* dweight, float* dbias, const float* dout,
                                                const float* inp, const float* mean,
                                                const float* rstd, int64_t n, int64_t c) {
  log_.op("layerNormBackwardWeight",
          on({span(dout, n * c), span(inp, n * c), span(mean, n), span(rstd, n),
              span<float>(dweight, c), span<float>(dbias, c)}),
          on({span<float>(dweight, c), span<float>(dbias, c)}));
  cpu_.layerNormBackwardWeight(h(dweight), h(dbias), h(dout), h(inp), h(mean), h(rstd), n, c);
}

void FakeDeviceBackend::attentionForward(float* out, float* att, const float* qkv, int64_t b,
                                         int64_t t, int64_t c, int64_t nh) {
  log_.op("attentionForward", on({span(qkv, b * t * 3 * c)}),
          on({span<float>(out, b * t * c), span<float>(att, b * nh * t * t)}));
  cpu_.attentionForward(h(out), h(att), h(qkv), b, t, c, nh);
}

void FakeDeviceBackend::attentionBackward(float* dqkv, float* scratch, const float* dout,
                                          const float* qkv, const float* att, int64_t b, int64_t t,
                                          int64_t c, int64_t nh) {
  const int64_t s = shapeNumel(cpu_.attentionScratchShape(t, nh));
  log_.op("attentionBackward",
          on({span(dout, b * t * c), span(qkv, b * t * 3 * c), span(att, b * nh * t * t),
              span<float>(dqkv, b * t * 3 * c)}),
          on({span<float>(dqkv, b * t * 3 * c), span<float>(scratch, s)}));
  cpu_.attentionBackward(h(dqkv), h(scratch), h(dout), h(qkv), h(att), b, t, c, nh);
}

void FakeDeviceBackend::geluForward(float* out, const float* inp, int64_t n) {
  log_.op("geluForward", on({span(inp, n)}), on({span<float>(out, n)}));
  cpu_.geluForward(h(out), h(inp), n);
}

void FakeDeviceBackend::geluBackward(float* dinp, const float* inp, const float* dout, int64_t n) {
  log_.op("geluBackward", on({span(inp, n), span(dout, n), span<float>(dinp, n)}),
          on({span<float>(dinp, n)}));
  cpu_.geluBackward(h(dinp), h(inp), h(dout), n);
}

void FakeDeviceBackend::residualForward(float* out, const float* a, const float* b, int64_t n) {
  log_.op("residualForward", on({span(a, n), span(b, n)}), on({span<float>(out, n)}));
  cpu_.residualForward(h(out), h(a), h(b), n);
}

void FakeDeviceBackend::residualBackward(float* da, float* db, const float* dout, int64_t n) {
  log_.op("residualBackward", on({span(dout, n), span<float>(da, n), span<float>(db, n)}),
          on({span<float>(da, n), span<float>(db, n)}));
  cpu_.residualBackward(h(da), h(db), h(dout), n);
}

int64_t FakeDeviceBackend::rowsTouched(const int32_t* tokens, int64_t count) const {
  const int32_t* host = hostAddress(tokens);
  int32_t most = -1;
  for (int64_t i = 0; i < count; ++i) most = std::max(most, host[i]);
  return int64_t{most} + 1;
}

void FakeDeviceBackend::embeddingForward(float* out, const int32_t* tokens, const float* wte,
                                         const float* wpe, int64_t b, int64_t t, int64_t c) {
  const int64_t rows = rowsTouched(tokens, b * t);
  log_.op("embeddingForward",
          on({span(tokens, b * t), span(wte, rows * c), span(wpe, t * c)}),
          on({span<float>(out, b * t * c)}));
  cpu_.embeddingForward(h(out), h(tokens), h(wte), h(wpe), b, t, c);
}

void FakeDeviceBackend::embeddingBackward(float* dwte, float* dwpe, const float* dout,
                                          const int32_t* tokens, int64_t b, int64_t t, int64_t c) {
  const int64_t rows = rowsTouched(tokens, b * t);
  log_.op("embeddingBackward",
          on({span(dout, b * t * c), span(tokens, b * t), span<float>(dwte, rows * c),
              span<float>(dwpe, t * c)}),
          on({span<float>(dwte, rows * c), span<float>(dwpe, t * c)}));
  cpu_.embeddingBackward(h(dwte), h(dwpe), h(dout), h(tokens), b, t, c);
}

void FakeDeviceBackend::crossEntropyForward(float* probsInOut, float* losses,
                                            const int32_t* targets, int64_t n, int64_t v) {
  log_.op("crossEntropyForward", on({span<float>(probsInOut, n * v), span(targets, n)}),
          on({span<float>(probsInOut, n * v), span<float>(losses, n)}));
  cpu_.crossEntropyForward(h(probsInOut), h(losses), h(targets), n, v);
}

void FakeDeviceBackend::crossEntropyBackward(float* probsToDlogits, const int32_t* targets,
                                             float dloss, int64_t n, int64_t v) {
  log_.op("crossEntropyBackward", on({span<float>(probsToDlogits, n * v), span(targets, n)}),
          on({span<float>(probsToDlogits, n * v)}));
  cpu_.crossEntropyBackward(h(probsToDlogits), h(targets), dloss, n, v);
}

void FakeDeviceBackend::adamwUpdate(float* param, const float* grad, float* m, float* v, int64_t n,
                                    const AdamWConfig& config, double lr, int64_t t, bool decay) {
  log_.op("adamwUpdate",
          on({span(grad, n), span<float>(param, n), span<float>(m, n), span<float>(v, n)}),
          on({span<float>(param, n), span<float>(m, n), span<float>(v, n)}));
  cpu_.adamwUpdate(h(param), h(grad), h(m), h(v), n, config, lr, t, decay);
}

}  // namespace bubblescope::engine::testing
