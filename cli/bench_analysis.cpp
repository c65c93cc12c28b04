// `bubblescope-cli bench analysis`: the report and the Chrome export on a big
// run. Builds (or reuses) a 64-rank trace of --events events (default 10M) in
// a folder, then measures in a fresh child process, so that peak_rss_mb is
// the report's alone and not the trace generator's.
#include <nlohmann/json.hpp>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/load_average.h"
#include "storage/analysis/chrome_export.h"
#include "storage/analysis/parallel_ranks.h"
#include "storage/analysis/report_json.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"

extern char** environ;

namespace bubblescope::cli {
namespace {

using trace_model::EventKind;
using trace_model::Lane;
using trace_model::ParallelDim;

// dp 4 × tp 4 × pp 4; rank = dp·16 + pp·4 + tp.
constexpr int32_t kRanks = 64;
constexpr int32_t kEventsPerRankStep = 64;
constexpr int64_t kStepNs = 56000;
constexpr int32_t kMicroBatches = 4;
constexpr const char* kLayoutJson =
    R"({"dp": 4, "tp": 4, "pp": 4, "zero_stage": 1, "schedule": "1f1b", "micro_batches": 4,
"micro_batch_size": 8, "model": {"vocab_size": 50257, "seq_len": 1024, "layers": 12,
"hidden": 768, "heads": 12, "mlp_ratio": 4}})";

struct BenchOptions {
  int64_t events = 10000000;
  std::string dir;
  bool measureOnly = false;  // internal: the child process
  bool noExport = false;     // the report alone (a 100M-event export is 16 GB)
};

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int32_t ppOf(int32_t rank) {
  return (rank / 4) % 4;
}
int32_t peerAtStage(int32_t rank, int32_t pp) {
  return rank - ppOf(rank) * 4 + pp * 4;
}

void push(std::vector<trace_model::Event>& out, int32_t rank, int32_t step, int32_t mb,
          EventKind kind, Lane lane, const char* name, int64_t startNs, int64_t endNs,
          ParallelDim dim = ParallelDim::kNone, int64_t bytes = 0, int32_t peer = -1) {
  trace_model::Event e;
  e.rank = rank;
  e.lane = lane;
  e.kind = kind;
  e.name = name;
  e.startNs = startNs;
  e.endNs = endNs;
  e.step = step;
  e.microBatch = mb;
  e.stage = ppOf(rank);
  e.dim = dim;
  e.bytes = bytes;
  e.peer = peer;
  out.push_back(std::move(e));
}

// The 64 events of one rank's step: per micro-batch a wait, a receive, a
// forward with a tp all-reduce under its end, a send, a kernel, a data load,
// then the same for the backward; at the end dp all-reduce buckets, the
// optimizer, a ZeRO all-gather, a wait and a data load.
void rankStep(std::vector<trace_model::Event>& out, int32_t rank, int32_t step) {
  const int64_t t = step * kStepNs + rank * 3;
  const int32_t pp = ppOf(rank);
  const int32_t next = peerAtStage(rank, (pp + 1) % 4), prev = peerAtStage(rank, (pp + 3) % 4);
  const int64_t waitNs = 200 + 100 * pp;
  for (int32_t mb = 0; mb < kMicroBatches; ++mb) {
    const int64_t b = t + mb * 12000;
    push(out, rank, step, mb, EventKind::kWait, Lane::kPipeline, "wait", b, b + waitNs);
    push(out, rank, step, mb, EventKind::kRecv, Lane::kPipeline, "recv_activation", b + 500,
         b + 800, ParallelDim::kPp, 1 << 20, prev);
    push(out, rank, step, mb, EventKind::kForward, Lane::kCompute, "forward", b + 800, b + 3800);
    push(out, rank, step, mb, EventKind::kAllReduce, Lane::kCommunication, "tp.allreduce", b + 3000,
         b + 4000, ParallelDim::kTp, 256 << 10);
    push(out, rank, step, mb, EventKind::kSend, Lane::kPipeline, "send_activation", b + 4000,
         b + 4300, ParallelDim::kPp, 1 << 20, next);
    push(out, rank, step, mb, EventKind::kKernel, trace_model::gpuStreamLane(0), "gemm", b + 4300,
         b + 4800);
    push(out, rank, step, mb, EventKind::kDataLoad, Lane::kData, "data", b + 4800, b + 5000);
    push(out, rank, step, mb, EventKind::kWait, Lane::kPipeline, "wait", b + 5000,
         b + 5000 + waitNs);
    push(out, rank, step, mb, EventKind::kRecv, Lane::kPipeline, "recv_grad", b + 5500, b + 5800,
         ParallelDim::kPp, 1 << 20, next);
    push(out, rank, step, mb, EventKind::kBackward, Lane::kCompute, "backward", b + 5800,
         b + 10800);
    push(out, rank, step, mb, EventKind::kAllReduce, Lane::kCommunication, "tp.allreduce",
         b + 10000, b + 11000, ParallelDim::kTp, 256 << 10);
    push(out, rank, step, mb, EventKind::kSend, Lane::kPipeline, "send_grad", b + 11000, b + 11300,
         ParallelDim::kPp, 1 << 20, prev);
    push(out, rank, step, mb, EventKind::kOther, Lane::kData, "other", b + 11300, b + 11500);
    push(out, rank, step, mb, EventKind::kKernel, trace_model::gpuStreamLane(0), "gemm", b + 11500,
         b + 12000);
  }
  const int64_t e = t + kMicroBatches * 12000;
  for (int i = 0; i < 4; ++i) {
    push(out, rank, step, -1, EventKind::kAllReduce, Lane::kCommunication, "dp.bucket",
         e + i * 1000, e + i * 1000 + 900, ParallelDim::kDp, 4 << 20);
  }
  push(out, rank, step, -1, EventKind::kOptimizer, Lane::kCompute, "optimizer", e + 4000, e + 6000);
  push(out, rank, step, -1, EventKind::kAllGather, Lane::kCommunication, "zero.allgather", e + 6000,
       e + 6500, ParallelDim::kZero, 4 << 20);
  push(out, rank, step, -1, EventKind::kWait, Lane::kPipeline, "wait", e + 6500, e + 7000);
  push(out, rank, step, -1, EventKind::kDataLoad, Lane::kData, "data", e + 7000, e + 8000);
}

