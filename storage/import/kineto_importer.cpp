#include "storage/import/kineto_importer.h"

#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "storage/import/async_sink.h"
#include "storage/import/base_time_scan.h"
#include "storage/import/kineto_parser.h"
#include "storage/import/trace_file_stream.h"

namespace bubblescope::import {
namespace {

constexpr int64_t kProgressRecords = 1 << 16;

// The run as a whole: begun at the first file's first event.
class RunImport {
 public:
  RunImport(storage::TraceWriter& writer, const std::vector<std::string>& paths,
            const ImportOptions& options, const GroupDims& groups)
      : paths_(paths), options_(options), groups_(groups), run_(writer) {}

  Status importFile(size_t index);
  Status finish();
  Status fail(const Status& error) { return run_.fail(error); }
  ImportSummary& summary() { return summary_; }

 private:
  Status beginRun(const KinetoHeader& header);
  Result<int32_t> resolveRank(size_t index, const KinetoHeader& header, ImportedFile& file);

  const std::vector<std::string>& paths_;
  const ImportOptions& options_;
  const GroupDims& groups_;
  ImportRun run_;  // writes on a thread while the next events parse
  ImportSummary summary_;
};

Status RunImport::beginRun(const KinetoHeader& header) {
  if (run_.begun()) return Status::ok();
  storage::RunInfo info;
  info.name = options_.runName.empty() ? defaultRunName(paths_) : options_.runName;
  nlohmann::ordered_json layout = {{"source", "kineto"}};
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& p : paths_) files.push_back(baseName(p));
  layout["files"] = files;
  if (!header.backend.empty()) layout["distributed_backend"] = header.backend;
  if (!header.deviceNames.empty()) layout["gpu"] = header.deviceNames.front();
  // The job's process groups (distributedInfo.pg_config) with the dimension
  // the user gave them; the run's layout degrees stay unknown (docs/import.md).
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const KinetoGroup& g : header.groups) {
    const auto dim = groupDim(g.name, g.desc, groups_);
    groups.push_back({{"name", g.name},
                      {"desc", g.desc},
                      {"size", g.size},
                      {"ranks", g.ranks},
                      {"dim", std::string(trace_model::toString(dim))}});
  }
  if (!groups.empty()) layout["process_groups"] = groups;
  info.layoutJson = layout.dump();
  info.modelJson = "{}";
  info.imported = true;
  const bool gpu = !header.deviceNames.empty() || header.backend == "nccl";
  info.backend = gpu ? "cuda" : "cpu";
  const int64_t files64 = static_cast<int64_t>(paths_.size());
  info.worldSize = static_cast<int32_t>(std::max(header.worldSize.value_or(files64), files64));
  BS_ASSIGN_OR_RETURN(summary_.runId, run_.begin(info));
  summary_.format = "kineto";
  summary_.worldSize = info.worldSize;
  if (!header.worldSize) {
    summary_.warnings.push_back(
        "no distributedInfo.world_size: the world size is the number of files (" +
        std::to_string(files64) + ")");
  }
  return Status::ok();
}

Result<int32_t> RunImport::resolveRank(size_t index, const KinetoHeader& header,
                                       ImportedFile& file) {
  int64_t rank = static_cast<int64_t>(index);
  file.rankSource = "order";
  if (header.rank) {
    rank = *header.rank;
    file.rankSource = "distributedInfo";
  } else if (auto r = rankFromFileName(file.path)) {
    rank = *r;
    file.rankSource = "file name";
  }
  BS_ASSIGN_OR_RETURN(const int32_t r32, run_.claimRank(rank, file.rankSource, file.path));
  if (file.rankSource != "distributedInfo") {
    summary_.warnings.push_back(baseName(file.path) + ": no distributedInfo.rank; rank " +
                                std::to_string(rank) + " from the " + file.rankSource);
  }
  return r32;
}

