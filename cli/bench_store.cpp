// `bubblescope-cli bench store`: the trace writer against a bare SQLite
// prepared-insert loop over the same rows, and a window query on a big file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/median.h"
#include "storage/insert_baseline.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"

namespace bubblescope::cli {
namespace {

constexpr int32_t kRanks = 64;
constexpr int64_t kEventSpacingNs = 10000;  // per rank: one event every 10 µs
constexpr const char* kNames[] = {"forward",   "backward",  "backward_input", "backward_weight",
                                  "optimizer", "send",      "recv",           "wait",
                                  "allreduce", "allgather", "reduce_scatter", "data"};
constexpr int kNameCount = sizeof(kNames) / sizeof(kNames[0]);

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Event i of a 64-rank run: ranks take turns, each rank's events are disjoint.
trace_model::Event benchEvent(int64_t i) {
  trace_model::Event e;
  e.rank = static_cast<int32_t>(i % kRanks);
  const int64_t seq = i / kRanks;
  e.kind = static_cast<trace_model::EventKind>(seq % 6);
  e.lane = seq % 6 < 5 ? trace_model::Lane::kCompute : trace_model::Lane::kCommunication;
  e.name = kNames[seq % kNameCount];
  e.startNs = seq * kEventSpacingNs + e.rank * 7;
  e.endNs = e.startNs + 8000;
  e.step = static_cast<int32_t>(seq / 1000);
  e.microBatch = static_cast<int32_t>(seq % 8);
  e.stage = e.rank % 4;
  e.bytes = seq % 6 == 5 ? 1 << 20 : 0;
  e.flops = 123456789;
  return e;
}

std::vector<trace_model::Event> benchEvents(int64_t first, int64_t count) {
  std::vector<trace_model::Event> events;
  events.reserve(count);
  for (int64_t i = first; i < first + count; ++i) events.push_back(benchEvent(i));
  return events;
}

Status writeWithWriter(const std::string& path, const std::vector<trace_model::Event>& events) {
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
  BS_RETURN_IF_ERROR(writer->beginRun({.name = "bench", .worldSize = kRanks}).status());
  BS_RETURN_IF_ERROR(writer->appendEvents(events));
  return writer->finishRun(storage::RunStatus::kFinished);
}

// The baseline: the same rows into the same table through the writer's own
// INSERT, one prepared statement in one transaction, names as pre-assigned ids.
Status writeRaw(const std::string& path, const std::vector<trace_model::Event>& events) {
  int64_t runId = 0;
  {
    BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
    BS_ASSIGN_OR_RETURN(runId, writer->beginRun({.name = "raw", .worldSize = kRanks}));
    BS_RETURN_IF_ERROR(writer->finishRun(storage::RunStatus::kFinished));
  }
  return storage::insertEventsBaseline(path, runId, events, kNameCount);
}

// Builds (or reuses) the big file for the window query; progress on stderr.
Status ensureWindowFile(const std::string& path, int64_t events) {
  {
    auto reader = storage::TraceReader::open(path);
    if (reader.isOk()) {
      auto run = (*reader)->run(1);
      // A file of an older schema is rebuilt: its size is not this build's.
      if (run.isOk() && run->eventCount == events &&
          (*reader)->schemaVersion() == storage::TraceReader::latestSchemaVersion()) {
        std::printf("window_file: %s (reused)\n", path.c_str());
        return Status::ok();
      }
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  const auto t0 = std::chrono::steady_clock::now();
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
  BS_RETURN_IF_ERROR(writer->beginRun({.name = "window bench", .worldSize = kRanks}).status());
  constexpr int64_t kChunk = 500000;
  for (int64_t first = 0; first < events; first += kChunk) {
    BS_RETURN_IF_ERROR(writer->appendEvents(benchEvents(first, std::min(kChunk, events - first))));
    std::fprintf(stderr, "\rbuilding %lld-event file: %3.0f%%", static_cast<long long>(events),
                 100.0 * std::min(events, first + kChunk) / events);
  }
  BS_RETURN_IF_ERROR(writer->finishRun(storage::RunStatus::kFinished));
  std::fprintf(stderr, "\n");
  std::printf("window_file: %s (built in %.1f s)\n", path.c_str(), secondsSince(t0));
  return Status::ok();
}

struct Options {
  int64_t events = 1000000;
  int64_t windowFileEvents = 10000000;
  int repetitions = 5;
  std::string dir;
};

ExitCode runBench(const Options& options) {
  namespace fs = std::filesystem;
  const fs::path dir =
      options.dir.empty() ? fs::temp_directory_path() / "bubblescope-bench" : fs::path(options.dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const auto events = benchEvents(0, options.events);
  std::vector<double> writerRates, rawRates;
  for (int rep = 0; rep < options.repetitions; ++rep) {
    for (int which = 0; which < 2; ++which) {
      const std::string path = (dir / (which == 0 ? "writer.db" : "raw.db")).string();
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix, ec);
      const auto t0 = std::chrono::steady_clock::now();
      Status s = which == 0 ? writeWithWriter(path, events) : writeRaw(path, events);
      const double seconds = secondsSince(t0);
      if (!s.isOk()) {
        std::fprintf(stderr, "error: %s\n", s.message().c_str());
        return 1;
      }
      (which == 0 ? writerRates : rawRates).push_back(options.events / seconds);
      fs::remove(path, ec);
    }
  }
  // Each ratio compares two runs made back to back, so load from other
  // processes affects both sides alike; the median drops the outliers.
  std::vector<double> ratios;
  for (size_t i = 0; i < writerRates.size(); ++i) ratios.push_back(writerRates[i] / rawRates[i]);
  std::printf("events: %lld\n", static_cast<long long>(options.events));
  std::printf("events_per_s: %.0f\n", median(writerRates));
  std::printf("raw_sqlite_per_s: %.0f\n", median(rawRates));
  std::printf("writer_ratio: %.3f\n", median(ratios));
  std::fflush(stdout);

  const std::string windowPath =
      (dir / ("window-" + std::to_string(options.windowFileEvents) + ".db")).string();
  if (Status s = ensureWindowFile(windowPath, options.windowFileEvents); !s.isOk()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  auto reader = storage::TraceReader::open(windowPath);
  if (!reader.isOk()) {
    std::fprintf(stderr, "error: %s\n", reader.status().message().c_str());
    return 1;
  }
  // 100k events across 64 ranks, from the middle of the run.
  const int64_t perRank = std::min<int64_t>(100000 / kRanks, options.windowFileEvents / kRanks);
  const int64_t t0 = (options.windowFileEvents / kRanks / 2 - perRank / 2) * kEventSpacingNs;
  const int64_t t1 = t0 + perRank * kEventSpacingNs;
  std::vector<double> ms;
  size_t got = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    auto window = (*reader)->eventsInWindow(1, {}, t0, t1);
    ms.push_back(secondsSince(start) * 1000.0);
    if (!window.isOk()) {
      std::fprintf(stderr, "error: %s\n", window.status().message().c_str());
      return 1;
    }
    got = window->size();
  }
  (*reader).reset();
  // stat() only, after the reader closed (trace_file_access.h); the last
  // connection checkpointed the -wal into the file.
  const auto fileBytes = static_cast<double>(fs::file_size(windowPath, ec));
  std::printf("window_file_events: %lld\n", static_cast<long long>(options.windowFileEvents));
  std::printf("window_events: %zu\n", got);
  std::printf("window_100k_ms: %.1f\n", median(ms));
  std::printf("file_bytes: %.0f\n", fileBytes);
  std::printf("bytes_per_event: %.1f\n", fileBytes / static_cast<double>(options.windowFileEvents));
  return 0;
}

}  // namespace

void addBenchStore(Command bench, CommandRunner& runner) {
  Command cmd = bench.subcommand("store", "Trace writer and window query against raw SQLite");
  auto options = std::make_shared<Options>();
  cmd.option("--events", options->events, "Rows per write measurement").positive();
  cmd.option("--window-file-events", options->windowFileEvents,
             "Events in the file the window query reads")
      .positive();
  cmd.option("--repetitions", options->repetitions, "Alternating runs of each writer").positive();
  cmd.option("--dir", options->dir, "Folder for the files (default: a temporary folder)");
  cmd.callback([&runner, options] { runner = [options] { return runBench(*options); }; });
}

}  // namespace bubblescope::cli
