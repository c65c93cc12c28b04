// The ideal-hardware replay and the calibration from a run, on hand-built
// "oversubscribed" runs whose wall times are stretched unevenly per stage
// while their thread CPU times are the true costs: the replay must recover
// the schedule's own bubble from the CPU times, and the calibration must
// recover the per-layer costs and the alpha-beta fit.
#include "storage/analysis/ideal_replay.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "planning/formulas.h"
#include "planning/simulator.h"
#include "storage/analysis/report_json.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/analysis/run_calibration.h"
#include "storage/calibration_store.h"
#include "storage/trace_reader.h"
#include "tests/analysis/trace_builder.h"

namespace bubblescope::testing {
namespace {

using layout::OpType;
using trace_model::EventKind;

constexpr int64_t kMs = 1'000'000;

// A pp4 run of `schedule` with m = 8: true costs F = 1 ms, B = 2 ms (fused)
// or B = W = 1 ms (split), stretched on stage k by 1 + 0.6·k (and 2 at
// stage 2), as ranks sharing cores see it; 3 steps. Every op span holds one
// layer span "h.<k>" with the same times.
TraceBuilder::RunSpec stretchedRun(layout::ScheduleKind kind, const std::string& name) {
  layout::Layout l;
  l.model = *layout::modelPreset("small");  // 4 layers: one per stage
  l.pp = 4;
  l.microBatches = 8;
  l.schedule = kind;
  const layout::Schedule s = *layout::scheduleFor(l);
  const bool split = s.splitsBackward();
  auto trueCost = [&](OpType t) -> double {
    switch (t) {
      case OpType::kForward:
        return 1.0;
      case OpType::kBackward:
        return 2.0;
      case OpType::kBackwardInput:
      case OpType::kBackwardWeight:
        return 1.0;
      default:
        return 0.0;
    }
  };
  const double stretch[] = {1.0, 1.6, 2.0, 2.8};
  layout::OpCosts stretched(4);
  for (int32_t k = 0; k < 4; ++k) {
    for (const layout::Op& op : s.stageOps[k])
      stretched[k].push_back(trueCost(op.type) * stretch[k]);
  }
  const layout::Simulation sim = *layout::simulate(s, layout::CostModel{}, stretched);
  TraceBuilder::RunSpec spec;
  spec.name = name;
  spec.layoutJson = layout::toJson(l).dump();
  spec.worldSize = 4;
  for (int32_t k = 0; k < 4; ++k) {
    storage::RankInfo r = rankInfo(k, 0, 0, k);
    r.coresOnHost = 2;
    r.ranksOnHost = 4;
    spec.ranks.push_back(r);
  }
  const int64_t stepNs = static_cast<int64_t>(sim.makespan * kMs) + kMs;
  for (int32_t step = 0; step < 3; ++step) {
    const int64_t base = step * stepNs;
    for (int32_t k = 0; k < 4; ++k) {
      for (const layout::OpInterval& iv : sim.stages[k].timeline) {
        const layout::Op& op = s.stageOps[k][iv.opIndex];
        const int64_t t0 = base + static_cast<int64_t>(iv.start * kMs);
        const int64_t t1 = base + static_cast<int64_t>(iv.end * kMs);
        EventKind ek;
        switch (op.type) {
          case OpType::kForward:
            ek = EventKind::kForward;
            break;
          case OpType::kBackward:
            ek = EventKind::kBackward;
            break;
          case OpType::kBackwardInput:
            ek = EventKind::kBackwardInput;
            break;
          case OpType::kBackwardWeight:
            ek = EventKind::kBackwardWeight;
            break;
          case OpType::kRecvActivation:
          case OpType::kRecvGrad:
            if (t1 > t0) spec.events.push_back(span(k, EventKind::kWait, t0, t1, step));
            continue;
          default:
            continue;
        }
        trace_model::Event e = span(k, ek, t0, t1, step);
        e.name = split ? (op.type == OpType::kForward         ? "forward"
                          : op.type == OpType::kBackwardInput ? "backward_input"
                                                              : "backward_weight")
                       : (op.type == OpType::kForward ? "forward" : "backward");
        e.microBatch = op.microBatch;
        e.chunk = op.chunk;
        e.stage = k;
        e.cpuNs = static_cast<int64_t>(trueCost(op.type) * kMs);
        spec.events.push_back(e);
        e.name = "h." + std::to_string(k);
        spec.events.push_back(e);
      }
      spec.steps.push_back(stepRecord(k, step, base, base + stepNs));
    }
  }
  // dp-free: pipeline transfers only, none costly.
  return spec;
}

Result<analysis::IdealReplay> replayOf(TraceBuilder& b, int64_t run) {
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(b.path()));
  BS_ASSIGN_OR_RETURN(auto measured, analysis::measureOps(*reader, run));
  return analysis::replayIdealHardware(measured);
}

TEST(IdealReplay, GPipeAnd1F1BReplayToTheFormulaWhereTheMeasuredBubbleIsFarAbove) {
  for (auto kind : {layout::ScheduleKind::kGPipe, layout::ScheduleKind::kOneFOneB}) {
    TraceBuilder b;
    const int64_t run = b.run(stretchedRun(kind, "pp4"));
    auto replay = replayOf(b, run);
    ASSERT_TRUE(replay.isOk()) << replay.status().message();
    const double formula = layout::formulaBubble(kind, 4, 8);  // 3/11
    ASSERT_EQ(replay->bubble.size(), 4u);
    for (double bubble : replay->bubble) EXPECT_NEAR(bubble, formula, 1e-6);
    EXPECT_EQ(replay->steps, 2);                       // the first step is skipped
    EXPECT_NEAR(replay->stepNs, 11 * 3.0 * kMs, 1e3);  // (m + p - 1)(t_F + t_B)

    // The report shows both: the stretched measurement is far from the formula.
    auto reader = storage::TraceReader::open(b.path());
    ASSERT_TRUE(reader.isOk());
    auto report = analysis::analyzeRun(**reader, run);
    ASSERT_TRUE(report.isOk()) << report.status().message();
    const nlohmann::json j = analysis::reportToJson({*report});
    const auto& stages = j["runs"][0]["stages"];
    ASSERT_EQ(stages.size(), 4u);
    for (const auto& s : stages) {
      EXPECT_NEAR(s["bubble_replayed"].get<double>(), formula, 1e-6);
    }
    EXPECT_GT(std::abs(stages[0]["bubble_fraction"].get<double>() - formula), 0.05);
  }
}

TEST(IdealReplay, ZeroBubbleReplaysBelow1F1B) {
  TraceBuilder b;
  const int64_t run = b.run(stretchedRun(layout::ScheduleKind::kZeroBubbleH1, "zb"));
  auto replay = replayOf(b, run);
  ASSERT_TRUE(replay.isOk()) << replay.status().message();
  // The simulator's own bubble of ZB-H1 at t_F = t_B = t_W.
  const layout::Schedule s = *layout::zeroBubbleH1(4, 8);
  const layout::Simulation sim = *layout::simulate(s, layout::unitCosts(s));
  const double oneFOneB = layout::formulaBubble(layout::ScheduleKind::kOneFOneB, 4, 8);
  for (int32_t k = 0; k < 4; ++k) {
    EXPECT_NEAR(replay->bubble[k], sim.stages[k].idle / sim.makespan, 1e-6);
    EXPECT_LT(replay->bubble[k], oneFOneB - 0.05);
  }
}

TEST(IdealReplay, WrittenAsARunItIsAnalysedToTheReplaysBubbles) {
  TraceBuilder b;
  const int64_t run = b.run(stretchedRun(layout::ScheduleKind::kZeroBubbleH1, "zb"));
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk());
  auto measured = analysis::measureOps(**reader, run);
  ASSERT_TRUE(measured.isOk());
  auto replay = analysis::replayIdealHardware(*measured);
  ASSERT_TRUE(replay.isOk()) << replay.status().message();
  ASSERT_EQ(replay->stepOpCostsNs.size(), 2u);
  EXPECT_EQ(replay->firstStep, 1);

