// NodeGroups: a group of ranks cut into nodes of K consecutive ranks (real
// nodes from the hosts, or emulated on one machine by --ranks-per-node K),
// as the two communicators HierarchicalAllReduce runs over.
//
// Contract: collective over `group` (every rank calls it); K >= 1 must
// divide the group's size, else an error naming both and no communicator.
// Group rank g is in node g / K at intra-node rank g % K; interNode holds
// the ranks with the same g % K, ordered by node.
#pragma once

#include <mpi.h>

#include <memory>

#include "engine/parallel/mpi_communicator.h"

namespace bubblescope::engine {

struct NodeGroups {
  std::unique_ptr<MpiCommunicator> intraNode;  // K ranks
  std::unique_ptr<MpiCommunicator> interNode;  // size / K ranks
};

Result<NodeGroups> splitIntoNodes(MPI_Comm group, int32_t ranksPerNode,
                                  trace_model::ParallelDim dim);

}  // namespace bubblescope::engine
