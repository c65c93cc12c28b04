// Runs on 4 ranks (mpirun): every rank's spans reach one trace file on rank
// 0's timeline, with a deliberately skewed clock on two ranks.
//
// Nothing here depends on how fast the machine is: each stored time is
// checked against its truth within the bound the session itself reports
// (docs/tracer.md, "One timeline"), waits are for conditions, and their
// deadlines only turn a hang into a failure.
#include "tracer/trace_session.h"

#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "storage/trace_reader.h"
#include "storage/trace_writer.h"

namespace bubblescope::tracer {
namespace {

// The truths below are each rank's own host clock. With the TSC every
// process scales it by its own calibration, so two processes' host clocks
// differ by their calibrations' deviations (docs/tracer.md: up to 10 us per
// second until the first re-check); the alignment measures and removes that
// difference, but a truth read on the rank still contains it. On
// CLOCK_MONOTONIC every rank of this host reads one clock, so a stored time
// is within the reported uncertainty of its truth, exactly. Set before main()
// runs, so before the first read chooses the source.
const bool kOneClockPerHost = setenv("BUBBLESCOPE_CLOCK", "monotonic", 1) == 0;

// The error the alignment adds on top of the reported uncertainty: integer
// rounding of the skew, of a segment's slope and of the GPU clock map (1 ns
// each at most, never two on one time).
constexpr int64_t kRoundingNs = 2;

// How long a wait for something the session does on its own thread may take
// before the test calls it a hang (far beyond any machine's load).
constexpr auto kHangDeadline = std::chrono::seconds(60);

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int worldSize() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// A fresh trace path made on rank 0 and shared with every rank.
std::string sharedTracePath(const char* name) {
  char path[512] = {};
  if (worldRank() == 0) {
    std::string pattern = (std::filesystem::temp_directory_path() / "bs-mpi-XXXXXX").string();
    const char* dir = mkdtemp(pattern.data());
    std::snprintf(path, sizeof path, "%s/%s", dir, name);
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

// Rank 1: 3 s ahead and 500 ppm fast; rank 2: 2 s behind; others exact.
ClockSkew skewOf(int rank, int64_t pivotNs) {
  if (rank == 1) return {3000000000LL, 5e-4, pivotNs};
  if (rank == 2) return {-2000000000LL, 0.0, pivotNs};
  return {0, 0.0, pivotNs};
}

// Records `count` forward spans of about 1 ms each on the skewed clock, each
// carrying its true start and end (host clock) in bytes and flops, so the
// home rank can check the alignment.
void recordTruthSpans(Recorder* recorder, const ClockSkew& skew, int count) {
  for (int i = 0; i < count; ++i) {
    const int64_t t0 = hostNowNs();
    std::this_thread::sleep_for(std::chrono::microseconds(1000));
    const int64_t t1 = hostNowNs();
    SpanInfo info;
    info.kind = trace_model::EventKind::kForward;
    info.name = "forward";
    info.microBatch = i;
    info.bytes = t0;
    info.flops = t1;
    recorder->record(info, skew.apply(t0), skew.apply(t1));
  }
}

TEST(TraceSessionTest, EveryRanksEventsReachOneFileOnRankZerosTimeline) {
  const int rank = worldRank();
  const int size = worldSize();
  const std::string path = sharedTracePath("session.db");
  std::unique_ptr<storage::TraceWriter> writer;
  if (rank == 0) {
    auto opened = storage::TraceWriter::open(path);
    ASSERT_TRUE(opened.isOk()) << opened.status().message();
    writer = std::move(opened).value();
    ASSERT_TRUE(writer->beginRun({.name = "session test", .worldSize = size}).isOk());
  }
  int64_t pivot = hostNowNs();
  MPI_Bcast(&pivot, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const ClockSkew skew = skewOf(rank, pivot);
  SessionOptions options;
  options.skewForTesting = skew;
  options.sampleIntervalMs = 50;
  options.gauges.push_back({"mem.parameters", [rank] { return 1000.0 * (rank + 1); }});
  auto session = TraceSession::start(MPI_COMM_WORLD, writer.get(),
                                     {.dp = rank / 2, .tp = rank % 2, .pp = 0}, options);
  ASSERT_TRUE(session.isOk()) << session.status().message();

  // 150 spans over about 300 ms, each carrying its true times in bytes and
  // flops so rank 0 can check the alignment.
  constexpr int kSpans = 150;
  Recorder* recorder = (*session)->recorder();
  recordTruthSpans(recorder, skew, kSpans);
  const int64_t stepEnd = recorder->now();
  (*session)->addStep(
      {rank, 0, rank == size - 1 ? 4.5 : std::nan(""), 1024, stepEnd - 1000, stepEnd});
  Status finished = (*session)->finish();
  ASSERT_TRUE(finished.isOk()) << "rank " << rank << ": " << finished.message();
  if (rank != 0) return;

  ASSERT_TRUE(kOneClockPerHost);
  ASSERT_EQ(hostClockInfo().source, ClockSource::kMonotonic);
  ASSERT_TRUE(writer->finishRun(storage::RunStatus::kFinished).isOk());
  writer.reset();
  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto ranks = (*reader)->ranks(1);
  ASSERT_TRUE(ranks.isOk());
  ASSERT_EQ(static_cast<int>(ranks->size()), size);
  for (const auto& r : *ranks) {
    EXPECT_EQ(r.dp, r.rank / 2);
    EXPECT_EQ(r.tp, r.rank % 2);
    EXPECT_EQ(r.ranksOnHost, size);
    EXPECT_GT(r.pid, 0);
    EXPECT_EQ(r.gpuClockUncertaintyNs, -1);  // no GPU times: unknown, not 0
    // How tight the bound is depends on the machine's load (round trips);
    // that it holds is what the events below check.
    std::printf("rank %d: clock uncertainty %lld ns\n", r.rank,
                static_cast<long long>(r.clockUncertaintyNs));
  }
  // The start offset is the skew at the start sync, within its uncertainty:
  // rank 1's also drifted 500 ppm since the pivot, by less than 500 ppm of
  // the time since then.
  const double driftSincePivot = 5e-4 * static_cast<double>(hostNowNs() - pivot);
  EXPECT_NEAR(static_cast<double>((*ranks)[1].clockOffsetNs), -3e9,
              static_cast<double>((*ranks)[1].clockUncertaintyNs) + driftSincePivot);
  EXPECT_NEAR(static_cast<double>((*ranks)[2].clockOffsetNs), 2e9,
              static_cast<double>((*ranks)[2].clockUncertaintyNs));

  auto page = (*reader)->eventsAfter(1, 0, 1 << 20);
  ASSERT_TRUE(page.isOk());
  std::vector<int> perRank(size, 0);
  for (const trace_model::Event& e : page->events) {
    ++perRank.at(e.rank);
    const int64_t allowed = (*ranks)[e.rank].clockUncertaintyNs + kRoundingNs;
    ASSERT_LE(std::llabs(e.startNs - e.bytes), allowed)
        << "rank " << e.rank << " span " << e.microBatch << " off by " << e.startNs - e.bytes;
    ASSERT_LE(std::llabs(e.endNs - e.flops), allowed);
  }
  for (int r = 0; r < size; ++r) EXPECT_EQ(perRank[r], kSpans) << "rank " << r;

  auto steps = (*reader)->steps(1);
  ASSERT_TRUE(steps.isOk());
  EXPECT_EQ(static_cast<int>(steps->size()), size);
  EXPECT_DOUBLE_EQ(steps->back().loss, 4.5);
  for (int r = 0; r < size; ++r) {
    auto memory = (*reader)->samples(1, r, "mem.parameters");
    ASSERT_TRUE(memory.isOk());
    ASSERT_FALSE(memory->empty()) << "rank " << r;
    EXPECT_EQ(memory->front().value, 1000.0 * (r + 1));
    auto rss = (*reader)->samples(1, r, "rss_bytes");
    ASSERT_TRUE(rss.isOk());
    ASSERT_FALSE(rss->empty());
    EXPECT_GT(rss->front().value, 1e6);
  }
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// A launched job (cli/collected_job.h): the last rank is the collector. It
// records nothing, writes every other rank's events on its own timeline and
// describes only them; ranks 1 and 2 have skewed clocks.
TEST(TraceSessionTest, TheLastRankCollectsEveryOtherRankOnItsTimeline) {
  const int rank = worldRank();
  const int size = worldSize();
  const int collector = size - 1;
  const std::string path = sharedTracePath("collected.db");
  std::unique_ptr<storage::TraceWriter> writer;
  if (rank == collector) {
    auto opened = storage::TraceWriter::open(path);
    ASSERT_TRUE(opened.isOk()) << opened.status().message();
    writer = std::move(opened).value();
    ASSERT_TRUE(writer->beginRun({.name = "collected", .worldSize = size - 1}).isOk());
  }
  int64_t pivot = hostNowNs();
  MPI_Bcast(&pivot, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const ClockSkew skew = skewOf(rank, pivot);
  SessionOptions options;
  options.lastRankCollects = true;
  options.skewForTesting = skew;
  auto session = TraceSession::start(MPI_COMM_WORLD, writer.get(), {.dp = rank}, options);
  ASSERT_TRUE(session.isOk()) << session.status().message();
  EXPECT_EQ((*session)->homeRank(), collector);
  constexpr int kSpans = 40;
  if (rank != collector) recordTruthSpans((*session)->recorder(), skew, kSpans);
  Status finished = (*session)->finish();
  ASSERT_TRUE(finished.isOk()) << "rank " << rank << ": " << finished.message();
  if (rank != collector) return;
  ASSERT_EQ(hostClockInfo().source, ClockSource::kMonotonic);
  ASSERT_TRUE(writer->finishRun(storage::RunStatus::kFinished).isOk());
  writer.reset();
  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto ranks = (*reader)->ranks(1);
  ASSERT_TRUE(ranks.isOk());
  ASSERT_EQ(static_cast<int>(ranks->size()), size - 1) << "the collector is no rank of the run";
  for (const auto& r : *ranks) {
    EXPECT_EQ(r.dp, r.rank);
    EXPECT_EQ(r.ranksOnHost, size - 1);
  }
  const double driftSincePivot = 5e-4 * static_cast<double>(hostNowNs() - pivot);
  EXPECT_NEAR(static_cast<double>((*ranks)[1].clockOffsetNs), -3e9,
              static_cast<double>((*ranks)[1].clockUncertaintyNs) + driftSincePivot);
  EXPECT_NEAR(static_cast<double>((*ranks)[2].clockOffsetNs), 2e9,
              static_cast<double>((*ranks)[2].clockUncertaintyNs));
  auto page = (*reader)->eventsAfter(1, 0, 1 << 20);
  ASSERT_TRUE(page.isOk());
  std::vector<int> perRank(size - 1, 0);
  for (const trace_model::Event& e : page->events) {
    ASSERT_LT(e.rank, collector);
    ++perRank[e.rank];
    const int64_t allowed = (*ranks)[e.rank].clockUncertaintyNs + kRoundingNs;
    ASSERT_LE(std::llabs(e.startNs - e.bytes), allowed) << "rank " << e.rank;
    ASSERT_LE(std::llabs(e.endNs - e.flops), allowed) << "rank " << e.rank;
  }
  for (int r = 0; r < size - 1; ++r) EXPECT_EQ(perRank[r], kSpans) << "rank " << r;
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// A span is in the file, for a reader in another connection, while the
// session still runs (the home rank commits every 200 ms, not only at the
// end). How soon is printed: about 0.2 s on a quiet machine (docs/tracer.md);
// on a busy one the shipping threads wait for a core, so no bound on it is
// asserted.
TEST(TraceSessionTest, ReaderSeesASpanWhileTheSessionRuns) {
  const int rank = worldRank();
  const std::string path = sharedTracePath("live.db");
  std::unique_ptr<storage::TraceWriter> writer;
  if (rank == 0) {
    auto opened = storage::TraceWriter::open(path);
    ASSERT_TRUE(opened.isOk());
    writer = std::move(opened).value();
    ASSERT_TRUE(writer->beginRun({.name = "live", .worldSize = worldSize()}).isOk());
  }
  auto session = TraceSession::start(MPI_COMM_WORLD, writer.get(), {}, {});
  ASSERT_TRUE(session.isOk()) << session.status().message();
  int64_t endNs = 0;
  if (rank == worldSize() - 1) {
    SpanInfo info;
    info.kind = trace_model::EventKind::kBackward;
    info.name = "backward";
    info.microBatch = 777;
    Recorder* r = (*session)->recorder();
    const int64_t start = r->now();
    endNs = r->now();
    r->record(info, start, endNs);
  }
  MPI_Bcast(&endNs, 1, MPI_INT64_T, worldSize() - 1, MPI_COMM_WORLD);
  if (rank == 0) {
    auto reader = storage::TraceReader::open(path);
    ASSERT_TRUE(reader.isOk()) << reader.status().message();
    bool seen = false;
    const auto deadline = std::chrono::steady_clock::now() + kHangDeadline;
    while (!seen && std::chrono::steady_clock::now() < deadline) {
      auto page = (*reader)->eventsAfter(1, 0);
      ASSERT_TRUE(page.isOk());
      for (const trace_model::Event& e : page->events) seen = seen || e.microBatch == 777;
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const double latencyS = (hostNowNs() - endNs) / 1e9;
    EXPECT_TRUE(seen) << "the span never reached the file while the session ran";
    std::printf("span visible to a reader after %.3f s\n", latencyS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_TRUE((*session)->finish().isOk());
  if (rank == 0) std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// Stands in for CUPTI: a GPU clock 7 s ahead of the host's, one NCCL
// all-reduce on stream 13 and one kernel on stream 7 per call, with their
// true host times kept for the check.
class FakeGpu final : public GpuActivitySource {
 public:
  static constexpr uint64_t kGpuAheadNs = 7000000000ULL;
  static constexpr int kCalls = 3;
  std::vector<GpuActivity> take() override {
    std::vector<GpuActivity> out;
    if (calls_ >= launchCalls_) return out;  // each call's records follow its launches
    {
      std::lock_guard lock(mutex_);
      ++calls_;
    }
    reported_.notify_all();
    const int64_t now = hostNowNs();
    const uint32_t id = 10 * static_cast<uint32_t>(calls_);
    out.push_back({GpuActivityKind::kKernel, toGpu(now - 50000), toGpu(now - 20000), 0, 13, id + 1,
                   "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0});
    out.push_back({GpuActivityKind::kKernel, toGpu(now - 90000), toGpu(now - 60000), 0, 7, id + 2,
                   "sgemm_kernel", 0});
    truth_.push_back({now - 50000, now - 20000});
    truth_.push_back({now - 90000, now - 60000});
    return out;
  }
  // The launches of the records the next take() returns (the session takes
  // launches first), on the host clock, before their records.
  std::vector<LaunchCall> takeLaunches() override {
    if (!ready || launchCalls_ >= kCalls) return {};
    const uint32_t id = 10 * static_cast<uint32_t>(++launchCalls_);
    const int64_t now = hostNowNs();
    return {{id + 1, now - 200000, now - 195000, 77, "cuLaunchKernelEx"},
            {id + 2, now - 190000, now - 185000, 77, "cudaLaunchKernel"}};
  }
  std::vector<ClockPair> clockPairs(int count) override {
    std::vector<ClockPair> pairs;
    for (int i = 0; i < count; ++i) {  // as CUPTI's collector reads them
      const int64_t before = hostNowNs();
      const int64_t after = hostNowNs();
      pairs.push_back({toGpu(before), before + (after - before) / 2, after - before});
    }
    return pairs;
  }
  // Waits until the session has taken every call's records (from its
  // shipping thread, once a ship interval); false after kHangDeadline.
  bool waitUntilAllTaken() {
    std::unique_lock lock(mutex_);
    return reported_.wait_for(lock, kHangDeadline, [&] { return calls_ >= kCalls; });
  }
  std::vector<std::pair<int64_t, int64_t>> truth_;
  // Nothing is reported before the test has told the session the stream
  // dimensions (the session's thread ships as soon as it starts).
  std::atomic<bool> ready{false};

 private:
  static uint64_t toGpu(int64_t hostNs) { return static_cast<uint64_t>(hostNs) + kGpuAheadNs; }
  std::mutex mutex_;
  std::condition_variable reported_;
  int calls_ = 0;  // written by the shipping thread under mutex_
  int launchCalls_ = 0;
};

TEST(TraceSessionTest, GpuActivityShipsOnStreamLanesWithItsDimension) {
  const int rank = worldRank();
  const std::string path = sharedTracePath("gpu.db");
  std::unique_ptr<storage::TraceWriter> writer;
  if (rank == 0) {
    auto opened = storage::TraceWriter::open(path);
    ASSERT_TRUE(opened.isOk());
    writer = std::move(opened).value();
    ASSERT_TRUE(writer->beginRun({.name = "gpu", .worldSize = worldSize()}).isOk());
  }
  FakeGpu gpu;
  SessionOptions options;
  options.gpu = &gpu;
  options.shipIntervalMs = 20;
  auto session = TraceSession::start(MPI_COMM_WORLD, writer.get(), {.device = "cuda:0"}, options);
  ASSERT_TRUE(session.isOk()) << session.status().message();
  (*session)->setStreamDimension(13, trace_model::ParallelDim::kDp);
  gpu.ready = true;
  ASSERT_TRUE(gpu.waitUntilAllTaken()) << "the session never took the fake GPU's records";
  ASSERT_TRUE((*session)->finish().isOk());
  // Every rank sends rank 0 the true times of its fake activities.
  std::vector<int64_t> mine;
  for (auto [a, b] : gpu.truth_) mine.insert(mine.end(), {a, b});
  ASSERT_EQ(mine.size(), 12u);
  std::vector<int64_t> all(rank == 0 ? 12 * worldSize() : 0);
  MPI_Gather(mine.data(), 12, MPI_INT64_T, all.data(), 12, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  ASSERT_EQ(hostClockInfo().source, ClockSource::kMonotonic);
  ASSERT_TRUE(writer->finishRun(storage::RunStatus::kFinished).isOk());
  writer.reset();
  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk());
  auto ranks = (*reader)->ranks(1);
  ASSERT_TRUE(ranks.isOk());
  auto page = (*reader)->eventsAfter(1, 0);
  ASSERT_TRUE(page.isOk());
  int allReduces = 0, kernels = 0, launches = 0;
  std::map<std::pair<int32_t, int64_t>, const trace_model::Event*> launchOf;  // (rank, correlation)
  for (const trace_model::Event& e : page->events) {
    if (e.lane != trace_model::Lane::kCudaApi) continue;
    ++launches;
    EXPECT_EQ(e.kind, trace_model::EventKind::kOther);
    EXPECT_NE(e.correlationId, 0);
    EXPECT_TRUE(launchOf.emplace(std::make_pair(e.rank, e.correlationId), &e).second);
  }
  EXPECT_EQ(launches, 6 * worldSize());
  for (const trace_model::Event& e : page->events) {
    if (!trace_model::isGpuStreamLane(e.lane)) continue;
    // Every record links to its launch on the same rank, which came first.
    auto it = launchOf.find({e.rank, e.correlationId});
    ASSERT_NE(it, launchOf.end()) << "rank " << e.rank << " correlation " << e.correlationId;
    EXPECT_EQ(it->second->name, e.kind == trace_model::EventKind::kAllReduce ? "cuLaunchKernelEx"
                                                                             : "cudaLaunchKernel");
    EXPECT_LT(it->second->endNs, e.startNs);
  }
  for (const trace_model::Event& e : page->events) {
    if (e.kind == trace_model::EventKind::kAllReduce) {
      ++allReduces;
      EXPECT_EQ(e.lane, trace_model::gpuStreamLane(13));
      EXPECT_EQ(e.dim, trace_model::ParallelDim::kDp);
      // Each end within the rank's GPU clock bound of its truth (+ ns rounding).
      EXPECT_NEAR(static_cast<double>(e.endNs - e.startNs), 30000.0,
                  2.0 + 2.0 * static_cast<double>((*ranks)[e.rank].gpuClockUncertaintyNs));
    } else if (e.kind == trace_model::EventKind::kKernel) {
      ++kernels;
      EXPECT_EQ(e.lane, trace_model::gpuStreamLane(7));
      EXPECT_EQ(e.dim, trace_model::ParallelDim::kNone);
    } else {
      continue;
    }
    // Within the rank's clock uncertainty, host and GPU, of one of its true times.
    const int64_t allowed =
        (*ranks)[e.rank].clockUncertaintyNs + (*ranks)[e.rank].gpuClockUncertaintyNs + kRoundingNs;
    bool matched = false;
    for (int i = 0; i < 6; ++i) {
      const int64_t start = all[12 * e.rank + 2 * i];
      matched = matched || std::llabs(e.startNs - start) <= allowed;
    }
    EXPECT_TRUE(matched) << "rank " << e.rank << " start " << e.startNs;
  }
  EXPECT_EQ(allReduces, 3 * worldSize());
  EXPECT_EQ(kernels, 3 * worldSize());
  // Every rank converted GPU times: its map's error bound is stored.
  for (const auto& r : *ranks) EXPECT_GE(r.gpuClockUncertaintyNs, 0) << "rank " << r.rank;
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

}  // namespace
}  // namespace bubblescope::tracer
