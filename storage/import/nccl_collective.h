// What an NCCL kernel of a Kineto trace did: its collective, the bytes it
// moved, its process group, and its parallel dimension from the group the
// user named (`--group NAME=dim`). Newer PyTorch copies record_param_comms'
// arguments onto the kernel; older traces keep them only on the CPU ops that
// launched it (record_param_comms, nccl:*, c10d::*), some only as "Input
// Dims" and "Input type" (docs/import.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/kineto_record.h"
#include "trace_model/event.h"

namespace bubblescope::import {

// HTA's test for a communication kernel: the name matches ^nccl.*Kernel.
bool isNcclKernel(const std::string& name);

// The collective of an NCCL kernel; nullopt when neither its arguments nor
// its name say (the caller counts it and uses kAllReduce).
std::optional<trace_model::EventKind> ncclCollective(const KinetoRecord& kernel);

// Where an NCCL kernel's bytes came from, most direct first.
enum class BytesSource {
  kKernelArgs,    // the kernel's In/Out msg nelems x dtype
  kLauncherArgs,  // its launching record_param_comms' In/Out msg nelems x dtype
  kInputDims,     // the launching ops' Input Dims x Input type (older traces)
  kUnknown,       // nothing says (or says 0): bytes stored as 0
};

struct NcclDescription {
  std::optional<trace_model::EventKind> kind;  // nullopt: nothing names the collective
  bool sendRecvByName = false;  // only the kernel's name "SendRecv" spoke: kind is kSend
  int64_t bytes = 0;
  BytesSource bytesSource = BytesSource::kUnknown;
  std::string groupName;   // "Process Group Name"
  std::string groupDesc;   // "Process Group Description"
  std::string groupRanks;  // "Process Group Ranks"
};

// A CPU op that can describe a collective: record_param_comms, nccl:*, c10d::*.
bool isCommOp(const std::string& name);

// The kernel's own arguments first, then those of `launchers`: the comm ops
// enclosing the kernel's launch on its thread, innermost first. The
// collective: "Collective name" (kernel, then launchers), then a launcher's
// name (nccl:all_to_all, c10d::_allgather_base_), then the kernel's name.
NcclDescription describeNccl(const KinetoRecord& kernel,
                             const std::vector<const KinetoRecord*>& launchers);

// Bytes per element of a PyTorch dtype name ("Float", "BFloat16", "c10::Half"); 0 if unknown.
int64_t dtypeBytes(const std::string& dtype);

// The larger of the input and output message sizes, in bytes (nccl-tests'
// convention: an all-gather's output, a reduce-scatter's input); 0 if unknown.
int64_t ncclMessageBytes(const KinetoRecord& kernel);

// Process group name or description -> dimension, from `--group NAME=dp|tp|pp|ep|zero`.
using GroupDims = std::map<std::string, trace_model::ParallelDim>;
Result<GroupDims> parseGroupDims(const std::map<std::string, std::string>& groups);
// kUnknown when the group (by name, else description) is not in `dims`.
trace_model::ParallelDim groupDim(const std::string& name, const std::string& desc,
                                  const GroupDims& dims);
inline trace_model::ParallelDim groupDim(const KinetoRecord& kernel, const GroupDims& dims) {
  return groupDim(kernel.groupName, kernel.groupDesc, dims);
}

}  // namespace bubblescope::import
