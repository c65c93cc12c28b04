// The timeline's all-to-all lane: a rank's expert-parallel communication
// (spans of dimension ep on its communication lane: the dispatch and combine
// all-to-alls of its MoE blocks, and their waits) drawn on a row of its own,
// labelled "all-to-all", right below the rank's communication row, so
// it is never mixed with the dp/tp gradient collectives.
//
// The lane is the GUI's (a row key), never stored: trace files keep the
// event's own lane (trace_model::Lane::kCommunication); negative so it cannot
// meet a stored lane.
#pragma once

#include <cstdint>

#include "trace_model/event.h"

namespace bubblescope::gui {

inline constexpr int32_t kAllToAllLane = -2;

// The row key of an event: kAllToAllLane for ep spans on the communication
// lane, else the event's lane.
inline int32_t timelineLaneOf(trace_model::Lane lane, trace_model::ParallelDim dim) {
  if (lane == trace_model::Lane::kCommunication && dim == trace_model::ParallelDim::kEp)
    return kAllToAllLane;
  return static_cast<int32_t>(lane);
}
inline int32_t timelineLaneOf(const trace_model::Event& e) {
  return timelineLaneOf(e.lane, e.dim);
}

// Row order within a rank: the stored lanes in their order, the all-to-all
// lane right after the communication lane.
inline int64_t laneOrderKey(int32_t lane) {
  if (lane == kAllToAllLane)
    return 2 * int64_t{static_cast<int32_t>(trace_model::Lane::kCommunication)} + 1;
  return 2 * int64_t{lane};
}

}  // namespace bubblescope::gui
