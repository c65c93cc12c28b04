// DeviceGroups: the process groups of a rank that trains on a device
// backend (a GPU), as communicators that move device buffers: one per group
// of the rank's MpiGrid that the trainer hands device tensors to: dp, tp,
// pp (point to point) when the layout pipelines, the dp group's node
// communicators when its all-reduce is hierarchical, and the expert-dp
// group (the experts' gradients) under expert parallelism. The ep group
// itself stays the grid's: the MoE layer's all-to-alls exchange host
// buffers (moe_layer.h).
//
// Each group's communicator is made by a DeviceCommFactory from a duplicate
// of the grid's MPI communicator of that group (the grid keeps its own for
// host traffic: heartbeats, memory reports, the grad codecs' payloads). A
// group whose grid communicator paces an emulated inter-node link (the dp
// group, or the inter-node group of a hierarchical all-reduce: mpi_grid.h)
// gets a duplicate that paces the same link, and must be host-staged, so
// its device buffers cross the emulated link as the CPU run's do. The CUDA build's factory
// (deviceCommFactoryFor(), engine/cuda/device_comm_factory.cpp) is
// makeDeviceCommunicator() (engine/cuda/nccl_communicator.h): NCCL on its
// own stream ordered after the backend's compute stream, or, when ranks of
// the group share a GPU, the MPI communicator behind host staging
// (host_staged_communicator.h). Tests give a recording factory.
//
// Contract: create() is collective over every rank of the grid's world:
// the groups are made in the order dp, tp, pp, intra-node, inter-node, expert-dp on every rank (a
// factory may run collectives over the group, as NCCL's set-up does). The grid and the backend the
// factory orders itself after outlive the groups. Not thread-safe (the training thread's).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "common/result.h"
#include "engine/backend.h"
#include "engine/parallel/communicator.h"
#include "engine/parallel/mpi_communicator.h"
#include "engine/parallel/mpi_grid.h"

namespace bubblescope::engine {

// Makes the device communicator of one group from an MPI communicator of
// exactly that group (owned from now on); `pointToPoint`: the group also
// sends and receives (the pp group); `hostStaged`: the group must move its
// device buffers through host memory over `group` itself (host staging,
// host_staged_communicator.h), never NCCL: `group` paces an emulated
// inter-node link (link_pacer.h) that only its MPI messages go through.
using DeviceCommFactory = std::function<Result<std::unique_ptr<Communicator>>(
    std::unique_ptr<MpiCommunicator> group, bool pointToPoint, bool hostStaged)>;

// The factory of `backend`'s device: NCCL or host staging for a CUDA
// backend; an error naming the backend for any other (and in a build
// without CUDA).
Result<DeviceCommFactory> deviceCommFactoryFor(Backend& backend);

class DeviceGroups {
 public:
  // `pipeline`: make the pp group too (the layout's pp > 1).
  static Result<std::unique_ptr<DeviceGroups>> create(MpiGrid& grid, bool pipeline,
                                                      const DeviceCommFactory& make);

  Communicator& dp() { return *dp_; }
  Communicator& tp() { return *tp_; }
  Communicator* pp() { return pp_.get(); }  // null without a pipeline
  // The grid's dpIntraNode() / dpInterNode() on device buffers (null when flat).
  Communicator* dpIntraNode() { return intra_.get(); }
  Communicator* dpInterNode() { return inter_.get(); }
  // The grid's expertDp() on device buffers (null without expert parallelism).
  Communicator* expertDp() { return expertDp_.get(); }
  // Every group made, in creation order (dp, tp, pp, intra-node, inter-node, expert-dp).
  std::vector<const Communicator*> all() const;

 private:
  DeviceGroups() = default;
  std::unique_ptr<Communicator> dp_, tp_, pp_, intra_, inter_, expertDp_;
};

}  // namespace bubblescope::engine
