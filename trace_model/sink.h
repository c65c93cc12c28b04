// Sink: where the tracer delivers batches of records (the store's writer on
// rank 0, a test's in-memory vector elsewhere).
//
// Contract: calls on one Sink are not concurrent (the caller serialises them).
// A batch handed to a Sink is durable once flush() returns ok. Times arrive on
// the run's one aligned timeline: a sink never corrects them afterwards.
#pragma once

#include <span>

#include "common/status.h"
#include "trace_model/event.h"

namespace bubblescope::trace_model {

class Sink {
 public:
  virtual ~Sink() = default;
  virtual Status appendEvents(std::span<const Event> events) = 0;
  virtual Status appendSteps(std::span<const StepRecord> steps) = 0;
  virtual Status appendSamples(std::span<const Sample> samples) = 0;
  // Adds or replaces the description of a rank of the current run.
  virtual Status describeRank(const RankInfo& rank) = 0;
  virtual Status flush() = 0;
};

}  // namespace bubblescope::trace_model
