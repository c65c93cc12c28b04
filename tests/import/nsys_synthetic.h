// Test helpers: small Nsight Systems SQLite exports built at test time from
// NVIDIA's documented export schema (the tables and columns `nsys export
// --type sqlite` writes: 2.x with EXPORT_META_DATA, 3.x with
// META_DATA_EXPORT and ENUM_* tables). Never committed: each test writes its
// own files into a temporary folder.
//
// One rank's file: a main process (globalPid kPid << 24) whose thread
// launches, per step, one GEMM kernel (stream 7) and one NCCL all-reduce
// (stream 20) inside an NVTX "nccl:all_reduce" push/pop range and a
// start/end range naming the process group "dp_group", a host-to-device
// memcpy and a memset (stream 7), all inside NVTX push/pop ranges
// "ProfilerStep#N"; plus an unterminated push range and a second process
// with GPU work of its own on the next GPU (which the importer skips).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "storage/sqlite_db.h"

namespace bubblescope::testing {

struct NsysSynthetic {
  int schemaMajor = 2;                 // 2: EXPORT_META_DATA; 3: META_DATA_EXPORT + ENUM_*
  std::string schemaVersion;           // default "2.9.1" / "3.15.1"
  int32_t rank = 0;
  enum class RankSource { kMpiRanks, kNvtxThreadName, kThreadNames, kNone } rankSource =
      RankSource::kMpiRanks;
  int steps = 3;
  int64_t sessionStartNs = 1700000000000000000;  // utcEpochNs; nullopt-like when 0: no table
  std::string host = "node0";
  int64_t device = 0;
  bool gpuWork = true;
  bool nvtx = true;
  bool runtime = true;
  std::vector<std::string> dropTables;  // tables left out (unknown-version tests)
};

// The start, end of every kernel row written (for sums by the test).
struct NsysWritten {
  int64_t kernelNs = 0;  // SUM(end - start) over CUPTI_ACTIVITY_KIND_KERNEL of the main process
  int64_t kernels = 0;
  int64_t ncclKernels = 0;
  int64_t memcpys = 0;
  int64_t memsets = 0;
  int64_t runtimeCalls = 0;
  int64_t nvtxRanges = 0;  // push/pop and start/end ranges of the main process
};

constexpr int64_t kNsysPid = 4242;
constexpr int64_t kNsysOtherPid = 5151;
inline int64_t nsysGlobalPid(int64_t pid) { return (int64_t{1} << 56) | (pid << 24); }
inline int64_t nsysGlobalTid(int64_t pid, int64_t tid) { return nsysGlobalPid(pid) | tid; }

inline NsysWritten writeNsysExport(const std::string& path, const NsysSynthetic& o) {
  using storage::SqliteDb;
  auto opened = SqliteDb::open(path, SqliteDb::Mode::kReadWriteCreate);
  if (!opened.isOk()) throw std::runtime_error(opened.status().message());
  SqliteDb& db = **opened;
  auto exec = [&](const std::string& sql) {
    Status s = db.exec(sql.c_str());
    if (!s.isOk()) throw std::runtime_error(s.message() + " in " + sql);
  };
  auto dropped = [&](const std::string& t) {
    for (const auto& d : o.dropTables) {
      if (d == t) return true;
    }
    return false;
  };
  auto q = [](const std::string& s) { return "'" + s + "'"; };
  NsysWritten w;
  exec("BEGIN");
  const std::string version =
      o.schemaVersion.empty() ? (o.schemaMajor == 3 ? "3.15.1" : "2.9.1") : o.schemaVersion;
  const std::string meta = o.schemaMajor >= 3 ? "META_DATA_EXPORT" : "EXPORT_META_DATA";
  exec("CREATE TABLE " + meta + " (name TEXT, value TEXT)");
  const std::string product = o.schemaMajor >= 3 ? "2024.6.1.90" : "2022.4.2.50";
  exec("INSERT INTO " + meta + " VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'), " +
       "('EXPORT_PRODUCT_VERSION', " + q(product) + "), ('EXPORT_SCHEMA_VERSION', " + q(version) +
       "), ('EXPORT_SCHEMA_VERSION_MAJOR', " + q(version.substr(0, version.find('.'))) + ")");
  if (o.schemaMajor >= 3) {
    exec("CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT)");
    exec("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (33, 'NvtxCategory', 'NVTX Category'), "
         "(34, 'NvtxMark', 'NVTX Mark'), (39, 'NvtxThread', 'NVTX Thread'), "
         "(59, 'NvtxPushPopRange', 'NVTX PushPop Range'), "
         "(60, 'NvtxStartEndRange', 'NVTX StartEnd Range'), "
         "(75, 'NvtxDomainCreate', 'NVTX Domain Create')");
    exec("CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT)");
    exec("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'), "
         "(1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'), "
         "(2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'), "
         "(8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device'), "
         "(10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer')");
    exec("CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT)");
    exec("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', "
         "'Pageable'), (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), "
         "(2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device')");
  }
  exec("CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)");
  std::map<std::string, int64_t> ids;
  auto sid = [&](const std::string& s) {
    auto [it, inserted] = ids.emplace(s, static_cast<int64_t>(ids.size()) + 1);
    if (inserted) exec("INSERT INTO StringIds VALUES (" + std::to_string(it->second) + ", " + q(s) + ")");
    return it->second;
  };
  if (o.sessionStartNs != 0 && !dropped("TARGET_INFO_SESSION_START_TIME")) {
    exec("CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, "
         "localTime TEXT)");
    exec("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (" + std::to_string(o.sessionStartNs) +
         ", '2023-11-14T22:13:20', '2023-11-14T22:13:20')");
  }
  exec("CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER NOT NULL, devStateName TEXT NOT "
       "NULL, name TEXT NOT NULL, nameEnum INTEGER NOT NULL, value TEXT NOT NULL)");
  exec("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local (CLI)', 'Hostname', 18, " + q(o.host) + ")");
  exec("CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT)");
  exec("INSERT INTO TARGET_INFO_GPU VALUES (1, " + std::to_string(o.device) +
       ", 'NVIDIA H100 80GB HBM3')");
  exec("CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT)");
  exec("INSERT INTO PROCESSES VALUES (" + std::to_string(nsysGlobalPid(kNsysPid)) + ", " +
       std::to_string(kNsysPid) + ", 'python'), (" + std::to_string(nsysGlobalPid(kNsysOtherPid)) +
       ", " + std::to_string(kNsysOtherPid) + ", 'helper')");
  const int64_t mainTid = nsysGlobalTid(kNsysPid, kNsysPid);
  const int64_t otherTid = nsysGlobalTid(kNsysPid, kNsysPid + 1);
  exec("CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER)");
  if (o.rankSource == NsysSynthetic::RankSource::kThreadNames) {
    exec("INSERT INTO ThreadNames VALUES (" + std::to_string(sid("MPI Rank " + std::to_string(o.rank))) +
         ", 0, " + std::to_string(mainTid) + ")");
  }
  if (o.rankSource == NsysSynthetic::RankSource::kMpiRanks) {
    exec("CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER NOT NULL)");
    exec("INSERT INTO MPI_RANKS VALUES (" + std::to_string(mainTid) + ", " +
         std::to_string(o.rank) + ")");
  }
  if (o.runtime && !dropped("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    exec("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
         "eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER "
         "NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER)");
  }
  if (o.gpuWork) {
    exec("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
         "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
         "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName "
         "INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, "
         "registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, "
         "gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ "
         "INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT "
         "NULL, localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId "
         "INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, "
         "sharedMemoryLimitConfig INTEGER)");
    exec("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, "
         "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
         "correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT "
         "NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, "
         "srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause "
         "INTEGER, graphNodeId INTEGER, virtualAddress INTEGER)");
    exec("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, "
         "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
         "correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT "
         "NULL, graphNodeId INTEGER, memKind INTEGER)");
  }
  if (o.nvtx && !dropped("NVTX_EVENTS")) {
    exec("CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT "
         "NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, "
         "endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, "
         "int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, "
         "floatValue REAL, jsonTextId INTEGER, jsonText TEXT)");
    if (o.rankSource == NsysSynthetic::RankSource::kNvtxThreadName) {
      exec("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (10, 39, " +
           q("MPI Rank " + std::to_string(o.rank)) + ", " + std::to_string(mainTid) + ", 0)");
    }
    exec("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (5, 75, "
         "'NCCL', " + std::to_string(mainTid) + ", 1)");
  }
  const bool nvtx = o.nvtx && !dropped("NVTX_EVENTS");
  const bool runtime = o.runtime && !dropped("CUPTI_ACTIVITY_KIND_RUNTIME");
  auto range = [&](int64_t start, std::optional<int64_t> end, int type, const std::string& name,
                   int64_t tid, bool registered) {
    if (!nvtx) return;
    const std::string endText = end ? std::to_string(*end) : "NULL";
    if (registered) {
      exec("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId) VALUES (" +
           std::to_string(start) + ", " + endText + ", " + std::to_string(type) + ", " +
           std::to_string(tid) + ", " + std::to_string(sid(name)) + ", 0)");
    } else {
      exec("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (" +
           std::to_string(start) + ", " + endText + ", " + std::to_string(type) + ", " + q(name) +
           ", " + std::to_string(tid) + ", 0)");
    }
    ++w.nvtxRanges;
  };
  int64_t correlation = 100;
  auto launch = [&](int64_t start, const std::string& api, int64_t tid) {
    const int64_t c = ++correlation;
    if (runtime) {
      exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(start) + ", " +
           std::to_string(start + 4000) + ", 0, " + std::to_string(tid) + ", " +
           std::to_string(c) + ", " + std::to_string(sid(api)) + ", 0, NULL)");
      ++w.runtimeCalls;
    }
    return c;
  };
  auto kernel = [&](int64_t start, int64_t end, int64_t stream, int64_t c, const std::string& name,
                    int64_t pid, int64_t device) {
    exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
         "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, "
         "gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
         "localMemoryPerThread, localMemoryTotal, gridId) VALUES (" +
         std::to_string(start) + ", " + std::to_string(end) + ", " + std::to_string(device) +
         ", 1, " + std::to_string(stream) + ", " + std::to_string(c) + ", " +
         std::to_string(nsysGlobalPid(pid)) + ", " + std::to_string(sid(name)) + ", " +
         std::to_string(sid(name.substr(0, name.find('(')))) +
         ", 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, " + std::to_string(c) + ")");
    if (pid == kNsysPid) {
      w.kernelNs += end - start;
      ++w.kernels;
    }
  };
  const int64_t ms = 1000000;
  if (o.gpuWork) {
    for (int s = 0; s < o.steps; ++s) {
      const int64_t t = (s + 1) * 20 * ms;  // step s: [t, t + 15 ms] on the CPU
      range(t, t + 15 * ms, 59, "ProfilerStep#" + std::to_string(s), mainTid, s % 2 == 0);
      range(t + 100, t + 5 * ms, 59, "forward", mainTid, true);
      const int64_t gemm = launch(t + 1 * ms, "cudaLaunchKernel_v7000", mainTid);
      kernel(t + 2 * ms, t + 4 * ms + 123, 7, gemm, "ampere_sgemm_128x64_nn(float const*, float*)",
             kNsysPid, o.device);
      range(t + 6 * ms, t + 9 * ms, 60, "allreduce dp_group", mainTid, false);
      range(t + 6 * ms + 10, t + 8 * ms, 59, "nccl:all_reduce", mainTid, true);
      const int64_t nccl = launch(t + 7 * ms, "cudaLaunchKernel_v7000", mainTid);
      kernel(t + 8 * ms, t + 11 * ms + 7, 20, nccl,
             "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)",
             kNsysPid, o.device);
      ++w.ncclKernels;
      const int64_t copy = launch(t + 10 * ms, "cudaMemcpyAsync_v3020", otherTid);
      exec("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
           "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (" +
           std::to_string(t + 12 * ms) + ", " + std::to_string(t + 13 * ms) + ", " +
           std::to_string(o.device) + ", 1, 7, " + std::to_string(copy) + ", " +
           std::to_string(nsysGlobalPid(kNsysPid)) + ", 1048576, 1, 1, 2)");
      ++w.memcpys;
      const int64_t set = launch(t + 11 * ms, "cudaMemsetAsync_v3020", mainTid);
      exec("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
           "correlationId, globalPid, value, bytes, memKind) VALUES (" +
           std::to_string(t + 13 * ms) + ", " + std::to_string(t + 13 * ms + 500) + ", " +
           std::to_string(o.device) + ", 1, 7, " + std::to_string(set) + ", " +
           std::to_string(nsysGlobalPid(kNsysPid)) + ", 0, 4096, 2)");
      ++w.memsets;
    }
    // A range never popped before the capture stopped.
    range((o.steps + 1) * 20 * ms, std::nullopt, 59, "teardown", mainTid, false);
    // Another process's GPU work in the same report, on another GPU: not the rank's.
    kernel(5 * ms, 6 * ms, 3, 999, "helper_kernel()", kNsysOtherPid, o.device + 1);
  }
  exec("COMMIT");
  return w;
}

}  // namespace bubblescope::testing