  const std::string path = b.dir().file("replay.db");
  int64_t replayed = 0;
  {
    auto writer = storage::TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk());
    auto id = analysis::writeReplayedRun(**writer, *measured, *replay, "replay of zb");
    ASSERT_TRUE(id.isOk()) << id.status().message();
    replayed = *id;
  }
  auto replayReader = storage::TraceReader::open(path);
  ASSERT_TRUE(replayReader.isOk());
  // One step per replayed step, numbered as the measured ones, each as long
  // as its simulation: their mean is the replay's step time.
  auto steps = (*replayReader)->steps(replayed);
  ASSERT_TRUE(steps.isOk());
  double sum = 0;
  int n = 0;
  for (const trace_model::StepRecord& s : *steps) {
    EXPECT_GE(s.step, 1);
    EXPECT_LE(s.step, 2);
    if (s.rank == 0) {
      sum += static_cast<double>(s.endNs - s.startNs);
      ++n;
    }
  }
  ASSERT_EQ(n, 2);
  EXPECT_NEAR(sum / n, replay->stepNs, 1.0);
  // Analysed like any run, each stage's bubble is the replay's.
  auto report = analysis::analyzeRun(**replayReader, replayed);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  const nlohmann::json j = analysis::reportToJson({*report});
  const auto& stages = j["runs"][0]["stages"];
  ASSERT_EQ(stages.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_NEAR(stages[k]["bubble_fraction"].get<double>(), replay->bubble[k], 1e-6) << k;
  }
}

