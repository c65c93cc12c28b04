#include "engine/cpu_backend.h"

#include <cstring>

#include "engine/cpu_gemm.h"
#include "engine/cpu_kernels.h"

namespace bubblescope::engine {

namespace k = kernels;

std::string CpuBackend::description() const {
  return "cpu (OpenBLAS, 1 thread)";
}

bool CpuBackend::sizesOk(const char* op, std::initializer_list<int64_t> sizes) {
  for (int64_t s : sizes) {
    if (s < 0) {
      fail(Status::invalidArgument(std::string(op) + ": negative size " + std::to_string(s)));
      return false;
    }
  }
  return true;
}

void CpuBackend::copyToDevice(void* dst, const void* hostSrc, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, hostSrc, bytes);
}

Status CpuBackend::copyToHost(void* hostDst, const void* src, size_t bytes) {
  BS_RETURN_IF_ERROR(takeError());
  if (bytes > 0) std::memcpy(hostDst, src, bytes);
  return Status::ok();
}

void CpuBackend::copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

void CpuBackend::fill(float* x, float value, int64_t n) {
  if (!sizesOk("fill", {n})) return;
  for (int64_t i = 0; i < n; ++i) x[i] = value;
}

void CpuBackend::axpy(float* y, float alpha, const float* x, int64_t n) {
  if (!sizesOk("axpy", {n})) return;
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void CpuBackend::scale(float* x, float alpha, int64_t n) {
  if (!sizesOk("scale", {n})) return;
  for (int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

Result<double> CpuBackend::sum(const float* x, int64_t n) {
  if (!sizesOk("sum", {n})) return takeError();
  BS_RETURN_IF_ERROR(takeError());
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]);
  return s;
}

Result<double> CpuBackend::squaredSum(const float* x, int64_t n) {
  if (!sizesOk("squaredSum", {n})) return takeError();
  BS_RETURN_IF_ERROR(takeError());
  double s = 0.0;  // the order and precision of gradSquaredSum (engine/adamw.cpp)
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return s;
}

void CpuBackend::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                      const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                      float* c, int64_t ldc) {
  if (!sizesOk("gemm", {m, n, k})) return;
  engine::gemm<float>(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void CpuBackend::linearForward(float* out, const float* inp, const float* weight, const float* bias,
                               int64_t n, int64_t ic, int64_t oc) {
  if (!sizesOk("linearForward", {n, ic, oc})) return;
  k::linearForward(out, inp, weight, bias, n, ic, oc);
}

void CpuBackend::linearBackwardInput(float* dinp, const float* dout, const float* weight, int64_t n,
                                     int64_t ic, int64_t oc) {
  if (!sizesOk("linearBackwardInput", {n, ic, oc})) return;
  k::linearBackwardInput(dinp, dout, weight, n, ic, oc);
}

void CpuBackend::linearBackwardWeight(float* dweight, float* dbias, const float* dout,
                                      const float* inp, int64_t n, int64_t ic, int64_t oc) {
  if (!sizesOk("linearBackwardWeight", {n, ic, oc})) return;
  k::linearBackwardWeight(dweight, dbias, dout, inp, n, ic, oc);
}

void CpuBackend::layerNormForward(float* out, float* mean, float* rstd, const float* inp,
                                  const float* weight, const float* bias, int64_t n, int64_t c) {
  if (!sizesOk("layerNormForward", {n, c})) return;
  k::layerNormForward(out, mean, rstd, inp, weight, bias, n, c);
}

void CpuBackend::layerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                                   const float* inp, const float* weight, const float* mean,
                                   const float* rstd, int64_t n, int64_t c) {
  if (!sizesOk("layerNormBackward", {n, c})) return;
  k::layerNormBackward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, n, c);
}

void CpuBackend::layerNormBackwardInput(float* dinp, const float* dout, const float* inp,
                                        const float* weight, const float* mean, const float* rstd,
                                        int64_t n, int64_t c) {
  if (!sizesOk("layerNormBackwardInput", {n, c})) return;
  k::layerNormBackwardInput(dinp, dout, inp, weight, mean, rstd, n, c);
}

void CpuBackend::layerNormBackwardWeight(float* dweight, float* dbias, const float* dout,
                                         const float* inp, const float* mean, const float* rstd,
                                         int64_t n, int64_t c) {
  if (!sizesOk("layerNormBackwardWeight", {n, c})) return;
  k::layerNormBackwardWeight(dweight, dbias, dout, inp, mean, rstd, n, c);
}

Shape CpuBackend::attentionScratchShape(int64_t t, int64_t) const {
  return {t, t};
}

void CpuBackend::attentionForward(float* out, float* att, const float* qkv, int64_t b, int64_t t,
                                  int64_t c, int64_t nh) {
  if (!sizesOk("attentionForward", {b, t, c, nh})) return;
  k::attentionForward(out, att, qkv, b, t, c, nh);
}

void CpuBackend::attentionBackward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                                   const float* att, int64_t b, int64_t t, int64_t c, int64_t nh) {
  if (!sizesOk("attentionBackward", {b, t, c, nh})) return;
  k::attentionBackward(dqkv, scratch, dout, qkv, att, b, t, c, nh);
}

void CpuBackend::geluForward(float* out, const float* inp, int64_t n) {
  if (!sizesOk("geluForward", {n})) return;
  k::geluForward(out, inp, n);
}

void CpuBackend::geluBackward(float* dinp, const float* inp, const float* dout, int64_t n) {
  if (!sizesOk("geluBackward", {n})) return;
  k::geluBackward(dinp, inp, dout, n);
}

void CpuBackend::residualForward(float* out, const float* a, const float* b, int64_t n) {
  if (!sizesOk("residualForward", {n})) return;
  k::residualForward(out, a, b, n);
}

void CpuBackend::residualBackward(float* da, float* db, const float* dout, int64_t n) {
  if (!sizesOk("residualBackward", {n})) return;
  k::residualBackward(da, db, dout, n);
}

void CpuBackend::embeddingForward(float* out, const int32_t* tokens, const float* wte,
                                  const float* wpe, int64_t b, int64_t t, int64_t c) {
  if (!sizesOk("embeddingForward", {b, t, c})) return;
  k::embeddingForward(out, tokens, wte, wpe, b, t, c);
}

void CpuBackend::embeddingBackward(float* dwte, float* dwpe, const float* dout,
                                   const int32_t* tokens, int64_t b, int64_t t, int64_t c) {
  if (!sizesOk("embeddingBackward", {b, t, c})) return;
  k::embeddingBackward(dwte, dwpe, dout, tokens, b, t, c);
}

void CpuBackend::crossEntropyForward(float* probsInOut, float* losses, const int32_t* targets,
                                     int64_t n, int64_t v) {
  if (!sizesOk("crossEntropyForward", {n, v})) return;
  k::crossEntropyForward(probsInOut, losses, targets, n, v);
}

void CpuBackend::crossEntropyBackward(float* probsToDlogits, const int32_t* targets, float dloss,
                                      int64_t n, int64_t v) {
  if (!sizesOk("crossEntropyBackward", {n, v})) return;
  k::crossEntropyBackward(probsToDlogits, targets, dloss, n, v);
}

void CpuBackend::adamwUpdate(float* param, const float* grad, float* m, float* v, int64_t n,
                             const AdamWConfig& config, double lr, int64_t t, bool decay) {
  if (!sizesOk("adamwUpdate", {n})) return;
  const auto size = static_cast<size_t>(n);
  engine::adamwUpdate({param, size}, {grad, size}, {m, size}, {v, size}, config, lr, t, decay);
}

}  // namespace bubblescope::engine
