#include "storage/import/nsys_rank_reader.h"

#include <cctype>
#include <cmath>
#include <map>

#include "storage/import/enclosing_spans.h"
#include "storage/import/event_batch.h"
#include "storage/import/import_run.h"
#include "storage/import/launch_index.h"
#include "storage/import/nsys_importer.h"

namespace bubblescope::import {
namespace {

using trace_model::EventKind;

constexpr int64_t kProgressRows = 1 << 16;
const char* const kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
const char* const kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
const char* const kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
const char* const kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
const char* const kNvtx = "NVTX_EVENTS";

// The columns each table must have for its rows to be imported.
const std::map<std::string, std::vector<std::string>> kNeeded = {
    {kKernel, {"start", "end", "deviceId", "streamId", "correlationId", "demangledName"}},
    {kMemcpy, {"start", "end", "deviceId", "streamId", "correlationId", "bytes", "copyKind"}},
    {kMemset, {"start", "end", "deviceId", "streamId", "correlationId", "bytes"}},
    {kRuntime, {"start", "end", "globalTid", "correlationId", "nameId"}},
    {kNvtx, {"start", "end", "eventType", "globalTid", "text", "textId"}},
};

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (the API's name, as Kineto has it).
std::string apiName(std::string name) {
  const auto v = name.rfind("_v");
  if (v != std::string::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
    name.resize(v);
  }
  return name;
}

bool identifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Whether `name` names `key`: the whole name, or `key` as a word of it.
bool namesGroup(const std::string& name, const std::string& key) {
  if (key.empty()) return false;
  for (size_t at = name.find(key); at != std::string::npos; at = name.find(key, at + 1)) {
    const bool before = at == 0 || !identifierChar(name[at - 1]);
    const size_t end = at + key.size();
    const bool after = end == name.size() || !identifierChar(name[end]);
    if (before && after) return true;
  }
  return false;
}

// "MPI Rank 3" -> 3.
std::optional<int32_t> mpiRankName(const std::string& name) {
  const std::string prefix = "MPI Rank ";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() || name.size() > prefix.size() + 8) {
    return std::nullopt;
  }
  const std::string digits = name.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return static_cast<int32_t>(std::stol(digits));
}

}  // namespace

std::optional<int32_t> rankFromNsysFileName(const std::string& path) {
  if (auto r = rankFromFileName(path)) return r;
  std::string stem = baseName(path);
  if (auto dot = stem.rfind('.'); dot != std::string::npos && dot > 0) stem.resize(dot);
  size_t i = stem.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(stem[i - 1]))) --i;
  if (i == 0 || i == stem.size() || stem.size() - i > 8) return std::nullopt;
  return static_cast<int32_t>(std::stol(stem.substr(i)));
}

Result<int64_t> scanNsysRows(const std::string& path) {
  BS_ASSIGN_OR_RETURN(auto f, NsysExport::open(path));
  int64_t rows = 0;
  for (const auto& [table, cols] : kNeeded) {
    if (!f->missingColumns(table, cols).empty()) continue;
    std::string list;
    for (const auto& c : cols) list += (list.empty() ? "\"" : ", \"") + c + "\"";
    auto stmt = f->db().prepare("SELECT " + list + " FROM " + table);
    if (!stmt.isOk()) return f->queryError(stmt.status());
    for (;;) {
      auto more = stmt->step();
      if (!more.isOk()) return f->queryError(more.status());
      if (!*more) break;
      for (size_t i = 0; i < cols.size(); ++i) {  // every value, as the import reads it
        if (cols[i] == "text") {
          (void)stmt->columnText(static_cast<int>(i));
        } else {
          (void)stmt->columnInt(static_cast<int>(i));
        }
      }
      ++rows;
    }
  }
  return rows;
}

