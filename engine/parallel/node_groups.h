// NodeGroups: a group of ranks cut into nodes (real nodes from the hosts, or
// emulated on one machine by --ranks-per-node K), as the two communicators
// HierarchicalAllReduce runs over, and every group rank's node for the
// emulated inter-node link (link_pacer.h).
//
// Contract: collective over `group` (every rank calls it). Every node must
// hold the same number of the group's ranks, else an error naming the
// counts and no communicator. interNode holds the ranks with the same
// intra-node rank, ordered by node.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "engine/parallel/mpi_communicator.h"

namespace bubblescope::engine {

struct NodeGroups {
  std::unique_ptr<MpiCommunicator> intraNode;  // this node's ranks of the group
  std::unique_ptr<MpiCommunicator> interNode;  // one rank per node
  std::vector<int32_t> nodeOfGroupRank;        // [group rank] -> node index 0 .. nodes - 1
  int32_t nodes() const { return interNode ? interNode->size() : 0; }
};

// Nodes of K consecutive group ranks: group rank g is in node g / K at
// intra-node rank g % K. K >= 1 must divide the group's size.
Result<NodeGroups> splitIntoNodes(MPI_Comm group, int32_t ranksPerNode,
                                  trace_model::ParallelDim dim);
// Nodes by id: ranks with equal `nodeId` (any int, e.g. the first world rank
// of the node) form one node; nodes are ordered by id, ranks within a node
// by group rank.
Result<NodeGroups> splitByNodeId(MPI_Comm group, int32_t nodeId, trace_model::ParallelDim dim);
// This process's node among `world`'s: the lowest world rank that shares its
// memory (MPI_Comm_split_type MPI_COMM_TYPE_SHARED). Collective over `world`.
Result<int32_t> sharedMemoryNodeId(MPI_Comm world);

}  // namespace bubblescope::engine
