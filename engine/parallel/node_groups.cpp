#include "engine/parallel/node_groups.h"

#include <algorithm>
#include <string>

#include "engine/parallel/mpi_check.h"

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
  return splitByNodeId(group, rank / ranksPerNode, dim);
}

Result<NodeGroups> splitByNodeId(MPI_Comm group, int32_t nodeId, trace_model::ParallelDim dim) {
  int size = 0, rank = 0;
  MPI_Comm_size(group, &size);
  MPI_Comm_rank(group, &rank);
  std::vector<int32_t> ids(static_cast<size_t>(size));
  BS_MPI_CHECK(MPI_Allgather(&nodeId, 1, MPI_INT32_T, ids.data(), 1, MPI_INT32_T, group));
  std::vector<int32_t> distinct = ids;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  NodeGroups groups;
  std::vector<int32_t> perNode(distinct.size(), 0);
  int32_t intraRank = 0;
  for (int g = 0; g < size; ++g) {
    const auto node = static_cast<int32_t>(
        std::lower_bound(distinct.begin(), distinct.end(), ids[g]) - distinct.begin());
    groups.nodeOfGroupRank.push_back(node);
    if (g == rank) intraRank = perNode[node];
    ++perNode[node];
  }
  const auto [fewest, most] = std::minmax_element(perNode.begin(), perNode.end());
  if (*fewest != *most) {  // every rank sees the same ids: all return this error
    return Status::invalidArgument(
        "the nodes hold different numbers of the group's ranks (from " + std::to_string(*fewest) +
        " to " + std::to_string(*most) + " of " + std::to_string(size) +
        "): a hierarchical all-reduce needs the same number on every node");
  }
  const int32_t node = groups.nodeOfGroupRank[rank];
  BS_ASSIGN_OR_RETURN(groups.intraNode, MpiCommunicator::split(group, node, rank, dim));
  BS_ASSIGN_OR_RETURN(groups.interNode, MpiCommunicator::split(group, intraRank, node, dim));
  return groups;
}

Result<int32_t> sharedMemoryNodeId(MPI_Comm world) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm shared = MPI_COMM_NULL;
  BS_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  int32_t first = rank;
  const int rc = MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT32_T, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  BS_MPI_CHECK(rc);
  return first;
}

}  // namespace bubblescope::engine
