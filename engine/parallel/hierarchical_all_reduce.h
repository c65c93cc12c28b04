// HierarchicalAllReduce: a sum all-reduce in three phases over nodes (issue
// 19): reduce-scatter inside the node, all-reduce of each shard across the
// nodes, all-gather inside the node. Only the shard (n / K elements) crosses
// between nodes, instead of the whole buffer. DataParallel runs one per
// gradient bucket with `--allreduce hierarchical` (a BucketReduction).
//
// Contract:
// - intraNode: the K ranks of this rank's node; interNode: the ranks holding
//   the same position (intra-node rank) in every node. Every node has the
//   same K (NodeGroups builds such a pair). Both outlive this object.
// - allReduce(data) leaves every rank of both groups with the same sum of
//   every rank's data; it equals a flat all-reduce up to fp32 reassociation
//   (each element is a sum of the same N values in another order).
// - start(grads) launches the intra-node reduce-scatter without waiting
//   (`grads` is read until finish()); finish(sum) waits for it, then runs the
//   inter-node all-reduce and the intra-node all-gather (blocking). `sum` may
//   be `grads` (allReduce() is start + finish in place).
// - Every rank calls it in the same order (MPI's rule), from one thread.
// - Traced as its phases (names kIntraReduceScatterName, kInterAllReduceName,
//   kIntraAllGatherName: the intra-node / inter-node tag; step etc. from
//   `trace`). busBytes(): the three phases' ring bus bytes.
// - Memory: `grads` and `sum` are in the memory the communicators move;
//   `deviceMemory` (a device rank's allocator, whose memory its device
//   groups move) holds this rank's shard then, counted as gradients; null:
//   host memory, uncounted.
#pragma once

#include <span>
#include <vector>

#include "engine/parallel/bucket_reduction.h"
#include "engine/parallel/communicator.h"
#include "engine/backend.h"  // Tensor, Allocator

namespace bubblescope::engine {

inline constexpr const char* kIntraReduceScatterName = "reduce_scatter.intra_node";
inline constexpr const char* kInterAllReduceName = "all_reduce.inter_node";
inline constexpr const char* kIntraAllGatherName = "all_gather.intra_node";

class HierarchicalAllReduce final : public BucketReduction {
 public:
  HierarchicalAllReduce(Communicator& intraNode, Communicator& interNode,
                        Allocator* deviceMemory = nullptr)
      : intraNode_(intraNode), interNode_(interNode), deviceMemory_(deviceMemory) {}

  Status allReduce(std::span<float> data, const CommTrace& trace = {});
  Status start(std::span<const float> grads, const CommTrace& trace) override;
  Status finish(std::span<float> sum) override;

 private:
  Communicator& intraNode_;
  Communicator& interNode_;
  Allocator* deviceMemory_;
  std::vector<int> counts_;  // (K) the intra-node shards of the buffer
  Tensor shard_;             // (counts[intra rank], at least 1) this rank's part of the node's sum
  CommHandle handle_;
  CommTrace trace_;
};

}  // namespace bubblescope::engine
