// MpiGrid: the runtime process grid of one rank: its coordinates in
// world = dp × pp × tp (engine/layout/grid.h: tp fastest, as Megatron-LM
// places ranks) and one MPI communicator per dimension.
//
// Contract: create() is collective over `world`. The grid is owned by the
// rank's main function and passed by reference (never a global); it must
// outlive everything that uses its communicators and be destroyed before
// MPI_Finalize. Not thread-safe (the training thread's).
#pragma once

#include <mpi.h>

#include <memory>

#include "engine/layout/grid.h"
#include "engine/layout/layout.h"
#include "engine/parallel/mpi_communicator.h"
#include "engine/parallel/node_groups.h"

namespace bubblescope::engine {

// How the dp group's gradients cross nodes (issue 19; layout keys all_reduce,
// ranks_per_node, inter_node_gbps, inter_node_latency_us).
struct NodeSetup {
  bool hierarchical = false;  // all-reduce inside each node, then across nodes
  int32_t ranksPerNode = 0;   // world ranks per emulated node; 0: the hosts' nodes
  InterNodeLink link;         // paced between emulated nodes (needs ranksPerNode >= 1)
  bool needsNodes() const { return hierarchical || link.paced(); }
};
NodeSetup nodeSetupFor(const layout::Layout& layout);

class MpiGrid {
 public:
  // The world's size must be dp × pp × tp (an error says so otherwise).
  // ep > 1 (dividing dp) also splits each dp group into expert-parallel
  // groups of ep consecutive dp ranks (dp coordinate d: group d / ep, rank
  // d % ep) and expert-data-parallel groups of the dp ranks with the same
  // ep rank (group d % ep, rank d / ep), as DeepSpeed-MoE places them.
  static Result<std::unique_ptr<MpiGrid>> create(MPI_Comm world, int32_t dp, int32_t pp, int32_t tp,
                                                 int32_t ep = 1);
  // The layout's grid, and its nodes when nodeSetupFor(layout) needs them.
  static Result<std::unique_ptr<MpiGrid>> create(MPI_Comm world, const layout::Layout& layout);

  // Cuts the dp group into nodes (node_groups.h): emulated nodes of
  // ranksPerNode consecutive world ranks, or the hosts' (shared memory); then
  // the emulated link paces the all-reduces that cross nodes: the dp
  // group's (flat) or the inter-node shards' (hierarchical). Collective over
  // `world`; once, before any traffic. Errors: ranksPerNode not dividing the
  // world or splitting a tp or pp group, nodes with unequal dp ranks, a
  // paced link without emulated nodes.
  Status splitDpIntoNodes(MPI_Comm world, const NodeSetup& setup);
  // The dp group's node communicators when the setup is hierarchical, else null.
  MpiCommunicator* dpIntraNode() { return hierarchical_ ? nodes_.intraNode.get() : nullptr; }
  MpiCommunicator* dpInterNode() { return hierarchical_ ? nodes_.interNode.get() : nullptr; }
  // Nodes the dp group spans and its ranks per node (0 before a split).
  int32_t dpNodes() const { return nodes_.nodes(); }
  int32_t dpRanksPerNode() const { return nodes_.intraNode ? nodes_.intraNode->size() : 0; }

  const layout::ProcessGrid& grid() const { return grid_; }
  int32_t rank() const { return rank_; }  // in `world`
  layout::GridCoord coord() const { return grid_.coordOf(rank_); }

  // Communicators of this rank's groups; a group's rank i has coordinate i.
  MpiCommunicator& dp() { return *dp_; }
  MpiCommunicator& pp() { return *pp_; }
  MpiCommunicator& tp() { return *tp_; }
  MpiCommunicator& world() { return *world_; }
  // Expert parallelism's groups (dimension ep, and dp for expertDp); null
  // when ep is 1.
  MpiCommunicator* ep() { return ep_.get(); }
  MpiCommunicator* expertDp() { return expertDp_.get(); }

  // Every communicator's spans go to `recorder` (null: none).
  void setRecorder(tracer::Recorder* recorder);

 private:
  MpiGrid(layout::ProcessGrid grid, int32_t rank) : grid_(grid), rank_(rank) {}
  layout::ProcessGrid grid_;
  int32_t rank_;
  std::unique_ptr<MpiCommunicator> world_, dp_, pp_, tp_, ep_, expertDp_;
  NodeGroups nodes_;  // the dp group's, after splitDpIntoNodes
  bool hierarchical_ = false;
};

}  // namespace bubblescope::engine
