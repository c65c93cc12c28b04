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

KinetoRecord op(const std::string& name) {
  KinetoRecord r;
  r.name = name;
  return r;
}

TEST(DescribeNccl, TheKernelsOwnArgumentsWin) {
  KinetoRecord k = kernel("ncclKernel_AllReduce_RING_LL_Sum_float", "allreduce");
  k.inNelems = k.outNelems = 6637568;
  k.dtype = "Float";
  k.groupName = "0";
  KinetoRecord rpc = op("record_param_comms");
  rpc.collective = "broadcast";
  rpc.inNelems = 5;
  rpc.dtype = "Float";
  rpc.groupRanks = "[0, 1]";
  const NcclDescription d = describeNccl(k, {&rpc});
  EXPECT_EQ(d.kind, EventKind::kAllReduce);
  EXPECT_EQ(d.bytes, 6637568LL * 4);
  EXPECT_EQ(d.bytesSource, BytesSource::kKernelArgs);
  EXPECT_EQ(d.groupName, "0");
  EXPECT_EQ(d.groupRanks, "[0, 1]");  // what the kernel lacks comes from its launcher
}

TEST(DescribeNccl, RecordParamCommsDescribesABareKernel) {
  // PyTorch between 2.0 and 2.2: the kernel has no arguments, its
  // record_param_comms has them; the kernel is a SendRecv of a send.
  KinetoRecord rpc = op("record_param_comms");
  rpc.collective = "send";
  rpc.inNelems = 1000;
  rpc.outNelems = 0;  // a send has no output
  rpc.dtype = "BFloat16";
  rpc.groupName = "3";
  const NcclDescription d = describeNccl(kernel("ncclDevKernel_SendRecv(x)"), {&rpc});
  EXPECT_EQ(d.kind, EventKind::kSend);
  EXPECT_FALSE(d.sendRecvByName);
  EXPECT_EQ(d.bytes, 2000);
  EXPECT_EQ(d.bytesSource, BytesSource::kLauncherArgs);
  EXPECT_EQ(d.groupName, "3");
  rpc.collective = "recv";
  EXPECT_EQ(describeNccl(kernel("ncclDevKernel_SendRecv(x)"), {&rpc}).kind, EventKind::kRecv);
}

TEST(DescribeNccl, OlderTracesUseTheLaunchingOpsNamesAndInputDims) {
  // trace_filter/sampled_rank-0: an all-to-all runs as a SendRecv kernel
  // under c10d::alltoall_base_ > record_param_comms > nccl:all_to_all.
  KinetoRecord c10d = op("c10d::alltoall_base_");
  c10d.inputElems = {382132224, 419430400, -1};
  c10d.inputTypes = {"unsigned char", "unsigned char", ""};
  KinetoRecord rpc = op("record_param_comms");
  rpc.inputElems = {419430400, -1};
  rpc.inputTypes = {"unsigned char", "Scalar"};
  KinetoRecord nccl = op("nccl:all_to_all");
  nccl.inputElems = {419430400};
  nccl.inputTypes = {"unsigned char"};
  const KinetoRecord k = kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)");
  NcclDescription d = describeNccl(k, {&nccl, &rpc, &c10d});
  EXPECT_EQ(d.kind, EventKind::kAllToAll);
  EXPECT_FALSE(d.sendRecvByName);
  EXPECT_EQ(d.bytes, 419430400);
  EXPECT_EQ(d.bytesSource, BytesSource::kInputDims);
  // An all-gather: the output (1 GiB of int8) is the larger message.
  KinetoRecord gather = op("c10d::_allgather_base_");
  gather.inputElems = {1073741824, 16777216, -1};
  gather.inputTypes = {"signed char", "signed char", ""};
  KinetoRecord ncclGather = op("nccl:_all_gather_base");
  ncclGather.inputElems = {16777216};
  ncclGather.inputTypes = {"signed char"};
  d = describeNccl(k, {&ncclGather, &gather});
  EXPECT_EQ(d.kind, EventKind::kAllGather);
  EXPECT_EQ(d.bytes, 1073741824);
  // A tensor list gives no sizes: bytes unknown, stored as 0.
  KinetoRecord allReduce = op("c10d::allreduce_");
  allReduce.inputElems = {-1, -1};
  allReduce.inputTypes = {"TensorList", ""};
  d = describeNccl(k, {&allReduce});
  EXPECT_EQ(d.kind, EventKind::kAllReduce);
  EXPECT_EQ(d.bytes, 0);
  EXPECT_EQ(d.bytesSource, BytesSource::kUnknown);
}

TEST(DescribeNccl, ZeroMessageSizesFallBackAndASendRecvAloneIsASend) {
  KinetoRecord k = kernel("ncclDevKernel_SendRecv(x)");
  k.inNelems = k.outNelems = 0;  // stored as 0 by some PyTorch versions
  k.dtype = "Float";
  KinetoRecord c10d = op("c10d::send");
  c10d.inputElems = {256};
  c10d.inputTypes = {"float"};
  NcclDescription d = describeNccl(k, {&c10d});
  EXPECT_EQ(d.kind, EventKind::kSend);
  EXPECT_EQ(d.bytes, 1024);
  EXPECT_EQ(d.bytesSource, BytesSource::kInputDims);
  d = describeNccl(k, {});
  EXPECT_EQ(d.kind, EventKind::kSend);
  EXPECT_TRUE(d.sendRecvByName);
  EXPECT_EQ(d.bytesSource, BytesSource::kUnknown);
  EXPECT_TRUE(isCommOp("record_param_comms"));
  EXPECT_TRUE(isCommOp("nccl:all_reduce"));
  EXPECT_TRUE(isCommOp("c10d::allreduce_"));
  EXPECT_FALSE(isCommOp("aten::mm"));
}

}  // namespace
}  // namespace bubblescope::import
