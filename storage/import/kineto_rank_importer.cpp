#include "storage/import/kineto_rank_importer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bubblescope::import {
namespace {

using trace_model::EventKind;
using trace_model::Lane;

enum class Source { kGpu, kCudaApi, kHost, kUnknown };

Source sourceOf(const std::string& cat) {
  if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
      cat == "gpu_user_annotation") {
    return Source::kGpu;
  }
  if (cat == "cuda_runtime" || cat == "cuda_driver") return Source::kCudaApi;
  if (cat == "cpu_op" || cat == "user_annotation" || cat == "python_function" ||
      cat == "cpu_instant_event" || cat == "Trace" || cat == "Runtime" || cat == "Operator" ||
      cat == "Memcpy" || cat == "Memset") {
    return Source::kHost;
  }
  return Source::kUnknown;
}

// "ProfilerStep#12" -> 12 (HTA: ProfilerStep\s*#\s*(\d+)).
std::optional<int32_t> profilerStep(const std::string& name) {
  if (name.rfind("ProfilerStep", 0) != 0) return std::nullopt;
  size_t i = 12;
  while (i < name.size() && name[i] == ' ') ++i;
  if (i >= name.size() || name[i] != '#') return std::nullopt;
  ++i;
  while (i < name.size() && name[i] == ' ') ++i;
  int64_t n = 0;
  size_t digits = 0;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && digits < 9;
       ++i, ++digits) {
    n = n * 10 + (name[i] - '0');
  }
  if (digits == 0) return std::nullopt;
  return static_cast<int32_t>(n);
}

}  // namespace

KinetoRankImporter::KinetoRankImporter(trace_model::Sink& sink, int32_t rank,
                                       const GroupDims& groups,
                                       std::function<int64_t()> timeOffsetNs)
    : rank_(rank), groups_(groups), sink_(sink), batch_(sink, std::move(timeOffsetNs)) {}

Status KinetoRankImporter::add(const KinetoRecord& r) {
  if (r.ph == "s" || r.ph == "f") {
    if (r.cat == "ac2g") ++stats_.flows;
    return Status::ok();
  }
  if (r.ph != "X") return Status::ok();  // metadata, instants, counters
  if (!r.tsNs) {
    ++stats_.missingTimes;
    return Status::ok();
  }
  int64_t durNs = r.durNs.value_or(0);
  if (durNs < 0) {
    ++stats_.negativeDurations;
    durNs = 0;
  }
  const int64_t startNs = *r.tsNs;
  if (startNs > std::numeric_limits<int64_t>::max() - durNs) {
    ++stats_.missingTimes;
    return Status::ok();
  }
  return addSpan(r, startNs, startNs + durNs);
}

Status KinetoRankImporter::addSpan(const KinetoRecord& r, int64_t startNs, int64_t endNs) {
  trace_model::Event e;
  e.rank = rank_;
  e.name = r.name;
  e.startNs = startNs;
  e.endNs = endNs;
  e.kind = EventKind::kOther;
  Source source = sourceOf(r.cat);
  if (source == Source::kUnknown) {
    ++stats_.unknownCategoryEvents;
    ++stats_.unknownCategories[r.cat];
    source = r.stream >= 0 ? Source::kGpu : Source::kHost;
  }
  switch (source) {
    case Source::kGpu: {
      e.lane = trace_model::gpuStreamLane(
          static_cast<int32_t>(std::clamp<int64_t>(r.stream >= 0 ? r.stream : r.tid, 0, 1 << 20)));
      e.correlationId = r.correlation > 0 ? r.correlation : 0;
      if (device_ < 0 && r.device >= 0) device_ = r.device;
      if (r.cat == "kernel") {
        if (isNcclKernel(r.name)) {
          ++stats_.ncclKernels;
          ++stats_.events;
          if (e.correlationId != 0) launches_.addGpuRecord(e.correlationId, startNs, endNs);
          pendingNccl_.push_back({std::move(e), r});  // described in finish()
          return Status::ok();
        } else {
          ++stats_.kernels;
          e.kind = EventKind::kKernel;
        }
      } else if (r.cat == "gpu_memcpy") {
        ++stats_.memcpys;
        e.kind = EventKind::kMemcpy;
        e.bytes = std::max<int64_t>(r.bytes, 0);
      } else if (r.cat == "gpu_memset") {
        ++stats_.memsets;
        e.kind = EventKind::kMemset;
        e.bytes = std::max<int64_t>(r.bytes, 0);
      }
      if (e.correlationId != 0 && e.kind != EventKind::kOther) {
        launches_.addGpuRecord(e.correlationId, startNs, endNs);
      }
      break;
    }
    case Source::kCudaApi:
      ++stats_.runtimeCalls;
      e.lane = Lane::kCudaApi;
      e.correlationId = r.correlation > 0 ? r.correlation : 0;
      if (e.correlationId != 0) launches_.addLaunch(e.correlationId, startNs, r.tid);
      break;
    case Source::kHost:
    case Source::kUnknown:
      if (r.pid < 0) return Status::ok();  // the profiler's own "Spans" row
      ++stats_.cpuOps;
      if (hostPid_ == 0) hostPid_ = r.pid;
      e.lane = batch_.threadLane(r.tid);
      if (isCommOp(r.name)) {
        commSpans_.add(r.tid, startNs, endNs, commOps_.size());
        commOps_.push_back(r);
      }
      if (auto step = profilerStep(r.name)) {
        cpuSteps_.push_back({rank_, *step, std::nan(""), 0, startNs, endNs});
        ++stats_.steps;
      }
      break;
  }
  ++stats_.events;
  return batch_.add(std::move(e));
}

