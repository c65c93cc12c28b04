// The Chrome trace export, parsed back with nlohmann_json and checked event
// by event.
#include "storage/analysis/chrome_export.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/analysis/trace_builder.h"

namespace bubblescope::analysis {
namespace {

using nlohmann::json;
using testing::rankInfo;
using testing::span;
using testing::TraceBuilder;
using trace_model::EventKind;
using trace_model::ParallelDim;

json readJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

class ChromeExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two pipeline stages: rank 0 sends micro-batches 0 and 1 of step 3 to
    // rank 1, which receives them; rank 1 sends a gradient back.
    auto forward = span(0, EventKind::kForward, 1000, 2500, 3);
    forward.name = "forward \"layer\" 0";
    forward.microBatch = 0;
    forward.stage = 0;
    forward.chunk = 0;
    forward.flops = 123456;
    forward.cpuNs = 1400;
    events_ = {forward,
               span(0, EventKind::kSend, 2500, 2700, 3, ParallelDim::kPp, 4096, 1),
               span(0, EventKind::kSend, 2700, 2900, 3, ParallelDim::kPp, 4096, 1),
               span(1, EventKind::kRecv, 2400, 2800, 3, ParallelDim::kPp, 4096, 0),
               span(1, EventKind::kRecv, 2800, 3000, 3, ParallelDim::kPp, 4096, 0),
               span(1, EventKind::kSend, 5000, 5100, 3, ParallelDim::kPp, 4096, 0),
               span(0, EventKind::kRecv, 4900, 5200, 3, ParallelDim::kPp, 4096, 1),
               span(1, EventKind::kAllReduce, 6000, 7001, 3, ParallelDim::kDp, 1 << 20)};
    events_[1].microBatch = 0;
    events_[2].microBatch = 1;
    events_[3].microBatch = 0;
    events_[4].microBatch = 1;
    events_[7].lane = trace_model::gpuStreamLane(2);
    runId_ = trace_.run({.name = "pipe",
                         .worldSize = 2,
                         .ranks = {rankInfo(0, 1, 0, 0), rankInfo(1, 1, 0, 1)},
                         .events = events_});
  }

  TraceBuilder trace_;
  std::vector<trace_model::Event> events_;
  int64_t runId_ = 0;
};

TEST_F(ChromeExportTest, EveryEventRoundTrips) {
  auto reader = storage::TraceReader::open(trace_.path());
  ASSERT_TRUE(reader.isOk());
  const std::string out = trace_.dir().file("out.json");
  auto stats = exportChromeTrace(**reader, runId_, out);
  ASSERT_TRUE(stats.isOk()) << stats.status().message();
  EXPECT_EQ(stats->events, 8);
  EXPECT_EQ(stats->flows, 3);
  const json j = readJson(out);
  EXPECT_EQ(stats->bytes, static_cast<int64_t>(std::ifstream(out, std::ios::ate).tellg()));
  ASSERT_TRUE(j["traceEvents"].is_array());

  std::map<std::pair<int, int>, std::string> threadNames;
  std::map<int, std::string> processNames;
  std::vector<json> complete;
  std::map<int64_t, std::vector<json>> flows;
  for (const json& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_name") processNames[e["pid"]] = e["args"]["name"];
    if (ph == "M" && e["name"] == "thread_name") {
      threadNames[{e["pid"], e["tid"]}] = e["args"]["name"];
    }
    if (ph == "X") complete.push_back(e);
    if (ph == "s" || ph == "f") flows[e["id"].get<int64_t>()].push_back(e);
  }
  EXPECT_EQ(processNames,
            (std::map<int, std::string>{{0, "rank 0 (dp1 tp0 pp0)"}, {1, "rank 1 (dp1 tp0 pp1)"}}));
  EXPECT_EQ(threadNames[std::make_pair(0, 0)], "compute");
  EXPECT_EQ(threadNames[std::make_pair(0, 2)], "pipeline");
  EXPECT_EQ(threadNames[std::make_pair(1, 18)], "gpu stream 2");

  // Rank by rank, each in start order.
  const std::vector<int> order = {0, 1, 2, 6, 3, 4, 5, 7};
  ASSERT_EQ(complete.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const trace_model::Event& want = events_[order[i]];
    const json& got = complete[i];
    SCOPED_TRACE("event " + std::to_string(order[i]));
    EXPECT_EQ(got["name"], want.name);
    EXPECT_EQ(got["cat"], std::string(trace_model::toString(want.kind)));
    EXPECT_EQ(got["pid"], want.rank);
    EXPECT_EQ(got["tid"], static_cast<int>(want.lane));
    EXPECT_DOUBLE_EQ(got["ts"].get<double>(), want.startNs / 1000.0);
    EXPECT_DOUBLE_EQ(got["dur"].get<double>(), (want.endNs - want.startNs) / 1000.0);
    EXPECT_EQ(got["args"]["step"], 3);
    EXPECT_EQ(got["args"].value("bytes", int64_t{0}), want.bytes) << got.dump();
    if (want.peer >= 0) {
      EXPECT_EQ(got["args"]["peer"], want.peer);
    }
    EXPECT_EQ(got["args"].contains("mb"), want.microBatch >= 0);
  }
  EXPECT_EQ(complete[0]["args"],
            (json{{"step", 3},
                   {"mb", 0},
                   {"stage", 0},
                   {"chunk", 0},
                   {"flops", 123456},
                   {"cpu_ns", 1400}}));
  EXPECT_FALSE(complete[1]["args"].contains("cpu_ns"));  // a span without a CPU time
  EXPECT_EQ(complete[7]["args"]["dim"], "dp");

  // Each send starts a flow that ends at its receive, on the other rank.
  ASSERT_EQ(flows.size(), 3u);
  std::vector<std::tuple<int, double, int, double>> pairs;  // (src, ts, dst, ts)
  for (const auto& [id, halves] : flows) {
    ASSERT_EQ(halves.size(), 2u) << "flow " << id;
    const json& s = halves[0]["ph"] == "s" ? halves[0] : halves[1];
    const json& f = halves[0]["ph"] == "s" ? halves[1] : halves[0];
    EXPECT_EQ(s["ph"], "s");
    EXPECT_EQ(f["ph"], "f");
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(s["cat"], f["cat"]);
    pairs.emplace_back(s["pid"], s["ts"], f["pid"], f["ts"]);
  }
  std::sort(pairs.begin(), pairs.end());
  EXPECT_EQ(pairs, (std::vector<std::tuple<int, double, int, double>>{
                       {0, 2.5, 1, 2.4}, {0, 2.7, 1, 2.8}, {1, 5.0, 0, 4.9}}));
  EXPECT_EQ(j["otherData"]["name"], "pipe");
}

