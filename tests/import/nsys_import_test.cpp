// Nsight Systems SQLite import (docs/import.md, "Nsight Systems"): exports
// built at test time from the documented schema (2.x, 3.x, an unknown
// version), several ranks, NCCL kernels, NVTX steps; bad input; what the
// analysis, comparison and exports make of the imported run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "storage/analysis/chrome_export.h"
#include "storage/analysis/imported_layout.h"
#include "storage/analysis/kineto_export.h"
#include "storage/analysis/report_json.h"
#include "storage/analysis/report_text.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/analysis/run_comparison.h"
#include "storage/import/kineto_importer.h"
#include "storage/import/nsys_rank_reader.h"
#include "storage/import/nsys_steps.h"
#include "storage/import/trace_import.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/import/imported_runs.h"
#include "tests/import/nsys_synthetic.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::import {
namespace {

using testing::NsysSynthetic;
using testing::NsysWritten;
using trace_model::EventKind;

constexpr int64_t kMs = 1000000;

Result<ImportSummary> importInto(const std::string& db, const std::vector<std::string>& files,
                                 ImportOptions options = {}) {
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(db));
  return importTraces(*writer, files, options);
}

bool hasWarning(const ImportSummary& s, const std::string& part) {
  return std::any_of(s.warnings.begin(), s.warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

int64_t runCount(const std::string& db) {
  auto reader = storage::TraceReader::open(db);
  if (!reader.isOk()) return -1;
  auto runs = (*reader)->runs();
  return runs.isOk() ? static_cast<int64_t>(runs->size()) : -1;
}

bool isGpuRecord(const trace_model::Event& e) {
  return trace_model::isGpuStreamLane(e.lane);
}
bool fromKernelTable(const trace_model::Event& e) {
  return isGpuRecord(e) && e.kind != EventKind::kMemcpy && e.kind != EventKind::kMemset &&
         e.kind != EventKind::kOther;
}

struct TwoRanks {
  bubblescope::testing::TempDir dir;
  std::vector<std::string> files;
  std::vector<NsysWritten> written;
  std::vector<int64_t> starts = {1700000000000000000, 1700000000001500000};
};

// Rank 0 states its rank in MPI_RANKS, rank 1 as an "MPI Rank 1" NVTX thread
// name; rank 1's capture began 1.5 ms later on the same host.
void writeTwoRanks(TwoRanks& t, int schemaMajor) {
  for (int32_t r = 0; r < 2; ++r) {
    NsysSynthetic o;
    o.schemaMajor = schemaMajor;
    o.rank = r;
    o.rankSource = r == 0 ? NsysSynthetic::RankSource::kMpiRanks
                          : NsysSynthetic::RankSource::kNvtxThreadName;
    o.sessionStartNs = t.starts[r];
    t.files.push_back(t.dir.file("job-" + std::to_string(7 + r) + ".sqlite"));
    t.written.push_back(testing::writeNsysExport(t.files.back(), o));
  }
}

TEST(NsysImport, DetectsTheFormatFromTheContentNotTheName) {
  bubblescope::testing::TempDir dir;
  const std::string disguised = dir.file("trace.json");
  testing::writeNsysExport(disguised, {});
  auto f = detectTraceFormat(disguised);
  ASSERT_TRUE(f.isOk());
  EXPECT_EQ(*f, TraceFormat::kNsysSqlite);
  std::ofstream(dir.file("x.sqlite")) << R"({"traceEvents": []})";
  EXPECT_EQ(*detectTraceFormat(dir.file("x.sqlite")), TraceFormat::kKineto);
}

TEST(NsysImport, TwoRanksOfSchema2WithRanksStepsCollectivesAndClocks) {
  TwoRanks t;
  writeTwoRanks(t, 2);
  const std::string db = t.dir.file("t.db");
  ImportOptions options;
  options.groups = {{"dp_group", "dp"}};
  std::vector<ImportProgress> progress;
  options.progress = [&](const ImportProgress& p) { progress.push_back(p); };
  auto s = importInto(db, t.files, options);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->format, "nsys");
  EXPECT_EQ(s->worldSize, 2);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().fileIndex, 1u);
  EXPECT_EQ(progress.back().bytesRead, progress.back().fileBytes);
  EXPECT_EQ(progress.back().fileBytes,
            static_cast<int64_t>(std::filesystem::file_size(t.files[1])));
  ASSERT_EQ(s->files.size(), 2u);
  EXPECT_EQ(s->files[0].rank, 0);
  EXPECT_EQ(s->files[0].rankSource, "MPI_RANKS");
  EXPECT_EQ(s->files[1].rank, 1);
  EXPECT_EQ(s->files[1].rankSource, "NVTX thread name");
  for (int r = 0; r < 2; ++r) {
    const RankImportStats& st = s->files[r].stats;
    EXPECT_EQ(st.kernels, 3);
    EXPECT_EQ(st.ncclKernels, 3);
    EXPECT_EQ(st.memcpys, 3);
    EXPECT_EQ(st.memsets, 3);
    EXPECT_EQ(st.runtimeCalls, t.written[r].runtimeCalls);
    EXPECT_EQ(st.cpuOps, t.written[r].nvtxRanges);
    EXPECT_EQ(st.steps, 3);
    EXPECT_EQ(st.groups.at("dp_group").collectives, 3);
    EXPECT_EQ(s->files[r].device, "cuda:0");
    EXPECT_EQ(s->files[r].gpuName, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(s->files[r].host, "node0");
  }
  EXPECT_NE(s->files[1].clock.find("offset +0.001500 s from the earliest file"), std::string::npos)
      << s->files[1].clock;
  EXPECT_TRUE(hasWarning(*s, "NVTX ranges never ended")) << ::testing::PrintToString(s->warnings);
  EXPECT_TRUE(hasWarning(*s, "GPU work of other processes is not imported (pid 5151: 1 GPU"));
  EXPECT_TRUE(hasWarning(*s, "Nsight Systems records no message sizes"));
  EXPECT_FALSE(hasWarning(*s, "hosts"));  // one host: one clock

  auto reader = storage::TraceReader::open(db);
  ASSERT_TRUE(reader.isOk());
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, storage::RunStatus::kFinished);
  EXPECT_NE(analysis::importedLayoutSummary((*runs)[0].info)
                .find("imported nsys traces (Nsight Systems 2022.4.2.50, export schema 2.9.1): 2 "
                      "files of world 2"),
            std::string::npos)
      << analysis::importedLayoutSummary((*runs)[0].info);
  const auto events = testing::allEvents(**reader, s->runId);
  std::map<int32_t, int64_t> kernelNs;
  std::map<std::pair<int32_t, int64_t>, int> apiByCorrelation;
  for (const auto& e : events) {
    if (fromKernelTable(e)) kernelNs[e.rank] += e.endNs - e.startNs;
    if (e.lane == trace_model::Lane::kCudaApi) ++apiByCorrelation[{e.rank, e.correlationId}];
  }
  for (int r = 0; r < 2; ++r) EXPECT_EQ(kernelNs[r], t.written[r].kernelNs) << "rank " << r;
  int ncclSeen = 0;
  for (const auto& e : events) {
    if (isGpuRecord(e)) {  // every GPU record has its launch: the arrow
      EXPECT_EQ((apiByCorrelation[{e.rank, e.correlationId}]), 1) << e.name;
    }
    if (e.lane == trace_model::Lane::kCudaApi) {
      EXPECT_TRUE(e.name == "cudaLaunchKernel" || e.name == "cudaMemcpyAsync" ||
                  e.name == "cudaMemsetAsync")
          << e.name;
    }
    if (e.kind == EventKind::kAllReduce) {
      ++ncclSeen;
      EXPECT_EQ(e.dim, trace_model::ParallelDim::kDp);
      EXPECT_EQ(e.lane, trace_model::gpuStreamLane(20));
    }
    if (e.kind == EventKind::kMemcpy) {
      EXPECT_EQ(e.name, "Memcpy HtoD (Pinned -> Device)");
      EXPECT_EQ(e.bytes, 1048576);
    }
    if (e.kind == EventKind::kMemset) {
      EXPECT_EQ(e.name, "Memset (Device)");
    }
    if (e.name == "ProfilerStep#1") {  // times: the file's plus its session start
      EXPECT_EQ(e.startNs, t.starts[e.rank] + 40 * kMs);
      EXPECT_TRUE(trace_model::isHostThreadLane(e.lane));
    }
  }
  EXPECT_EQ(ncclSeen, 6);

  // Steps: the GPU time of the work each NVTX step launched.
  auto steps = (*reader)->steps(s->runId);
  ASSERT_TRUE(steps.isOk());
  ASSERT_EQ(steps->size(), 6u);
  for (const auto& st : *steps) {
    const int64_t t0 = t.starts[st.rank] + (st.step + 1) * 20 * kMs;
    EXPECT_EQ(st.startNs, t0 + 2 * kMs) << st.rank << " " << st.step;
    EXPECT_EQ(st.endNs, st.step < 2 ? t0 + 22 * kMs : t0 + 13 * kMs + 500);
  }
  auto ranks = (*reader)->ranks(s->runId);
  ASSERT_TRUE(ranks.isOk());
  ASSERT_EQ(ranks->size(), 2u);
  EXPECT_EQ((*ranks)[1].clockOffsetNs, 1500000);
  EXPECT_EQ((*ranks)[1].host, "node0");
  EXPECT_EQ((*ranks)[1].pid, testing::kNsysPid);
  EXPECT_EQ((*ranks)[1].device, "cuda:0");
}

