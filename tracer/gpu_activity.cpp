#include "tracer/gpu_activity.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace bubblescope::tracer {

Result<GpuClockMap> fitGpuClockMap(std::span<const ClockPair> pairs) {
  if (pairs.empty()) return Status::invalidArgument("GPU clock map: no timestamp pairs");
  GpuClockMap map;
  map.gpuZero = pairs.front().gpuNs;
  // Least squares in coordinates relative to the first pair, in doubles:
  // spans of hours stay exact to well under a nanosecond per second.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(pairs.size());
  for (const ClockPair& p : pairs) {
    const double x = static_cast<double>(static_cast<int64_t>(p.gpuNs - map.gpuZero));
    const double y = static_cast<double>(p.hostNs - pairs.front().hostNs);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double varX = sxx - sx * sx / n;
  map.slope = pairs.size() >= 2 && varX > 0 ? (sxy - sx * sy / n) / varX : 1.0;
  map.hostAtZero = static_cast<double>(pairs.front().hostNs) + (sy - map.slope * sx) / n;
  if (map.slope <= 0.5 || map.slope >= 2.0) {
    return Status::corrupt("GPU clock map: implausible slope " + std::to_string(map.slope) +
                           " between the GPU and host clocks");
  }
  double bound = 0.0;
  for (const ClockPair& p : pairs) {
    const double dt = static_cast<double>(static_cast<int64_t>(p.gpuNs - map.gpuZero));
    const double residual = map.hostAtZero + map.slope * dt - static_cast<double>(p.hostNs);
    bound = std::max(
        bound, std::fabs(residual) + 0.5 * static_cast<double>(std::max<int64_t>(p.readNs, 0)));
  }
  map.errorBoundNs = static_cast<int64_t>(std::ceil(bound));
  return map;
}

namespace {

// The function's own name of a kernel name as CUPTI reports it: mangled
// (Itanium ABI: "_Z" then the name's length then the name, as for NCCL's
// "__global__ void ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)")
// or plain (extern "C" kernels, and names demangled elsewhere).
std::string_view unmangledName(std::string_view name) {
  if (!name.starts_with("_Z")) return name;
  size_t i = 2;
  if (i < name.size() && name[i] == 'L') ++i;  // internal linkage
  size_t length = 0;
  const size_t digits = i;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') {
    length = length * 10 + static_cast<size_t>(name[i] - '0');
    if (length > name.size()) return name;
    ++i;
  }
  if (i == digits || length > name.size() - i) return name;
  return name.substr(i, length);
}

}  // namespace

trace_model::EventKind kindOfKernel(const std::string& fullName) {
  const std::string_view name = unmangledName(fullName);
  if (!name.starts_with("nccl")) return trace_model::EventKind::kKernel;
  struct Pattern {
    const char* text;
    trace_model::EventKind kind;
  };
  // ReduceScatter before Reduce: the longer name must win.
  static constexpr Pattern kPatterns[] = {
      {"AllReduce", trace_model::EventKind::kAllReduce},
      {"ReduceScatter", trace_model::EventKind::kReduceScatter},
      {"AllGather", trace_model::EventKind::kAllGather},
      {"Broadcast", trace_model::EventKind::kBroadcast},
      {"AllToAll", trace_model::EventKind::kAllToAll},
      {"Reduce", trace_model::EventKind::kReduce},
      {"SendRecv", trace_model::EventKind::kSend},
      {"Send", trace_model::EventKind::kSend},
      {"Recv", trace_model::EventKind::kRecv},
  };
  for (const Pattern& p : kPatterns) {
    if (name.find(p.text) != std::string_view::npos) return p.kind;
  }
  return trace_model::EventKind::kOther;
}

trace_model::Event toEvent(const GpuActivity& a, const GpuClockMap& map, int32_t rank,
                           const StreamDims& dims) {
  trace_model::Event e;
  e.rank = rank;
  e.lane = trace_model::gpuStreamLane(static_cast<int32_t>(a.streamId));
  e.startNs = map.toHost(a.gpuStartNs);
  e.endNs = std::max(e.startNs, map.toHost(a.gpuEndNs));
  switch (a.kind) {
    case GpuActivityKind::kKernel:
      e.kind = kindOfKernel(a.name);
      e.name = a.name;
      break;
    case GpuActivityKind::kMemcpy:
      e.kind = trace_model::EventKind::kMemcpy;
      e.name = "memcpy";
      e.bytes = static_cast<int64_t>(a.bytes);
      break;
    case GpuActivityKind::kMemset:
      e.kind = trace_model::EventKind::kMemset;
      e.name = "memset";
      e.bytes = static_cast<int64_t>(a.bytes);
      break;
  }
  if (trace_model::categoryOf(e.kind) == trace_model::EventCategory::kCommunication) {
    auto it = dims.find(a.streamId);
    if (it != dims.end()) e.dim = it->second;
  }
  e.correlationId = a.correlationId;
  return e;
}

trace_model::Event toEvent(const LaunchCall& call, int32_t rank) {
  trace_model::Event e;
  e.rank = rank;
  e.lane = trace_model::Lane::kCudaApi;
  e.kind = trace_model::EventKind::kOther;
  e.name = call.name;
  e.startNs = call.startNs;
  e.endNs = std::max(call.startNs, call.endNs);
  e.correlationId = call.correlationId;
  return e;
}

bool isLaunchApi(std::string_view name) {
  while (!name.empty() && name.front() == '_') name.remove_prefix(1);  // "__cudaLaunchKernel"
  for (std::string_view api : {"cuda", "cu"}) {
    if (name.substr(0, api.size()) != api) continue;
    const std::string_view rest = name.substr(api.size());
    const bool launches =
        rest.starts_with("Launch") || rest.starts_with("Memcpy") || rest.starts_with("Memset");
    return launches && rest.find("HostFunc") == std::string_view::npos;
  }
  return false;
}

}  // namespace bubblescope::tracer
