#include "engine/adamw.h"

#include <cmath>
#include <string>

#include "engine/backend.h"
#include "engine/cpu_vector_math.h"

namespace bubblescope::engine {

Status AdamWConfig::validate() const {
  auto inUnit = [](double x) { return x >= 0.0 && x < 1.0; };
  if (!inUnit(beta1) || !inUnit(beta2)) {
    return Status::invalidArgument("AdamW betas must be in [0, 1), got " + std::to_string(beta1) +
                                   " and " + std::to_string(beta2));
  }
  if (!(eps > 0.0)) return Status::invalidArgument("AdamW eps must be positive");
  if (weightDecay < 0.0) {
    return Status::invalidArgument("weight decay must not be negative, got " +
                                   std::to_string(weightDecay));
  }
  return Status::ok();
}

namespace {
// The update's loop, built per vector width (cpu_vector_math.h).
BS_VECTOR_CLONES void adamwLoop(float* param, const float* grad, float* m, float* v, int64_t n,
                                float b1, float b2, float correction1, float correction2,
                                float rate, float eps, float wd) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i];
    m[i] = b1 * m[i] + (1.0f - b1) * g;
    v[i] = b2 * v[i] + (1.0f - b2) * g * g;
    const float mHat = m[i] / correction1;
    const float vHat = v[i] / correction2;
    param[i] -= rate * (mHat / (std::sqrt(vHat) + eps) + wd * param[i]);
  }
}
}  // namespace

void adamwUpdate(std::span<float> param, std::span<const float> grad, std::span<float> m,
                 std::span<float> v, const AdamWConfig& c, double lr, int64_t t, bool decay) {
  const float b1 = static_cast<float>(c.beta1), b2 = static_cast<float>(c.beta2);
  const float correction1 = static_cast<float>(1.0 - std::pow(c.beta1, static_cast<double>(t)));
  const float correction2 = static_cast<float>(1.0 - std::pow(c.beta2, static_cast<double>(t)));
  const float rate = static_cast<float>(lr), eps = static_cast<float>(c.eps);
  const float wd = decay ? static_cast<float>(c.weightDecay) : 0.0f;
  adamwLoop(param.data(), grad.data(), m.data(), v.data(), static_cast<int64_t>(param.size()), b1,
            b2, correction1, correction2, rate, eps, wd);
}

AdamW::AdamW(std::vector<Parameter*> params, const AdamWConfig& config, Allocator* allocator)
    : config_(config) {
  states_.reserve(params.size());
  for (Parameter* p : params) {
    states_.push_back({p, Tensor(p->value.shape(), MemoryCategory::kOptimizerState, allocator),
                       Tensor(p->value.shape(), MemoryCategory::kOptimizerState, allocator)});
  }
}

void AdamW::step(double lr) {
  ++t_;
  for (State& s : states_) {
    adamwUpdate(s.param->value.span(), s.param->grad.span(), s.m.span(), s.v.span(), config_, lr,
                t_, s.param->weightDecay);
  }
}

double gradSquaredSum(const std::vector<Parameter*>& params) {
  double sum = 0.0;
  for (const Parameter* p : params) {
    for (float g : p->grad.span()) sum += static_cast<double>(g) * g;
  }
  return sum;
}

void scaleGradients(const std::vector<Parameter*>& params, float factor) {
  for (Parameter* p : params) {
    for (float& g : p->grad.span()) g *= factor;
  }
}

double clipGradNorm(const std::vector<Parameter*>& params, double maxNorm) {
  const double norm = std::sqrt(gradSquaredSum(params));
  if (maxNorm > 0.0 && norm > maxNorm) {
    scaleGradients(params, static_cast<float>(maxNorm / (norm + 1e-6)));
  }
  return norm;
}

void AdamW::step(double lr, Backend& backend) {
  ++t_;
  for (State& s : states_) {
    backend.adamwUpdate(s.param->value.data(), s.param->grad.data(), s.m.data(), s.v.data(),
                        s.param->value.numel(), config_, lr, t_, s.param->weightDecay);
  }
}

Result<double> gradSquaredSum(const std::vector<Parameter*>& params, Backend& backend) {
  if (backend.device() == Device::kHost) {
    BS_RETURN_IF_ERROR(backend.synchronize());
    return gradSquaredSum(params);
  }
  double squares = 0.0;
  for (const Parameter* p : params) {
    BS_ASSIGN_OR_RETURN(const double s, backend.squaredSum(p->grad.data(), p->grad.numel()));
    squares += s;
  }
  return squares;
}

void scaleGradients(const std::vector<Parameter*>& params, float factor, Backend& backend) {
  if (backend.device() == Device::kHost) return scaleGradients(params, factor);
  for (Parameter* p : params) backend.scale(p->grad.data(), factor, p->grad.numel());
}

}  // namespace bubblescope::engine