TEST(IdealReplay, ARunWithoutCpuTimesSaysSo) {
  TraceBuilder b;
  auto spec = stretchedRun(layout::ScheduleKind::kOneFOneB, "old");
  for (auto& e : spec.events) e.cpuNs = -1;
  const int64_t run = b.run(spec);
  auto replay = replayOf(b, run);
  ASSERT_FALSE(replay.isOk());
  EXPECT_NE(replay.status().message().find("no thread CPU time"), std::string::npos);
}

TEST(RunCalibration, RecoversLayerCostsInCpuAndWallTimeAndStoresThem) {
  TraceBuilder b;
  auto spec = stretchedRun(layout::ScheduleKind::kOneFOneB, "pp4");
  // dp all-reduces of two sizes at alpha 20 us, beta 0.5 ns/byte.
  for (int32_t step = 1; step < 3; ++step) {
    for (int64_t bytes : {int64_t{1} << 16, int64_t{1} << 20}) {
      const int64_t t = 20000 + bytes / 2;
      spec.events.push_back(
          span(0, EventKind::kAllReduce, 0, t, step, trace_model::ParallelDim::kDp, bytes));
    }
  }
  const int64_t run = b.run(spec);
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk());
  auto c = analysis::calibrateFromRun(**reader, run);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  EXPECT_TRUE(c->oversubscribed());
  EXPECT_NEAR(*c->opCostNs("block", "forward", 1, 1, true), 1.0 * kMs, 1.0);
  EXPECT_NEAR(*c->opCostNs("block", "backward", 1, 1, true), 2.0 * kMs, 1.0);
  // The wall means are stretched (stages 1.0, 1.6, 2.0, 2.8 -> mean 1.85;
  // a median would say 1.8).
  EXPECT_NEAR(*c->opCostNs("block", "forward", 1, 1, false), 1.85 * kMs, 1e3);
  const layout::LinkFit* f = c->linkFit("dp", "allreduce");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->alphaNs, 20000, 1.0);
  EXPECT_NEAR(f->betaNsPerByte, 0.5, 1e-6);

  auto id = storage::saveCalibration(b.path(), *c);
  ASSERT_TRUE(id.isOk()) << id.status().message();
  auto back = storage::loadCalibration(b.path());
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back->id, *id);
  EXPECT_EQ(back->ops.size(), c->ops.size());
  EXPECT_EQ(back->links, c->links);
  EXPECT_EQ(back->model, c->model);
  EXPECT_EQ(back->ranksPerHost, 4);
  EXPECT_NEAR(*back->opCostNs("block", "backward", 1, 1, true), 2.0 * kMs, 1.0);
}

