#include "trace_model/kernel_category.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace bubblescope::trace_model {
namespace {

struct Named {
  EventKind kind;
  const char* name;
  KernelCategory expected;
};

// Real kernel names: PyTorch's Kineto traces (A100 and V100 runs, a ROCm run),
// cuBLAS, CUTLASS, cuDNN, FlashAttention, xFormers, NCCL 2.x and its
// ncclDevKernel_ names (2.19+), CUPTI's memcpy and memset records.
const std::vector<Named>& table() {
  static const std::vector<Named> t = {
      // GEMM and convolution
      {EventKind::kKernel, "ampere_sgemm_32x128_tn", KernelCategory::kGemm},
      {EventKind::kKernel, "volta_sgemm_64x64_nt", KernelCategory::kGemm},
      {EventKind::kKernel,
       "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x5_tn_align4>("
       "cutlass_80_tensorop_s1688gemm_128x128_32x5_tn_align4::Params)",
       KernelCategory::kGemm},
      {EventKind::kKernel, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1",
       KernelCategory::kGemm},
      {EventKind::kKernel,
       "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16",
       KernelCategory::kGemm},
      {EventKind::kKernel, "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT", KernelCategory::kGemm},
      {EventKind::kKernel,
       "void gemvNSP_kernel<float, float, float, float, 1, 32, 4, 1024, "
       "cublasGemvParams<cublasGemvTensorStridedBatched<float const>>>",
       KernelCategory::kGemm},
      {EventKind::kKernel,
       "void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, "
       "cublasLtEpilogue_t, int, float*, long, float*, long)",
       KernelCategory::kGemm},
      {EventKind::kKernel, "cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1",
       KernelCategory::kGemm},
      {EventKind::kKernel,
       "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>("
       "cudnn::winograd_nonfused::WinogradDataParams<float, float>)",
       KernelCategory::kGemm},
      {EventKind::kKernel,
       "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1",
       KernelCategory::kGemm},
      // attention
      {EventKind::kKernel,
       "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
       "cutlass::half_t>, true, false, false, false, true, true, false>(Flash_fwd_params)",
       KernelCategory::kAttention},
      {EventKind::kKernel, "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>",
       KernelCategory::kAttention},
      {EventKind::kKernel,
       "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
       "cutlass::half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
       KernelCategory::kAttention},
      {EventKind::kKernel, "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16",
       KernelCategory::kAttention},
      // elementwise and normalisation
      {EventKind::kKernel,
       "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
       "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
       "at::detail::Array<char*, 1>)",
       KernelCategory::kElementwise},
      {EventKind::kKernel,
       "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
       "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()",
       KernelCategory::kElementwise},
      {EventKind::kKernel,
       "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
       "float, float const*, float const*, float const*, float*, float*, float*)",
       KernelCategory::kElementwise},
      {EventKind::kKernel,
       "void at::native::(anonymous namespace)::LayerNormForwardCUDAKernel<float, float>(long, "
       "float const*, float const*, float const*, float*)",
       KernelCategory::kElementwise},
      {EventKind::kKernel,
       "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 32, true, 1, true>("
       "cudnnTensorStruct, float const*, cudnnTensorStruct, float*)",
       KernelCategory::kElementwise},
      {EventKind::kKernel,
       "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>("
       "float*, float const*, int, int, int, bool const*, int, bool)",
       KernelCategory::kElementwise},
      {EventKind::kKernel,
       "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
       "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >",
       KernelCategory::kElementwise},
      {EventKind::kKernel,
       "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, "
       "long, float const*, float const*, float const*, float const*, float*, float*)",
       KernelCategory::kElementwise},
      // optimizer
      {EventKind::kKernel,
       "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
       "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor"
       "<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double>",
       KernelCategory::kOptimizer},
      {EventKind::kKernel, "void multi_tensor_apply_kernel<TensorListMetadata<3>, SGDFunctor<float>>",
       KernelCategory::kOptimizer},
      // other computation
      {EventKind::kKernel,
       "void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, (cub::BlockLoadAlgorithm)3>>",
       KernelCategory::kOtherCompute},
      {EventKind::kKernel,
       "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
       KernelCategory::kOtherCompute},
      // collectives, by name (kind kKernel) and by kind
      {EventKind::kKernel,
       "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
       KernelCategory::kAllReduce},
      {EventKind::kAllReduce,
       "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
       KernelCategory::kAllReduce},
      {EventKind::kKernel, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       KernelCategory::kAllGather},
      {EventKind::kKernel,
       "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       KernelCategory::kReduceScatter},
      {EventKind::kKernel,
       "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
       KernelCategory::kBroadcast},
      {EventKind::kKernel,
       "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
       KernelCategory::kSendRecv},
      {EventKind::kKernel, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
       KernelCategory::kSendRecv},
      {EventKind::kKernel, "ncclDevKernel_Reduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       KernelCategory::kReduce},
      {EventKind::kAllToAll, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
       KernelCategory::kAllToAll},
      {EventKind::kRecv, "recv.stage1", KernelCategory::kSendRecv},
      {EventKind::kKernel, "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)",
       KernelCategory::kOtherCollective},
      // memory
      {EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", KernelCategory::kMemcpy},
      {EventKind::kMemcpy, "Memcpy DtoD (Device -> Device)", KernelCategory::kMemcpy},
      {EventKind::kKernel, "Memcpy DtoH (Device -> Pageable)", KernelCategory::kMemcpy},
      {EventKind::kMemcpy, "memcpy", KernelCategory::kMemcpy},  // the engine's CUPTI tracer
      {EventKind::kMemset, "Memset (Device)", KernelCategory::kMemset},
      {EventKind::kKernel, "Memset (Device)", KernelCategory::kMemset},
      {EventKind::kMemset, "memset", KernelCategory::kMemset},
      // HTA's other
      {EventKind::kKernel, "cudaDeviceSynchronize", KernelCategory::kOther},
      {EventKind::kKernel, "void copyMemcpyChunks<float>", KernelCategory::kOther},
  };
  return t;
}

// The refinement contract: the category never disagrees with HTA's type,
// for every name under every kind a GPU record can be stored with.
TEST(KernelCategoryTest, EveryCategoryRefinesTheKernelTypeOfTheRecord) {
  for (const Named& n : table()) {
    for (int k = 0; k < kEventKindCount; ++k) {
      const auto kind = static_cast<EventKind>(k);
      EXPECT_EQ(typeOf(kernelCategoryOf(kind, n.name)), kernelTypeOf(kind, n.name))
          << toString(kind) << " " << n.name;
    }
  }
}

TEST(KernelCategoryTest, RealKernelNamesGetTheirCategory) {
  for (const Named& n : table()) {
    EXPECT_EQ(toString(kernelCategoryOf(n.kind, n.name)), toString(n.expected))
        << toString(n.kind) << " " << n.name;
  }
}

TEST(KernelCategoryTest, EachCategoryMapsToOneTypeAndHasItsOwnName) {
  std::set<std::string_view> names;
  std::set<KernelType> types;
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    const auto category = static_cast<KernelCategory>(c);
    names.insert(toString(category));
    types.insert(typeOf(category));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kKernelCategoryCount));
  // Every HTA type is reachable: no type is left without a category.
  EXPECT_EQ(types.size(), 4u);
}

TEST(KernelCategoryTest, TheTableCoversEveryCategory) {
  std::set<KernelCategory> seen;
  for (const Named& n : table()) seen.insert(kernelCategoryOf(n.kind, n.name));
  EXPECT_EQ(seen.size(), static_cast<size_t>(kKernelCategoryCount));
}

}  // namespace
}  // namespace bubblescope::trace_model
