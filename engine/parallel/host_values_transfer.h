// Host values over a group whose communicator may move device buffers only
// (a GPU rank's NCCL or host-staged groups, device_groups.h): the rare
// transfers of host data a parallel rank makes outside the step (a
// checkpoint's gather to the writing rank, tp slices reassembled for
// reading parameters back). On a host backend the host buffers go to the
// communicator as they are (bit for bit what a direct call does); on a
// device backend they are staged through tensors of the backend's memory:
// uploaded, moved, downloaded.
//
// Contract: the calls are those of Communicator (communicator.h) with host
// spans: collective over `group` in the same order on every rank (send and
// receive matched as a Communicator's). `backend` is the rank's, whose memory
// `group` moves. Downloads are synchronisation points of the backend.
#pragma once

#include <span>
#include <vector>

#include "common/result.h"
#include "engine/backend.h"
#include "engine/parallel/communicator.h"

namespace bubblescope::engine {

Status sendHostValues(Communicator& group, Backend& backend, std::span<const float> data,
                      int32_t peer, int32_t tag, const CommTrace& trace = {});
Status recvHostValues(Communicator& group, Backend& backend, std::span<float> data, int32_t peer,
                      int32_t tag, const CommTrace& trace = {});
// recv (sum of counts) = every rank's `send` (counts[rank]) in rank order.
Status allGatherHostValues(Communicator& group, Backend& backend, std::span<const float> send,
                           std::span<float> recv, std::vector<int> counts,
                           const CommTrace& trace = {});

}  // namespace bubblescope::engine
