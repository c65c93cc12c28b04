// `bubblescope-cli bench tracer`: the cost of one span, the overhead of
// tracing on a training step, and the rate at which a 4-rank job streams
// events into one trace file.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/mpirun.h"
#include "common/median.h"
#include "engine/parallel/rank_trainer.h"
#include "engine/trainer_options.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tracer/trace_session.h"

namespace bubblescope::cli {
namespace {

struct Options {
  int64_t spans = 4000000;
  int64_t steps = 6;  // per side, interleaved
  int64_t streamEventsPerRank = 250000;
  int streamRanks = 4;
  std::string model = "small";
};

// This thread's CPU time in ns: what a span costs the traced thread, not
// counting the time other processes held the core (the machine is shared).
int64_t threadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

struct SpanCost {
  double cpuNs = 0.0;   // thread CPU time per span
  double wallNs = 0.0;  // wall time per span
};

// The cost of one of `spans` ScopedSpans, timed in rounds that fit the ring;
// draining happens between rounds, outside the timing.
SpanCost measureSpan(bool enabled, int64_t spans) {
  constexpr int64_t kRound = 1 << 15;
  tracer::Recorder recorder(0, enabled, kRound);
  tracer::SpanInfo info;
  info.kind = trace_model::EventKind::kForward;
  info.name = "forward";
  std::vector<trace_model::Event> sinkhole;
  int64_t cpu = 0, wall = 0;
  for (int64_t done = 0; done < spans; done += kRound) {
    const int64_t c0 = threadCpuNs();
    const int64_t t0 = tracer::monotonicNowNs();
    for (int64_t i = 0; i < kRound; ++i) {
      info.microBatch = static_cast<int32_t>(i);
      tracer::ScopedSpan span(&recorder, info);
    }
    wall += tracer::monotonicNowNs() - t0;
    cpu += threadCpuNs() - c0;
    sinkhole.clear();
    recorder.drainInto(sinkhole);
  }
  const auto n = static_cast<double>(spans);
  return {static_cast<double>(cpu) / n, static_cast<double>(wall) / n};
}

struct Overhead {
  double cpuRatio = 0.0;   // the training thread's CPU time per step, traced / untraced
  double wallRatio = 0.0;  // the steps' wall time, traced / untraced
};

// Medians over interleaved pairs of (step traced) / (step untraced) of two
// identical trainers; a thread drains the traced one every 100 ms, as the
// tracer's shipping thread does (its own CPU time is not the training
// thread's: it shows in the wall ratio only).
Result<Overhead> measureOverhead(const Options& o) {
  BS_ASSIGN_OR_RETURN(auto model, layout::modelPreset(o.model));
  engine::TrainerOptions options;
  options.model = model;
  options.schedule.totalSteps = o.steps + 2;
  tracer::Recorder recorder(0, true, size_t{1} << 16);
  BS_ASSIGN_OR_RETURN(auto traced, engine::RankTrainer::create(options));
  BS_ASSIGN_OR_RETURN(auto plain, engine::RankTrainer::create(options));
  traced->setRecorder(&recorder);
  std::atomic<bool> stop{false};
  std::thread drainer([&] {
    std::vector<trace_model::Event> sinkhole;
    while (!stop) {
      sinkhole.clear();
      recorder.drainInto(sinkhole);
      tracer::recheckHostClock();  // as the tracer's shipping thread does
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::vector<double> cpuRatios, wallRatios;
  Status failed;
  for (int64_t i = -1; i < o.steps && failed.isOk(); ++i) {  // step -1 warms up
    const int64_t c0 = threadCpuNs();
    auto a = traced->step();
    const int64_t c1 = threadCpuNs();
    auto b = plain->step();
    const int64_t c2 = threadCpuNs();
    if (!a.isOk() || !b.isOk()) {
      failed = !a.isOk() ? a.status() : b.status();
      break;
    }
    if (i >= 0) {
      cpuRatios.push_back(static_cast<double>(c1 - c0) / static_cast<double>(c2 - c1));
      wallRatios.push_back(static_cast<double>(a->endNs - a->startNs) /
                           static_cast<double>(b->endNs - b->startNs));
    }
  }
  stop = true;
  drainer.join();
  BS_RETURN_IF_ERROR(failed);
  if (recorder.dropped() > 0) return Status::internal("the recorder dropped spans");
  return Overhead{median(cpuRatios), median(wallRatios)};
}

// Thread CPU ns per read of `now`, over kReads reads.
template <typename Now>
double readNs(Now now) {
  constexpr int kReads = 1000000;
  int64_t last = 0;
  const int64_t c0 = threadCpuNs();
  for (int i = 0; i < kReads; ++i) last = now();
  const int64_t c1 = threadCpuNs();
  return last > 0 ? static_cast<double>(c1 - c0) / kReads : 0.0;
}

// The host clock against CLOCK_MONOTONIC now (a recheck, which may refit).
void printClockCheck(const char* key) {
  const tracer::ClockCheck c = tracer::recheckHostClock();
  std::printf("%s: %lld (+-%lld; rate now fitted over %.3f s, %d refits, %d resets)\n", key,
              static_cast<long long>(c.deviationNs), static_cast<long long>(c.errorNs),
              static_cast<double>(c.sinceCalibrationNs) / 1e9, c.retunes, c.resets);
}

ExitCode runBench(const Options& o) {
  const tracer::HostClockInfo clock = tracer::hostClockInfo();
  std::printf("clock_source: %s (%s)\n", tracer::clockSourceName(clock.source), clock.why);
  if (clock.source == tracer::ClockSource::kTsc) std::printf("tsc_ghz: %.4f\n", clock.ticksPerNs);
  // A span is two clock reads and a store: the host clock's read, and
  // clock_gettime's (the baseline the TSC replaces).
  std::printf("clock_read_ns: %.1f\n", readNs(tracer::hostNowNs));
  std::printf("clock_gettime_ns: %.1f\n", readNs(tracer::monotonicNowNs));
  const SpanCost on = measureSpan(true, o.spans), off = measureSpan(false, o.spans);
  std::printf("span_ns: %.1f\n", on.cpuNs);
  std::printf("span_wall_ns: %.1f\n", on.wallNs);
  std::printf("span_off_ns: %.2f\n", off.cpuNs);
  printClockCheck("clock_deviation_first_ns");  // the first fit's error, seconds later
  std::fflush(stdout);
  auto overhead = measureOverhead(o);
  if (!overhead.isOk()) {
    std::fprintf(stderr, "error: %s\n", overhead.status().message().c_str());
    return 1;
  }
  std::printf("overhead_model: %s\n", o.model.c_str());
  std::printf("overhead_ratio: %.4f\n", overhead->cpuRatio);
  std::printf("overhead_wall_ratio: %.4f\n", overhead->wallRatio);
  printClockCheck("clock_deviation_ns");  // after rechecks every 100 ms
  std::fflush(stdout);

  auto mpirun = findMpirun();
  if (!mpirun.isOk()) {
    std::fprintf(stderr, "error: %s\n", mpirun.status().message().c_str());
    return 1;
  }
  MpirunRequest request;
  request.ranks = o.streamRanks;
  request.program = {selfExecutable(), "bench", "tracer-stream", "--events-per-rank",
                     std::to_string(o.streamEventsPerRank)};
  auto rc = runChild(mpirunCommand(*mpirun, request));
  if (!rc.isOk()) {
    std::fprintf(stderr, "error: %s\n", rc.status().message().c_str());
    return 1;
  }
  return *rc;
}

// One rank of the streaming measurement (started by mpirun).
ExitCode runStreamRank(int64_t eventsPerRank) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto path = std::filesystem::temp_directory_path() /
                    ("bubblescope-stream-" + std::to_string(getppid()) + ".db");
  std::unique_ptr<storage::TraceWriter> writer;
  Status status;
  if (rank == 0) {
    std::filesystem::remove(path);
    auto opened = storage::TraceWriter::open(path.string());
    status = opened.status();
    if (opened.isOk()) {
      writer = std::move(opened).value();
      status = writer->beginRun({.name = "stream bench", .worldSize = size}).status();
    }
  }
  int ok = status.isOk(), allOk = 0;
  MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!allOk) {
    if (rank == 0) std::fprintf(stderr, "error: %s\n", status.message().c_str());
    MPI_Finalize();
    return 1;
  }
  tracer::SessionOptions options;
  options.sampleIntervalMs = 0;
  auto session = tracer::TraceSession::start(MPI_COMM_WORLD, writer.get(), {}, options);
  if (!session.isOk()) {
    std::fprintf(stderr, "error: rank %d: %s\n", rank, session.status().message().c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t t0 = tracer::hostNowNs();
  tracer::Recorder* recorder = (*session)->recorder();
  tracer::SpanInfo info;
  info.kind = trace_model::EventKind::kForward;
  info.name = "forward";
  const size_t capacity = options.recorderCapacity;
  for (int64_t i = 0; i < eventsPerRank; ++i) {
    while (recorder->pending() + 1 >= capacity) std::this_thread::yield();
    info.microBatch = static_cast<int32_t>(i & 1023);
    recorder->record(info, t0 + i * 100, t0 + i * 100 + 90);
  }
  status = (*session)->finish();
  const double seconds = static_cast<double>(tracer::hostNowNs() - t0) / 1e9;
  int code = 0;
  if (!status.isOk()) {
    std::fprintf(stderr, "error: rank %d: %s\n", rank, status.message().c_str());
    code = 1;
  }
  if (rank == 0 && code == 0) {
    status = writer->finishRun(storage::RunStatus::kFinished);
    writer.reset();
    // The reader is closed before the files are removed: nothing unlinks a
    // trace this process still has open (storage/trace_file_access.h).
    auto run = [&] {
      auto reader = storage::TraceReader::open(path.string());
      return reader.isOk() ? (*reader)->run(1) : Result<storage::RunRecord>(reader.status());
    }();
    const int64_t expected = eventsPerRank * size;
    if (!run.isOk() || run->eventCount != expected) {
      std::fprintf(stderr, "error: the trace holds %lld events, expected %lld\n",
                   run.isOk() ? static_cast<long long>(run->eventCount) : -1LL,
                   static_cast<long long>(expected));
      code = 1;
    } else {
      std::printf("stream_ranks: %d\n", size);
      std::printf("stream_events: %lld\n", static_cast<long long>(expected));
      std::printf("stream_events_per_s: %.0f\n", static_cast<double>(expected) / seconds);
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  }
  session->reset();
  MPI_Finalize();
  return code;
}

}  // namespace

void addBenchTracer(Command bench, CommandRunner& runner) {
  auto o = std::make_shared<Options>();
  Command cmd = bench.subcommand("tracer", "Span cost, tracing overhead, streaming rate");
  cmd.option("--spans", o->spans, "Spans timed for span_ns").positive();
  cmd.option("--steps", o->steps, "Interleaved training steps per side").positive();
  cmd.option("--model", o->model, "Model preset of the overhead run");
  cmd.option("--events-per-rank", o->streamEventsPerRank, "Events each rank streams").positive();
  cmd.option("--ranks", o->streamRanks, "Ranks of the streaming job").positive();
  cmd.callback([&runner, o] { runner = [o] { return runBench(*o); }; });

  auto events = std::make_shared<int64_t>(250000);
  Command worker = bench.subcommand("tracer-stream", "One rank of `bench tracer`'s 4-rank job");
  worker.hidden();  // hidden: started by `bench tracer` through mpirun
  worker.option("--events-per-rank", *events).positive();
  worker.callback([&runner, events] { runner = [events] { return runStreamRank(*events); }; });
}

}  // namespace bubblescope::cli