// Ranks of two hosts: aligned by each host's clock, and the warning says that
// nothing checked how far those clocks differ; a file without a session
// start keeps its own times, and a warning says it could not be aligned.
TEST(NsysImport, ClocksOfSeveralHostsAreNamedNotGuessed) {
  bubblescope::testing::TempDir dir;
  std::vector<std::string> files;
  for (int32_t r = 0; r < 3; ++r) {
    NsysSynthetic o;
    o.rank = r;
    o.host = r == 0 ? "gpu-node-a" : "gpu-node-b";
    o.sessionStartNs = r == 2 ? 0 : 1700000000000000000 + r * 250000000;  // rank 2: no table
    files.push_back(dir.file("r" + std::to_string(r) + ".sqlite"));
    testing::writeNsysExport(files.back(), o);
  }
  auto s = importInto(dir.file("t.db"), files);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_TRUE(hasWarning(*s, "ranks on 2 hosts (gpu-node-a, gpu-node-b): their times are aligned "
                             "by each host's wall clock"))
      << ::testing::PrintToString(s->warnings);
  EXPECT_TRUE(hasWarning(*s, "r2.sqlite: no TARGET_INFO_SESSION_START_TIME: its clock could not "
                             "be aligned"));
  EXPECT_NE(s->files[1].clock.find("offset +0.250000 s from the earliest file, host gpu-node-b"),
            std::string::npos)
      << s->files[1].clock;
  auto reader = storage::TraceReader::open(dir.file("t.db"));
  ASSERT_TRUE(reader.isOk());
  auto ranks = (*reader)->ranks(1);
  ASSERT_TRUE(ranks.isOk());
  ASSERT_EQ(ranks->size(), 3u);
  EXPECT_EQ((*ranks)[1].clockOffsetNs, 250000000);
  EXPECT_EQ((*ranks)[2].clockOffsetNs, 0);
  for (const auto& e : testing::allEvents(**reader, 1)) {
    if (e.name != "ProfilerStep#0") continue;  // 20 ms into each capture
    EXPECT_EQ(e.startNs, e.rank == 2 ? 20 * kMs : 1700000000000000000 + e.rank * 250000000 + 20 * kMs);
  }
}