Status RunImport::importFile(size_t index) {
  const std::string& path = paths_[index];
  BS_ASSIGN_OR_RETURN(auto input, TraceFileStream::open(path));
  ImportedFile file;
  file.path = path;
  // Kineto writes baseTimeNanoseconds after the events: a thread reads it
  // from the file's tail while the parse begins (used unless it came first).
  std::future<std::optional<int64_t>> baseScan =
      std::async(std::launch::async, scanBaseTimeNs, path);
  std::unique_ptr<KinetoRankImporter> rank;
  int64_t records = 0;
  ImportProgress progress{index, paths_.size(), &path, 0, input->fileBytes()};
  auto start = [&](const KinetoHeader& header) -> Status {
    BS_RETURN_IF_ERROR(beginRun(header));
    BS_ASSIGN_OR_RETURN(file.rank, resolveRank(index, header, file));
    auto offset = [&file, &baseScan, first = header.baseTimeNs] {
      file.baseTimeNs = first ? first : baseScan.get();
      return file.baseTimeNs.value_or(0);
    };
    rank = std::make_unique<KinetoRankImporter>(run_.sink(), file.rank, groups_, offset);
    return Status::ok();
  };
  KinetoCallbacks callbacks;
  callbacks.onHeader = start;
  callbacks.onRecord = [&](const KinetoRecord& r) -> Status {
    if (options_.progress && ++records % kProgressRecords == 0) {
      progress.bytesRead = input->bytesRead();
      progress.textBytes = input->textBytes();
      options_.progress(progress);
    }
    return rank->add(r);
  };
  auto header = parseKineto(input->stream(), callbacks);
  if (!input->error().empty()) return Status::corrupt(input->error());
  if (!header.isOk()) return header.status();
  if (!rank) BS_RETURN_IF_ERROR(start(*header));  // a trace without events
  if (header->rank && file.rankSource != "distributedInfo") {
    summary_.warnings.push_back(
        baseName(path) + ": distributedInfo (rank " + std::to_string(*header->rank) +
        ") comes after the events; they were stored as rank " + std::to_string(file.rank));
  }
  BS_RETURN_IF_ERROR(rank->finish(*header));
  if (header->baseTimeNs && header->baseTimeNs != file.baseTimeNs) {
    summary_.warnings.push_back(
        baseName(path) + ": baseTimeNanoseconds lies more than " +
        std::to_string(kBaseTimeTailBytes >> 20) +
        " MiB before the file's end (or differs from its first value); its times are stored "
        "unshifted");
  }
  file.device = rank->device();
  if (!header->deviceNames.empty()) file.gpuName = header->deviceNames.front();
  file.stats = rank->stats();
  const RankImportStats& s = file.stats;
  const std::string name = baseName(path);
  if (s.negativeDurations > 0) {
    summary_.warnings.push_back(name + ": " + std::to_string(s.negativeDurations) +
                                " events end before they start; kept as zero-length spans");
  }
  if (s.missingTimes > 0) {
    summary_.warnings.push_back(name + ": " + std::to_string(s.missingTimes) +
                                " events without a usable ts were skipped");
  }
  for (const auto& [cat, count] : s.unknownCategories) {
    summary_.warnings.push_back(name + ": " + std::to_string(count) + " events of category '" +
                                cat + "' kept as generic spans");
  }
  if (s.unknownCollectives > 0) {
    summary_.warnings.push_back(name + ": " + std::to_string(s.unknownCollectives) +
                                " NCCL kernels of unknown collective stored as all-reduce");
  }
  const auto count = [](int64_t n) { return std::to_string(n); };
  if (s.ncclBytesFromInputDims > 0) {
    summary_.warnings.push_back(
        name + ": " + count(s.ncclBytesFromInputDims) +
        " NCCL kernels carry no message sizes (older PyTorch); their bytes are the largest "
        "tensor (Input Dims x Input type) of the record_param_comms, nccl:* or c10d::* ops "
        "that launched them");
  }
  if (s.ncclBytesUnknown > 0) {
    summary_.warnings.push_back(name + ": " + count(s.ncclBytesUnknown) +
                                " NCCL kernels have no message size (absent or 0) in their "
                                "arguments or their launching ops; stored with 0 bytes");
  }
  if (s.sendRecvAsSend > 0) {
    summary_.warnings.push_back(name + ": " + count(s.sendRecvAsSend) +
                                " SendRecv kernels with no record_param_comms naming send or "
                                "recv; stored as send");
  }
  if (s.steps == 0) {
    summary_.warnings.push_back(name + ": no ProfilerStep annotations; the rank is one step");
  }
  summary_.events += s.events;
  progress.bytesRead = input->bytesRead();
  progress.textBytes = input->textBytes();
  if (options_.progress) options_.progress(progress);
  summary_.files.push_back(std::move(file));
  return Status::ok();
}

Status RunImport::finish() {
  size_t withBase = 0;
  for (const ImportedFile& f : summary_.files) withBase += f.baseTimeNs.has_value();
  if (withBase > 0 && withBase < summary_.files.size()) {
    summary_.warnings.push_back(
        std::to_string(summary_.files.size() - withBase) + " of " +
        std::to_string(summary_.files.size()) +
        " files have no baseTimeNanoseconds: their times are stored as written, the others' "
        "shifted by it; the ranks may not line up");
  }
  return run_.finish();
}

}  // namespace

Result<ImportSummary> importKineto(storage::TraceWriter& writer,
                                   const std::vector<std::string>& paths,
                                   const ImportOptions& options) {
  if (paths.empty()) return Status::invalidArgument("no trace files to import");
  BS_ASSIGN_OR_RETURN(const GroupDims groups, parseGroupDims(options.groups));
  RunImport run(writer, paths, options, groups);
  for (size_t i = 0; i < paths.size(); ++i) {
    Status s = run.importFile(i);
    if (!s.isOk()) return run.fail(s.withContext(paths[i]));
  }
  BS_RETURN_IF_ERROR(run.finish());
  return std::move(run.summary());
}

}  // namespace bubblescope::import
