// KernelCategory: what a GPU record does, finer than KernelType (HTA's four
// classes, trace_model/kernel_type.h) and never against it: every category
// refines exactly one KernelType (typeOf), and kernelCategoryOf(kind, name)
// first takes kernelTypeOf(kind, name), then looks for the category inside
// that type, so typeOf(kernelCategoryOf(k, n)) == kernelTypeOf(k, n) for
// every record.
//
// Inside a type the category comes from the stored kind where it says (a
// collective kind names its collective, kMemset is a memset), else from the
// kernel name (substrings, case-insensitive where the libraries vary):
//   computation   attention (flash_fwd/bwd, fmha, attention, attn, sdpa),
//                 GEMM and convolution (gemm, gemv, xmma, cutlass, cublas,
//                 nvjet, Tensile's Cijk_, cuDNN convolutions), optimizer
//                 (multi_tensor_apply, adam, sgd, lamb), elementwise and
//                 normalisation (elementwise, norm, softmax, reductions,
//                 copies, activations), else "other kernel".
//   communication the NCCL collective in the name (ncclKernel_AllReduce_...,
//                 ncclDevKernel_SendRecv), else "other collective".
//   memory        memset (kind or a name starting "Memset"), else memcpy.
//   other         other (HTA's "Sync" and mid-name "Memcpy" records).
// The table of real names this is held to is tests/trace_model/
// kernel_category_test.cpp. Pure functions; no state.
#pragma once

#include <string_view>

#include "trace_model/event.h"
#include "trace_model/kernel_type.h"

namespace bubblescope::trace_model {

// Not stored: the values may change (they order the legend, computation first).
enum class KernelCategory {
  kGemm,
  kAttention,
  kElementwise,  // elementwise and normalisation
  kOptimizer,
  kOtherCompute,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kSendRecv,
  kAllToAll,
  kOtherCollective,
  kMemcpy,
  kMemset,
  kOther,
};
inline constexpr int kKernelCategoryCount = 16;

// The KernelType a category refines.
KernelType typeOf(KernelCategory category);
// The category of a GPU stream record of `kind` named `name`.
KernelCategory kernelCategoryOf(EventKind kind, std::string_view name);
// "GEMM / conv", "attention", "elementwise / norm", "optimizer", "other kernel",
// "all-reduce", ..., "send / recv", "memcpy", "memset", "other".
std::string_view toString(KernelCategory category);

}  // namespace bubblescope::trace_model