Status buildTrace(const std::string& path, int64_t events) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  const auto t0 = std::chrono::steady_clock::now();
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
  BS_RETURN_IF_ERROR(writer
                         ->beginRun({.name = "analysis bench",
                                     .layoutJson = kLayoutJson,
                                     .modelJson = "{}",
                                     .backend = "cuda",
                                     .worldSize = kRanks})
                         .status());
  for (int32_t r = 0; r < kRanks; ++r) {
    storage::RankInfo info;
    info.rank = r;
    info.dp = r / 16;
    info.pp = ppOf(r);
    info.tp = r % 4;
    info.host = "node" + std::to_string(r / 8);
    info.device = "cuda:" + std::to_string(r % 8);
    BS_RETURN_IF_ERROR(writer->addRank(info));
    // About the ZeRO-1 model states of the layout (Ψ/16 per rank), and
    // activations that shrink along the pipeline as 1F1B keeps fewer.
    const double psi = 163.04e6 / 16, mb = 1 << 20;
    const std::vector<trace_model::Sample> memory = {
        {r, "mem.parameters", 0, 4 * psi},
        {r, "mem.gradients", 0, 4 * psi},
        {r, "mem.optimizer", 0, 8 * psi / 4},
        {r, "mem.activations", 0, (400 - 50 * ppOf(r)) * mb}};
    BS_RETURN_IF_ERROR(writer->appendSamples(memory));
  }
  std::vector<trace_model::Event> batch;
  std::vector<trace_model::StepRecord> steps;
  int64_t written = 0;
  for (int32_t step = 0; written < events; ++step) {
    batch.clear();
    steps.clear();
    for (int32_t r = 0; r < kRanks && written + static_cast<int64_t>(batch.size()) < events; ++r) {
      rankStep(batch, r, step);
      const int64_t t = step * kStepNs + r * 3;
      steps.push_back({r, step, ppOf(r) == 3 ? 5.0 - step * 1e-4 : NAN, 131072, t, t + kStepNs});
    }
    batch.resize(std::min<int64_t>(batch.size(), events - written));
    BS_RETURN_IF_ERROR(writer->appendEvents(batch));
    BS_RETURN_IF_ERROR(writer->appendSteps(steps));
    written += static_cast<int64_t>(batch.size());
    if (step % 200 == 0 || written == events) {
      std::fprintf(stderr, "\rbuilding %lld-event trace: %3.0f%%", static_cast<long long>(events),
                   100.0 * written / events);
    }
  }
  BS_RETURN_IF_ERROR(writer->finishRun(storage::RunStatus::kFinished));
  std::fprintf(stderr, "\n");
  std::printf("trace_file: %s (built in %.1f s)\n", path.c_str(), secondsSince(t0));
  return Status::ok();
}

Status ensureTrace(const std::string& path, int64_t events) {
  {
    auto reader = storage::TraceReader::open(path);
    if (reader.isOk()) {
      auto run = (*reader)->run(1);
      // A file of an older schema is rebuilt: the bench measures this build's.
      if (run.isOk() && run->eventCount == events && run->status == storage::RunStatus::kFinished &&
          (*reader)->schemaVersion() == storage::TraceReader::latestSchemaVersion()) {
        std::printf("trace_file: %s (reused)\n", path.c_str());
        return Status::ok();
      }
    }
  }
  return buildTrace(path, events);
}

// User plus system CPU time of this process so far: on a shared machine it
// says what the work cost when the wall time says how busy the machine was.
double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double peakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
}

// A "Name:   123 kB" line of /proc/self/status in MiB; -1 when absent.
double procStatusMb(const std::string& name) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + ":", 0) == 0) return std::stod(line.substr(name.size() + 1)) / 1024.0;
  }
  return -1;
}

