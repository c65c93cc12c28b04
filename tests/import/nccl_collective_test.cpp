#include "storage/import/nccl_collective.h"

#include <gtest/gtest.h>

namespace bubblescope::import {
namespace {

using trace_model::EventKind;
using trace_model::ParallelDim;

KinetoRecord kernel(const std::string& name, const std::string& collective = "") {
  KinetoRecord r;
  r.name = name;
  r.collective = collective;
  return r;
}

TEST(NcclCollective, FromTheArgumentsElseTheKernelName) {
  EXPECT_EQ(ncclCollective(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(x)")),
            EventKind::kAllReduce);
  EXPECT_EQ(ncclCollective(kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)")),
            EventKind::kReduceScatter);
  EXPECT_EQ(ncclCollective(kernel("ncclDevKernel_AllGather_RING_LL(x)")), EventKind::kAllGather);
  EXPECT_EQ(ncclCollective(kernel("ncclKernel_Broadcast_RING_LL_Sum_int8_t")),
            EventKind::kBroadcast);
  EXPECT_EQ(ncclCollective(kernel("ncclDevKernel_SendRecv(x)")), EventKind::kSend);
  EXPECT_EQ(ncclCollective(kernel("ncclDevKernel_Generic", "_reduce_scatter_base")),
            EventKind::kReduceScatter);
  EXPECT_EQ(ncclCollective(kernel("ncclDevKernel_Generic", "all_to_all")), EventKind::kAllToAll);
  EXPECT_EQ(ncclCollective(kernel("ncclDevKernel_Generic", "recv")), EventKind::kRecv);
  EXPECT_EQ(ncclCollective(kernel("ncclDevKernel_Generic")), std::nullopt);
}

TEST(NcclCollective, HtaCommunicationKernelTest) {
  EXPECT_TRUE(isNcclKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"));
  EXPECT_TRUE(isNcclKernel("ncclDevKernel_Generic"));
  EXPECT_FALSE(isNcclKernel("void at::native::ncclish_kernel"));
  EXPECT_FALSE(isNcclKernel("nccl_copy"));
}

TEST(NcclCollective, BytesAreTheLargerMessageTimesTheDtype) {
  KinetoRecord r = kernel("ncclKernel_AllGather");
  r.inNelems = 10;
  r.outNelems = 80;
  r.dtype = "BFloat16";
  EXPECT_EQ(ncclMessageBytes(r), 160);
  r.dtype = "Float";
  EXPECT_EQ(ncclMessageBytes(r), 320);
  r.dtype = "c10::complex";  // unknown: bytes unknown
  EXPECT_EQ(ncclMessageBytes(r), 0);
  EXPECT_EQ(dtypeBytes("c10::Half"), 2);
  EXPECT_EQ(dtypeBytes("Double"), 8);
}

TEST(NcclCollective, GroupDimensionFromNameOrDescription) {
  auto dims = parseGroupDims({{"default_pg", "dp"}, {"5", "tp"}});
  ASSERT_TRUE(dims.isOk());
  // Moved-in strings, not = "0": GCC 12's -Wrestrict misfires on short literals.
  auto inGroup = [](std::string name, std::string desc) {
    KinetoRecord r = kernel("ncclKernel_AllReduce");
    r.groupName = std::move(name);
    r.groupDesc = std::move(desc);
    return r;
  };
  EXPECT_EQ(groupDim(inGroup("0", "default_pg"), *dims), ParallelDim::kDp);
  EXPECT_EQ(groupDim(inGroup("5", "default_pg"), *dims), ParallelDim::kTp);
  EXPECT_EQ(groupDim(inGroup("7", ""), *dims), ParallelDim::kUnknown);
  auto bad = parseGroupDims({{"x", "fsdp"}});
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().message(),
            "--group x=fsdp: unknown dimension (known: dp, tp, pp, ep, zero)");
}

}  // namespace
}  // namespace bubblescope::import