TEST(NsysImport, Schema3WithEnumTablesImportsAsSchema2Does) {
  TwoRanks a, b;
  writeTwoRanks(a, 2);
  writeTwoRanks(b, 3);
  auto sa = importInto(a.dir.file("a.db"), a.files);
  auto sb = importInto(b.dir.file("b.db"), b.files);
  ASSERT_TRUE(sa.isOk()) << sa.status().message();
  ASSERT_TRUE(sb.isOk()) << sb.status().message();
  auto ra = storage::TraceReader::open(a.dir.file("a.db"));
  auto rb = storage::TraceReader::open(b.dir.file("b.db"));
  ASSERT_TRUE(ra.isOk() && rb.isOk());
  auto ea = testing::allEvents(**ra, 1), eb = testing::allEvents(**rb, 1);
  ASSERT_EQ(ea.size(), eb.size());
  auto key = [](const trace_model::Event& e) {
    return std::make_tuple(e.rank, static_cast<int>(e.lane), e.startNs, e.endNs, e.name);
  };
  std::sort(ea.begin(), ea.end(), [&](auto& x, auto& y) { return key(x) < key(y); });
  std::sort(eb.begin(), eb.end(), [&](auto& x, auto& y) { return key(x) < key(y); });
  EXPECT_EQ(ea, eb);
  auto runs = (*rb)->runs();
  ASSERT_TRUE(runs.isOk());
  EXPECT_NE(analysis::importedLayoutSummary((*runs)[0].info)
                .find("Nsight Systems 2024.6.1.90, export schema 3.15.1"),
            std::string::npos);
  EXPECT_FALSE(hasWarning(*sb, "not one of the export schemas"));
}

