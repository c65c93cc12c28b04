// The importer on the real traces of ../shared/fixtures/kineto; the expected
// counts were read from the files with Python's json module.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "storage/analysis/run_analyzer.h"
#include "storage/import/base_time_scan.h"
#include "storage/import/kineto_importer.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/import/imported_runs.h"
#include "tests/import/kineto_fixtures.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::import {
namespace {

using testing::allEvents;
using testing::importFiles;
using testing::kinetoFixture;
using trace_model::EventKind;
using trace_model::Lane;

const char* kNccl = "nccl_parser_config/nccl_data.json.gz";

TEST(KinetoImport, NcclTraceEventsLanesAndCollectives) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  ImportOptions options;
  options.groups = {{"default_pg", "dp"}};
  auto imported = importFiles(dir.file("t.db"), {kNccl}, options);
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  const ImportSummary& s = imported->summary;
  ASSERT_EQ(s.files.size(), 1u);
  EXPECT_EQ(s.worldSize, 2);
  EXPECT_EQ(s.files[0].rank, 0);
  EXPECT_EQ(s.files[0].rankSource, "distributedInfo");
  EXPECT_EQ(s.files[0].device, "cuda:0");
  EXPECT_EQ(s.files[0].gpuName, "NVIDIA A100-PG509-200");
  const RankImportStats& st = s.files[0].stats;
  EXPECT_EQ(st.kernels + st.ncclKernels, 2700);
  EXPECT_EQ(st.ncclKernels, 21);
  EXPECT_EQ(st.memcpys, 960);
  EXPECT_EQ(st.memsets, 114);
  EXPECT_EQ(st.runtimeCalls, 8740);
  EXPECT_EQ(st.steps, 3);
  EXPECT_EQ(st.events, 26932);  // every complete event but the profiler's own span

  auto run = imported->reader->run(s.runId);
  ASSERT_TRUE(run.isOk());
  EXPECT_EQ(run->status, storage::RunStatus::kFinished);
  EXPECT_EQ(run->info.backend, "cuda");
  EXPECT_EQ(run->info.worldSize, 2);

  const auto events = allEvents(*imported->reader, s.runId);
  ASSERT_EQ(static_cast<int64_t>(events.size()), st.events);
  std::map<EventKind, int> kinds;
  std::map<int32_t, int> lanes;
  for (const auto& e : events) {
    ++kinds[e.kind];
    ++lanes[static_cast<int32_t>(e.lane)];
    EXPECT_GE(e.endNs, e.startNs);
  }
  EXPECT_EQ(kinds[EventKind::kAllReduce], 15);
  EXPECT_EQ(kinds[EventKind::kBroadcast], 6);
  EXPECT_EQ(kinds[EventKind::kKernel], 2679);
  EXPECT_EQ(lanes[static_cast<int32_t>(Lane::kCudaApi)], 8740);
  // Streams 7 and 40 (kernels, copies, sets, GPU annotations), two host threads.
  EXPECT_EQ(lanes.count(static_cast<int32_t>(trace_model::gpuStreamLane(7))), 1u);
  EXPECT_EQ(lanes.count(static_cast<int32_t>(trace_model::gpuStreamLane(40))), 1u);
  EXPECT_EQ(lanes[static_cast<int32_t>(trace_model::hostThreadLane(0))] +
                lanes[static_cast<int32_t>(trace_model::hostThreadLane(1))],
            14346 + 42);

  // The all-reduce kernel of correlation 60047: ts 4458677009853.422 µs,
  // dur 2636.669 µs, 6637568 floats, launched by a runtime call.
  auto linked = imported->reader->linkedEvents(s.runId, 0, 60047);
  ASSERT_TRUE(linked.isOk());
  ASSERT_EQ(linked->size(), 2u);
  const trace_model::Event& launch = (*linked)[0];
  const trace_model::Event& kernel = (*linked)[1];
  EXPECT_EQ(launch.lane, Lane::kCudaApi);
  EXPECT_EQ(kernel.lane, trace_model::gpuStreamLane(40));
  EXPECT_EQ(kernel.kind, EventKind::kAllReduce);
  // Shifted by the file's baseTimeNanoseconds, 1711964646000000000 (it
  // comes after the events).
  EXPECT_EQ(kernel.startNs, 1711964646000000000 + 4458677009853422);
  EXPECT_EQ(kernel.endNs - kernel.startNs, 2636669);
  EXPECT_EQ(kernel.bytes, 6637568LL * 4);
  EXPECT_EQ(kernel.dim, trace_model::ParallelDim::kDp);