// A dp2 run of 3 steps (100 ms apart) whose rank 1 computes slower: rank 0
// F 10, B 20, all-reduce until 40 (waiting for rank 1), optimizer 42-44;
// rank 1 F 12, B 24, all-reduce 36-40, optimizer 42-46; both steps end at
// 50. Rank 0 leaves 8 ms of its step uncovered by spans, rank 1 6 ms.
TEST(RunCalibration, MeasuresTheStepsTimeOutsideSpansAndTheStragglerFactor) {
  TraceBuilder b;
  TraceBuilder::RunSpec spec;
  layout::Layout l;
  l.dp = 2;
  spec.layoutJson = layout::toJson(l).dump();
  spec.worldSize = 2;
  const double ends[2][4] = {{10, 30, 40, 44}, {12, 36, 40, 46}};  // F, B, all-reduce, optimizer
  for (int32_t rank = 0; rank < 2; ++rank) {
    storage::RankInfo r = rankInfo(rank, rank, 0, 0);
    r.parameters = 1'000'000;
    spec.ranks.push_back(r);
    const double* e = ends[rank];
    for (int32_t step = 0; step < 3; ++step) {
      const int64_t base = step * 100 * kMs;
      auto at = [&](double ms) { return base + static_cast<int64_t>(ms * kMs); };
      for (auto [kind, t0, t1] : {std::tuple{EventKind::kForward, 0.0, e[0]},
                                  std::tuple{EventKind::kBackward, e[0], e[1]}}) {
        trace_model::Event op = span(rank, kind, at(t0), at(t1), step);
        op.microBatch = 0;
        spec.events.push_back(op);
        op.name = "h.0";  // the layer inside the op: covered once
        spec.events.push_back(op);
      }
      spec.events.push_back(span(rank, EventKind::kAllReduce, at(e[1]), at(e[2]), step,
                                 trace_model::ParallelDim::kDp, 4'000'000));
      spec.events.push_back(span(rank, EventKind::kOptimizer, at(42), at(e[3]), step));
      spec.steps.push_back(stepRecord(rank, step, at(0), at(50)));
    }
  }
  const int64_t run = b.run(spec);
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk());
  auto m = analysis::measureOps(**reader, run);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_NEAR(m->rankSteps.at({0, 1}).uncoveredNs(), 8.0 * kMs, 1.0);
  EXPECT_NEAR(m->rankSteps.at({1, 2}).uncoveredNs(), 6.0 * kMs, 1.0);
  auto c = analysis::calibrationOf(*m, run);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  // (8 + 6) / 2 ms over 10^6 parameters.
  EXPECT_NEAR(*c->perParameterNs("step", "other", false), 7.0, 1e-6);
  // Compute 32 and 40 ms: the slowest 40 over the mean 36.
  EXPECT_NEAR(c->stragglerFactor(false), 40.0 / 36.0, 1e-9);
  // A single-rank run has no straggler.
  spec.ranks.resize(1);
  spec.worldSize = 1;
  std::erase_if(spec.events, [](const trace_model::Event& e) { return e.rank == 1; });
  std::erase_if(spec.steps, [](const trace_model::StepRecord& s) { return s.rank == 1; });
  l.dp = 1;
  spec.layoutJson = layout::toJson(l).dump();
  const int64_t single = b.run(spec);
  auto again = storage::TraceReader::open(b.path());
  ASSERT_TRUE(again.isOk());
  auto alone = analysis::calibrateFromRun(**again, single);
  ASSERT_TRUE(alone.isOk()) << alone.status().message();
  EXPECT_DOUBLE_EQ(alone->stragglerFactor(false), 1.0);
  EXPECT_NEAR(*alone->perParameterNs("step", "other", false), 8.0, 1e-6);
}

