// What an NCCL kernel of a Kineto trace did: its collective (from the
// "Collective name" argument that PyTorch copies from record_param_comms,
// else from the kernel's name), the bytes it moved, and its parallel
// dimension from the process group the user named (`--group NAME=dim`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/result.h"
#include "storage/import/kineto_record.h"
#include "trace_model/event.h"

namespace bubblescope::import {

// HTA's test for a communication kernel: the name matches ^nccl.*Kernel.
bool isNcclKernel(const std::string& name);

// The collective of an NCCL kernel; nullopt when neither its arguments nor
// its name say (the caller counts it and uses kAllReduce).
std::optional<trace_model::EventKind> ncclCollective(const KinetoRecord& kernel);

// Bytes per element of a PyTorch dtype name ("Float", "BFloat16", "c10::Half"); 0 if unknown.
int64_t dtypeBytes(const std::string& dtype);

// The larger of the input and output message sizes, in bytes (nccl-tests'
// convention: an all-gather's output, a reduce-scatter's input); 0 if unknown.
int64_t ncclMessageBytes(const KinetoRecord& kernel);

// Process group name or description -> dimension, from `--group NAME=dp|tp|pp|ep|zero`.
using GroupDims = std::map<std::string, trace_model::ParallelDim>;
Result<GroupDims> parseGroupDims(const std::map<std::string, std::string>& groups);
// kUnknown when the kernel's group is not in `dims`.
trace_model::ParallelDim groupDim(const KinetoRecord& kernel, const GroupDims& dims);

}  // namespace bubblescope::import