// Launch calls flow to the GPU records with their correlation id, on the
// same rank only, whichever of the two starts first; unpaired ends write no
// flow; launch and send/receive flows never share an id.
TEST(ChromeExportLaunchTest, LaunchesFlowToTheRecordsTheyLaunched) {
  auto launch = [](int32_t rank, int64_t correlation, int64_t start, int64_t end) {
    trace_model::Event e = span(rank, EventKind::kOther, start, end);
    e.lane = trace_model::Lane::kCudaApi;
    e.name = "cudaLaunchKernel";
    e.correlationId = correlation;
    return e;
  };
  auto record = [](int32_t rank, int64_t correlation, int64_t start, int64_t end) {
    trace_model::Event e = span(rank, EventKind::kKernel, start, end);
    e.lane = trace_model::gpuStreamLane(3);
    e.name = "gemm";
    e.correlationId = correlation;
    return e;
  };
  const std::vector<trace_model::Event> events = {
      launch(0, 7, 1000, 1500),
      record(0, 7, 2000, 5000),
      launch(0, 8, 1600, 1900),
      record(0, 8, 1550, 1700),   // the fitted clock put it first
      record(0, 9, 6000, 7000),   // launched by an untraced call
      launch(0, 10, 8000, 8100),  // its record is not in the trace
      launch(1, 7, 1000, 1200),   // id 7 of another process
      span(0, EventKind::kSend, 9000, 9100, 1, ParallelDim::kPp, 64, 1),
      span(1, EventKind::kRecv, 9050, 9200, 1, ParallelDim::kPp, 64, 0)};
  TraceBuilder trace;
  const int64_t runId = trace.run({.name = "launch",
                                   .worldSize = 2,
                                   .ranks = {rankInfo(0, 0, 0, 0), rankInfo(1, 0, 0, 1)},
                                   .events = events});
  auto reader = storage::TraceReader::open(trace.path());
  ASSERT_TRUE(reader.isOk());
  const std::string out = trace.dir().file("launch.json");
  auto stats = exportChromeTrace(**reader, runId, out);
  ASSERT_TRUE(stats.isOk()) << stats.status().message();
  EXPECT_EQ(stats->events, 9);
  EXPECT_EQ(stats->flows, 1);
  EXPECT_EQ(stats->launchFlows, 2);

  const json j = readJson(out);
  std::map<int64_t, std::vector<json>> flows;
  std::map<std::pair<int, int>, std::string> threadNames;
  int withCorrelation = 0;
  for (const json& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "s" || ph == "f") flows[e["id"].get<int64_t>()].push_back(e);
    if (ph == "M" && e["name"] == "thread_name") {
      threadNames[{e["pid"], e["tid"]}] = e["args"]["name"];
    }
    if (ph == "X" && e["args"].contains("correlation")) ++withCorrelation;
  }
  EXPECT_EQ(threadNames[std::make_pair(0, 4)], "cuda api");
  EXPECT_EQ(withCorrelation, 7);
  ASSERT_EQ(flows.size(), 3u) << "one p2p and two launch flows, each with its own id";
  std::vector<std::tuple<int, int, double, int, double>> launches;  // (pid, tid, ts, tid, ts)
  for (const auto& [id, halves] : flows) {
    ASSERT_EQ(halves.size(), 2u) << "flow " << id;
    const json& s = halves[0]["ph"] == "s" ? halves[0] : halves[1];
    const json& f = halves[0]["ph"] == "s" ? halves[1] : halves[0];
    ASSERT_EQ(s["ph"], "s");
    ASSERT_EQ(f["ph"], "f");
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(s["cat"], f["cat"]);
    if (s["cat"] != "launch") continue;
    EXPECT_EQ(s["pid"], f["pid"]);
    launches.emplace_back(s["pid"], s["tid"], s["ts"], f["tid"], f["ts"]);
  }
  std::sort(launches.begin(), launches.end());
  EXPECT_EQ(launches, (std::vector<std::tuple<int, int, double, int, double>>{
                          {0, 4, 1.0, 19, 2.0}, {0, 4, 1.6, 19, 1.55}}));
}

