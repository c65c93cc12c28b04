// TraceWriter: appends runs, ranks, events, steps and samples to a trace file.
//
// Contract:
// - One TraceWriter per file per process; not thread-safe (the tracer's rank-0
//   thread owns it). Other processes may read the file at the same time.
// - Appends are buffered in an open transaction and committed every
//   `batchEvents` rows, every `maxBatchMs` of wall time, on flush(), on
//   finishRun() and on destruction. A batch is durable once committed: a writer
//   killed with SIGKILL loses only its uncommitted batch.
// - The file is SQLite in WAL mode (readable while it grows). An existing
//   Bubblescope trace is appended to, migrated first if it has an older
//   schema (schema.h); a file that is not one (another program's database, a
//   corrupt or newer file) is refused untouched.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/result.h"
#include "storage/run_info.h"
#include "trace_model/sink.h"

namespace bubblescope::storage {

struct WriterOptions {
  int64_t batchEvents = 16384;  // rows per committed transaction
  int64_t maxBatchMs = 250;     // commit at least this often while appending
};

class TraceWriter final : public trace_model::Sink {
 public:
  static Result<std::unique_ptr<TraceWriter>> open(const std::string& path,
                                                   WriterOptions options = {});
  ~TraceWriter() override;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Starts a run (status running) and makes it the target of the appends.
  Result<int64_t> beginRun(const RunInfo& info);
  // Makes an existing running run the target of the appends, with this
  // process as its writer: the launcher begins a run, rank 0 attaches to it.
  Status attachRun(int64_t runId);
  // Commits, and stops being the target of the appends without ending the
  // run: the launcher begins a run for rank 0 to attach to, and keeps its
  // writer only to end the run when rank 0 cannot (endDetachedRun).
  Status detachRun();
  // Ends a run this writer does not own (its writer died or never came):
  // the launcher marks a job failed and names the rank. An already ended run
  // is an error and stays as it is.
  Status endDetachedRun(int64_t runId, RunStatus status, const std::string& error);
  Status addRank(const RankInfo& rank);
  Status describeRank(const RankInfo& rank) override { return addRank(rank); }

  Status appendEvents(std::span<const trace_model::Event> events) override;
  Status appendSteps(std::span<const trace_model::StepRecord> steps) override;
  Status appendSamples(std::span<const trace_model::Sample> samples) override;
  Status flush() override;

  // Commits everything and marks the current run finished, or failed with
  // `error` (one message naming the problem, e.g. the failed rank).
  Status finishRun(RunStatus status, const std::string& error = "");

  int64_t currentRunId() const;
  const std::string& path() const;

 private:
  class Impl;
  explicit TraceWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace bubblescope::storage
