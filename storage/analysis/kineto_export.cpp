#include "storage/analysis/kineto_export.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "storage/analysis/json_text.h"

namespace bubblescope::analysis {
namespace {

using trace_model::EventKind;

// Kineto's "Collective name" of a communication kind (PyTorch's names).
const char* collectiveName(EventKind kind) {
  switch (kind) {
    case EventKind::kAllReduce:
      return "allreduce";
    case EventKind::kReduceScatter:
      return "reduce_scatter";
    case EventKind::kAllGather:
      return "allgather";
    case EventKind::kBroadcast:
      return "broadcast";
    case EventKind::kSend:
      return "send";
    case EventKind::kRecv:
      return "recv";
    case EventKind::kAllToAll:
      return "all_to_all";
    case EventKind::kReduce:
      return "reduce";
    default:
      return nullptr;
  }
}

// "cuda:3" -> 3; -1 for a CPU rank.
int64_t deviceIndex(const std::string& device) {
  if (device.rfind("cuda:", 0) != 0) return -1;
  try {
    return std::stoll(device.substr(5));
  } catch (...) {
    return -1;
  }
}

struct RankFile {
  int64_t hostPid;
  int64_t gpuPid;
  int64_t baseNs;  // baseTimeNanoseconds: ts = time - baseNs
  bool sawProfilerSteps = false;
};

// The run's first time rounded down to a whole second, as Kineto's base is:
// relative ts stay small enough that a double (HTA's pandas) keeps every
// nanosecond, where 1.7e15 µs would be rounded to 0.25 µs.
int64_t baseTimeNs(int64_t firstNs, const std::vector<trace_model::StepRecord>& steps) {
  for (const auto& s : steps) firstNs = std::min(firstNs, s.startNs);
  constexpr int64_t kSecondNs = 1'000'000'000;
  return firstNs > 0 ? firstNs - firstNs % kSecondNs : 0;
}

void appendKey(std::string& t, const char* key) {
  t += ",\"";
  t += key;
  t += "\":";
}

int32_t streamOf(trace_model::Lane lane) {
  return static_cast<int32_t>(lane) - static_cast<int32_t>(trace_model::Lane::kGpuStreamBase);
}

// ,"pid":…,"tid":…,"ts":… of an event: the device and stream for a GPU
// record, the rank's process and the lane otherwise.
void appendWhere(std::string& t, const trace_model::Event& e, const RankFile& f) {
  const bool gpu = trace_model::isGpuStreamLane(e.lane);
  appendKey(t, "pid");
  appendInt(t, gpu ? f.gpuPid : f.hostPid);
  appendKey(t, "tid");
  appendInt(t, gpu ? streamOf(e.lane) : static_cast<int32_t>(e.lane));
  appendKey(t, "ts");
  appendMicros(t, e.startNs - f.baseNs);
}

void appendEvent(std::string& t, const trace_model::Event& e, RankFile& f) {
  const bool gpu = trace_model::isGpuStreamLane(e.lane);
  const char* cat = "cpu_op";
  if (gpu) {
    switch (e.kind) {
      case EventKind::kMemcpy:
        cat = "gpu_memcpy";
        break;
      case EventKind::kMemset:
        cat = "gpu_memset";
        break;
      case EventKind::kOther:
        cat = "gpu_user_annotation";
        break;
      default:
        cat = "kernel";
    }
  } else if (e.lane == trace_model::Lane::kCudaApi) {
    cat = "cuda_runtime";
  } else if (e.name.rfind("ProfilerStep#", 0) == 0) {
    cat = "user_annotation";
    f.sawProfilerSteps = true;
  }
  t += ",\n{\"ph\":\"X\",\"cat\":\"";
  t += cat;
  t += "\",\"name\":";
  appendEscaped(t, e.name);
  appendWhere(t, e, f);
  appendKey(t, "dur");
  appendMicros(t, e.endNs - e.startNs);
  t += ",\"args\":{\"kind\":";
  appendEscaped(t, trace_model::toString(e.kind));
  if (gpu && e.kind != EventKind::kOther) {  // annotations have no stream (HTA: not kernels)
    appendKey(t, "device");
    appendInt(t, f.gpuPid);
    appendKey(t, "stream");
    appendInt(t, streamOf(e.lane));
  }
  if (e.correlationId != 0) {
    appendKey(t, "correlation");
    appendInt(t, e.correlationId);
  }
  if (e.kind == EventKind::kMemcpy || e.kind == EventKind::kMemset) {
    appendKey(t, "bytes");
    appendInt(t, e.bytes);
  } else if (const char* collective = collectiveName(e.kind)) {
    t += ",\"Collective name\":\"";
    t += collective;
    t += "\",\"dtype\":\"Byte\"";
    appendKey(t, "In msg nelems");
    appendInt(t, e.bytes);
    appendKey(t, "Out msg nelems");
    appendInt(t, e.bytes);
    appendKey(t, "Process Group Description");
    appendEscaped(t, trace_model::toString(e.dim));
  }
  t += "}}";
  if (e.correlationId != 0 && (gpu || e.lane == trace_model::Lane::kCudaApi)) {
    t += gpu ? ",\n{\"ph\":\"f\",\"bp\":\"e\"" : ",\n{\"ph\":\"s\"";
    t += ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":";
    appendInt(t, e.correlationId);
    appendWhere(t, e, f);
    t += '}';
  }
}

Status writeRank(storage::TraceReader& reader, const storage::RunRecord& run,
                 const storage::RankInfo& rank, const std::vector<trace_model::StepRecord>& steps,
                 const std::string& gpuName, int64_t baseNs, const std::string& path,
                 KinetoExportStats& stats) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"),
                                                       &std::fclose);
  if (!file) return Status::ioError("cannot write " + path + ": " + std::strerror(errno));
  JsonOut out(file.get(), path);
  std::string& t = out.text();
  const int64_t device = deviceIndex(rank.device);
  RankFile f{rank.pid > 0 ? rank.pid : 100000 + rank.rank, device >= 0 ? device : rank.rank,
             baseNs};
  t += "{\"schemaVersion\":1,\n\"baseTimeNanoseconds\":";
  appendInt(t, baseNs);
  t += ",\n\"deviceProperties\":[";
  if (device >= 0) {
    t += "{\"id\":";
    appendInt(t, device);
    t += ",\"name\":";
    appendEscaped(t, gpuName.empty() ? "GPU" : gpuName);
    t += '}';
  }
  t += "],\n\"distributedInfo\":{\"backend\":";
  appendEscaped(t, run.info.backend == "cuda" ? "nccl" : "gloo");
  t += ", \"rank\": ";  // HTA finds the rank by the text "rank":\s+N, as Kineto writes it
  appendInt(t, rank.rank);
  appendKey(t, "world_size");
  appendInt(t, run.info.worldSize);
  t += "},\n\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
  appendInt(t, f.hostPid);
  t += ",\"tid\":0,\"args\":{\"name\":";
  appendEscaped(t, "rank " + std::to_string(rank.rank) + " " + run.info.name);
  t += "}}";
  BS_RETURN_IF_ERROR(reader.visitEvents(run.id, rank.rank, [&](const trace_model::Event& e) {
    appendEvent(t, e, f);
    ++stats.events;
    return out.maybeFlush();
  }));
  if (!f.sawProfilerSteps) {
    for (const auto& s : steps) {
      if (s.rank != rank.rank) continue;
      trace_model::Event step;
      step.rank = rank.rank;
      step.lane = trace_model::Lane::kCompute;
      step.name = "ProfilerStep#" + std::to_string(s.step);
      step.startNs = s.startNs;
      step.endNs = s.endNs;
      appendEvent(t, step, f);
    }
  }
  t += "\n],\n\"displayTimeUnit\":\"ms\"}\n";
  BS_RETURN_IF_ERROR(out.flush());
  if (std::fflush(file.get()) != 0) {
    return Status::ioError("cannot write " + path + ": " + std::strerror(errno));
  }
  stats.bytes += out.bytes();
  stats.files.push_back(path);
  return Status::ok();
}

}  // namespace