// A dp2 ZeRO-2 run, 3 steps of 2 micro-batches 30 ms apart. Micro-batch 0
// of each step (the only one followed by another: the windows): forward
// wrapped by its op span 0-10, backward 10-22 (layer 10-20), the
// reduce-scatter 23-27. Rank 0's layer runs 0-4 and 6-10 (2 ms between
// its spans inside the op span), rank 1's 0-10: outside the non-op spans
// rank 0 spends 2 + 3 + 3 = 8 ms of the window, rank 1 6 ms. Per gradient
// element: the bucket work is the ranks' mean, 7 ms / Ψ, its skew the
// slowest rank's excess over it, 1 ms / Ψ.
TEST(RunCalibration, PredictZeroBucketCostIsTheRanksTimeOutsideSpansPerMicroBatchAndItsSkew) {
  TraceBuilder b;
  TraceBuilder::RunSpec spec;
  layout::Layout l;
  l.dp = 2;
  l.microBatches = 2;
  l.zeroStage = layout::ZeroStage::kGradients;
  spec.layoutJson = layout::toJson(l).dump();
  spec.worldSize = 2;
  for (int32_t rank = 0; rank < 2; ++rank) {
    spec.ranks.push_back(rankInfo(rank, rank, 0, 0));
    for (int32_t step = 0; step < 3; ++step) {
      for (int32_t mb = 0; mb < 2; ++mb) {
        const int64_t base = step * 100 * kMs + mb * 30 * kMs;
        auto at = [&](double ms) { return base + static_cast<int64_t>(ms * kMs); };
        auto tagged = [&](trace_model::Event e, const char* name = nullptr) {
          e.microBatch = mb;
          if (name) e.name = name;
          spec.events.push_back(e);
        };
        tagged(span(rank, EventKind::kForward, at(0), at(10), step));
        if (rank == 0) {
          tagged(span(rank, EventKind::kForward, at(0), at(4), step), "h.0");
          tagged(span(rank, EventKind::kForward, at(6), at(10), step), "h.0");
        } else {
          tagged(span(rank, EventKind::kForward, at(0), at(10), step), "h.0");
        }
        tagged(span(rank, EventKind::kBackward, at(10), at(22), step));
        tagged(span(rank, EventKind::kBackward, at(10), at(20), step), "h.0");
        tagged(span(rank, EventKind::kReduceScatter, at(23), at(27), step,
                    trace_model::ParallelDim::kZero, 4'000'000));
      }
      spec.steps.push_back(stepRecord(rank, step, step * 100 * kMs, step * 100 * kMs + 90 * kMs));
    }
  }
  const int64_t run = b.run(spec);
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk());
  auto m = analysis::measureOps(**reader, run);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_NEAR(m->microBatchGapNs.at({0, 1, 0}), 8.0 * kMs, 1.0);
  EXPECT_NEAR(m->microBatchGapNs.at({1, 2, 0}), 6.0 * kMs, 1.0);
  EXPECT_EQ(m->microBatchGapNs.count({0, 1, 1}), 0u);  // the step's last micro-batch
  auto c = analysis::calibrationOf(*m, run);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  const auto bucket = c->perParameterNs(layout::kZeroBucketPart, layout::kZeroBucketOp, false);
  const auto skew = c->perParameterNs(layout::kZeroBucketPart, layout::kZeroBucketSkewOp, false);
  ASSERT_TRUE(bucket.has_value() && skew.has_value());
  EXPECT_NEAR(*bucket, 7.0 * kMs / layout::parametersPerRank(l), 1e-9);
  EXPECT_NEAR(*skew, 1.0 * kMs / layout::parametersPerRank(l), 1e-9);
  // Its reduce-scatters (4 ms of 4 MB each) are fitted as the per-micro-batch
  // kind, not as ZeRO 1's.
  const layout::LinkFit* perMicroBatch = c->linkFit("zero", layout::kMicroBatchReduceScatter);
  ASSERT_NE(perMicroBatch, nullptr);
  EXPECT_EQ(perMicroBatch->collective, layout::kMicroBatchReduceScatter);
  EXPECT_NEAR(perMicroBatch->timeNs(4'000'000), 4.0 * kMs, 1.0);
  EXPECT_EQ(c->linkFit("zero", "reduce_scatter"), nullptr);
  // ZeRO 1 keeps the gradients whole: no bucket cost is measured.
  l.zeroStage = layout::ZeroStage::kOptimizer;
  m->layout = l;
  auto zeroOne = analysis::calibrationOf(*m, run);
  ASSERT_TRUE(zeroOne.isOk()) << zeroOne.status().message();
  EXPECT_FALSE(zeroOne->perParameterNs(layout::kZeroBucketPart, layout::kZeroBucketOp, false));
  EXPECT_NE(zeroOne->linkFit("zero", "reduce_scatter"), nullptr);
  EXPECT_EQ(zeroOne->linkFit("zero", layout::kMicroBatchReduceScatter), nullptr);
}

TEST(RunCalibration, ABadSourceIsOneClearError) {
  TraceBuilder b;
  TraceBuilder::RunSpec spec;
  spec.layoutJson = "{}";
  spec.ranks.push_back(rankInfo(0, 0, 0, 0));
  spec.events.push_back(span(0, EventKind::kAllReduce, 0, 10, 0, trace_model::ParallelDim::kDp, 8));
  const int64_t run = b.run(spec);
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk());
  auto c = analysis::calibrateFromRun(**reader, run);
  ASSERT_FALSE(c.isOk());
  EXPECT_NE(c.status().message().find("no compute spans"), std::string::npos);
  auto none = storage::loadCalibration(b.path());
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("holds no calibration"), std::string::npos);
}

}  // namespace
}  // namespace bubblescope::testing