  // Steps 4, 5, 6: windows of the GPU work each launched, in order.
  auto steps = imported->reader->steps(s.runId);
  ASSERT_TRUE(steps.isOk());
  ASSERT_EQ(steps->size(), 3u);
  for (size_t i = 0; i < steps->size(); ++i) {
    EXPECT_EQ((*steps)[i].step, static_cast<int32_t>(4 + i));
    EXPECT_LT((*steps)[i].startNs, (*steps)[i].endNs);
    if (i > 0) {
      EXPECT_EQ((*steps)[i].startNs, (*steps)[i - 1].endNs);
    }
  }
}

TEST(KinetoImport, UnnamedGroupsAreUnknown) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto imported = importFiles(dir.file("t.db"), {kNccl});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  auto linked = imported->reader->linkedEvents(imported->summary.runId, 0, 60047);
  ASSERT_TRUE(linked.isOk());
  ASSERT_EQ(linked->size(), 2u);
  EXPECT_EQ((*linked)[1].dim, trace_model::ParallelDim::kUnknown);
}

TEST(KinetoImport, NanosecondTimestampsAreExact) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto imported = importFiles(dir.file("t.db"),
                              {"ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  // cudaLaunchKernel at ts 1712195495505543.140 µs (a double holds .25), dur
  // 41.768 µs, correlation 135071.
  auto linked = imported->reader->linkedEvents(imported->summary.runId, 0, 135071);
  ASSERT_TRUE(linked.isOk());
  ASSERT_GE(linked->size(), 1u);
  EXPECT_EQ((*linked)[0].startNs, 1712195495505543140);
  EXPECT_EQ((*linked)[0].endNs, 1712195495505543140 + 41768);
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A one-kernel rank: ts and baseTimeNanoseconds as given, the base before or
// after the events.
std::string oneKernelTrace(int rank, const std::string& ts, const std::string& base,
                           bool baseFirst) {
  const std::string baseKey = base.empty() ? "" : "\"baseTimeNanoseconds\": " + base;
  const std::string events =
      R"("traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
      ts + R"(, "dur": 2.5, "args": {"device": 0, "stream": 7}}])";
  const std::string dist =
      R"("distributedInfo": {"rank": )" + std::to_string(rank) + R"(, "world_size": 2})";
  if (baseKey.empty()) return "{" + dist + ", " + events + "}";
  return baseFirst ? "{" + baseKey + ", " + dist + ", " + events + "}"
                   : "{" + dist + ", " + events + ",\n  " + baseKey + "\n}";
}

TEST(KinetoImport, BaseTimeNanosecondsShiftsEachRanksTimes) {
  bubblescope::testing::TempDir dir;
  // Rank 0's profiler based at ...000 s, rank 1's 5 µs later: the same
  // instant is ts 10.001 on rank 0 and 5.001 on rank 1.
  writeText(dir.file("r0.json"), oneKernelTrace(0, "10.001", "1700000000000000000", false));
  writeText(dir.file("r1.json"), oneKernelTrace(1, "5.001", "1700000000000005000", true));
  auto writer = storage::TraceWriter::open(dir.file("t.db"));
  ASSERT_TRUE(writer.isOk());
  auto summary = importKineto(**writer, {dir.file("r0.json"), dir.file("r1.json")}, {});
  ASSERT_TRUE(summary.isOk()) << summary.status().message();
  EXPECT_EQ(summary->files[0].baseTimeNs, 1700000000000000000);
  EXPECT_EQ(summary->files[1].baseTimeNs, 1700000000000005000);
  for (const auto& w : summary->warnings) {  // only "no ProfilerStep annotations"
    EXPECT_EQ(w.find("baseTimeNanoseconds"), std::string::npos) << w;
  }
  writer->reset();
  auto reader = storage::TraceReader::open(dir.file("t.db"));
  ASSERT_TRUE(reader.isOk());
  const auto events = allEvents(**reader, summary->runId);
  ASSERT_EQ(events.size(), 2u);
  for (const auto& e : events) {
    EXPECT_EQ(e.startNs, 1700000000000010001) << "rank " << e.rank;
    EXPECT_EQ(e.endNs, 1700000000000012501) << "rank " << e.rank;
  }
}

TEST(KinetoImport, AFileWithoutBaseTimeIsKeptAsWrittenAndSaidSo) {
  bubblescope::testing::TempDir dir;
  writeText(dir.file("r0.json"), oneKernelTrace(0, "10", "1700000000000000000", false));
  writeText(dir.file("r1.json"), oneKernelTrace(1, "1700000000000010", "", false));
  auto writer = storage::TraceWriter::open(dir.file("t.db"));
  ASSERT_TRUE(writer.isOk());
  auto summary = importKineto(**writer, {dir.file("r0.json"), dir.file("r1.json")}, {});
  ASSERT_TRUE(summary.isOk()) << summary.status().message();
  EXPECT_FALSE(summary->files[1].baseTimeNs.has_value());
  ASSERT_EQ(summary->warnings.size(), 3u);  // two "no ProfilerStep annotations", then:
  EXPECT_EQ(summary->warnings[2],
            "1 of 2 files have no baseTimeNanoseconds: their times are stored as written, the "
            "others' shifted by it; the ranks may not line up");
  writer->reset();
  auto reader = storage::TraceReader::open(dir.file("t.db"));
  ASSERT_TRUE(reader.isOk());
  for (const auto& e : allEvents(**reader, summary->runId)) {
    EXPECT_EQ(e.startNs, 1700000000000010000) << "rank " << e.rank;
  }
}

TEST(KinetoImport, FindBaseTimeNs) {
  EXPECT_EQ(findBaseTimeNs(R"(], "baseTimeNanoseconds": 1711964646000000000})"),
            1711964646000000000);
  EXPECT_EQ(findBaseTimeNs("\"baseTimeNanoseconds\" :\n 12\n}"), 12);
  EXPECT_EQ(findBaseTimeNs(R"("baseTimeNanoseconds": "12"})"), std::nullopt);  // not a number
  EXPECT_EQ(findBaseTimeNs(R"("baseTimeNanoseconds": 99999999999999999999})"), std::nullopt);
  EXPECT_EQ(findBaseTimeNs(R"("baseTimeNanoseconds": 1)"), std::nullopt);  // cut off
  EXPECT_EQ(findBaseTimeNs(R"({"traceEvents": []})"), std::nullopt);
}

TEST(KinetoImport, TwoRanksOfOneJobAreOneRun) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto imported = importFiles(dir.file("t.db"), {"trace_filter/sampled_rank-1.json.gz",
                                                 "trace_filter/sampled_rank-0.json.gz"});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  EXPECT_EQ(imported->summary.worldSize, 128);
  auto ranks = imported->reader->ranks(imported->summary.runId);
  ASSERT_TRUE(ranks.isOk());
  ASSERT_EQ(ranks->size(), 2u);
  EXPECT_EQ((*ranks)[0].rank, 0);
  EXPECT_EQ((*ranks)[1].rank, 1);
  EXPECT_EQ((*ranks)[1].device, "cuda:1");
  auto runs = imported->reader->runs();
  ASSERT_TRUE(runs.isOk());
  EXPECT_EQ(runs->size(), 1u);
}

TEST(KinetoImport, OlderNcclKernelsAreDescribedByTheOpsThatLaunchedThem) {
  // trace_filter: every NCCL kernel is a SendRecv kernel without arguments;
  // the c10d::* / record_param_comms / nccl:* ops around its launch say
  // what it was (read with Python from the launch's enclosing ops).
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto imported = importFiles(dir.file("t.db"), {"trace_filter/sampled_rank-0.json.gz",
                                                 "trace_filter/sampled_rank-1.json.gz"});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  std::map<std::pair<int32_t, EventKind>, std::pair<int, int64_t>> comm;  // count, bytes
  for (const auto& e : allEvents(*imported->reader, imported->summary.runId)) {
    if (trace_model::categoryOf(e.kind) != trace_model::EventCategory::kCommunication) continue;
    if (e.kind == EventKind::kMemcpy) continue;
    auto& [count, bytes] = comm[{e.rank, e.kind}];
    ++count;
    bytes += e.bytes;
    EXPECT_EQ(e.dim, trace_model::ParallelDim::kUnknown);
  }
  using Key = std::pair<int32_t, EventKind>;
  // Rank 0: all-to-alls of 384 longs, 2 x 419430400 bytes, 2846720 ints;
  // all-reduces of 19618307 + 26258430 + 5716654 + 26955536 floats;
  // all-gathers of 1 GiB of int8 outputs.
  EXPECT_EQ(comm[Key(0, EventKind::kAllToAll)],
            std::make_pair(4, int64_t{384 * 8 + 2 * 419430400LL + 2846720 * 4}));
  EXPECT_EQ(comm[Key(0, EventKind::kAllReduce)],
            std::make_pair(4, int64_t{(19618307LL + 26258430 + 5716654 + 26955536) * 4}));
  EXPECT_EQ(comm[Key(0, EventKind::kAllGather)], std::make_pair(2, int64_t{2 * 1073741824LL}));
  EXPECT_EQ(comm.count(Key(0, EventKind::kSend)), 0u);  // not a send: the ops say all-to-all
  EXPECT_EQ(comm[Key(1, EventKind::kAllToAll)].first, 4);
  EXPECT_EQ(comm[Key(1, EventKind::kAllReduce)].first, 4);
  EXPECT_EQ(comm[Key(1, EventKind::kAllGather)].first, 2);
  EXPECT_EQ(comm.count(Key(1, EventKind::kSend)), 0u);
  const auto& st = imported->summary.files[0].stats;
  EXPECT_EQ(st.ncclBytesFromInputDims, 10);
  EXPECT_EQ(st.ncclBytesUnknown, 0);
  EXPECT_EQ(st.sendRecvAsSend, 0);
  const auto& w = imported->summary.warnings;
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const std::string& s) {
    return s.find("10 NCCL kernels carry no message sizes") != std::string::npos;
  }));
}

