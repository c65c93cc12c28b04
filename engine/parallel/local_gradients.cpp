#include "engine/parallel/local_gradients.h"

namespace bubblescope::engine {

Result<GradSquares> LocalGradients::localGradSquares(bool /*countReplicated: no tp here*/) {
  BS_ASSIGN_OR_RETURN(const double sum, engine::gradSquaredSum(model_.parameters(), backend_));
  return GradSquares{sum, 0.0};
}

void LocalGradients::scaleGradients(float factor) {
  engine::scaleGradients(model_.parameters(), factor, backend_);
}

Status LocalGradients::applyOptimizer(double lr) {
  optimizer_.step(lr, backend_);
  return backend_.synchronize();
}

// A tensor's values on the host (downloaded from a device: a synchronisation point).
static Result<std::vector<float>> valuesOf(const Tensor& t, Backend& backend) {
  if (t.device() == Device::kHost) return std::vector<float>(t.span().begin(), t.span().end());
  return backend.download(t);
}

Status LocalGradients::appendParameters(NamedValues& out, std::vector<Parameter*>& params) {
  for (Parameter* p : model_.parameters()) {
    BS_ASSIGN_OR_RETURN(std::vector<float> values, valuesOf(p->value, backend_));
    out.emplace_back(p->name, std::move(values));
    params.push_back(p);
  }
  return Status::ok();
}

Status LocalGradients::appendOptimizerState(NamedValues& m, NamedValues& v, int64_t& steps) {
  for (AdamW::State& s : optimizer_.states()) {
    BS_ASSIGN_OR_RETURN(std::vector<float> mv, valuesOf(s.m, backend_));
    BS_ASSIGN_OR_RETURN(std::vector<float> vv, valuesOf(s.v, backend_));
    m.emplace_back(s.param->name, std::move(mv));
    v.emplace_back(s.param->name, std::move(vv));
  }
  steps = optimizer_.stepCount();
  return Status::ok();
}

}  // namespace bubblescope::engine