Result<NsysProbe> NsysRankReader::probe() {
  NsysProbe p;
  NsysExport& f = file_;
  for (const auto& [table, cols] : kNeeded) {
    const auto missing = f.missingColumns(table, cols);
    if (!f.hasTable(table)) {
      p.skipped.push_back(table + std::string(" (absent)"));
    } else if (!missing.empty()) {
      std::string list;
      for (const auto& c : missing) list += (list.empty() ? "" : ", ") + c;
      p.skipped.push_back(table + std::string(" (no column ") + list + ")");
    }
  }
  auto usable = [&](const char* table) {
    return f.missingColumns(table, kNeeded.at(table)).empty();
  };
  // The process with the most GPU records is the rank.
  std::string gpu;
  for (const char* t : {kKernel, kMemcpy, kMemset}) {
    if (!usable(t)) continue;
    const std::string pidExpr =
        f.hasColumn(t, "globalPid") ? "IFNULL(globalPid, 0) >> 24" : "0";
    gpu += std::string(gpu.empty() ? "" : " UNION ALL ") + "SELECT " + pidExpr + " AS p FROM " + t;
  }
  if (gpu.empty()) {
    return Status::invalidArgument(
        f.path() + ": no GPU work: the report has no CUPTI kernel, memcpy or memset table "
                   "(capture with `nsys profile --trace=cuda`)");
  }
  BS_ASSIGN_OR_RETURN(auto processes,
                      f.intTextRows("SELECT p, CAST(COUNT(*) AS TEXT) FROM (" + gpu +
                                    ") GROUP BY p ORDER BY COUNT(*) DESC, p"));
  if (processes.empty()) {
    return Status::invalidArgument(
        f.path() + ": no GPU work: its kernel, memcpy and memset tables are empty (was the "
                   "CUDA work inside the capture range?)");
  }
  p.processKey = processes.front().first;
  p.gpuRecords = std::stoll(processes.front().second);
  p.pid = p.processKey & 0xffffffff;
  if (f.missingColumns("PROCESSES", {"globalPid", "pid"}).empty()) {
    BS_ASSIGN_OR_RETURN(auto pid, f.scalar("SELECT pid FROM PROCESSES WHERE globalPid >> 24 = " +
                                           std::to_string(p.processKey) + " LIMIT 1"));
    if (pid) p.pid = *pid;
  }
  for (size_t i = 1; i < processes.size(); ++i) {
    p.otherProcesses.push_back("pid " + std::to_string(processes[i].first & 0xffffffff) + ": " +
                               processes[i].second + " GPU records");
  }
  const std::string key = std::to_string(p.processKey);
  // Its device: the one most of its kernels ran on.
  if (usable(kKernel)) {
    const std::string where =
        f.hasColumn(kKernel, "globalPid") ? " WHERE IFNULL(globalPid, 0) >> 24 = " + key : "";
    BS_ASSIGN_OR_RETURN(auto devices,
                        f.intTextRows("SELECT deviceId, '' FROM " + std::string(kKernel) + where +
                                      " GROUP BY deviceId ORDER BY COUNT(*) DESC, deviceId"));
    for (size_t i = 0; i < devices.size(); ++i) {
      if (i == 0) p.device = devices[i].first;
      else p.otherDevices.push_back(devices[i].first);
    }
  }
  if (p.device < 0 && usable(kMemcpy)) {
    BS_ASSIGN_OR_RETURN(auto d, f.scalar("SELECT deviceId FROM " + std::string(kMemcpy) + " LIMIT 1"));
    p.device = d.value_or(0);
  }
  if (p.device < 0) p.device = 0;
  if (f.missingColumns("TARGET_INFO_GPU", {"id", "name"}).empty()) {
    BS_ASSIGN_OR_RETURN(auto names, f.intTextRows("SELECT id, name FROM TARGET_INFO_GPU WHERE id = " +
                                                  std::to_string(p.device)));
    if (!names.empty()) p.gpuName = names.front().second;
  }
  if (f.missingColumns("TARGET_INFO_SYSTEM_ENV", {"name", "value"}).empty()) {
    BS_ASSIGN_OR_RETURN(auto host, f.intTextRows("SELECT 0, value FROM TARGET_INFO_SYSTEM_ENV "
                                                 "WHERE name = 'Hostname' LIMIT 1"));
    if (!host.empty()) p.host = host.front().second;
  }
  if (f.hasColumn("TARGET_INFO_SESSION_START_TIME", "utcEpochNs")) {
    const std::string text =
        f.hasColumn("TARGET_INFO_SESSION_START_TIME", "utcTime") ? "IFNULL(utcTime, '')" : "''";
    BS_ASSIGN_OR_RETURN(auto start,
                        f.intTextRows("SELECT utcEpochNs, " + text +
                                      " FROM TARGET_INFO_SESSION_START_TIME "
                                      "WHERE utcEpochNs IS NOT NULL LIMIT 1"));
    if (!start.empty()) {
      p.sessionStartNs = start.front().first;
      p.sessionStartText = start.front().second;
    }
  }
  // The rank, as the file states it.
  if (f.missingColumns("MPI_RANKS", {"globalTid", "rank"}).empty()) {
    BS_ASSIGN_OR_RETURN(auto r, f.scalar("SELECT rank FROM MPI_RANKS WHERE globalTid >> 24 = " +
                                         key + " LIMIT 1"));
    if (r) {
      p.rank = static_cast<int32_t>(*r);
      p.rankSource = "MPI_RANKS";
    }
  }
  const bool strings = f.missingColumns("StringIds", {"id", "value"}).empty();
  if (!p.rank && usable(kNvtx)) {
    const std::string name =
        strings ? "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId), '')"
                : "IFNULL(n.text, '')";
    BS_ASSIGN_OR_RETURN(auto names,
                        f.intTextRows("SELECT 0, " + name + " FROM NVTX_EVENTS n WHERE n.eventType = " +
                                      std::to_string(f.nvtxTypes().thread) +
                                      " AND n.globalTid >> 24 = " + key));
    for (const auto& [unused, n] : names) {
      if (auto r = mpiRankName(n); r && !p.rank) {
        p.rank = r;
        p.rankSource = "NVTX thread name";
      }
    }
  }
  if (!p.rank && strings && f.missingColumns("ThreadNames", {"nameId", "globalTid"}).empty()) {
    BS_ASSIGN_OR_RETURN(auto names,
                        f.intTextRows("SELECT 0, s.value FROM ThreadNames t JOIN StringIds s ON "
                                      "s.id = t.nameId WHERE t.globalTid >> 24 = " + key));
    for (const auto& [unused, n] : names) {
      if (auto r = mpiRankName(n); r && !p.rank) {
        p.rank = r;
        p.rankSource = "thread name";
      }
    }
  }
  // The last moment the file records: where unterminated NVTX ranges end.
  std::string ends;
  for (const char* t : {kKernel, kMemcpy, kMemset, kRuntime, kNvtx}) {
    if (!usable(t)) continue;
    ends += std::string(ends.empty() ? "" : " UNION ALL ") + "SELECT MAX(end) AS e FROM " + t;
  }
  BS_ASSIGN_OR_RETURN(auto end, f.scalar("SELECT MAX(e) FROM (" + ends + ")"));
  p.captureEndNs = end.value_or(0);
  // The rows read() will step through, for progress.
  p.rows = p.gpuRecords;
  for (const char* t : {kRuntime, kNvtx}) {
    if (!usable(t)) continue;
    BS_ASSIGN_OR_RETURN(auto n, f.scalar("SELECT COUNT(*) FROM " + std::string(t)));
    p.rows += n.value_or(0);
  }
  return p;
}

