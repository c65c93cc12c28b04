// Hand-built traces with known answers for the analysis tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/trace_writer.h"
#include "tests/storage/temp_dir.h"
#include "trace_model/event.h"

namespace bubblescope::testing {

// One span; times in ns.
inline trace_model::Event span(int32_t rank, trace_model::EventKind kind, int64_t startNs,
                               int64_t endNs, int32_t step = -1,
                               trace_model::ParallelDim dim = trace_model::ParallelDim::kNone,
                               int64_t bytes = 0, int32_t peer = -1) {
  trace_model::Event e;
  e.rank = rank;
  e.kind = kind;
  switch (trace_model::categoryOf(kind)) {
    case trace_model::EventCategory::kCompute:
      e.lane = trace_model::Lane::kCompute;
      break;
    case trace_model::EventCategory::kCommunication:
      e.lane = kind == trace_model::EventKind::kSend || kind == trace_model::EventKind::kRecv
                   ? trace_model::Lane::kPipeline
                   : trace_model::Lane::kCommunication;
      break;
    case trace_model::EventCategory::kWait:
      e.lane = trace_model::Lane::kPipeline;
      break;
    case trace_model::EventCategory::kOther:
      e.lane = trace_model::Lane::kData;
      break;
  }
  e.name = std::string(trace_model::toString(kind));
  e.startNs = startNs;
  e.endNs = endNs;
  e.step = step;
  e.dim = dim;
  e.bytes = bytes;
  e.peer = peer;
  return e;
}

inline trace_model::StepRecord stepRecord(int32_t rank, int32_t step, int64_t startNs,
                                          int64_t endNs, double loss = 0.0, int64_t tokens = 0) {
  return {rank, step, loss, tokens, startNs, endNs};
}

inline storage::RankInfo rankInfo(int32_t rank, int32_t dp, int32_t tp, int32_t pp) {
  storage::RankInfo r;
  r.rank = rank;
  r.dp = dp;
  r.tp = tp;
  r.pp = pp;
  r.host = "h0";
  return r;
}

// Writes one run per call to run(); the file lives in a temporary folder.
class TraceBuilder {
 public:
  TraceBuilder() : path_(dir_.file("trace.db")) {
    auto writer = storage::TraceWriter::open(path_);
    EXPECT_TRUE(writer.isOk()) << writer.status().message();
    if (writer.isOk()) writer_ = std::move(*writer);
  }

  struct RunSpec {
    std::string name = "test";
    std::string layoutJson = "{}";
    int32_t worldSize = 1;
    std::vector<storage::RankInfo> ranks;
    std::vector<trace_model::Event> events;
    std::vector<trace_model::StepRecord> steps;
    std::vector<trace_model::Sample> samples;
    storage::RunStatus end = storage::RunStatus::kFinished;  // kRunning: left open
    std::string error;
  };

  // Returns the run id (0 on failure, with the test failed).
  int64_t run(const RunSpec& spec) {
    auto id = writer_->beginRun(
        {.name = spec.name, .layoutJson = spec.layoutJson, .worldSize = spec.worldSize});
    EXPECT_TRUE(id.isOk()) << id.status().message();
    for (const auto& r : spec.ranks) EXPECT_TRUE(writer_->addRank(r).isOk());
    EXPECT_TRUE(writer_->appendEvents(spec.events).isOk());
    EXPECT_TRUE(writer_->appendSteps(spec.steps).isOk());
    EXPECT_TRUE(writer_->appendSamples(spec.samples).isOk());
    if (spec.end == storage::RunStatus::kRunning) {
      EXPECT_TRUE(writer_->flush().isOk());
    } else {
      EXPECT_TRUE(writer_->finishRun(spec.end, spec.error).isOk());
    }
    return id.isOk() ? *id : 0;
  }

  const std::string& path() const { return path_; }
  TempDir& dir() { return dir_; }

 private:
  TempDir dir_;
  std::string path_;
  std::unique_ptr<storage::TraceWriter> writer_;
};

}  // namespace bubblescope::testing
