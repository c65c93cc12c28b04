// KernelType: what a GPU record does, as Holistic Trace Analysis classes it
// (hta/utils/utils.py get_kernel_type), so Bubblescope's GPU figures and
// HTA's agree record for record.
//
// HTA reads the name alone: communication when it matches ^nccl.*Kernel;
// memory when it starts with Memcpy, Memset or dma; computation unless it
// contains "Memcpy" or "Sync" anywhere (or starts with Memset); otherwise
// other. kernelTypeOf(kind, name) first trusts the stored kind where the
// name may not say (a collective is communication, a memcpy or memset
// record is memory whatever its name: the engine's CUPTI tracer names them
// "memcpy"), then applies HTA's rule to kernels.
#pragma once

#include <string_view>

#include "trace_model/event.h"

namespace bubblescope::trace_model {

enum class KernelType { kComputation, kCommunication, kMemory, kOther };

// HTA's get_kernel_type on a record's name.
KernelType kernelTypeOfName(std::string_view name);
// A GPU stream record's type: by kind for collectives, memcpy and memset,
// by name (HTA's rule) for everything else.
KernelType kernelTypeOf(EventKind kind, std::string_view name);
// "computation", "communication", "memory", "other" (HTA's names, lower case).
std::string_view toString(KernelType type);

}  // namespace bubblescope::trace_model