TEST(NsysImport, UnknownSchemaImportsWhatItCanAndListsWhatItSkipped) {
  bubblescope::testing::TempDir dir;
  NsysSynthetic o;
  o.schemaMajor = 4;
  o.schemaVersion = "4.0.0";
  o.dropTables = {"NVTX_EVENTS"};
  const NsysWritten w = testing::writeNsysExport(dir.file("r.sqlite"), o);
  auto s = importInto(dir.file("t.db"), {dir.file("r.sqlite")});
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_TRUE(hasWarning(*s, "export schema 4.0.0 is not one of the export schemas this importer "
                             "follows (2.x, 3.x): imported what it has; skipped: "))
      << ::testing::PrintToString(s->warnings);
  EXPECT_TRUE(hasWarning(*s, "NVTX_EVENTS (absent)"));
  EXPECT_EQ(s->files[0].stats.kernels + s->files[0].stats.ncclKernels, w.kernels);
  EXPECT_EQ(s->files[0].stats.cpuOps, 0);
  EXPECT_EQ(s->files[0].stats.steps, 0);
  EXPECT_TRUE(hasWarning(*s, "the rank is one step"));
}

TEST(NsysImport, KnownSchemaWithoutNvtxSaysWhatIsLost) {
  bubblescope::testing::TempDir dir;
  NsysSynthetic o;
  o.schemaMajor = 3;
  o.dropTables = {"NVTX_EVENTS"};
  testing::writeNsysExport(dir.file("r.sqlite"), o);
  auto s = importInto(dir.file("t.db"), {dir.file("r.sqlite")});
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_TRUE(hasWarning(*s, "r.sqlite: not imported: NVTX_EVENTS (absent): no CPU ranges and no "
                             "steps (capture with --trace=nvtx)"))
      << ::testing::PrintToString(s->warnings);
  EXPECT_FALSE(hasWarning(*s, "not one of the export schemas"));
  EXPECT_EQ(s->files[0].stats.steps, 0);
}

