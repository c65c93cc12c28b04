// Hand-built traces for the GUI tests, written with storage::TraceWriter.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "trace_model/event.h"

namespace bubblescope::testing {

inline trace_model::Event guiSpan(int32_t rank, trace_model::Lane lane, trace_model::EventKind kind,
                                  int64_t startNs, int64_t endNs, int32_t step = 0, int32_t mb = -1,
                                  int32_t peer = -1) {
  trace_model::Event e;
  e.rank = rank;
  e.lane = lane;
  e.kind = kind;
  e.name = std::string(trace_model::toString(kind));
  e.startNs = startNs;
  e.endNs = endNs;
  e.step = step;
  e.microBatch = mb;
  e.peer = peer;
  return e;
}

inline trace_model::RankInfo guiRank(int32_t rank, int32_t pp, int32_t dp = 0, int32_t tp = 0) {
  trace_model::RankInfo r;
  r.rank = rank;
  r.pp = pp;
  r.dp = dp;
  r.tp = tp;
  r.host = "h";
  return r;
}

// Opens a writer, begins a run with `ranks`, appends events and steps.
// Leaves the run running (finish it with writer->finishRun()).
inline std::unique_ptr<storage::TraceWriter> writeGuiTrace(
    const std::string& path, const std::vector<trace_model::RankInfo>& ranks,
    const std::vector<trace_model::Event>& events,
    const std::vector<trace_model::StepRecord>& steps, const std::string& layoutJson = "{}") {
  auto writer = storage::TraceWriter::open(path);
  EXPECT_TRUE(writer.isOk()) << writer.status().message();
  storage::RunInfo info;
  info.name = "test";
  info.layoutJson = layoutJson;
  info.worldSize = static_cast<int32_t>(ranks.size());
  EXPECT_TRUE((*writer)->beginRun(info).isOk());
  for (const auto& r : ranks) EXPECT_TRUE((*writer)->addRank(r).isOk());
  EXPECT_TRUE((*writer)->appendEvents(events).isOk());
  EXPECT_TRUE((*writer)->appendSteps(steps).isOk());
  EXPECT_TRUE((*writer)->flush().isOk());
  return std::move(*writer);
}

// Finishes the run `writer` wrote to `path` and opens the file for reading.
inline std::unique_ptr<storage::TraceReader> finishAndOpen(storage::TraceWriter& writer,
                                                           const std::string& path) {
  EXPECT_TRUE(writer.finishRun(storage::RunStatus::kFinished).isOk());
  auto reader = storage::TraceReader::open(path);
  EXPECT_TRUE(reader.isOk()) << reader.status().message();
  return reader.isOk() ? std::move(*reader) : nullptr;
}

}  // namespace bubblescope::testing