TEST_F(ChromeExportTest, MissingRunAndUnwritableFileAreErrors) {
  auto reader = storage::TraceReader::open(trace_.path());
  ASSERT_TRUE(reader.isOk());
  auto missing = exportChromeTrace(**reader, 42, trace_.dir().file("x.json"));
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  const std::string bad = trace_.dir().file("no/such/dir/out.json");
  auto unwritable = exportChromeTrace(**reader, runId_, bad);
  ASSERT_FALSE(unwritable.isOk());
  EXPECT_EQ(unwritable.status().message(), "cannot write " + bad + ": No such file or directory");
}

TEST_F(ChromeExportTest, TheTraceItselfIsNeverTheOutput) {
  auto reader = storage::TraceReader::open(trace_.path());
  ASSERT_TRUE(reader.isOk());
  for (const std::string& out : {trace_.path(), trace_.dir().file("./trace.db")}) {
    auto refused = exportChromeTrace(**reader, runId_, out);
    ASSERT_FALSE(refused.isOk());
    EXPECT_EQ(refused.status().message(),
              "cannot write " + out + ": it is the trace file " + trace_.path() + " being read");
  }
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk()) << runs.status().message();
  EXPECT_EQ(runs->size(), 1u) << "the trace is intact";
}

// dp 2 x pp 2 with ranks numbered stage by stage (rank = 2 pp + dp): each
// first stage sends 3 micro-batches to its second stage. Written one
// pipeline after the other (ranks 0, 2, then 1, 3), at most one rank's sends
// wait for their receives; in rank order both first stages' would (6).
TEST(ChromeExportPipelines, OnePipelineAtATimeHoldsOneRanksWaitingEnds) {
  TraceBuilder trace;
  std::vector<trace_model::Event> events;
  for (int32_t dp = 0; dp < 2; ++dp) {
    for (int32_t mb = 0; mb < 3; ++mb) {
      const int64_t t = 1000 * (mb + 1);
      auto send = span(dp, EventKind::kSend, t, t + 100, 0, ParallelDim::kPp, 64, 2 + dp);
      auto recv = span(2 + dp, EventKind::kRecv, t, t + 150, 0, ParallelDim::kPp, 64, dp);
      send.microBatch = recv.microBatch = mb;
      events.push_back(send);
      events.push_back(recv);
    }
  }
  const int64_t run = trace.run({.name = "dp2pp2",
                                 .worldSize = 4,
                                 .ranks = {rankInfo(0, 0, 0, 0), rankInfo(1, 1, 0, 0),
                                           rankInfo(2, 0, 0, 1), rankInfo(3, 1, 0, 1)},
                                 .events = events});
  auto reader = storage::TraceReader::open(trace.path());
  ASSERT_TRUE(reader.isOk());
  const std::string out = trace.dir().file("pipes.json");
  auto stats = exportChromeTrace(**reader, run, out);
  ASSERT_TRUE(stats.isOk()) << stats.status().message();
  EXPECT_EQ(stats->events, 12);
  EXPECT_EQ(stats->flows, 6);
  EXPECT_EQ(stats->peakWaitingFlowEnds, 3);
  // Every flow joins a send on rank dp to its receive on rank 2 + dp.
  std::map<int64_t, std::vector<json>> flows;
  const json j = readJson(out);
  for (const json& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "s" || ph == "f") flows[e["id"].get<int64_t>()].push_back(e);
  }
  ASSERT_EQ(flows.size(), 6u);
  for (const auto& [id, halves] : flows) {
    ASSERT_EQ(halves.size(), 2u) << "flow " << id;
    const json& from = halves[0]["ph"] == "s" ? halves[0] : halves[1];
    const json& to = halves[0]["ph"] == "s" ? halves[1] : halves[0];
    EXPECT_EQ(to["pid"].get<int>(), from["pid"].get<int>() + 2);
    EXPECT_EQ(to["ts"], from["ts"]);  // same micro-batch: both at t
  }
}

}  // namespace
}  // namespace bubblescope::analysis
