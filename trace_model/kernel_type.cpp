#include "trace_model/kernel_type.h"

namespace bubblescope::trace_model {
namespace {

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

KernelType kernelTypeOfName(std::string_view name) {
  // ^nccl.*Kernel
  if (startsWith(name, "nccl") && name.find("Kernel", 4) != std::string_view::npos) {
    return KernelType::kCommunication;
  }
  // (^Memcpy)|(^Memset)|(^dma)
  if (startsWith(name, "Memcpy") || startsWith(name, "Memset") || startsWith(name, "dma")) {
    return KernelType::kMemory;
  }
  // not re.match((^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)): the
  // middle alternative is ".*Memcpy" or "Memset" at the start.
  if (name.find("Memcpy") != std::string_view::npos ||
      name.find("Sync") != std::string_view::npos) {
    return KernelType::kOther;
  }
  return KernelType::kComputation;
}

KernelType kernelTypeOf(EventKind kind, std::string_view name) {
  if (kind == EventKind::kMemcpy || kind == EventKind::kMemset) return KernelType::kMemory;
  if (categoryOf(kind) == EventCategory::kCommunication) return KernelType::kCommunication;
  return kernelTypeOfName(name);
}

std::string_view toString(KernelType type) {
  switch (type) {
    case KernelType::kComputation:
      return "computation";
    case KernelType::kCommunication:
      return "communication";
    case KernelType::kMemory:
      return "memory";
    case KernelType::kOther:
      return "other";
  }
  return "other";
}

}  // namespace bubblescope::trace_model