std::vector<const KinetoRecord*> KinetoRankImporter::launchersOf(int64_t correlation) const {
  std::vector<const KinetoRecord*> out;
  const Launch* l = launches_.find(correlation);
  if (l == nullptr) return out;
  for (size_t item : commSpans_.at(l->tid, l->startNs)) out.push_back(&commOps_[item]);
  return out;
}

Status KinetoRankImporter::resolveNccl() {
  commSpans_.seal();
  for (PendingNccl& p : pendingNccl_) {
    trace_model::Event& e = p.event;
    const NcclDescription d = describeNccl(p.kernel, launchersOf(e.correlationId));
    if (!d.kind) ++stats_.unknownCollectives;
    if (d.sendRecvByName) ++stats_.sendRecvAsSend;
    e.kind = d.kind.value_or(EventKind::kAllReduce);
    e.bytes = d.bytes;
    e.dim = groupDim(d.groupName, d.groupDesc, groups_);
    switch (d.bytesSource) {
      case BytesSource::kKernelArgs:
        ++stats_.ncclBytesFromKernel;
        break;
      case BytesSource::kLauncherArgs:
        ++stats_.ncclBytesFromLauncher;
        break;
      case BytesSource::kInputDims:
        ++stats_.ncclBytesFromInputDims;
        break;
      case BytesSource::kUnknown:
        ++stats_.ncclBytesUnknown;
        break;
    }
    RankImportStats::Group& g = stats_.groups[d.groupName];
    if (g.desc.empty()) g.desc = d.groupDesc;
    if (g.ranks.empty()) g.ranks = d.groupRanks;
    ++g.collectives;
    g.bytes += e.bytes;
    BS_RETURN_IF_ERROR(batch_.add(std::move(e)));
  }
  pendingNccl_.clear();
  return Status::ok();
}

Status KinetoRankImporter::finish(const KinetoHeader& header) {
  launches_.seal();
  BS_RETURN_IF_ERROR(resolveNccl());
  BS_RETURN_IF_ERROR(batch_.flush());
  // Events whose shifted times left int64 were dropped: count them as such.
  stats_.missingTimes += batch_.dropped();
  stats_.events -= batch_.dropped();
  BS_RETURN_IF_ERROR(batch_.appendSteps(launches_.gpuStepWindows(cpuSteps_)));
  trace_model::RankInfo info;
  info.rank = rank_;
  info.pid = hostPid_;
  info.device = device();
  // Coordinates: unknown (-1) unless the user named a group of that
  // dimension (--group); then the rank's position in that group's ranks.
  info.dp = info.tp = info.pp = -1;
  for (const KinetoGroup& g : header.groups) {
    int32_t* coordinate = nullptr;
    switch (groupDim(g.name, g.desc, groups_)) {
      case trace_model::ParallelDim::kDp:
        coordinate = &info.dp;
        break;
      case trace_model::ParallelDim::kTp:
        coordinate = &info.tp;
        break;
      case trace_model::ParallelDim::kPp:
        coordinate = &info.pp;
        break;
      default:
        break;
    }
    auto at = std::find(g.ranks.begin(), g.ranks.end(), int64_t{rank_});
    if (coordinate != nullptr && at != g.ranks.end()) {
      *coordinate = static_cast<int32_t>(at - g.ranks.begin());
    }
  }
  return sink_.describeRank(info);
}

std::string KinetoRankImporter::device() const {
  return device_ >= 0 ? "cuda:" + std::to_string(device_) : "cpu";
}

}  // namespace bubblescope::import