Result<KinetoExportStats> exportKinetoTraces(storage::TraceReader& reader, int64_t runId,
                                             const std::string& outDir) {
  BS_ASSIGN_OR_RETURN(auto run, reader.run(runId));
  BS_ASSIGN_OR_RETURN(auto ranks, reader.ranks(runId));
  BS_ASSIGN_OR_RETURN(auto steps, reader.steps(runId));
  std::error_code ec;
  std::filesystem::create_directories(outDir, ec);
  if (ec) return Status::ioError("cannot create " + outDir + ": " + ec.message());
  const auto layout = nlohmann::json::parse(run.info.layoutJson, nullptr, false);
  std::string gpuName;
  if (layout.is_object() && layout.contains("gpu") && layout["gpu"].is_string()) {
    gpuName = layout["gpu"].get<std::string>();
  }
  BS_ASSIGN_OR_RETURN(const auto range, reader.timeRange(runId));
  const int64_t baseNs = baseTimeNs(range.first, steps);
  KinetoExportStats stats;
  for (const auto& rank : ranks) {
    const std::string path =
        (std::filesystem::path(outDir) / ("rank-" + std::to_string(rank.rank) + ".json")).string();
    BS_RETURN_IF_ERROR(writeRank(reader, run, rank, steps, gpuName, baseNs, path, stats));
  }
  return stats;
}

}  // namespace bubblescope::analysis
