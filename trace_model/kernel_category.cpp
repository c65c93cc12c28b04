#include "trace_model/kernel_category.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace bubblescope::trace_model {
namespace {

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

bool containsAny(std::string_view s, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return contains(s, p); });
}

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

KernelCategory computationOf(std::string_view name) {
  std::string n = lowered(name);
  // FBGEMM's namespace is no GEMM (fbgemm_gpu::permute_2D_lengths_kernel).
  for (size_t at = n.find("fbgemm"); at != std::string::npos; at = n.find("fbgemm", at)) {
    n.replace(at, 6, "fb");
  }
  if (containsAny(n, {"flash_fwd", "flash_bwd", "flash::", "fmha", "attention", "attn", "sdpa"})) {
    return KernelCategory::kAttention;
  }
  // Optimizers before GEMM and elementwise: fused optimizers are elementwise
  // kernels by construction.
  if (containsAny(n, {"multi_tensor_apply", "adam", "sgd_", "_sgd", "lamb_", "optimizer"})) {
    return KernelCategory::kOptimizer;
  }
  if (containsAny(n, {"gemm", "gemv", "xmma", "cutlass", "cublas", "nvjet", "matmul", "cijk_",
                      "scudnn", "winograd", "convolution", "convolve", "conv1d", "conv2d",
                      "conv3d", "wgrad", "dgrad", "fprop", "tensorop"})) {
    return KernelCategory::kGemm;
  }
  if (containsAny(n, {"elementwise", "norm", "softmax", "reduce_kernel", "moments", "dropout",
                      "gelu", "silu", "swiglu", "rotary", "copy", "fill", "bn_fw",
                      "bn_bw", "gammabeta", "pool", "nchwtonhwc", "nhwctonchw", "embedding", "index",
                      "scatter", "gather", "cat_", "transpose"})) {
    return KernelCategory::kElementwise;
  }
  return KernelCategory::kOtherCompute;
}

KernelCategory collectiveOf(EventKind kind, std::string_view name) {
  switch (kind) {
    case EventKind::kAllReduce:
      return KernelCategory::kAllReduce;
    case EventKind::kAllGather:
      return KernelCategory::kAllGather;
    case EventKind::kReduceScatter:
      return KernelCategory::kReduceScatter;
    case EventKind::kBroadcast:
      return KernelCategory::kBroadcast;
    case EventKind::kReduce:
      return KernelCategory::kReduce;
    case EventKind::kSend:
    case EventKind::kRecv:
      return KernelCategory::kSendRecv;
    case EventKind::kAllToAll:
      return KernelCategory::kAllToAll;
    default:
      break;
  }
  // Longest names first: "ReduceScatter" and "AllReduce" contain "Reduce".
  const std::string n = lowered(name);
  if (contains(n, "allreduce")) return KernelCategory::kAllReduce;
  if (contains(n, "reducescatter")) return KernelCategory::kReduceScatter;
  if (contains(n, "allgather")) return KernelCategory::kAllGather;
  if (contains(n, "alltoall")) return KernelCategory::kAllToAll;
  if (contains(n, "broadcast")) return KernelCategory::kBroadcast;
  if (containsAny(n, {"sendrecv", "_send", "_recv"})) return KernelCategory::kSendRecv;
  if (contains(n, "_reduce")) return KernelCategory::kReduce;
  return KernelCategory::kOtherCollective;
}

}  // namespace

KernelType typeOf(KernelCategory category) {
  switch (category) {
    case KernelCategory::kGemm:
    case KernelCategory::kAttention:
    case KernelCategory::kElementwise:
    case KernelCategory::kOptimizer:
    case KernelCategory::kOtherCompute:
      return KernelType::kComputation;
    case KernelCategory::kAllReduce:
    case KernelCategory::kAllGather:
    case KernelCategory::kReduceScatter:
    case KernelCategory::kBroadcast:
    case KernelCategory::kReduce:
    case KernelCategory::kSendRecv:
    case KernelCategory::kAllToAll:
    case KernelCategory::kOtherCollective:
      return KernelType::kCommunication;
    case KernelCategory::kMemcpy:
    case KernelCategory::kMemset:
      return KernelType::kMemory;
    case KernelCategory::kOther:
      return KernelType::kOther;
  }
  return KernelType::kOther;
}

KernelCategory kernelCategoryOf(EventKind kind, std::string_view name) {
  switch (kernelTypeOf(kind, name)) {
    case KernelType::kComputation:
      return computationOf(name);
    case KernelType::kCommunication:
      return collectiveOf(kind, name);
    case KernelType::kMemory:
      if (kind == EventKind::kMemset) return KernelCategory::kMemset;
      if (kind != EventKind::kMemcpy && name.substr(0, 6) == "Memset") {
        return KernelCategory::kMemset;
      }
      return KernelCategory::kMemcpy;
    case KernelType::kOther:
      return KernelCategory::kOther;
  }
  return KernelCategory::kOther;
}

std::string_view toString(KernelCategory category) {
  static constexpr std::array<std::string_view, kKernelCategoryCount> kNames = {
      "GEMM / conv",     "attention",  "elementwise / norm", "optimizer",
      "other kernel",    "all-reduce", "all-gather",         "reduce-scatter",
      "broadcast",       "reduce",     "send / recv",        "all-to-all",
      "other collective", "memcpy",    "memset",             "other"};
  const auto i = static_cast<size_t>(category);
  return i < kNames.size() ? kNames[i] : std::string_view("other");
}

}  // namespace bubblescope::trace_model
