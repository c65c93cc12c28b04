// The wire format of a batch that a rank ships to rank 0: events, step
// records and samples, with each distinct name sent once per batch.
//
// Contract: decodeBatch() accepts exactly what encodeBatch() produces (same
// build, same byte order: ranks of one job run the same binary) and returns
// an error, never undefined behaviour, for any other bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "trace_model/event.h"

namespace bubblescope::tracer {

struct Batch {
  std::vector<trace_model::Event> events;
  std::vector<trace_model::StepRecord> steps;
  std::vector<trace_model::Sample> samples;

  bool empty() const { return events.empty() && steps.empty() && samples.empty(); }
  void clear() {
    events.clear();
    steps.clear();
    samples.clear();
  }
};

std::vector<uint8_t> encodeBatch(const Batch& batch);
Result<Batch> decodeBatch(std::span<const uint8_t> bytes);

}  // namespace bubblescope::tracer