Status NsysRankReader::read(trace_model::Sink& sink, const NsysProbe& p, int32_t rank,
                            int64_t offsetNs, int64_t clockOffsetNs,
                            const std::function<void(int64_t rows)>& progress) {
  NsysExport& f = file_;
  EventBatch batch(sink, [offsetNs] { return offsetNs; });
  LaunchIndex launches;
  EnclosingSpans nvtxSpans;
  std::vector<KinetoRecord> nvtxOps;  // the NVTX ranges that may describe a collective
  std::vector<trace_model::StepRecord> cpuSteps;
  const std::string key = std::to_string(p.processKey);
  const bool strings = f.missingColumns("StringIds", {"id", "value"}).empty();
  auto usable = [&](const char* table) {
    return f.missingColumns(table, kNeeded.at(table)).empty();
  };
  auto stringOf = [&](const std::string& idColumn) {
    return strings ? "(SELECT value FROM StringIds WHERE id = " + idColumn + ")"
                   : std::string("NULL");
  };
  int64_t rows = 0;
  auto row = [&]() {
    if (progress && ++rows % kProgressRows == 0) progress(rows);
  };
  auto query = [&](const std::string& sql,
                   const std::function<Status(storage::SqliteStatement&)>& each) -> Status {
    auto stmt = f.db().prepare(sql);
    if (!stmt.isOk()) return f.queryError(stmt.status());
    for (;;) {
      auto more = stmt->step();
      if (!more.isOk()) return f.queryError(more.status());
      if (!*more) return Status::ok();
      row();
      BS_RETURN_IF_ERROR(each(*stmt));
    }
  };
  auto span = [&](trace_model::Event& e, int64_t startNs, int64_t endNs) {
    e.rank = rank;
    e.startNs = startNs;
    e.endNs = endNs;
    if (e.endNs < e.startNs) {
      ++stats_.negativeDurations;
      e.endNs = e.startNs;
    }
  };

  // CUDA runtime calls: the launches. nsys may record one call twice with one
  // correlation id (cudaLaunchKernel around cudaLaunchKernel_v7000): the
  // first by start is the launch, the others stay spans without the link.
  if (usable(kRuntime)) {
    int64_t lastCorrelation = 0, repeated = 0;
    BS_RETURN_IF_ERROR(query(
        "SELECT start, end, globalTid, IFNULL(correlationId, 0), IFNULL(" + stringOf("nameId") +
            ", 'cuda api') FROM " + kRuntime + " WHERE IFNULL(globalTid, 0) >> 24 = " + key +
            " ORDER BY IFNULL(correlationId, 0), start, end DESC",
        [&](storage::SqliteStatement& s) {
          trace_model::Event e;
          span(e, s.columnInt(0), s.columnInt(1));
          e.lane = trace_model::Lane::kCudaApi;
          const int64_t correlation = std::max<int64_t>(s.columnInt(3), 0);
          if (correlation != 0 && correlation == lastCorrelation) {
            e.name = s.columnText(4);
            ++repeated;
          } else {
            e.name = apiName(s.columnText(4));
            e.correlationId = correlation;
            if (correlation != 0) launches.addLaunch(correlation, e.startNs, s.columnInt(2));
          }
          lastCorrelation = correlation;
          ++stats_.runtimeCalls;
          ++stats_.events;
          return batch.add(std::move(e));
        }));
    if (repeated > 0) {
      notes_.push_back(std::to_string(repeated) +
                       " CUDA runtime calls repeat the correlation id of another (an API's "
                       "versioned entry point inside its public one): the first is the launch, "
                       "the others are kept without the link");
    }
  }
  launches.seal();

  // NVTX ranges, per thread in start order (longer first on a tie): the
  // stack of open ranges rebuilds their nesting.
  if (usable(kNvtx)) {
    const NvtxEventTypes& types = f.nvtxTypes();
    struct Open {
      int64_t endNs;
      bool step;
    };
    std::vector<Open> stack;
    int64_t thread = 0;
    int64_t unterminated = 0, crossing = 0, nestedSteps = 0, steps = 0;
    BS_RETURN_IF_ERROR(query(
        "SELECT start, end, globalTid, IFNULL(COALESCE(text, " + stringOf("textId") +
            "), '') FROM " + kNvtx + " WHERE eventType IN (" + std::to_string(types.pushPop) +
            ", " + std::to_string(types.startEnd) + ") AND IFNULL(globalTid, 0) >> 24 = " + key +
            " ORDER BY globalTid, start, end IS NULL DESC, end DESC",
        [&](storage::SqliteStatement& s) {
          const int64_t tid = s.columnInt(2);
          int64_t endNs = s.columnInt(1);
          if (s.columnIsNull(1)) {
            ++unterminated;
            endNs = std::max(p.captureEndNs, s.columnInt(0));
          }
          trace_model::Event e;
          span(e, s.columnInt(0), endNs);
          e.name = s.columnText(3);
          e.lane = batch.threadLane(tid);
          if (tid != thread) stack.clear();
          thread = tid;
          while (!stack.empty() && stack.back().endNs <= e.startNs) stack.pop_back();
          if (!stack.empty() && e.endNs > stack.back().endNs) ++crossing;
          bool insideStep = false;
          for (const Open& o : stack) insideStep = insideStep || o.step;
          bool isStep = false;
          if (auto n = steps_.match(e.name)) {
            if (insideStep) {
              ++nestedSteps;
            } else {
              isStep = true;
              const int64_t number = *n >= 0 ? *n : steps;
              cpuSteps.push_back({rank, static_cast<int32_t>(number), std::nan(""), 0, e.startNs,
                                  e.endNs});
              ++steps;
            }
          }
          stack.push_back({e.endNs, isStep || insideStep});
          // Ranges that may describe a collective launched inside them.
          std::string group;
          for (const auto& [name, dim] : groups_) {
            if (group.empty() && namesGroup(e.name, name)) group = name;
          }
          if (!group.empty() || isCommOp(e.name) || e.name.rfind("nccl", 0) == 0) {
            KinetoRecord op;
            op.name = e.name;
            op.groupName = group;
            nvtxSpans.add(tid, e.startNs, e.endNs, nvtxOps.size());
            nvtxOps.push_back(std::move(op));
          }
          ++stats_.cpuOps;
          ++stats_.events;
          return batch.add(std::move(e));
        }));
    stats_.steps = steps;
    if (unterminated > 0) {
      notes_.push_back(std::to_string(unterminated) +
                       " NVTX ranges never ended (pushed but not popped, or started but not "
                       "ended, before the capture stopped): they end at the capture's end");
    }
    if (crossing > 0) {
      notes_.push_back(std::to_string(crossing) +
                       " NVTX start/end ranges overlap a range of their thread without nesting in "
                       "it: stored as they are");
    }
    if (nestedSteps > 0) {
      notes_.push_back(std::to_string(nestedSteps) +
                       " step ranges inside another step range are not steps of their own");
    }
  }
  nvtxSpans.seal();

  // GPU records on the lanes of their streams.
  auto gpuEvent = [&](storage::SqliteStatement& s, trace_model::Event& e) {
    span(e, s.columnInt(0), s.columnInt(1));
    e.lane = trace_model::gpuStreamLane(
        static_cast<int32_t>(std::clamp<int64_t>(s.columnInt(3), 0, 1 << 20)));
    e.correlationId = std::max<int64_t>(s.columnInt(4), 0);
    if (e.correlationId != 0) launches.addGpuRecord(e.correlationId, e.startNs, e.endNs);
    ++stats_.events;
  };
  const std::string pidWhere = " WHERE IFNULL(globalPid, 0) >> 24 = " + key;
  auto where = [&](const char* table) {
    return f.hasColumn(table, "globalPid") ? pidWhere : std::string();
  };
  if (usable(kKernel)) {
    const std::string shortName = f.hasColumn(kKernel, "shortName") ? stringOf("shortName") : "NULL";
    BS_RETURN_IF_ERROR(query(
        "SELECT start, end, deviceId, streamId, IFNULL(correlationId, 0), COALESCE(" +
            stringOf("demangledName") + ", " + shortName + ", 'kernel') FROM " + kKernel +
            where(kKernel),
        [&](storage::SqliteStatement& s) {
          trace_model::Event e;
          gpuEvent(s, e);
          e.name = s.columnText(5);
          e.kind = EventKind::kKernel;
          if (!isNcclKernel(e.name)) {
            ++stats_.kernels;
            return batch.add(std::move(e));
          }
          ++stats_.ncclKernels;
          KinetoRecord kernel;
          kernel.name = e.name;
          std::vector<const KinetoRecord*> launchers;
          if (const Launch* l = launches.find(e.correlationId)) {
            for (size_t item : nvtxSpans.at(l->tid, l->startNs)) launchers.push_back(&nvtxOps[item]);
          }
          const NcclDescription d = describeNccl(kernel, launchers);
          if (!d.kind) ++stats_.unknownCollectives;
          if (d.sendRecvByName) ++stats_.sendRecvAsSend;
          e.kind = d.kind.value_or(EventKind::kAllReduce);
          e.bytes = d.bytes;
          e.dim = groupDim(d.groupName, d.groupDesc, groups_);
          if (d.bytes > 0) ++stats_.ncclBytesFromLauncher;
          else ++stats_.ncclBytesUnknown;
          RankImportStats::Group& g = stats_.groups[d.groupName];
          ++g.collectives;
          g.bytes += e.bytes;
          return batch.add(std::move(e));
        }));
  }
  if (usable(kMemcpy)) {
    const bool kinds = f.hasColumn(kMemcpy, "srcKind") && f.hasColumn(kMemcpy, "dstKind");
    BS_RETURN_IF_ERROR(query(
        "SELECT start, end, deviceId, streamId, IFNULL(correlationId, 0), bytes, copyKind, " +
            std::string(kinds ? "IFNULL(srcKind, -1), IFNULL(dstKind, -1)" : "-1, -1") +
            " FROM " + kMemcpy + where(kMemcpy),
        [&](storage::SqliteStatement& s) {
          trace_model::Event e;
          gpuEvent(s, e);
          e.kind = EventKind::kMemcpy;
          e.bytes = std::max<int64_t>(s.columnInt(5), 0);
          e.name = "Memcpy " + f.copyKindName(s.columnInt(6));
          if (s.columnInt(7) >= 0 && s.columnInt(8) >= 0) {
            e.name += " (" + f.memoryKindName(s.columnInt(7)) + " -> " +
                      f.memoryKindName(s.columnInt(8)) + ")";
          }
          ++stats_.memcpys;
          return batch.add(std::move(e));
        }));
  }
  if (usable(kMemset)) {
    const bool kind = f.hasColumn(kMemset, "memKind");
    BS_RETURN_IF_ERROR(query(
        "SELECT start, end, deviceId, streamId, IFNULL(correlationId, 0), bytes, " +
            std::string(kind ? "IFNULL(memKind, -1)" : "-1") + " FROM " + kMemset + where(kMemset),
        [&](storage::SqliteStatement& s) {
          trace_model::Event e;
          gpuEvent(s, e);
          e.kind = EventKind::kMemset;
          e.bytes = std::max<int64_t>(s.columnInt(5), 0);
          e.name = "Memset";
          if (s.columnInt(6) >= 0) e.name += " (" + f.memoryKindName(s.columnInt(6)) + ")";
          ++stats_.memsets;
          return batch.add(std::move(e));
        }));
  }
  if (progress) progress(rows);
  BS_RETURN_IF_ERROR(batch.flush());
  stats_.missingTimes += batch.dropped();
  stats_.events -= batch.dropped();
  launches.seal();
  BS_RETURN_IF_ERROR(batch.appendSteps(launches.gpuStepWindows(std::move(cpuSteps))));
  trace_model::RankInfo info;
  info.rank = rank;
  info.host = p.host;
  info.pid = p.pid;
  info.device = "cuda:" + std::to_string(p.device);
  info.dp = info.tp = info.pp = -1;  // no process group states its ranks
  info.clockOffsetNs = clockOffsetNs;
  return sink.describeRank(info);
}

}  // namespace bubblescope::import
