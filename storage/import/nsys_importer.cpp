#include "storage/import/nsys_importer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "storage/import/import_run.h"
#include "storage/import/nccl_collective.h"
#include "storage/import/nsys_export.h"
#include "storage/import/nsys_rank_reader.h"
#include "storage/import/nsys_steps.h"

namespace bubblescope::import {
namespace {

struct ProbedFile {
  std::string version;  // NsysExport::versionText()
  bool knownSchema = true;
  NsysProbe probe;
};

std::string seconds(int64_t ns) {
  char text[64];
  std::snprintf(text, sizeof text, "%+.6f s", static_cast<double>(ns) / 1e9);
  return text;
}

}  // namespace

Result<ImportSummary> importNsys(storage::TraceWriter& writer,
                                 const std::vector<std::string>& paths,
                                 const ImportOptions& options) {
  if (paths.empty()) return Status::invalidArgument("no trace files to import");
  BS_ASSIGN_OR_RETURN(const GroupDims groups, parseGroupDims(options.groups));
  BS_ASSIGN_OR_RETURN(const StepRangePattern steps, StepRangePattern::compile(options.stepRange));
  if (options.rank && paths.size() != 1) {
    return Status::invalidArgument("--rank names the rank of one file; " +
                                   std::to_string(paths.size()) + " files were given");
  }
  ImportSummary summary;
  summary.format = "nsys";
  ImportRun run(writer);

  // Every file is checked before anything is written.
  std::vector<ProbedFile> probed;
  for (const std::string& path : paths) {
    BS_ASSIGN_OR_RETURN(auto file, NsysExport::open(path));
    NsysRankReader reader(*file, groups, steps);
    BS_ASSIGN_OR_RETURN(NsysProbe probe, reader.probe());
    probed.push_back({file->versionText(), file->knownSchema(), std::move(probe)});
  }

  // Ranks.
  int32_t maxRank = -1;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string name = baseName(paths[i]);
    const NsysProbe& p = probed[i].probe;
    ImportedFile file;
    file.path = paths[i];
    int64_t rank = static_cast<int64_t>(i);
    file.rankSource = "order";
    if (options.rank) {
      rank = *options.rank;
      file.rankSource = "--rank";
      if (p.rank && *p.rank != rank) {
        summary.warnings.push_back(name + ": --rank " + std::to_string(rank) + " overrides rank " +
                                   std::to_string(*p.rank) + " from its " + p.rankSource);
      }
    } else if (p.rank) {
      rank = *p.rank;
      file.rankSource = p.rankSource;
    } else if (auto r = rankFromNsysFileName(paths[i])) {
      rank = *r;
      file.rankSource = "file name";
    }
    if (file.rankSource == "order" || file.rankSource == "file name") {
      summary.warnings.push_back(name + ": no MPI_RANKS table or \"MPI Rank N\" thread name; rank " +
                                 std::to_string(rank) + " from the " + file.rankSource);
    }
    auto claimed = run.claimRank(rank, file.rankSource, file.path);
    if (!claimed.isOk()) return claimed.status().withContext(paths[i]);
    file.rank = *claimed;
    maxRank = std::max(maxRank, file.rank);
    file.device = "cuda:" + std::to_string(p.device);
    file.gpuName = p.gpuName;
    file.host = p.host;
    file.baseTimeNs = p.sessionStartNs;
    summary.files.push_back(std::move(file));
  }

  // Clocks: each file's times are ns since its session start.
  std::optional<int64_t> earliest;
  std::set<std::string> hosts;
  for (const ProbedFile& f : probed) {
    if (f.probe.sessionStartNs) {
      earliest = std::min(earliest.value_or(*f.probe.sessionStartNs), *f.probe.sessionStartNs);
      hosts.insert(f.probe.host.empty() ? std::string("(unnamed host)") : f.probe.host);
    }
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    const NsysProbe& p = probed[i].probe;
    ImportedFile& file = summary.files[i];
    if (p.sessionStartNs) {
      file.clock = "session start " + (p.sessionStartText.empty() ? "" : p.sessionStartText + " UTC ") +
                   "(" + std::to_string(*p.sessionStartNs) + " ns), offset " +
                   seconds(*p.sessionStartNs - *earliest) + " from the earliest file";
    } else {
      file.clock = "no session start: not aligned, times relative to its own capture";
      summary.warnings.push_back(
          baseName(paths[i]) +
          ": no TARGET_INFO_SESSION_START_TIME: its clock could not be aligned with the other "
          "files'; its times are stored as ns since its own capture began");
    }
    if (!p.host.empty()) file.clock += ", host " + p.host;
  }
  if (hosts.size() > 1) {
    std::string list;
    for (const auto& h : hosts) list += (list.empty() ? "" : ", ") + h;
    summary.warnings.push_back(
        "ranks on " + std::to_string(hosts.size()) + " hosts (" + list +
        "): their times are aligned by each host's wall clock at its session start; the export "
        "records no synchronisation between hosts, so how far those clocks differ is not known "
        "(not checked, not corrected)");
  }

