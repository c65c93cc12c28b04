// What every importer (Kineto JSON, Nsight Systems SQLite) takes and gives
// back: the options of an import, what each file held, and the summary of
// the run it wrote (docs/import.md). Plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bubblescope::import {

// What one file held, for the summary and the warnings.
struct RankImportStats {
  int64_t events = 0;
  int64_t kernels = 0;
  int64_t ncclKernels = 0;
  int64_t memcpys = 0;
  int64_t memsets = 0;
  int64_t runtimeCalls = 0;
  int64_t cpuOps = 0;
  int64_t flows = 0;
  int64_t steps = 0;
  int64_t negativeDurations = 0;      // kept as zero-length spans
  int64_t missingTimes = 0;           // events without a usable ts (or past int64 ns): skipped
  int64_t unknownCategoryEvents = 0;  // kept as generic spans
  int64_t unknownCollectives = 0;     // NCCL kernels stored as all-reduce
  int64_t sendRecvAsSend = 0;         // SendRecv kernels nothing else described: kept as send
  // NCCL kernels by where their bytes came from (BytesSource).
  int64_t ncclBytesFromKernel = 0;
  int64_t ncclBytesFromLauncher = 0;
  int64_t ncclBytesFromInputDims = 0;
  int64_t ncclBytesUnknown = 0;  // stored as 0 bytes
  std::map<std::string, int64_t> unknownCategories;
  // NCCL kernels per process group ("Process Group Name", "" when none says).
  struct Group {
    std::string desc;
    std::string ranks;  // "Process Group Ranks" as written, e.g. "[0, 1]"
    int64_t collectives = 0;
    int64_t bytes = 0;
  };
  std::map<std::string, Group> groups;
};

struct ImportProgress {
  size_t fileIndex = 0;
  size_t fileCount = 0;
  const std::string* path = nullptr;
  // Of this file: compressed bytes for .gz; for an Nsight export its bytes in
  // proportion to the rows read.
  int64_t bytesRead = 0;
  int64_t fileBytes = 0;
  // The text decoded so far: a .gz file's JSON (larger than its bytes); for
  // other files bytesRead.
  int64_t textBytes = 0;
};

// Whether a file is big enough for progress lines: over kProgressMinBytes of
// file or, for a .gz, once it has inflated past that much text (a 20 MB .gz
// trace holds about 300 MB of JSON).
inline constexpr int64_t kProgressMinBytes = 64LL << 20;
inline bool showsProgress(const ImportProgress& p) {
  return p.fileBytes >= kProgressMinBytes || p.textBytes >= kProgressMinBytes;
}

struct ImportOptions {
  std::string runName;                        // default: "import <first file>"
  std::map<std::string, std::string> groups;  // process group name -> dp|tp|pp|ep|zero
  // Nsight: the NVTX ranges that are steps (ECMAScript regex, whole name);
  // empty: the default of nsys_steps.h.
  std::string stepRange;
  // Nsight: the rank of the one file imported (--rank); nullopt: from the file.
  std::optional<int32_t> rank;
  // Called about every 64k records and at each file's end.
  std::function<void(const ImportProgress&)> progress;
};

struct ImportedFile {
  std::string path;
  int32_t rank = 0;
  std::string rankSource;             // "distributedInfo", "MPI_RANKS", "file name", "order", ...
  std::string device;                 // "cuda:N" or "cpu"
  std::string gpuName;                // deviceProperties / TARGET_INFO_GPU, "" if none
  std::optional<int64_t> baseTimeNs;  // added to the file's times (Nsight: its session start, UTC ns)
  std::string host;                   // the host the file says it was captured on, "" if none
  std::string clock;                  // Nsight: how its times were aligned, one line
  RankImportStats stats;
};

struct ImportSummary {
  int64_t runId = 0;
  int32_t worldSize = 0;
  std::string format;  // "kineto" or "nsys"
  std::vector<ImportedFile> files;
  std::vector<std::string> warnings;  // stated fallbacks and odd events, one line each
  int64_t events = 0;
};

}  // namespace bubblescope::import
