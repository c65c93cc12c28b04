#include "fake_device_communicator.h"

#include <numeric>

#include "fake_device_backend.h"

namespace bubblescope::engine::testing {

class FakeDeviceCommunicator::Pending final : public PendingComm {
 public:
  Pending(Communicator& inner, CommHandle handle, DeviceLog& log, int64_t id)
      : inner_(inner), handle_(std::move(handle)), log_(log), id_(id) {}
  Status wait(CommTimes& times) override {
    const Status s = inner_.wait(handle_, &times);
    log_.wait(id_);
    return s;
  }

 private:
  Communicator& inner_;
  CommHandle handle_;
  DeviceLog& log_;
  int64_t id_;
};

FakeDeviceCommunicator::FakeDeviceCommunicator(std::unique_ptr<Communicator> inner,
                                               DeviceLog& log, std::string kind,
                                               bool pointToPoint)
    : Communicator(inner->dim(), inner->worldRanks(), inner->rank()),
      inner_(std::move(inner)),
      log_(log),
      kind_(std::move(kind)),
      pointToPoint_(pointToPoint) {}

Result<std::unique_ptr<PendingComm>> FakeDeviceCommunicator::launch(const CommOp& op,
                                                                    bool /*blocking*/) {
  const int64_t bytes = elementBytes(op.type);
  auto sum = [](const std::vector<int>& c) { return std::accumulate(c.begin(), c.end(), 0LL); };
  int64_t sent = 0, received = 0;
  const void* readOnly = op.send;  // what the op reads besides recv
  bool readsRecv = false;
  switch (op.kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kBroadcast:
      received = op.count;
      readsRecv = true;
      break;
    case CollectiveKind::kReduceScatter:
      sent = sum(op.counts);
      received = op.counts.at(rank());
      break;
    case CollectiveKind::kAllGather:
      sent = op.counts.at(rank());
      received = sum(op.counts);
      readsRecv = op.send == nullptr;  // in place: this rank's part is read from recv
      break;
    case CollectiveKind::kSend:
      sent = op.count;
      break;
    case CollectiveKind::kRecv:
      received = op.count;
      break;
    case CollectiveKind::kAllToAll:
      sent = sum(op.counts);
      received = sum(op.recvCounts);
      break;
  }
  if ((sent > 0 && op.send != nullptr && !isFakeDevice(op.send)) ||
      (received > 0 && !isFakeDevice(op.recv))) {
    return Status::invalidArgument(std::string(collectiveName(op.kind)) + " over " + kind_ +
                                   " was handed a host buffer; a device communicator moves "
                                   "device buffers only");
  }
  std::vector<ByteRange> reads = deviceRange(readOnly, static_cast<size_t>(sent * bytes));
  const std::vector<ByteRange> writes =
      deviceRange(op.recv, static_cast<size_t>(received * bytes));
  if (readsRecv) reads.insert(reads.end(), writes.begin(), writes.end());
  std::string name = std::string(collectiveName(op.kind)) + " " +
                     std::string(trace_model::toString(op.trace.dim.value_or(dim()))) + " " +
                     (op.trace.name != nullptr ? op.trace.name : "");
  const int64_t id = log_.start(std::move(name), std::move(reads), writes);
  CommOp host = op;
  host.send = hostAddress(op.send);
  host.recv = hostAddress(op.recv);
  BS_ASSIGN_OR_RETURN(CommHandle handle, inner_->start(std::move(host)));
  return std::unique_ptr<PendingComm>(new Pending(*inner_, std::move(handle), log_, id));
}

}  // namespace bubblescope::engine::testing
