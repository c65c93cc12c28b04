// TraceReader: read-only access to a trace file, also while a writer appends.
//
// Contract: opening checks that the file is a Bubblescope trace of a schema
// this build reads; every error is one message naming the file and the
// problem. Queries return value structs; nothing here returns SQL handles.
// Not thread-safe: one reader per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/run_info.h"
#include "trace_model/event.h"
#include "trace_model/step_window.h"

namespace bubblescope::storage {

// A page of events in insertion order, for following a growing file.
struct EventPage {
  std::vector<trace_model::Event> events;
  int64_t cursor = 0;  // pass back to eventsAfter() to get what follows
};

// An event reduced to where and what it is, its name as an id instead of a
// string and without its counters: what a whole-run overview bins
// (TraceReader::spansAfter). 48 bytes.
struct EventSpan {
  int64_t startNs = 0;
  int64_t endNs = 0;
  int32_t rank = 0;
  int32_t chunk = -1;
  trace_model::Lane lane = trace_model::Lane::kCompute;
  trace_model::EventKind kind = trace_model::EventKind::kForward;
  trace_model::ParallelDim dim = trace_model::ParallelDim::kNone;
  // The name's id in this file (names are stored once each): equal ids, equal
  // names; TraceReader::eventName() gives the string.
  int64_t nameId = 0;

  bool operator==(const EventSpan&) const = default;
};

// A page of spans in insertion order; the cursor is eventsAfter()'s.
struct SpanPage {
  std::vector<EventSpan> spans;
  int64_t cursor = 0;
};

// Where one rank spent one step, from the events' step field: the rank's
// StepWindow, the first start and the last end of its events tagged with
// that step.
struct StepSpan {
  int32_t rank = 0;
  trace_model::StepWindow window;

  bool operator==(const StepSpan&) const = default;
};

// The largest value of one sample series on one rank.
struct SeriesPeak {
  int32_t rank = 0;
  double value = 0.0;

  bool operator==(const SeriesPeak&) const = default;
};

// Called once per event; a non-ok Status stops the visit and is returned.
using EventVisitor = std::function<Status(const trace_model::Event&)>;

class TraceReader {
 public:
  static Result<std::unique_ptr<TraceReader>> open(const std::string& path);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  int32_t schemaVersion() const;
  // The schema this build writes (files of older ones are read as they are).
  static int32_t latestSchemaVersion();
  const std::string& path() const;  // the trace file, as given to open()
  Result<std::vector<RunRecord>> runs();
  Result<RunRecord> run(int64_t runId);
  Result<std::vector<RankInfo>> ranks(int64_t runId);
  Result<std::vector<trace_model::StepRecord>> steps(int64_t runId);
  // Samples of one rank (all ranks when rank < 0), optionally of one name.
  Result<std::vector<trace_model::Sample>> samples(int64_t runId, int32_t rank = -1,
                                                   const std::string& name = "");

  // Events of `ranks` (all ranks when empty) that overlap [t0Ns, t1Ns),
  // ordered by rank then start time.
  Result<std::vector<trace_model::Event>> eventsInWindow(int64_t runId,
                                                         const std::vector<int32_t>& ranks,
                                                         int64_t t0Ns, int64_t t1Ns);
  // Up to `limit` events appended after `cursor` (0 = from the start).
  Result<EventPage> eventsAfter(int64_t runId, int64_t cursor, int64_t limit = 100000);
  // eventsAfter() without the names: the same events, cursor and order as
  // EventSpan, decoded in bulk from the blocks with no string per event.
  Result<SpanPage> spansAfter(int64_t runId, int64_t cursor, int64_t limit = 100000);
  // The name of EventSpan::nameId `nameId` (one query the first time, cached
  // after); Corrupt when the file has no such name.
  Result<std::string> eventName(int64_t nameId);
  // Streams the events of one rank in start order (ties by insertion order),
  // one at a time: memory stays constant however many events the rank has.
  // The Event passed to `visit` is only valid during the call.
  Status visitEvents(int64_t runId, int32_t rank, const EventVisitor& visit);
  // The events of one rank that carry `correlationId` (Event::correlationId):
  // a launch call and the GPU records it launched, in start order. Empty for
  // 0 and for v1 files (they hold no correlation). Uses an index.
  Result<std::vector<trace_model::Event>> linkedEvents(int64_t runId, int32_t rank,
                                                       int64_t correlationId);
  // Per rank and step (step >= 0), [first start, last end] of the events
  // tagged with that step, ordered by rank then step. Aggregated in SQL.
  Result<std::vector<StepSpan>> stepSpans(int64_t runId);
  // The largest value of series `name` per rank, ordered by rank; ranks
  // without that series are absent. Aggregated in SQL.
  Result<std::vector<SeriesPeak>> samplePeaks(int64_t runId, const std::string& name);
  // [first start, last end] of a run's committed events; {0, 0} when none.
  Result<std::pair<int64_t, int64_t>> timeRange(int64_t runId);

 private:
  class Impl;
  explicit TraceReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace bubblescope::storage
