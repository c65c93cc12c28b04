// Plain values the Kineto parser hands to its consumer: one trace event
// (KinetoRecord) with the fields and `args` the importer uses, and the
// file's header (KinetoHeader: distributedInfo, deviceProperties,
// baseTimeNanoseconds). Kineto traces are Chrome trace event JSON
// (docs/formulas.md, "Units in interchange formats"): ts and dur in microseconds, with up to
// three decimals of nanoseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bubblescope::import {

struct KinetoRecord {
  std::string ph;   // "X" complete, "s"/"f" flow, "M" metadata, "i" instant
  std::string cat;  // "kernel", "cpu_op", "cuda_runtime", "ac2g", ...
  std::string name;
  int64_t pid = -1;  // -1 when a string (e.g. "Spans")
  int64_t tid = -1;
  std::optional<int64_t> tsNs;  // from µs text, exact to the nanosecond
  std::optional<int64_t> durNs;
  int64_t flowId = 0;  // "id" of a flow event
  // args
  int64_t device = -1;
  int64_t stream = -1;
  int64_t correlation = 0;
  int64_t bytes = -1;
  std::string collective;  // "Collective name"
  std::string dtype;
  std::string groupName;   // "Process Group Name"
  std::string groupDesc;   // "Process Group Description"
  std::string groupRanks;  // "Process Group Ranks", e.g. "[0, 1]"
  int64_t inNelems = -1, outNelems = -1;
  int64_t groupSize = -1;
  // "Input Dims" and "Input type" of a CPU op: elements per input (-1 for
  // one without dims: a scalar or a tensor list) and its dtype name. Older
  // traces' record_param_comms, nccl:* and c10d::* ops describe a
  // collective's tensors only this way.
  std::vector<int64_t> inputElems;
  std::vector<std::string> inputTypes;
  std::string metaName;  // args.name of a metadata event

  void clear();
};

struct KinetoGroup {
  std::string name;  // pg_name
  std::string desc;  // pg_desc
  int64_t size = 0;
  std::vector<int64_t> ranks;  // the global ranks in the group
};

struct KinetoHeader {
  bool hasDistributedInfo = false;
  std::optional<int64_t> rank;
  std::optional<int64_t> worldSize;
  std::string backend;
  std::vector<KinetoGroup> groups;
  std::vector<std::string> deviceNames;  // deviceProperties[i].name, by "id" order seen
  std::optional<int64_t> baseTimeNs;
  bool sawTraceEvents = false;
  // Entries of the events array that are not events (not an object, or an
  // object without "ph"): skipped; the first one described, e.g.
  // "traceEvents[3] is a number".
  int64_t skippedEntries = 0;
  std::string firstSkipped;
};

}  // namespace bubblescope::import
