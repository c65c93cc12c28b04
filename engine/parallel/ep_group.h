// CommExpertParallel: the model's ExpertParallelGroup (engine/expert_parallel.h)
// over a Communicator: every all-to-all is the communicator's, traced with
// dimension ep, the caller's name and the model's step, micro-batch, stage
// and chunk.
//
// Contract: `ep` must outlive this object and the models that use it; the
// training thread only.
#pragma once

#include "engine/expert_parallel.h"
#include "engine/parallel/communicator.h"
#include "engine/parallel/tp_group.h"  // commTraceAt

namespace bubblescope::engine {

class CommExpertParallel final : public ExpertParallelGroup {
 public:
  explicit CommExpertParallel(Communicator& ep) : ep_(ep) {}
  int32_t rank() const override { return ep_.rank(); }
  int32_t size() const override { return ep_.size(); }
  Status allToAll(std::span<const float> send, std::span<float> recv,
                  const std::vector<int>& sendCounts, const std::vector<int>& recvCounts,
                  const char* name, const TraceContext& where) override {
    return ep_.allToAll(send, recv, sendCounts, recvCounts,
                        commTraceAt(name, where, trace_model::ParallelDim::kEp));
  }

 private:
  Communicator& ep_;
};

}  // namespace bubblescope::engine
