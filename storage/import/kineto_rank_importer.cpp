#include "storage/import/kineto_rank_importer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bubblescope::import {
namespace {

using trace_model::EventKind;
using trace_model::Lane;

constexpr size_t kBatchEvents = 8192;

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

const KinetoRankImporter::Launch* KinetoRankImporter::findLaunch(const std::vector<Launch>& sorted,
                                                                 int64_t correlation) {
  auto l = std::lower_bound(sorted.begin(), sorted.end(), correlation,
                            [](const Launch& a, int64_t c) { return a.correlation < c; });
  return l == sorted.end() || l->correlation != correlation ? nullptr : &*l;
}

KinetoRankImporter::KinetoRankImporter(trace_model::Sink& sink, int32_t rank,
                                       const GroupDims& groups,
                                       std::function<int64_t()> timeOffsetNs)
    : sink_(sink), rank_(rank), groups_(groups), timeOffsetNs_(std::move(timeOffsetNs)) {
  batch_.reserve(kBatchEvents);
}

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
          if (e.correlationId != 0) gpuSpans_.push_back({e.correlationId, startNs, endNs});
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
        gpuSpans_.push_back({e.correlationId, startNs, endNs});
      }
      break;
    }
    case Source::kCudaApi:
      ++stats_.runtimeCalls;
      e.lane = Lane::kCudaApi;
      e.correlationId = r.correlation > 0 ? r.correlation : 0;
      if (e.correlationId != 0) launches_.push_back({e.correlationId, startNs, r.tid});
      break;
    case Source::kHost:
    case Source::kUnknown:
      if (r.pid < 0) return Status::ok();  // the profiler's own "Spans" row
      ++stats_.cpuOps;
      if (hostPid_ == 0) hostPid_ = r.pid;
      e.lane = threadLane(r.tid);
      if (isCommOp(r.name)) commOps_.push_back({r.tid, startNs, endNs, r});
      if (auto step = profilerStep(r.name)) {
        cpuSteps_.push_back({rank_, *step, std::nan(""), 0, startNs, endNs});
        ++stats_.steps;
      }
      break;
  }
  ++stats_.events;
  batch_.push_back(std::move(e));
  if (batch_.size() >= kBatchEvents) return flushEvents();
  return Status::ok();
}

trace_model::Lane KinetoRankImporter::threadLane(int64_t tid) {
  auto [it, inserted] = threadIndex_.emplace(tid, static_cast<int32_t>(threadIndex_.size()));
  return trace_model::hostThreadLane(it->second);
}

int64_t KinetoRankImporter::offsetNs() {
  if (!offsetNs_) offsetNs_ = timeOffsetNs_();
  return *offsetNs_;
}

void KinetoRankImporter::shiftBatch() {
  const int64_t offset = offsetNs();
  if (offset == 0) return;
  const size_t before = batch_.size();
  std::erase_if(batch_, [offset](trace_model::Event& e) {
    return __builtin_add_overflow(e.startNs, offset, &e.startNs) ||
           __builtin_add_overflow(e.endNs, offset, &e.endNs);
  });
  stats_.missingTimes += static_cast<int64_t>(before - batch_.size());
  stats_.events -= static_cast<int64_t>(before - batch_.size());
}

Status KinetoRankImporter::flushEvents() {
  if (batch_.empty()) return Status::ok();
  shiftBatch();
  Status s = sink_.appendEvents(batch_);
  batch_.clear();
  return s;
}

std::vector<trace_model::StepRecord> KinetoRankImporter::stepRecords() const {
  std::vector<trace_model::StepRecord> steps = cpuSteps_;
  std::sort(steps.begin(), steps.end(),
            [](const auto& a, const auto& b) { return a.startNs < b.startNs; });
  if (steps.empty() || gpuSpans_.empty()) return steps;

  // First start and last end of the GPU work launched in each step.
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> first(steps.size(), kNone), last(steps.size(), -kNone);
  for (const GpuSpan& g : gpuSpans_) {
    const Launch* l = findLaunch(launches_, g.correlation);
    if (l == nullptr) continue;
    const int64_t launchNs = l->startNs;
    auto s = std::upper_bound(steps.begin(), steps.end(), launchNs,
                              [](int64_t t, const auto& step) { return t < step.startNs; });
    if (s == steps.begin()) continue;
    const size_t i = static_cast<size_t>(s - steps.begin()) - 1;
    if (launchNs >= steps[i].endNs) continue;
    first[i] = std::min(first[i], g.startNs);
    last[i] = std::max(last[i], g.endNs);
  }
  // A step's GPU window runs from its first GPU record to the next step's
  // first (so the gaps between steps count as idle, as in HTA), the last
  // step's to its last record's end.
  for (size_t i = 0; i < steps.size(); ++i) {
    if (first[i] == kNone) continue;
    int64_t end = last[i];
    for (size_t j = i + 1; j < steps.size(); ++j) {
      if (first[j] != kNone) {
        end = std::max(first[j], first[i]);
        break;
      }
    }
    steps[i].startNs = first[i];
    steps[i].endNs = end;
  }
  return steps;
}

std::vector<const KinetoRecord*> KinetoRankImporter::launchersOf(int64_t correlation) const {
  std::vector<const KinetoRecord*> out;
  const Launch* l = findLaunch(launches_, correlation);
  if (l == nullptr) return out;
  // commOps_ is sorted by start: the ops that began at or before the launch,
  // latest (innermost) first, that are still open at the launch.
  auto it = std::upper_bound(commOps_.begin(), commOps_.end(), l->startNs,
                             [](int64_t t, const CommOp& op) { return t < op.startNs; });
  while (it != commOps_.begin()) {
    --it;
    if (l->startNs - it->startNs > maxCommOpNs_) break;
    if (it->tid == l->tid && it->endNs >= l->startNs) out.push_back(&it->record);
  }
  return out;
}

Status KinetoRankImporter::resolveNccl() {
  std::sort(commOps_.begin(), commOps_.end(),
            [](const CommOp& a, const CommOp& b) { return a.startNs < b.startNs; });
  maxCommOpNs_ = 0;
  for (const CommOp& op : commOps_) maxCommOpNs_ = std::max(maxCommOpNs_, op.endNs - op.startNs);
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
    batch_.push_back(std::move(e));
    if (batch_.size() >= kBatchEvents) BS_RETURN_IF_ERROR(flushEvents());
  }
  pendingNccl_.clear();
  commOps_.clear();
  return Status::ok();
}

Status KinetoRankImporter::finish(const KinetoHeader& header) {
  std::sort(launches_.begin(), launches_.end(),
            [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
  BS_RETURN_IF_ERROR(resolveNccl());
  BS_RETURN_IF_ERROR(flushEvents());
  auto steps = stepRecords();
  const int64_t offset = offsetNs();
  std::erase_if(steps, [offset](trace_model::StepRecord& s) {
    return __builtin_add_overflow(s.startNs, offset, &s.startNs) ||
           __builtin_add_overflow(s.endNs, offset, &s.endNs);
  });
  BS_RETURN_IF_ERROR(sink_.appendSteps(steps));
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