TEST(NsysImport, RankFromTheFileNameOrTheRankOption) {
  EXPECT_EQ(rankFromNsysFileName("/x/report-3.sqlite"), 3);
  EXPECT_EQ(rankFromNsysFileName("report.12.sqlite"), 12);
  EXPECT_EQ(rankFromNsysFileName("profile_rank5.sqlite"), 5);
  EXPECT_EQ(rankFromNsysFileName("report.sqlite"), std::nullopt);
  EXPECT_EQ(rankFromNsysFileName("42.sqlite"), std::nullopt);

  bubblescope::testing::TempDir dir;
  NsysSynthetic o;
  o.rankSource = NsysSynthetic::RankSource::kNone;
  testing::writeNsysExport(dir.file("report-3.sqlite"), o);
  auto s = importInto(dir.file("a.db"), {dir.file("report-3.sqlite")});
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->files[0].rank, 3);
  EXPECT_EQ(s->files[0].rankSource, "file name");
  EXPECT_EQ(s->worldSize, 4);  // the highest rank + 1
  ImportOptions options;
  options.rank = 9;
  s = importInto(dir.file("b.db"), {dir.file("report-3.sqlite")}, options);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->files[0].rank, 9);
  EXPECT_EQ(s->files[0].rankSource, "--rank");
  o.rankSource = NsysSynthetic::RankSource::kThreadNames;
  o.rank = 6;
  testing::writeNsysExport(dir.file("report-4.sqlite"), o);
  s = importInto(dir.file("c.db"), {dir.file("report-4.sqlite")});
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->files[0].rank, 6);
  EXPECT_EQ(s->files[0].rankSource, "thread name");
}

TEST(NsysImport, StepRangeOptionChoosesTheStepRanges) {
  bubblescope::testing::TempDir dir;
  testing::writeNsysExport(dir.file("r.sqlite"), {});
  ImportOptions options;
  options.stepRange = "forward";
  auto s = importInto(dir.file("t.db"), {dir.file("r.sqlite")}, options);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->files[0].stats.steps, 3);
  auto reader = storage::TraceReader::open(dir.file("t.db"));
  ASSERT_TRUE(reader.isOk());
  auto steps = (*reader)->steps(1);
  ASSERT_TRUE(steps.isOk());
  ASSERT_EQ(steps->size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*steps)[i].step, i);  // numbered in order
  options.stepRange = "([";
  s = importInto(dir.file("u.db"), {dir.file("r.sqlite")}, options);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("--step-range ([: not a regular expression"),
            std::string::npos);

  auto p = StepRangePattern::compile("");
  ASSERT_TRUE(p.isOk());
  EXPECT_EQ(p->match("ProfilerStep#12"), 12);
  EXPECT_EQ(p->match("iteration 7"), 7);
  EXPECT_EQ(p->match("iteration_7"), 7);
  EXPECT_EQ(p->match("step 3"), 3);
  EXPECT_EQ(p->match("forward"), std::nullopt);
  EXPECT_EQ(p->match("ProfilerStep#12 extra"), std::nullopt);
}

// One message naming the problem, and the trace file holds no run.
void expectRefused(const std::vector<std::string>& files, const std::string& db,
                   const std::string& message) {
  auto s = importInto(db, files);
  ASSERT_FALSE(s.isOk()) << "expected: " << message;
  EXPECT_NE(s.status().message().find(message), std::string::npos) << s.status().message();
  EXPECT_EQ(s.status().message().find('\n'), std::string::npos);
  EXPECT_EQ(runCount(db), 0);
}

