#include "storage/import/nccl_collective.h"

#include <algorithm>
#include <cctype>

namespace bubblescope::import {
namespace {

using trace_model::EventKind;

// Lower case, without '_' and spaces: "_reduce_scatter_base" -> "reducescatterbase".
std::string squash(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '_' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::optional<EventKind> kindOf(const std::string& squashed) {
  // Longer names first: "allreduce" contains "reduce", "sendrecv" both.
  static const std::pair<const char*, EventKind> kTable[] = {
      {"alltoall", EventKind::kAllToAll},   {"reducescatter", EventKind::kReduceScatter},
      {"allgather", EventKind::kAllGather}, {"allreduce", EventKind::kAllReduce},
      {"broadcast", EventKind::kBroadcast}, {"sendrecv", EventKind::kSend},
      {"send", EventKind::kSend},           {"recv", EventKind::kRecv},
      {"reduce", EventKind::kReduce},       {"barrier", EventKind::kAllReduce},
  };
  for (const auto& [needle, kind] : kTable) {
    if (squashed.find(needle) != std::string::npos) return kind;
  }
  return std::nullopt;
}

}  // namespace

bool isNcclKernel(const std::string& name) {
  return name.rfind("nccl", 0) == 0 && name.find("Kernel", 4) != std::string::npos;
}

std::optional<EventKind> ncclCollective(const KinetoRecord& kernel) {
  if (!kernel.collective.empty()) {
    if (auto kind = kindOf(squash(kernel.collective))) return kind;
  }
  // ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv(...)
  return kindOf(squash(kernel.name.substr(0, kernel.name.find('('))));
}

int64_t dtypeBytes(const std::string& dtype) {
  std::string d = squash(dtype);
  if (auto p = d.rfind("::"); p != std::string::npos) d = d.substr(p + 2);
  static const std::pair<const char*, int64_t> kSizes[] = {
      {"float", 4},
      {"float32", 4},
      {"double", 8},
      {"float64", 8},
      {"half", 2},
      {"float16", 2},
      {"bfloat16", 2},
      {"int", 4},
      {"int32", 4},
      {"long", 8},
      {"int64", 8},
      {"short", 2},
      {"int16", 2},
      {"char", 1},
      {"int8", 1},
      {"byte", 1},
      {"uint8", 1},
      {"bool", 1},
      {"float8e4m3fn", 1},
      {"float8e5m2", 1},
      // C type names of "Input type": "unsigned char", "signed char", "long int".
      {"unsignedchar", 1},
      {"signedchar", 1},
      {"longint", 8},
      {"longlong", 8},
  };
  for (const auto& [name, bytes] : kSizes) {
    if (d == name) return bytes;
  }
  return 0;
}

namespace {

// The largest input of an op's "Input Dims" x "Input type", in bytes; 0 if none.
int64_t inputDimsBytes(const KinetoRecord& op) {
  int64_t best = 0;
  for (size_t i = 0; i < op.inputElems.size() && i < op.inputTypes.size(); ++i) {
    int64_t bytes = 0;
    if (op.inputElems[i] > 0 &&
        !__builtin_mul_overflow(op.inputElems[i], dtypeBytes(op.inputTypes[i]), &bytes)) {
      best = std::max(best, bytes);
    }
  }
  return best;
}

// The collective a comm op's name states: "nccl:all_to_all", "c10d::allreduce_".
std::optional<EventKind> kindOfOpName(const std::string& name) {
  for (const char* prefix : {"nccl:", "c10d::"}) {
    const std::string p = prefix;
    if (name.rfind(p, 0) == 0) return kindOf(squash(name.substr(p.size())));
  }
  return std::nullopt;
}

}  // namespace

bool isCommOp(const std::string& name) {
  return name == "record_param_comms" || name.rfind("nccl:", 0) == 0 ||
         name.rfind("c10d::", 0) == 0;
}

NcclDescription describeNccl(const KinetoRecord& kernel,
                             const std::vector<const KinetoRecord*>& launchers) {
  NcclDescription d;
  std::vector<const KinetoRecord*> all = {&kernel};
  all.insert(all.end(), launchers.begin(), launchers.end());
  for (const KinetoRecord* r : all) {
    if (!d.kind && !r->collective.empty()) d.kind = kindOf(squash(r->collective));
    if (d.bytes == 0 && (d.bytes = ncclMessageBytes(*r)) > 0) {
      d.bytesSource = r == &kernel ? BytesSource::kKernelArgs : BytesSource::kLauncherArgs;
    }
    if (d.groupName.empty()) d.groupName = r->groupName;
    if (d.groupDesc.empty()) d.groupDesc = r->groupDesc;
    if (d.groupRanks.empty()) d.groupRanks = r->groupRanks;
  }
  for (const KinetoRecord* op : launchers) {
    if (!d.kind) d.kind = kindOfOpName(op->name);
  }
  if (d.bytes == 0) {
    for (const KinetoRecord* op : launchers) d.bytes = std::max(d.bytes, inputDimsBytes(*op));
    if (d.bytes > 0) d.bytesSource = BytesSource::kInputDims;
  }
  if (!d.kind) {
    d.kind = ncclCollective(kernel);
    d.sendRecvByName =
        d.kind == EventKind::kSend && squash(kernel.name).find("sendrecv") != std::string::npos;
  }
  return d;
}

int64_t ncclMessageBytes(const KinetoRecord& kernel) {
  const int64_t elements = std::max(kernel.inNelems, kernel.outNelems);
  if (elements <= 0) return 0;
  return elements * dtypeBytes(kernel.dtype);
}

Result<GroupDims> parseGroupDims(const std::map<std::string, std::string>& groups) {
  static const std::pair<const char*, trace_model::ParallelDim> kDims[] = {
      {"dp", trace_model::ParallelDim::kDp},     {"tp", trace_model::ParallelDim::kTp},
      {"pp", trace_model::ParallelDim::kPp},     {"ep", trace_model::ParallelDim::kEp},
      {"zero", trace_model::ParallelDim::kZero},
  };
  GroupDims dims;
  for (const auto& [name, dim] : groups) {
    bool found = false;
    for (const auto& [text, value] : kDims) {
      if (dim == text) {
        dims[name] = value;
        found = true;
      }
    }
    if (!found) {
      return Status::invalidArgument("--group " + name + "=" + dim +
                                     ": unknown dimension (known: dp, tp, pp, ep, zero)");
    }
  }
  return dims;
}

trace_model::ParallelDim groupDim(const std::string& name, const std::string& desc,
                                  const GroupDims& dims) {
  for (const std::string* key : {&name, &desc}) {
    if (key->empty()) continue;
    if (auto it = dims.find(*key); it != dims.end()) return it->second;
  }
  return trace_model::ParallelDim::kUnknown;
}

}  // namespace bubblescope::import