  // The run.
  storage::RunInfo info;
  info.name = options.runName.empty() ? defaultRunName(paths) : options.runName;
  nlohmann::ordered_json layout = {{"source", "nsys"}};
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& p : paths) files.push_back(baseName(p));
  layout["files"] = files;
  std::set<std::string> versions;
  for (const ProbedFile& f : probed) versions.insert(f.version);
  std::string version;
  for (const auto& v : versions) version += (version.empty() ? "" : "; ") + v;
  layout["format_version"] = version;
  if (!probed.front().probe.gpuName.empty()) layout["gpu"] = probed.front().probe.gpuName;
  if (!hosts.empty()) layout["hosts"] = std::vector<std::string>(hosts.begin(), hosts.end());
  info.layoutJson = layout.dump();
  info.modelJson = "{}";
  info.imported = true;
  info.backend = "cuda";
  info.worldSize = std::max<int32_t>(static_cast<int32_t>(paths.size()), maxRank + 1);
  summary.worldSize = info.worldSize;
  auto runId = run.begin(info);
  if (!runId.isOk()) return runId.status();
  summary.runId = *runId;

  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string name = baseName(paths[i]);
    ImportedFile& file = summary.files[i];
    const ProbedFile& pf = probed[i];
    auto readFile = [&]() -> Status {
      BS_ASSIGN_OR_RETURN(auto exportFile, NsysExport::open(paths[i]));
      NsysRankReader reader(*exportFile, groups, steps);
      const int64_t offset = pf.probe.sessionStartNs.value_or(0);
      const int64_t clockOffset = pf.probe.sessionStartNs ? offset - *earliest : 0;
      std::error_code sizeError;
      const auto size = std::filesystem::file_size(paths[i], sizeError);
      const int64_t fileBytes = sizeError ? 0 : static_cast<int64_t>(size);
      // Progress in bytes of the file, in proportion to the rows read.
      auto rowsRead = [&](int64_t rows) {
        if (!options.progress) return;
        const double share =
            pf.probe.rows > 0 ? std::min(1.0, static_cast<double>(rows) / pf.probe.rows) : 1.0;
        const auto read = static_cast<int64_t>(share * static_cast<double>(fileBytes));
        options.progress({i, paths.size(), &paths[i], read, fileBytes, read});
      };
      BS_RETURN_IF_ERROR(
          reader.read(run.sink(), pf.probe, file.rank, offset, clockOffset, rowsRead));
      if (options.progress) {
        options.progress({i, paths.size(), &paths[i], fileBytes, fileBytes, fileBytes});
      }
      file.stats = reader.stats();
      for (const auto& n : reader.notes()) summary.warnings.push_back(name + ": " + n);
      return Status::ok();
    };
    Status s = readFile();
    if (!s.isOk()) return run.fail(s);
    const RankImportStats& st = file.stats;
    const NsysProbe& p = pf.probe;
    if (!pf.knownSchema) {
      std::string skipped;
      for (const auto& k : p.skipped) skipped += (skipped.empty() ? "" : "; ") + k;
      summary.warnings.push_back(name + ": " + pf.version +
                                 " is not one of the export schemas this importer follows (2.x, "
                                 "3.x): imported what it has; skipped: " +
                                 (skipped.empty() ? std::string("nothing") : skipped));
    } else {
      // nsys creates tables lazily: an absent memcpy or memset table is a
      // report without copies; absent NVTX or runtime tables lose something.
      for (const auto& k : p.skipped) {
        if (k.find("(absent)") != std::string::npos &&
            (k.rfind("CUPTI_ACTIVITY_KIND_RUNTIME", 0) == 0)) {
          summary.warnings.push_back(name + ": not imported: " + k +
                                     ": no launches, so no launch links, and steps keep their "
                                     "CPU windows (capture with --trace=cuda)");
        } else if (k.find("(absent)") != std::string::npos && k.rfind("NVTX_EVENTS", 0) == 0) {
          summary.warnings.push_back(name + ": not imported: " + k +
                                     ": no CPU ranges and no steps (capture with --trace=nvtx)");
        } else if (k.find("(absent)") == std::string::npos) {
          summary.warnings.push_back(name + ": not imported: " + k);
        }
      }
    }
    if (!p.otherProcesses.empty()) {
      std::string list;
      for (const auto& o : p.otherProcesses) list += (list.empty() ? "" : "; ") + o;
      summary.warnings.push_back(name + ": the rank is pid " + std::to_string(p.pid) +
                                 " (the most GPU records); the GPU work of other processes is "
                                 "not imported (" + list + ")");
    }
    if (!p.otherDevices.empty()) {
      std::string list;
      for (int64_t d : p.otherDevices) list += " " + std::to_string(d);
      summary.warnings.push_back(name + ": kernels also ran on device(s)" + list +
                                 "; the rank's device is " + file.device +
                                 " (where most ran), every stream is imported");
    }
    // "<file>: N <what>", for each count that is not 0.
    const std::pair<int64_t, const char*> counted[] = {
        {st.ncclBytesUnknown, " NCCL kernels: Nsight Systems records no message sizes; stored with 0 bytes"},
        {st.unknownCollectives, " NCCL kernels of unknown collective stored as all-reduce"},
        {st.sendRecvAsSend, " SendRecv kernels no NVTX range names as send or recv; stored as send"},
        {st.negativeDurations, " records end before they start; kept as zero-length spans"},
        {st.missingTimes, " records past the int64 ns range were skipped"},
    };
    for (const auto& [count, what] : counted) {
      if (count > 0) summary.warnings.push_back(name + ": " + std::to_string(count) + what);
    }
    if (st.steps == 0) {
      summary.warnings.push_back(name + ": no NVTX range matches the step pattern /" +
                                 steps.text() + "/ (--step-range): the rank is one step");
    }
    summary.events += st.events;
  }
  if (Status s = run.finish(); !s.isOk()) return run.fail(s);
  return summary;
}

}  // namespace bubblescope::import
