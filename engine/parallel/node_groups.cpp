#include "engine/parallel/node_groups.h"

#include <string>

namespace bubblescope::engine {

Result<NodeGroups> splitIntoNodes(MPI_Comm group, int32_t ranksPerNode,
                                  trace_model::ParallelDim dim) {
  int size = 0, rank = 0;
  MPI_Comm_size(group, &size);
  MPI_Comm_rank(group, &rank);
  if (ranksPerNode < 1 || size % ranksPerNode != 0) {
    return Status::invalidArgument("ranks per node " + std::to_string(ranksPerNode) +
                                   " does not divide the group's " + std::to_string(size) +
                                   " ranks");
  }
  NodeGroups groups;
  BS_ASSIGN_OR_RETURN(groups.intraNode,
                      MpiCommunicator::split(group, rank / ranksPerNode, rank, dim));
  BS_ASSIGN_OR_RETURN(groups.interNode,
                      MpiCommunicator::split(group, rank % ranksPerNode, rank, dim));
  return groups;
}

}  // namespace bubblescope::engine
