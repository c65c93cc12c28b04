#include "engine/parallel/layout_checkpoint.h"

#include <map>

#include "engine/parallel/host_values_transfer.h"
#include "engine/parallel/rank_trainer.h"

namespace bubblescope::engine {
namespace {

constexpr int32_t kCheckpointTag = 7301;  // the stage -> stage 0 message

// This rank's chunks, full values (over ZeRO shards and tp slices).
struct StageState {
  NamedValues params, m, v;
  int64_t optimizerSteps = -1;
};

Result<StageState> gatherStage(const std::vector<GradientSync*>& syncs, Communicator* tp,
                               Backend* backend) {
  StageState s;
  std::vector<Parameter*> owners;
  for (GradientSync* sync : syncs) {
    BS_RETURN_IF_ERROR(sync->appendParameters(s.params, owners));
    int64_t steps = 0;
    BS_RETURN_IF_ERROR(sync->appendOptimizerState(s.m, s.v, steps));
    if (s.optimizerSteps >= 0 && steps != s.optimizerSteps) {
      return Status::internal("checkpoint: the chunks of a stage applied " +
                              std::to_string(s.optimizerSteps) + " and " + std::to_string(steps) +
                              " optimizer steps");
    }
    s.optimizerSteps = steps;
  }
  if (tp != nullptr) {
    for (NamedValues* values : {&s.params, &s.m, &s.v}) {
      BS_RETURN_IF_ERROR(assembleTpShards(owners, *values, *tp, backend));
    }
  }
  return s;
}

// The names stage `stage` of `stages` holds, in the order it lists them: its
// chunks in order, each chunk's parameters in the model's canonical order.
std::vector<Parameter*> stageParameters(GptModel& full, const std::vector<int32_t>& split,
                                        int32_t stages, int32_t stage) {
  std::vector<Parameter*> out;
  const int32_t chunks = static_cast<int32_t>(split.size()) / stages;
  for (int32_t c = 0; c < chunks; ++c) {
    const LayerRange r = pipelineSlots(split, c * stages + stage);
    for (Parameter* p : full.parameters()) {
      const int32_t slot = full.slotOf(p);
      if (slot >= r.first && slot < r.last) out.push_back(p);
    }
  }
  return out;
}

// The full model and its AdamW, filled by name from every stage.
class FullState {
 public:
  static Result<std::unique_ptr<FullState>> create(const layout::ModelConfig& config) {
    std::unique_ptr<FullState> s(new FullState);
    BS_ASSIGN_OR_RETURN(s->model_, GptModel::create(config, &s->allocator_));
    s->optimizer_ = std::make_unique<AdamW>(s->model_->parameters(), AdamWConfig{}, &s->allocator_);
    for (AdamW::State& st : s->optimizer_->states()) s->byName_[st.param->name] = {&st, false};
    return s;
  }

  // Copies the three tensors of `name` from `params`, `m`, `v` (numel each).
  Status place(const std::string& name, const float* params, const float* m, const float* v,
               int64_t numel) {
    auto it = byName_.find(name);
    if (it == byName_.end()) {
      return Status::internal("checkpoint: a rank holds '" + name + "', not in the model");
    }
    AdamW::State& st = *it->second.state;
    if (st.param->value.numel() != numel || it->second.placed) {
      return Status::internal("checkpoint: '" + name + "' arrived twice or with " +
                              std::to_string(numel) + " elements, not " +
                              std::to_string(st.param->value.numel()));
    }
    std::copy(params, params + numel, st.param->value.data());
    std::copy(m, m + numel, st.m.data());
    std::copy(v, v + numel, st.v.data());
    it->second.placed = true;
    return Status::ok();
  }

  Status write(const std::string& path, int64_t optimizerSteps, const CheckpointMeta& meta) {
    for (const auto& [name, entry] : byName_) {
      if (!entry.placed) return Status::internal("checkpoint: no rank holds '" + name + "'");
    }
    optimizer_->setStepCount(optimizerSteps);
    return writeCheckpoint(path, *model_, *optimizer_, meta);
  }

  GptModel& model() { return *model_; }

 private:
  struct Entry {
    AdamW::State* state = nullptr;
    bool placed = false;
  };
  FullState() = default;
  Allocator allocator_;  // its own: the trainer's memory report is not touched
  std::unique_ptr<GptModel> model_;
  std::unique_ptr<AdamW> optimizer_;
  std::map<std::string, Entry> byName_;
};

}  // namespace

Status saveLayoutCheckpoint(const std::string& path, const std::vector<GradientSync*>& syncs,
                            const LayoutCheckpointGroups& groups, const std::vector<int32_t>& split,
                            const CheckpointMeta& meta, bool& wrote) {
  wrote = false;
  BS_ASSIGN_OR_RETURN(StageState mine, gatherStage(syncs, groups.tp, groups.backend));
  if ((groups.dp != nullptr && groups.dp->rank() != 0) ||
      (groups.tp != nullptr && groups.tp->rank() != 0)) {
    return Status::ok();  // dp and tp replicas hold the same values
  }
  const int32_t stages = groups.pp != nullptr ? groups.pp->size() : 1;
  const int32_t stage = groups.pp != nullptr ? groups.pp->rank() : 0;
  CommTrace trace;
  trace.name = "checkpoint_gather";
  if (stage != 0) {  // [params..., m..., v...] of this stage to stage 0
    std::vector<float> message;
    for (const NamedValues* values : {&mine.params, &mine.m, &mine.v}) {
      for (const auto& [name, x] : *values) message.insert(message.end(), x.begin(), x.end());
    }
    if (groups.backend != nullptr) {
      return sendHostValues(*groups.pp, *groups.backend, message, 0, kCheckpointTag, trace);
    }
    return groups.pp->send(message, 0, kCheckpointTag, trace);
  }
  BS_ASSIGN_OR_RETURN(auto full, FullState::create(meta.model));
  for (size_t i = 0; i < mine.params.size(); ++i) {
    BS_RETURN_IF_ERROR(full->place(mine.params[i].first, mine.params[i].second.data(),
                                   mine.m[i].second.data(), mine.v[i].second.data(),
                                   static_cast<int64_t>(mine.params[i].second.size())));
  }
  for (int32_t k = 1; k < stages; ++k) {
    const std::vector<Parameter*> expected = stageParameters(full->model(), split, stages, k);
    int64_t total = 0;
    for (const Parameter* p : expected) total += p->value.numel();
    std::vector<float> message(static_cast<size_t>(3 * total));
    if (groups.backend != nullptr) {
      BS_RETURN_IF_ERROR(
          recvHostValues(*groups.pp, *groups.backend, message, k, kCheckpointTag, trace));
    } else {
      BS_RETURN_IF_ERROR(groups.pp->recv(message, k, kCheckpointTag, trace));
    }
    int64_t offset = 0;
    for (const Parameter* p : expected) {
      const float* at = message.data() + offset;
      const int64_t n = p->value.numel();
      BS_RETURN_IF_ERROR(full->place(p->name, at, at + total, at + 2 * total, n));
      offset += n;
    }
  }
  BS_RETURN_IF_ERROR(full->write(path, mine.optimizerSteps, meta));
  wrote = true;
  return Status::ok();
}

}  // namespace bubblescope::engine
