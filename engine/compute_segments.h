// ComputeSegments: a layer's compute recorded as one span per stretch
// between the blocking collectives inside it (tp all-reduces, the MoE
// all-to-alls of expert parallelism), so a collective never sits inside a
// compute span. Off (`on` false): records nothing (the model then records
// one span per layer).
//
// Contract: begin() opens a span (closing an open one first), end() closes
// it; `trace` and `name` outlive the object. The model's thread.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/trace_context.h"

namespace bubblescope::engine {

class ComputeSegments {
 public:
  ComputeSegments(const TraceContext& trace, bool on, trace_model::EventKind kind, const char* name)
      : trace_(trace), on_(on), kind_(kind), name_(name) {}
  void begin(int64_t flops) {
    span_.reset();
    if (on_) span_.emplace(trace_.recorder, trace_.span(kind_, name_, flops));
  }
  void end() { span_.reset(); }
  const TraceContext& trace() const { return trace_; }

 private:
  const TraceContext& trace_;
  bool on_;
  trace_model::EventKind kind_;
  const char* name_;
  std::optional<tracer::ScopedSpan> span_;
};

}  // namespace bubblescope::engine