// Samples RssAnon every 5 ms until destroyed: the kernel keeps a peak of
// the whole RSS only, and that includes the reader's memory-mapped file.
class AnonPeakSampler {
 public:
  AnonPeakSampler()
      : thread_([this] {
          while (!stop_) {
            peakMb_ = std::max(peakMb_.load(), procStatusMb("RssAnon"));
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        }) {}
  ~AnonPeakSampler() { stopAndJoin(); }
  double stopAndJoin() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return peakMb_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<double> peakMb_{0};
  std::thread thread_;
};

// The Chrome export of run 1 into `dir` (deleted afterwards).
Status measureExport(storage::TraceReader& reader, const std::string& dir) {
  const std::string out = (std::filesystem::path(dir) / "analysis-export.json").string();
  const auto t0 = std::chrono::steady_clock::now();
  BS_ASSIGN_OR_RETURN(auto stats, analysis::exportChromeTrace(reader, 1, out));
  const double exportS = secondsSince(t0);
  std::error_code ec;
  std::filesystem::remove(out, ec);
  std::printf("export_mb: %.1f\n", stats.bytes / 1e6);
  std::printf("export_s: %.3f\n", exportS);
  std::printf("export_mb_per_s: %.1f\n", stats.bytes / 1e6 / exportS);
  return Status::ok();
}

// The child: report (analysis + JSON), then the export.
Status measure(const std::string& path, const std::string& dir, bool noExport) {
  AnonPeakSampler sampler;
  const double loadBefore = loadAverage();
  const double cpu0 = cpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(path));
  BS_ASSIGN_OR_RETURN(auto report, analysis::analyzeRun(*reader, 1));
  const std::string json = analysis::reportToJson({report}).dump(2);
  const double reportS = secondsSince(t0);
  const double reportCpuS = cpuSeconds() - cpu0;
  const double loadAfter = loadAverage();
  const double rssMb = peakRssMb();
  const double anonPeakMb = sampler.stopAndJoin();
  const double fileMb = procStatusMb("RssFile");
  std::printf("analysed_events: %lld\n", static_cast<long long>(report.run.eventCount));
  std::printf("report_json_bytes: %zu\n", json.size());
  std::printf("report_s: %.3f\n", reportS);
  std::printf("peak_rss_mb: %.1f\n", rssMb);
  std::printf("peak_heap_mb: %.1f\n", anonPeakMb);
  std::printf("mapped_file_mb: %.1f\n", fileMb);
  if (!noExport) BS_RETURN_IF_ERROR(measureExport(*reader, dir));
  std::printf("report_cpu_s: %.3f\n", reportCpuS);
  std::printf("threads: %d\n", analysis::analysisThreads());
  std::printf("load_average: %.2f %.2f\n", loadBefore, loadAfter);
  return Status::ok();
}

// Runs this executable again as `bench analysis --measure-only ...`.
Result<int> measureInChild(const BenchOptions& o, const std::string& dir) {
  const std::string events = std::to_string(o.events);
  std::vector<std::string> args = {"/proc/self/exe", "bench", "analysis", "--events",
                                   events,           "--dir", dir,        "--measure-only"};
  if (o.noExport) args.push_back("--no-export");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = 0;
  if (int rc = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
      rc != 0) {
    return Status::internal(std::string("cannot start the measuring process: ") + strerror(rc));
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return Status::internal("lost the measuring process");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

ExitCode runBench(const BenchOptions& o) {
  namespace fs = std::filesystem;
  const fs::path dir =
      o.dir.empty() ? fs::temp_directory_path() / "bubblescope-bench" : fs::path(o.dir);
  const std::string path = (dir / ("analysis-" + std::to_string(o.events) + ".db")).string();
  Status s;
  if (o.measureOnly) {
    s = measure(path, dir.string(), o.noExport);
  } else {
    std::error_code ec;
    fs::create_directories(dir, ec);
    s = ensureTrace(path, o.events);
    if (s.isOk()) {
      std::printf("events: %lld\nranks: %d\n", static_cast<long long>(o.events), kRanks);
      auto rc = measureInChild(o, dir.string());
      if (rc.isOk()) return *rc;
      s = rc.status();
    }
  }
  if (!s.isOk()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void addBenchAnalysis(Command bench, CommandRunner& runner) {
  Command cmd = bench.subcommand("analysis", "Report and Chrome export of a 64-rank trace");
  auto o = std::make_shared<BenchOptions>();
  cmd.option("--events", o->events, "Events in the trace (default 10M)").positive();
  cmd.option("--dir", o->dir, "Folder for the trace (default: a temporary folder)");
  cmd.flag("--no-export", o->noExport, "Measure the report only");
  cmd.flag("--measure-only", o->measureOnly).hidden();  // internal: the child
  cmd.callback([&runner, o] { runner = [o] { return runBench(*o); }; });
}

}  // namespace bubblescope::cli