TEST(KinetoImport, NcclGroupsAndTheirRanksAreKept) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  ImportOptions options;
  options.groups = {{"default_pg", "dp"}};
  auto imported = importFiles(dir.file("t.db"), {kNccl}, options);
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  const auto& st = imported->summary.files[0].stats;
  EXPECT_EQ(st.ncclBytesFromKernel, 21);
  ASSERT_EQ(st.groups.size(), 1u);
  const auto& g = st.groups.at("0");
  EXPECT_EQ(g.desc, "default_pg");
  EXPECT_EQ(g.ranks, "[0, 1]");
  EXPECT_EQ(g.collectives, 21);
  // 15 all-reduces of floats and 6 broadcasts of int8 (sum of the kernels'
  // In msg nelems x dtype size, read with Python).
  EXPECT_EQ(g.bytes, 306684384 + 638712);
  auto run = imported->reader->run(imported->summary.runId);
  ASSERT_TRUE(run.isOk());
  EXPECT_NE(
      run->info.layoutJson.find(
          R"("process_groups":[{"name":"0","desc":"default_pg","size":2,"ranks":[0,1],"dim":"dp"}])"),
      std::string::npos)
      << run->info.layoutJson;
}

TEST(KinetoImport, CpuOnlyTraceKeepsItsRank) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto imported =
      importFiles(dir.file("t.db"), {"cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  EXPECT_EQ(imported->summary.files[0].rank, 34);
  EXPECT_EQ(imported->summary.files[0].device, "cpu");
  EXPECT_EQ(imported->summary.worldSize, 300);
}

TEST(KinetoImport, TheSameRankTwiceIsRefusedAndTheRunMarkedFailed) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto imported = importFiles(dir.file("t.db"), {kNccl, kNccl});
  ASSERT_FALSE(imported.isOk());
  EXPECT_NE(imported.status().message().find("rank 0 (from distributedInfo) is also the rank of "),
            std::string::npos)
      << imported.status().message();
  auto reader = storage::TraceReader::open(dir.file("t.db"));
  ASSERT_TRUE(reader.isOk());
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, storage::RunStatus::kFailed);
  EXPECT_GT((*runs)[0].eventCount, 0);  // the first file's events stay
}

TEST(KinetoImport, RankFromFileName) {
  EXPECT_EQ(rankFromFileName("/x/rank-3.Apr_03.pt.trace.json.gz"), 3);
  EXPECT_EQ(rankFromFileName("sampled_rank_12.json"), 12);
  EXPECT_EQ(rankFromFileName("rank7.json"), 7);
  EXPECT_EQ(rankFromFileName("/ranks/trace.json"), std::nullopt);
}

TEST(KinetoImport, ReportOnAnImportedRunUsesKernelTime) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto imported = importFiles(dir.file("t.db"), {kNccl});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  auto report = analysis::analyzeRun(*imported->reader, imported->summary.runId);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  ASSERT_EQ(report->ranks.size(), 1u);
  const auto& r = report->ranks[0];
  EXPECT_EQ(r.steps, 3);
  ASSERT_TRUE(r.utilization().has_value());
  EXPECT_GT(*r.utilization(), 0.0);
  EXPECT_LE(*r.utilization(), 1.0);
  EXPECT_GT(r.commNs, 0);
  EXPECT_EQ(r.commNsByDim[static_cast<int>(trace_model::ParallelDim::kUnknown)] > 0, true);
}

}  // namespace
}  // namespace bubblescope::import
