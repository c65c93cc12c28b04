// make_cli_traces DIR: the trace files the CLI tests of report, compare and
// export read: good.db (two runs), future.db (a newer schema), truncated.db
// and damaged.db (pages overwritten in the middle of the file).
#include <sqlite3.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "storage/trace_writer.h"
#include "trace_model/event.h"

namespace {

using namespace bubblescope;
using trace_model::EventKind;
using trace_model::ParallelDim;

trace_model::Event ev(int32_t rank, EventKind kind, int64_t start, int64_t end, int32_t step,
                      ParallelDim dim = ParallelDim::kNone, int64_t bytes = 0, int32_t peer = -1) {
  trace_model::Event e;
  e.rank = rank;
  e.kind = kind;
  e.lane = trace_model::categoryOf(kind) == trace_model::EventCategory::kCompute
               ? trace_model::Lane::kCompute
               : trace_model::Lane::kPipeline;
  e.name = std::string(trace_model::toString(kind));
  e.startNs = start;
  e.endNs = end;
  e.step = step;
  e.dim = dim;
  e.bytes = bytes;
  e.peer = peer;
  return e;
}

bool check(const Status& s) {
  if (!s.isOk()) std::fprintf(stderr, "make_cli_traces: %s\n", s.message().c_str());
  return s.isOk();
}

// Run 1: a two-stage pipeline (8 events, 3 sends); run 2: one rank, filler
// events so the file spans many pages.
bool writeGood(const std::string& path, int64_t filler) {
  auto writer = storage::TraceWriter::open(path);
  if (!writer.isOk()) return check(writer.status());
  auto& w = **writer;
  auto run = w.beginRun({.name = "pipe",
                         .layoutJson = R"({"pp": 2, "schedule": "gpipe", "micro_batches": 2})",
                         .modelJson = "{}",
                         .backend = "cpu",
                         .worldSize = 2});
  if (!run.isOk()) return check(run.status());
  storage::RankInfo r0, r1;
  r1.rank = 1;
  r1.pp = 1;
  std::vector<trace_model::Event> events;
  std::vector<trace_model::StepRecord> steps;
  for (int32_t step = 0; step < 2; ++step) {
    const int64_t t = 100 * step;
    events.push_back(ev(0, EventKind::kForward, t, t + 40, step));
    events.push_back(ev(0, EventKind::kSend, t + 40, t + 45, step, ParallelDim::kPp, 64, 1));
    events.push_back(ev(1, EventKind::kRecv, t + 40, t + 45, step, ParallelDim::kPp, 64, 0));
    events.push_back(ev(1, EventKind::kBackward, t + 45, t + 95, step));
    steps.push_back({0, step, NAN, 512, t, t + 100});
    steps.push_back({1, step, 3.0 - step, 512, t, t + 100});
  }
  if (!check(w.addRank(r0)) || !check(w.addRank(r1)) || !check(w.appendEvents(events)) ||
      !check(w.appendSteps(steps)) || !check(w.finishRun(storage::RunStatus::kFinished))) {
    return false;
  }
  if (!check(w.beginRun({.name = "single",
                         .layoutJson = "{}",
                         .modelJson = "{}",
                         .backend = "cpu",
                         .worldSize = 1})
                 .status())) {
    return false;
  }
  events.clear();
  for (int64_t i = 0; i < filler; ++i) {
    events.push_back(ev(0, EventKind::kForward, 10 * i, 10 * i + 5, static_cast<int32_t>(i / 100)));
  }
  return check(w.appendEvents(events)) && check(w.finishRun(storage::RunStatus::kFinished));
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_cli_traces DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  for (const char* name : {"good.db", "future.db", "truncated.db", "damaged.db"}) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(dir / (std::string(name) + suffix));
  }
  const std::string good = (dir / "good.db").string();
  if (!writeGood(good, 20)) return 1;

  const std::string future = (dir / "future.db").string();
  if (!writeGood(future, 20)) return 1;
  sqlite3* db = nullptr;
  sqlite3_open(future.c_str(), &db);
  const int rc =
      sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", 0, 0, 0);
  sqlite3_close(db);
  if (rc != SQLITE_OK) return 1;

  // Big enough that the events span many pages; checkpointed on close.
  const std::string big = (dir / "big.db").string();
  fs::remove(big);
  if (!writeGood(big, 20000)) return 1;
  const std::string bytes = readAll(big);
  fs::remove(big);
  writeAll((dir / "truncated.db").string(), bytes.substr(0, bytes.size() / 2 / 4096 * 4096));
  std::string damaged = bytes;
  for (size_t i = damaged.size() / 2; i < damaged.size() / 2 + 8 * 4096; ++i) damaged[i] = '\x5a';
  writeAll((dir / "damaged.db").string(), damaged);
  return 0;
}
