// ExpertDataParallel: the GradientSync of a model chunk under expert
// parallelism. Its parameters are synchronised by two DataParallel objects
// (data_parallel.h), each over its own group and flat buffer:
// - the shared ones (attention, layer norms, dense MLPs, routers, embedding,
//   head: every rank of dp holds them) over the dp group;
// - this rank's experts (Parameter::expert) over the expert-data-parallel
//   group: the dp ranks with the same ep rank, i.e. those holding the same
//   experts (dp / ep of them), collectives named "expert_*".
// Both use the same ZeRO stage (0 or 1: ZeRO 1 shards each buffer's
// optimizer state over its own group). Each micro-batch's loss is scaled by
// 1/(M·dp) as everywhere, so sums give the global mean gradient in both: an
// expert's gradient already holds every token its ep group routed to it,
// the expert-data-parallel sum adds the other ep groups' tokens.
//
// The squared gradient norm is the shared part's plus the experts' summed
// over the ep group (each ep rank holds different experts).
//
// Contract: as DataParallel's; create() installs this object as the
// model's LayerHooks (forwarding every hook to both, shared first). The
// groups (dp, expert-data-parallel, ep) outlive it; collectives of each
// group are issued in the same order on its ranks.
#pragma once

#include <memory>

#include "engine/parallel/data_parallel.h"

namespace bubblescope::engine {

class ExpertDataParallel final : public LayerHooks, public GradientSync {
 public:
  // `options.group` is ignored (each part gets its own).
  static Result<std::unique_ptr<ExpertDataParallel>> create(GptModel& model, Allocator& allocator,
                                                            Communicator& dp,
                                                            Communicator& expertDp,
                                                            Communicator& ep,
                                                            const DataParallelOptions& options);
  ~ExpertDataParallel() override;

  // GradientSync
  void zeroGradients() override;
  void beginPass(int32_t step, int32_t microBatch) override;
  void beginMicroBatch(int32_t step, int32_t microBatch, bool last) override;
  Status completeGradients() override;
  layout::ZeroStage zeroStage() const override { return shared_->zeroStage(); }
  bool blocksInPasses() const override { return shared_->blocksInPasses(); }
  // The dense parameters' in `shared`, the experts' in `experts`.
  Result<GradSquares> localGradSquares(bool countReplicated) override;
  Result<double> reduceGradSquares(GradSquares local) override;
  void scaleGradients(float factor) override;
  Status applyOptimizer(double lr) override;
  Status gatherUpdatedParameters() override;
  int64_t parameterCount() const override;
  Status appendParameters(NamedValues& out, std::vector<Parameter*>& params) override;
  Status appendOptimizerState(NamedValues& m, NamedValues& v, int64_t& steps) override;

  // LayerHooks
  Status beforeForward(int32_t slot) override;
  Status afterForward(int32_t slot) override;
  Status beforeBackward(int32_t slot) override;
  Status afterBackward(int32_t slot) override;
  Status beforeBackwardInput(int32_t slot) override;
  Status afterBackwardInput(int32_t slot) override;
  Status beforeBackwardWeight(int32_t slot) override;
  Status afterBackwardWeight(int32_t slot) override;

 private:
  ExpertDataParallel(GptModel& model, Communicator& ep) : model_(model), ep_(ep) {}
  // `hook` on both parts, shared first.
  template <class Hook>
  Status both(Hook hook) {
    BS_RETURN_IF_ERROR(hook(*shared_));
    return hook(*experts_);
  }

  GptModel& model_;
  Communicator& ep_;
  int32_t step_ = -1;                      // of the spans
  std::unique_ptr<DataParallel> shared_;   // over dp
  std::unique_ptr<DataParallel> experts_;  // over the expert-data-parallel group
};

}  // namespace bubblescope::engine
