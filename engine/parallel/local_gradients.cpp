#include "engine/parallel/local_gradients.h"

namespace bubblescope::engine {

Result<double> LocalGradients::gradSquaredSum(bool /*countReplicated: no tp here*/) {
  return engine::gradSquaredSum(model_.parameters(), backend_);
}

void LocalGradients::scaleGradients(float factor) {
  engine::scaleGradients(model_.parameters(), factor, backend_);
}

Status LocalGradients::applyOptimizer(double lr) {
  optimizer_.step(lr, backend_);
  return backend_.synchronize();
}

Status LocalGradients::appendParameters(NamedValues& out, std::vector<Parameter*>& params) {
  if (backend_.device() != Device::kHost) {
    return Status::unsupported("reading parameters back from " + backend_.description() +
                               " is not supported yet");
  }
  for (Parameter* p : model_.parameters()) {
    out.emplace_back(p->name, std::vector<float>(p->value.span().begin(), p->value.span().end()));
    params.push_back(p);
  }
  return Status::ok();
}

Status LocalGradients::appendOptimizerState(NamedValues& m, NamedValues& v, int64_t& steps) {
  if (backend_.device() != Device::kHost) {
    return Status::unsupported("reading optimizer state back from " + backend_.description() +
                               " is not supported yet");
  }
  for (AdamW::State& s : optimizer_.states()) {
    m.emplace_back(s.param->name, std::vector<float>(s.m.span().begin(), s.m.span().end()));
    v.emplace_back(s.param->name, std::vector<float>(s.v.span().begin(), s.v.span().end()));
  }
  steps = optimizer_.stepCount();
  return Status::ok();
}

}  // namespace bubblescope::engine
