#include "engine/parallel/host_staged_communicator.h"

#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

namespace bubblescope::engine {

// The host copies of one op, the inner op's handle, and what to copy back.
class HostStagedCommunicator::StagedComm final : public PendingComm {
 public:
  StagedComm(HostStagedCommunicator* owner, int64_t startNs) : owner_(owner), startNs_(startNs) {}

  std::vector<std::byte> sendHost;
  std::vector<std::byte> recvHost;
  void* copyBackTo = nullptr;  // device destination of recvHost (null: none)
  size_t copyBackOffset = 0;   // bytes into recvHost (and copyBackTo) to start at
  size_t copyBackBytes = 0;
  CommHandle inner;
  Status innerStatus;    // a blocking op already ran: its outcome
  CommTimes innerTimes;  // ... and when (its readyNs: when the peers were there)

  Status wait(CommTimes& times) override {
    Status status = inner.valid() ? owner_->inner_->wait(inner, &innerTimes) : innerStatus;
    if (status.isOk() && copyBackTo != nullptr && copyBackBytes > 0) {
      status = owner_->copier_->toDevice(static_cast<std::byte*>(copyBackTo) + copyBackOffset,
                                         recvHost.data() + copyBackOffset, copyBackBytes);
    }
    // When the inner op waited for its peers, the wait ends where its ended
    // (the staging copy before it is transfer work).
    const bool waited = innerTimes.readyNs > innerTimes.startNs;
    times = {startNs_, waited ? innerTimes.readyNs : startNs_, owner_->nowNs()};
    return status;
  }

 private:
  HostStagedCommunicator* owner_;
  int64_t startNs_;
};

HostStagedCommunicator::HostStagedCommunicator(std::unique_ptr<Communicator> inner,
                                               std::unique_ptr<DeviceCopier> copier)
    : Communicator(inner->dim(), inner->worldRanks(), inner->rank()),
      inner_(std::move(inner)),
      copier_(std::move(copier)) {}

Result<std::unique_ptr<PendingComm>> HostStagedCommunicator::launch(const CommOp& op,
                                                                    bool blocking) {
  auto staged = std::make_unique<StagedComm>(this, nowNs());
  const size_t elem = static_cast<size_t>(elementBytes(op.type));
  CommOp host = op;
  host.trace = {};
  auto displacement = [&](int32_t r) {
    return static_cast<size_t>(std::accumulate(op.counts.begin(), op.counts.begin() + r, 0)) * elem;
  };
  switch (op.kind) {
    case CollectiveKind::kAllReduce: {
      const size_t bytes = static_cast<size_t>(op.count) * elem;
      staged->recvHost.resize(bytes);
      BS_RETURN_IF_ERROR(copier_->toHost(staged->recvHost.data(), op.recv, bytes));
      staged->copyBackBytes = bytes;
      break;
    }
    case CollectiveKind::kBroadcast: {
      const size_t bytes = static_cast<size_t>(op.count) * elem;
      staged->recvHost.resize(bytes);
      if (op.peer == rank()) {
        BS_RETURN_IF_ERROR(copier_->toHost(staged->recvHost.data(), op.recv, bytes));
      } else {
        staged->copyBackBytes = bytes;
      }
      break;
    }
    case CollectiveKind::kReduceScatter: {
      const size_t whole = static_cast<size_t>(op.elements()) * elem;
      const size_t mine = static_cast<size_t>(op.counts[rank()]) * elem;
      staged->sendHost.resize(whole);
      staged->recvHost.resize(mine);
      BS_RETURN_IF_ERROR(copier_->toHost(staged->sendHost.data(), op.send, whole));
      staged->copyBackBytes = mine;
      break;
    }
    case CollectiveKind::kAllGather: {
      const size_t whole = static_cast<size_t>(op.elements()) * elem;
      const size_t mine = static_cast<size_t>(op.counts[rank()]) * elem;
      staged->recvHost.resize(whole);
      if (op.send != nullptr) {
        staged->sendHost.resize(mine);
        BS_RETURN_IF_ERROR(copier_->toHost(staged->sendHost.data(), op.send, mine));
      } else {  // in place: this rank's part sits at its displacement in recv
        const size_t at = displacement(rank());
        BS_RETURN_IF_ERROR(copier_->toHost(staged->recvHost.data() + at,
                                           static_cast<const std::byte*>(op.recv) + at, mine));
      }
      staged->copyBackBytes = whole;
      break;
    }
    case CollectiveKind::kAllToAll: {
      const size_t sent = static_cast<size_t>(op.elements()) * elem;
      const size_t received =
          static_cast<size_t>(std::accumulate(op.recvCounts.begin(), op.recvCounts.end(), 0)) *
          elem;
      staged->sendHost.resize(sent);
      staged->recvHost.resize(received);
      BS_RETURN_IF_ERROR(copier_->toHost(staged->sendHost.data(), op.send, sent));
      staged->copyBackBytes = received;
      break;
    }
    case CollectiveKind::kSend: {
      const size_t bytes = static_cast<size_t>(op.count) * elem;
      staged->sendHost.resize(bytes);
      BS_RETURN_IF_ERROR(copier_->toHost(staged->sendHost.data(), op.send, bytes));
      break;
    }
    case CollectiveKind::kRecv: {
      const size_t bytes = static_cast<size_t>(op.count) * elem;
      staged->recvHost.resize(bytes);
      staged->copyBackBytes = bytes;
      break;
    }
  }
  if (staged->copyBackBytes > 0) staged->copyBackTo = op.recv;
  host.send = op.send != nullptr && !staged->sendHost.empty() ? staged->sendHost.data() : nullptr;
  host.recv = staged->recvHost.empty() ? nullptr : staged->recvHost.data();
  if (blocking) {
    staged->innerStatus = inner_->run(std::move(host), &staged->innerTimes);
  } else {
    BS_ASSIGN_OR_RETURN(staged->inner, inner_->start(std::move(host)));
  }
  return std::unique_ptr<PendingComm>(std::move(staged));
}

}  // namespace bubblescope::engine
