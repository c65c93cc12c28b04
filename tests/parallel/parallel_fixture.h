// Shared by the data-parallel MPI suites: run a layout on groups of the
// 4-rank world and compare it with the single-rank Trainer on the same
// global batch (docs/design.md, the engine's correctness rule).
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "agreement.h"
#include "engine/parallel/mpi_communicator.h"
#include "engine/parallel/rank_trainer.h"

namespace bubblescope::engine::testing {

struct DpCase {
  int32_t dp = 2;
  int32_t zero = 0;
  bool overlap = true;
  int64_t bucketElements = 1 << 20;
};

inline std::string describe(const DpCase& c) {
  return "dp " + std::to_string(c.dp) + " zero " + std::to_string(c.zero) +
         (c.overlap ? " overlap" : " no-overlap") + " bucket " + std::to_string(c.bucketElements);
}

// Per-rank options: 2 micro-batches of 2 sequences, a learning rate that moves
// the weights, clipping at 0.5 so the global norm matters.
inline TrainerOptions perRankOptions() {
  TrainerOptions o;
  o.model = layout::modelPreset("tiny").value();
  o.batchSize = 2;
  o.microBatches = 2;
  o.seed = 4242;
  o.schedule = {.peak = 3e-3, .minRatio = 0.1, .warmupSteps = 1, .totalSteps = 5};
  o.gradClip = 0.5;
  return o;
}

inline int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Appends the gradients `model` holds now (after a step: as AdamW used
// them), this rank's slice of each.
inline void recordGradients(GptModel& model, RunResult& r) {
  std::vector<GradientSlice>& step = r.grads.emplace_back();
  for (const Parameter* p : model.parameters()) {
    step.push_back({p->name, p->fullShape, p->shard,
                    std::vector<float>(p->grad.span().begin(), p->grad.span().end())});
  }
}

// The single-rank run of `options` on M x dp micro-batches: losses,
// gradient norms, every parameter by name, and the learning rates' sum.
inline RunResult singleRankRun(const TrainerOptions& options, int32_t dp, int steps) {
  RunResult r;
  auto trainer = std::move(RankTrainer::create(singleRankEquivalent(options, dp)).value());
  for (int s = 0; s < steps; ++s) {
    auto step = trainer->step().value();
    r.losses.push_back(step.loss);
    r.gradNorms.push_back(step.gradNorm);
    r.lrSum += options.schedule.at(s);
    recordGradients(trainer->model(), r);
  }
  for (Parameter* p : trainer->model().parameters()) {
    r.params.emplace_back(p->name,
                          std::vector<float>(p->value.span().begin(), p->value.span().end()));
  }
  return r;
}

// The same for perRankOptions() (cached per dp and steps).
inline const RunResult& reference(int32_t dp, int steps) {
  static std::map<std::pair<int32_t, int>, RunResult> cache;
  auto it = cache.find({dp, steps});
  if (it != cache.end()) return it->second;
  return cache.emplace(std::make_pair(dp, steps), singleRankRun(perRankOptions(), dp, steps))
      .first->second;
}

// The reference restricted to the parameters a rank holds (a pipeline
// stage's, an ep rank's experts), in the rank's order.
inline RunResult heldSubset(const RunResult& ref, const RunResult& got) {
  RunResult sub = ref;
  sub.params.clear();
  for (const auto& [name, values] : got.params) {
    for (const auto& entry : ref.params) {
      if (entry.first == name) sub.params.push_back(entry);
    }
  }
  return sub;
}

// This rank's group of `dp` consecutive world ranks.
inline std::unique_ptr<MpiCommunicator> dpGroup(int32_t dp) {
  const int r = worldRank();
  auto c = MpiCommunicator::split(MPI_COMM_WORLD, r / dp, r, trace_model::ParallelDim::kDp);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return std::move(c).value();
}

// Runs `steps` steps of any RankTrainer, recording loss and gradient norm,
// and each step's gradients from `model` when given (only where they are
// whole on the rank: ZeRO 0); false (with a test failure) when a step fails.
inline bool recordSteps(RankTrainer& trainer, int steps, RunResult& r, GptModel* model = nullptr) {
  for (int s = 0; s < steps; ++s) {
    auto step = trainer.step();
    EXPECT_TRUE(step.isOk()) << step.status().toString();
    if (!step.isOk()) return false;
    r.losses.push_back(step->loss);
    r.gradNorms.push_back(step->gradNorm);
    if (model != nullptr) recordGradients(*model, r);
  }
  return true;
}

inline RunResult runParallel(const DpCase& c, Communicator& comm, int steps) {
  ParallelOptions p;
  p.zeroStage = layout::zeroStageFromNumber(c.zero).value();
  p.overlap = c.overlap;
  p.bucketElements = c.bucketElements;
  RunResult r;
  auto made = RankTrainer::create(perRankOptions(), {.parallel = p, .groups = {.dp = &comm}});
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  GptModel* model = c.zero == 0 && made.isOk() ? &(*made)->model() : nullptr;
  if (!made.isOk() || !recordSteps(**made, steps, r, model)) return r;
  auto params = (*made)->parameters();
  EXPECT_TRUE(params.isOk());
  if (params.isOk()) r.params = std::move(params).value();
  return r;
}

}  // namespace bubblescope::engine::testing
