#include "trace_model/event.h"

namespace bubblescope::trace_model {

EventCategory categoryOf(EventKind kind) {
  switch (kind) {
    case EventKind::kForward:
    case EventKind::kBackward:
    case EventKind::kBackwardInput:
    case EventKind::kBackwardWeight:
    case EventKind::kOptimizer:
    case EventKind::kRecompute:
    case EventKind::kKernel:
      return EventCategory::kCompute;
    case EventKind::kAllReduce:
    case EventKind::kReduceScatter:
    case EventKind::kAllGather:
    case EventKind::kBroadcast:
    case EventKind::kSend:
    case EventKind::kRecv:
    case EventKind::kAllToAll:
    case EventKind::kReduce:
    case EventKind::kMemcpy:
      return EventCategory::kCommunication;
    case EventKind::kWait:
      return EventCategory::kWait;
    case EventKind::kDataLoad:
    case EventKind::kMemset:
    case EventKind::kOther:
      return EventCategory::kOther;
  }
  return EventCategory::kOther;
}

std::string_view toString(EventKind kind) {
  switch (kind) {
    case EventKind::kForward: return "forward";
    case EventKind::kBackward: return "backward";
    case EventKind::kBackwardInput: return "backward_input";
    case EventKind::kBackwardWeight: return "backward_weight";
    case EventKind::kOptimizer: return "optimizer";
    case EventKind::kRecompute: return "recompute";
    case EventKind::kAllReduce: return "all_reduce";
    case EventKind::kReduceScatter: return "reduce_scatter";
    case EventKind::kAllGather: return "all_gather";
    case EventKind::kBroadcast: return "broadcast";
    case EventKind::kSend: return "send";
    case EventKind::kRecv: return "recv";
    case EventKind::kWait: return "wait";
    case EventKind::kDataLoad: return "data_load";
    case EventKind::kKernel: return "kernel";
    case EventKind::kMemcpy: return "memcpy";
    case EventKind::kMemset: return "memset";
    case EventKind::kOther: return "other";
    case EventKind::kAllToAll: return "all_to_all";
    case EventKind::kReduce: return "reduce";
  }
  return "unknown";
}

std::string_view toString(ParallelDim dim) {
  switch (dim) {
    case ParallelDim::kNone: return "none";
    case ParallelDim::kDp: return "dp";
    case ParallelDim::kTp: return "tp";
    case ParallelDim::kPp: return "pp";
    case ParallelDim::kZero: return "zero";
    case ParallelDim::kEp: return "ep";
    case ParallelDim::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string_view toString(Lane lane) {
  switch (lane) {
    case Lane::kCompute: return "compute";
    case Lane::kCommunication: return "communication";
    case Lane::kPipeline: return "pipeline";
    case Lane::kData: return "data";
    case Lane::kCudaApi:
      return "cuda api";
    default: break;
  }
  if (isGpuStreamLane(lane)) return "gpu";
  return isHostThreadLane(lane) ? "cpu thread" : "unknown";
}

bool isValid(EventKind kind) {
  auto v = static_cast<int32_t>(kind);
  return v >= 0 && v < kEventKindCount;
}

bool isValid(ParallelDim dim) {
  auto v = static_cast<int32_t>(dim);
  return v >= 0 && v < kParallelDimCount;
}

}  // namespace bubblescope::trace_model
