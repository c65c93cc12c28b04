#include "engine/parallel/expert_data_parallel.h"

namespace bubblescope::engine {

Result<std::unique_ptr<ExpertDataParallel>> ExpertDataParallel::create(
    GptModel& model, Allocator& allocator, Communicator& dp, Communicator& expertDp,
    Communicator& ep, const DataParallelOptions& options) {
  std::unique_ptr<ExpertDataParallel> d(new ExpertDataParallel(model, ep));
  DataParallelOptions part = options;
  part.group = ParameterGroup::kShared;
  BS_ASSIGN_OR_RETURN(d->shared_, DataParallel::create(model, allocator, dp, part));
  part.group = ParameterGroup::kExperts;
  BS_ASSIGN_OR_RETURN(d->experts_, DataParallel::create(model, allocator, expertDp, part));
  model.setHooks(d.get());  // each part installed itself: both go through here
  return d;
}

ExpertDataParallel::~ExpertDataParallel() {
  model_.setHooks(nullptr);
}

void ExpertDataParallel::zeroGradients() {
  shared_->zeroGradients();
  experts_->zeroGradients();
}

void ExpertDataParallel::beginPass(int32_t step, int32_t microBatch) {
  step_ = step;
  shared_->beginPass(step, microBatch);
  experts_->beginPass(step, microBatch);
}

void ExpertDataParallel::beginMicroBatch(int32_t step, int32_t microBatch, bool last) {
  step_ = step;
  shared_->beginMicroBatch(step, microBatch, last);
  experts_->beginMicroBatch(step, microBatch, last);
}

Status ExpertDataParallel::completeGradients() {
  return both([](DataParallel& d) { return d.completeGradients(); });
}

Result<GradSquares> ExpertDataParallel::localGradSquares(bool countReplicated) {
  BS_ASSIGN_OR_RETURN(const GradSquares shared, shared_->localGradSquares(countReplicated));
  BS_ASSIGN_OR_RETURN(const GradSquares experts, experts_->localGradSquares(countReplicated));
  return GradSquares{shared.shared, experts.shared};
}

Result<double> ExpertDataParallel::reduceGradSquares(GradSquares local) {
  BS_ASSIGN_OR_RETURN(const double shared, shared_->reduceGradSquares({local.shared, 0.0}));
  BS_ASSIGN_OR_RETURN(double experts, experts_->reduceGradSquares({local.experts, 0.0}));
  if (ep_.size() > 1) {
    CommTrace t;
    t.name = "expert_grad_norm";
    t.step = step_;
    BS_RETURN_IF_ERROR(ep_.allReduce(std::span<double>(&experts, 1), t));
  }
  return shared + experts;
}

void ExpertDataParallel::scaleGradients(float factor) {
  shared_->scaleGradients(factor);
  experts_->scaleGradients(factor);
}

Status ExpertDataParallel::applyOptimizer(double lr) {
  return both([lr](DataParallel& d) { return d.applyOptimizer(lr); });
}

Status ExpertDataParallel::gatherUpdatedParameters() {
  return both([](DataParallel& d) { return d.gatherUpdatedParameters(); });
}

int64_t ExpertDataParallel::parameterCount() const {
  return shared_->parameterCount() + experts_->parameterCount();
}

Status ExpertDataParallel::appendParameters(NamedValues& out, std::vector<Parameter*>& params) {
  return both([&](DataParallel& d) { return d.appendParameters(out, params); });
}

Status ExpertDataParallel::appendOptimizerState(NamedValues& m, NamedValues& v, int64_t& steps) {
  return both([&](DataParallel& d) { return d.appendOptimizerState(m, v, steps); });
}

Status ExpertDataParallel::beforeForward(int32_t slot) {
  return both([slot](DataParallel& d) { return d.beforeForward(slot); });
}
Status ExpertDataParallel::afterForward(int32_t slot) {
  return both([slot](DataParallel& d) { return d.afterForward(slot); });
}
Status ExpertDataParallel::beforeBackward(int32_t slot) {
  return both([slot](DataParallel& d) { return d.beforeBackward(slot); });
}
Status ExpertDataParallel::afterBackward(int32_t slot) {
  return both([slot](DataParallel& d) { return d.afterBackward(slot); });
}
Status ExpertDataParallel::beforeBackwardInput(int32_t slot) {
  return both([slot](DataParallel& d) { return d.beforeBackwardInput(slot); });
}
Status ExpertDataParallel::afterBackwardInput(int32_t slot) {
  return both([slot](DataParallel& d) { return d.afterBackwardInput(slot); });
}
Status ExpertDataParallel::beforeBackwardWeight(int32_t slot) {
  return both([slot](DataParallel& d) { return d.beforeBackwardWeight(slot); });
}
Status ExpertDataParallel::afterBackwardWeight(int32_t slot) {
  return both([slot](DataParallel& d) { return d.afterBackwardWeight(slot); });
}

}  // namespace bubblescope::engine
