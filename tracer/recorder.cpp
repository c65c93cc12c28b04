#include "tracer/recorder.h"

namespace bubblescope::tracer {

std::vector<Event> Recorder::drain() {
  std::vector<Event> events;
  events.reserve(spans_.size());
  for (const RawSpan& s : spans_) {
    Event e;
    e.rank = rank_;
    e.lane = s.info.lane;
    e.kind = s.info.kind;
    e.name = s.info.name;
    e.startNs = s.startNs;
    e.endNs = s.endNs;
    e.step = s.info.step;
    e.microBatch = s.info.microBatch;
    e.stage = s.info.stage;
    e.chunk = s.info.chunk;
    e.dim = s.info.dim;
    e.bytes = s.info.bytes;
    e.flops = s.info.flops;
    e.peer = s.info.peer;
    events.push_back(std::move(e));
  }
  spans_.clear();
  return events;
}

}  // namespace bubblescope::tracer