TEST(NsysImport, BadInputIsOneMessageAndWritesNoRun) {
  bubblescope::testing::TempDir dir;
  {  // A SQLite file of another kind.
    auto db = storage::SqliteDb::open(dir.file("other.sqlite"),
                                      storage::SqliteDb::Mode::kReadWriteCreate);
    ASSERT_TRUE(db.isOk());
    ASSERT_TRUE((*db)->exec("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('a')").isOk());
  }
  expectRefused({dir.file("other.sqlite")}, dir.file("a.db"),
                "other.sqlite: a SQLite database but not an Nsight Systems export (it has no "
                "EXPORT_META_DATA or META_DATA_EXPORT table");
  // A Bubblescope trace given to import.
  ASSERT_TRUE(storage::TraceWriter::open(dir.file("mine.db")).isOk());
  {
    auto w = storage::TraceWriter::open(dir.file("mine.db"));
    ASSERT_TRUE(w.isOk());
    ASSERT_TRUE((*w)->beginRun({}).isOk());
    ASSERT_TRUE((*w)->finishRun(storage::RunStatus::kFinished).isOk());
  }
  expectRefused({dir.file("mine.db")}, dir.file("b.db"),
                "mine.db: a Bubblescope trace, not an Nsight Systems export");
  // Truncated: the first half of a real export's bytes.
  testing::writeNsysExport(dir.file("whole.sqlite"), {});
  {
    std::ifstream in(dir.file("whole.sqlite"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(dir.file("half.sqlite"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  expectRefused({dir.file("half.sqlite")}, dir.file("c.db"), "half.sqlite: truncated: the file has");
  // No GPU work.
  NsysSynthetic idle;
  idle.gpuWork = false;
  testing::writeNsysExport(dir.file("idle.sqlite"), idle);
  expectRefused({dir.file("idle.sqlite")}, dir.file("d.db"),
                "idle.sqlite: no GPU work: the report has no CUPTI kernel, memcpy or memset table");
  // Two files claiming one rank: refused before anything is written.
  testing::writeNsysExport(dir.file("again.sqlite"), {});
  expectRefused({dir.file("whole.sqlite"), dir.file("again.sqlite")}, dir.file("e.db"),
                "rank 0 (from MPI_RANKS) is also the rank of");
  // Two formats in one import.
  std::ofstream(dir.file("k.json")) << R"({"traceEvents": []})";
  expectRefused({dir.file("whole.sqlite"), dir.file("k.json")}, dir.file("f.db"),
                "one import reads files of one format");
}

TEST(NsysImport, LockedExportIsOneMessage) {
  bubblescope::testing::TempDir dir;
  testing::writeNsysExport(dir.file("busy.sqlite"), {});
  auto holder =
      storage::SqliteDb::open(dir.file("busy.sqlite"), storage::SqliteDb::Mode::kReadWriteCreate);
  ASSERT_TRUE(holder.isOk());
  // An exclusive lock, as a writer holds while it commits: readers wait, then give up.
  ASSERT_TRUE((*holder)->exec("PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE").isOk());
  expectRefused({dir.file("busy.sqlite")}, dir.file("a.db"),
                "busy.sqlite: locked by another process (is nsys still exporting it?)");
  ASSERT_TRUE((*holder)->exec("COMMIT").isOk());
  holder->reset();
  auto s = importInto(dir.file("b.db"), {dir.file("busy.sqlite")});
  EXPECT_TRUE(s.isOk()) << s.status().message();
}

TEST(NsysImport, ReportCompareAndExportsWorkOnTheImportedRun) {
  TwoRanks t;
  writeTwoRanks(t, 3);
  const std::string db = t.dir.file("t.db");
  ASSERT_TRUE(importInto(db, t.files).isOk());
  ASSERT_TRUE(importInto(db, {t.files[0]}).isOk());  // run 2: rank 0 alone
  auto reader = storage::TraceReader::open(db);
  ASSERT_TRUE(reader.isOk());
  auto a = analysis::analyzeRun(**reader, 1);
  auto b = analysis::analyzeRun(**reader, 2);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  ASSERT_TRUE(b.isOk()) << b.status().message();
  ASSERT_EQ(a->ranks.size(), 2u);
  for (const auto& r : a->ranks) {
    ASSERT_TRUE(r.gpu.has_value());
    // Per step: GEMM 2 ms + 123 ns, NCCL 3 ms + 7 ns, memcpy 1 ms then
    // memset 500 ns right after it: busy is their union, all inside the steps.
    EXPECT_EQ(r.gpu->busyNs, 3 * (2 * kMs + 123 + 3 * kMs + 7 + 1 * kMs + 500));
  }
  EXPECT_FALSE(analysis::reportToText(*a, false).empty());
  EXPECT_TRUE(analysis::runToJson(*a).contains("ranks"));
  EXPECT_FALSE(analysis::compareRuns(*a, *b).empty());
  auto chrome = analysis::exportChromeTrace(**reader, 1, t.dir.file("c.json"));
  ASSERT_TRUE(chrome.isOk()) << chrome.status().message();
  EXPECT_GT(chrome->launchFlows, 0);
  auto kineto = analysis::exportKinetoTraces(**reader, 1, t.dir.file("kineto"));
  ASSERT_TRUE(kineto.isOk()) << kineto.status().message();
  ASSERT_EQ(kineto->files.size(), 2u);
  {
    auto writer = storage::TraceWriter::open(db);
    ASSERT_TRUE(writer.isOk());
    auto again = importKineto(**writer, kineto->files, {});
    ASSERT_TRUE(again.isOk()) << again.status().message();
    EXPECT_EQ(again->runId, 3);
  }
  auto r2 = storage::TraceReader::open(db);
  ASSERT_TRUE(r2.isOk());
  std::map<std::pair<int32_t, EventKind>, int64_t> counts1, counts3, bytes1, bytes3;
  for (const auto& e : testing::allEvents(**r2, 1)) {
    ++counts1[{e.rank, e.kind}];
    bytes1[{e.rank, e.kind}] += e.bytes;
  }
  for (const auto& e : testing::allEvents(**r2, 3)) {
    ++counts3[{e.rank, e.kind}];
    bytes3[{e.rank, e.kind}] += e.bytes;
  }
  EXPECT_EQ(counts1, counts3);
  EXPECT_EQ(bytes1, bytes3);
  auto c = analysis::analyzeRun(**r2, 3);
  ASSERT_TRUE(c.isOk());
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(c->ranks[i].gpu && a->ranks[i].gpu);
    EXPECT_EQ(c->ranks[i].gpu->busyNs, a->ranks[i].gpu->busyNs);
    EXPECT_EQ(c->ranks[i].gpu->windowNs, a->ranks[i].gpu->windowNs);
  }
}

// `report`'s kernel time per device equals SUM(end - start) over the export's
// kernel table for that device, the sum taken by SQL on the file, not by the
// importer. One file, one device, one run each; the report's GPU time
// (RunReport ranks[].gpu, `report`'s GPU table) counts the compute kernels
// and the collectives, which here never overlap, so their unions are sums.
int64_t sqlKernelNs(const std::string& file, int64_t device) {
  auto db = storage::SqliteDb::open(file, storage::SqliteDb::Mode::kReadOnly);
  EXPECT_TRUE(db.isOk());
  if (!db.isOk()) return -1;
  auto stmt = (*db)->prepare(
      "SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = " +
      std::to_string(device));
  EXPECT_TRUE(stmt.isOk());
  if (!stmt.isOk()) return -1;
  auto row = stmt->step();
  EXPECT_TRUE(row.isOk() && *row);
  return stmt->columnInt(0);
}

TEST(NsysImport, ReportKernelTimePerDeviceIsTheKernelTableSum) {
  bubblescope::testing::TempDir dir;
  const std::string db = dir.file("t.db");
  int64_t run = 0;
  for (int64_t device : {0, 3}) {
    NsysSynthetic o;
    o.device = device;
    o.rank = static_cast<int32_t>(device);
    const std::string file = dir.file("report-" + std::to_string(device) + ".sqlite");
    testing::writeNsysExport(file, o);
    auto s = importInto(db, {file});
    ASSERT_TRUE(s.isOk()) << s.status().message();
    ++run;
    EXPECT_EQ(s->files[0].device, "cuda:" + std::to_string(device));
    auto reader = storage::TraceReader::open(db);
    ASSERT_TRUE(reader.isOk());
    auto report = analysis::analyzeRun(**reader, run);
    ASSERT_TRUE(report.isOk()) << report.status().message();
    ASSERT_EQ(report->ranks.size(), 1u);
    EXPECT_EQ(report->ranks[0].info.device, "cuda:" + std::to_string(device));
    const auto& gpu = report->ranks[0].gpu;
    ASSERT_TRUE(gpu.has_value());
    const int64_t expected = sqlKernelNs(file, device);
    EXPECT_EQ(expected, 3 * (2 * kMs + 123 + 3 * kMs + 7));  // the synthetic's own sum
    EXPECT_EQ(gpu->overlapNs, 0);
    EXPECT_EQ(gpu->computeNs + gpu->commNs, expected) << "device " << device;
  }
}

}  // namespace
}  // namespace bubblescope::import
