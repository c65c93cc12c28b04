// LocalGradients: the GradientSync of a process that trains alone (the 1x1x1
// layout, `bubblescope-cli train`): the model's own gradients and one AdamW,
// both in its Backend's memory (any device). There is no group, so the
// gradient collective op has nothing to reduce and the gradients are final
// after the last backward.
//
// Contract: the model and the backend outlive this object; the training
// thread only. The norm and the update are bit for bit clipGradNorm() and
// AdamW::step() on the backend (adamw.h).
#pragma once

#include <memory>

#include "engine/adamw.h"
#include "engine/backend.h"
#include "engine/gpt_model.h"
#include "engine/parallel/gradient_sync.h"

namespace bubblescope::engine {

class LocalGradients final : public GradientSync {
 public:
  LocalGradients(GptModel& model, Backend& backend, const AdamWConfig& optimizer)
      : model_(model),
        backend_(backend),
        optimizer_(model.parameters(), optimizer, &backend.allocator()) {}

  void zeroGradients() override { model_.zeroGrad(); }
  void beginPass(int32_t, int32_t) override {}
  void beginMicroBatch(int32_t, int32_t, bool) override {}
  Status completeGradients() override { return Status::ok(); }
  layout::ZeroStage zeroStage() const override { return layout::ZeroStage::kNone; }
  bool blocksInPasses() const override { return false; }
  Result<GradSquares> localGradSquares(bool countReplicated) override;
  Result<double> reduceGradSquares(GradSquares local) override { return local.shared; }
  void scaleGradients(float factor) override;
  Status applyOptimizer(double lr) override;
  Status gatherUpdatedParameters() override { return Status::ok(); }
  int64_t parameterCount() const override { return model_.parameterCount(); }
  // Any device: a device's values are downloaded (synchronisation points).
  Status appendParameters(NamedValues& out, std::vector<Parameter*>& params) override;
  Status appendOptimizerState(NamedValues& m, NamedValues& v, int64_t& steps) override;

  AdamW& optimizer() { return optimizer_; }  // checkpoints

 private:
  GptModel& model_;
  Backend& backend_;
  AdamW optimizer_;
};

}  // namespace bubblescope::engine
