#include "engine/parallel/communicator.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "engine/parallel/reduced_types.h"

namespace bubblescope::engine {

const char* collectiveName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kSend:
      return "send";
    case CollectiveKind::kRecv:
      return "recv";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
  }
  return "collective";
}

trace_model::EventKind eventKindOf(CollectiveKind kind) {
  using trace_model::EventKind;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return EventKind::kAllReduce;
    case CollectiveKind::kReduceScatter:
      return EventKind::kReduceScatter;
    case CollectiveKind::kAllGather:
      return EventKind::kAllGather;
    case CollectiveKind::kBroadcast:
      return EventKind::kBroadcast;
    case CollectiveKind::kSend:
      return EventKind::kSend;
    case CollectiveKind::kRecv:
      return EventKind::kRecv;
    case CollectiveKind::kAllToAll:
      return EventKind::kAllToAll;
  }
  return EventKind::kOther;
}

int64_t elementBytes(ElementType type) {
  switch (type) {
    case ElementType::kFloat64:
      return 8;
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
      return 2;
    case ElementType::kInt8Block:
      return static_cast<int64_t>(sizeof(Int8Block));
    case ElementType::kFloat32:
    case ElementType::kInt32:
      return 4;
  }
  return 4;
}

int64_t CommOp::elements() const {
  switch (kind) {
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll:  // the send buffer
      return std::accumulate(counts.begin(), counts.end(), int64_t{0});
    default:
      return count;
  }
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> displs(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
  return displs;
}

std::vector<int> evenCounts(int64_t total, int32_t n) {
  std::vector<int> counts(n);
  for (int32_t r = 0; r < n; ++r) counts[r] = static_cast<int>(total / n + (r < total % n));
  return counts;
}

namespace {

// One count per group rank, each >= 0, the total addressable by MPI (int).
Status checkCounts(const std::string& what, const std::vector<int>& counts, int32_t size) {
  if (static_cast<int32_t>(counts.size()) != size) {
    return Status::invalidArgument(what + " needs " + std::to_string(size) +
                                   " counts (one per rank), got " + std::to_string(counts.size()));
  }
  int64_t total = 0;
  for (int c : counts) {
    if (c < 0) return Status::invalidArgument(what + " count " + std::to_string(c) + " < 0");
    total += c;
  }
  if (total > std::numeric_limits<int>::max()) {
    return Status::invalidArgument(what + " of " + std::to_string(total) +
                                   " elements is outside [0, 2^31)");
  }
  return Status::ok();
}

}  // namespace

Status Communicator::check(const CommOp& op) const {
  const std::string what = collectiveName(op.kind);
  const bool allToAll = op.kind == CollectiveKind::kAllToAll;
  const bool grouped = op.kind == CollectiveKind::kReduceScatter ||
                       op.kind == CollectiveKind::kAllGather || allToAll;
  if (grouped) {
    BS_RETURN_IF_ERROR(checkCounts(what, op.counts, size()));
    if (allToAll) BS_RETURN_IF_ERROR(checkCounts(what + " (received)", op.recvCounts, size()));
  } else if (op.count < 0 || op.count > std::numeric_limits<int>::max()) {
    return Status::invalidArgument(what + " of " + std::to_string(op.count) +
                                   " elements is outside [0, 2^31)");
  }
  const bool pointToPoint = op.kind == CollectiveKind::kSend || op.kind == CollectiveKind::kRecv;
  if ((pointToPoint || op.kind == CollectiveKind::kBroadcast) &&
      (op.peer < 0 || op.peer >= size())) {
    return Status::invalidArgument(what + " names rank " + std::to_string(op.peer) +
                                   " of a group of " + std::to_string(size()));
  }
  if (pointToPoint && op.peer == rank_) {
    return Status::invalidArgument(what + " to itself (rank " + std::to_string(rank_) + ")");
  }
  const int64_t received =
      allToAll ? std::accumulate(op.recvCounts.begin(), op.recvCounts.end(), int64_t{0})
               : op.elements();
  if (op.kind != CollectiveKind::kSend && op.recv == nullptr && received > 0) {
    return Status::invalidArgument(what + " has no receive buffer");
  }
  return Status::ok();
}

Result<CommHandle> Communicator::start(CommOp op) {
  BS_RETURN_IF_ERROR(check(op));
  CommHandle handle;
  const int64_t startNs = nowNs();
  BS_ASSIGN_OR_RETURN(handle.pending_, launch(op, /*blocking=*/false));
  if (op.trace.spanAtStart) record(op, {startNs, startNs, nowNs()});
  handle.op_ = std::move(op);
  return handle;
}

Status Communicator::wait(CommHandle& handle, CommTimes* times) {
  if (!handle.valid()) return Status::failedPrecondition("waiting on an empty comm handle");
  CommTimes t;
  const Status status = handle.pending_->wait(t);
  handle.pending_.reset();
  if (status.isOk() && !handle.op_.trace.spanAtStart) record(handle.op_, t);
  if (times != nullptr) *times = t;
  return status;
}

Status Communicator::run(CommOp op, CommTimes* times) {
  BS_RETURN_IF_ERROR(check(op));
  BS_ASSIGN_OR_RETURN(auto pending, launch(op, /*blocking=*/true));
  CommTimes t;
  BS_RETURN_IF_ERROR(pending->wait(t));
  record(op, t);
  if (times != nullptr) *times = t;
  return Status::ok();
}

void Communicator::record(const CommOp& op, const CommTimes& times) {
  if (recorder_ == nullptr) return;
  const bool pointToPoint = op.kind == CollectiveKind::kSend || op.kind == CollectiveKind::kRecv;
  if (size() == 1 && !pointToPoint) return;  // a local copy: no traffic to show
  tracer::SpanInfo info;
  info.lane = pointToPoint ? trace_model::Lane::kPipeline : trace_model::Lane::kCommunication;
  info.step = op.trace.step;
  info.microBatch = op.trace.microBatch;
  info.stage = op.trace.stage;
  info.chunk = op.trace.chunk;
  info.dim = op.trace.dim.value_or(dim_);
  info.peer = pointToPoint ? worldRankOf(op.peer) : -1;
  // Clamped so a backend's readyNs outside [start, end] cannot make a
  // negative span.
  const int64_t readyNs = std::clamp(times.readyNs, times.startNs, times.endNs);
  if (readyNs > times.startNs) {
    info.kind = trace_model::EventKind::kWait;
    info.name = op.trace.waitName ? op.trace.waitName : "wait";
    recorder_->record(info, times.startNs, readyNs);
  }
  info.kind = eventKindOf(op.kind);
  info.name = op.trace.name ? op.trace.name : collectiveName(op.kind);
  info.bytes = op.bytes();
  recorder_->record(info, readyNs, times.endNs);
}

namespace {

CommOp makeOp(CollectiveKind kind, ElementType type, const void* send, void* recv, int64_t count,
              const CommTrace& trace) {
  CommOp op;
  op.kind = kind;
  op.type = type;
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.trace = trace;
  return op;
}

}  // namespace

Result<CommHandle> Communicator::startAllReduce(std::span<float> data, const CommTrace& trace) {
  return start(makeOp(CollectiveKind::kAllReduce, ElementType::kFloat32, nullptr, data.data(),
                      static_cast<int64_t>(data.size()), trace));
}

Status Communicator::allReduce(std::span<float> data, const CommTrace& trace) {
  return run(makeOp(CollectiveKind::kAllReduce, ElementType::kFloat32, nullptr, data.data(),
                    static_cast<int64_t>(data.size()), trace));
}

Status Communicator::allReduce(std::span<double> data, const CommTrace& trace) {
  return run(makeOp(CollectiveKind::kAllReduce, ElementType::kFloat64, nullptr, data.data(),
                    static_cast<int64_t>(data.size()), trace));
}

namespace {

// Buffer sizes against counts; a wrong number of counts is left to check().
Status checkGrouped(const char* what, size_t sendSize, size_t recvSize, const std::vector<int>& c,
                    int32_t rank, int32_t size, bool scatter) {
  if (static_cast<int32_t>(c.size()) != size) return Status::ok();
  const int64_t total = std::accumulate(c.begin(), c.end(), int64_t{0});
  const int64_t whole = scatter ? static_cast<int64_t>(sendSize) : static_cast<int64_t>(recvSize);
  const int64_t part = scatter ? static_cast<int64_t>(recvSize) : static_cast<int64_t>(sendSize);
  const bool inPlace = !scatter && sendSize == 0;
  if (whole != total || (!inPlace && part != c[rank])) {
    return Status::invalidArgument(
        std::string(what) + ": buffers of " + std::to_string(whole) + " and " +
        std::to_string(part) + " elements do not match the counts (total " + std::to_string(total) +
        ", this rank " + std::to_string(c[rank]) + ")");
  }
  return Status::ok();
}

}  // namespace

Result<CommHandle> Communicator::startAllReduce(ElementType type, void* data, int64_t count,
                                                const CommTrace& trace) {
  return start(makeOp(CollectiveKind::kAllReduce, type, nullptr, data, count, trace));
}

Result<CommHandle> Communicator::startAllGather(ElementType type, const void* send, void* recv,
                                                std::vector<int> counts, const CommTrace& trace) {
  if (send == nullptr && static_cast<int32_t>(counts.size()) == size() && counts[rank_] > 0) {
    return Status::invalidArgument("all_gather: no send buffer");
  }
  CommOp op = makeOp(CollectiveKind::kAllGather, type, send, recv, 0, trace);
  op.counts = std::move(counts);
  return start(std::move(op));
}

Result<CommHandle> Communicator::startReduceScatter(std::span<const float> send,
                                                    std::span<float> recv, std::vector<int> counts,
                                                    const CommTrace& trace) {
  BS_RETURN_IF_ERROR(checkGrouped("reduce_scatter", send.size(), recv.size(), counts, rank_, size(),
                                  /*scatter=*/true));
  CommOp op = makeOp(CollectiveKind::kReduceScatter, ElementType::kFloat32, send.data(),
                     recv.data(), 0, trace);
  op.counts = std::move(counts);
  return start(std::move(op));
}

Status Communicator::reduceScatter(std::span<const float> send, std::span<float> recv,
                                   std::vector<int> counts, const CommTrace& trace) {
  BS_RETURN_IF_ERROR(checkGrouped("reduce_scatter", send.size(), recv.size(), counts, rank_, size(),
                                  /*scatter=*/true));
  CommOp op = makeOp(CollectiveKind::kReduceScatter, ElementType::kFloat32, send.data(),
                     recv.data(), 0, trace);
  op.counts = std::move(counts);
  return run(std::move(op));
}

Result<CommHandle> Communicator::startAllGather(std::span<const float> send, std::span<float> recv,
                                                std::vector<int> counts, const CommTrace& trace) {
  BS_RETURN_IF_ERROR(checkGrouped("all_gather", send.size(), recv.size(), counts, rank_, size(),
                                  /*scatter=*/false));
  CommOp op = makeOp(CollectiveKind::kAllGather, ElementType::kFloat32,
                     send.empty() ? nullptr : send.data(), recv.data(), 0, trace);
  op.counts = std::move(counts);
  return start(std::move(op));
}

Status Communicator::allGather(std::span<const float> send, std::span<float> recv,
                               std::vector<int> counts, const CommTrace& trace) {
  BS_RETURN_IF_ERROR(checkGrouped("all_gather", send.size(), recv.size(), counts, rank_, size(),
                                  /*scatter=*/false));
  CommOp op = makeOp(CollectiveKind::kAllGather, ElementType::kFloat32,
                     send.empty() ? nullptr : send.data(), recv.data(), 0, trace);
  op.counts = std::move(counts);
  return run(std::move(op));
}

Status Communicator::broadcast(std::span<float> data, int32_t root, const CommTrace& trace) {
  CommOp op = makeOp(CollectiveKind::kBroadcast, ElementType::kFloat32, nullptr, data.data(),
                     static_cast<int64_t>(data.size()), trace);
  op.peer = root;
  return run(std::move(op));
}

Result<CommHandle> Communicator::startSend(std::span<const float> data, int32_t peer, int32_t tag,
                                           const CommTrace& trace) {
  CommOp op = makeOp(CollectiveKind::kSend, ElementType::kFloat32, data.data(), nullptr,
                     static_cast<int64_t>(data.size()), trace);
  op.peer = peer;
  op.tag = tag;
  return start(std::move(op));
}

Status Communicator::send(std::span<const float> data, int32_t peer, int32_t tag,
                          const CommTrace& trace) {
  CommOp op = makeOp(CollectiveKind::kSend, ElementType::kFloat32, data.data(), nullptr,
                     static_cast<int64_t>(data.size()), trace);
  op.peer = peer;
  op.tag = tag;
  return run(std::move(op));
}

Result<CommHandle> Communicator::startRecv(std::span<float> data, int32_t peer, int32_t tag,
                                           const CommTrace& trace) {
  CommOp op = makeOp(CollectiveKind::kRecv, ElementType::kFloat32, nullptr, data.data(),
                     static_cast<int64_t>(data.size()), trace);
  op.peer = peer;
  op.tag = tag;
  return start(std::move(op));
}

Status Communicator::recv(std::span<float> data, int32_t peer, int32_t tag,
                          const CommTrace& trace) {
  CommOp op = makeOp(CollectiveKind::kRecv, ElementType::kFloat32, nullptr, data.data(),
                     static_cast<int64_t>(data.size()), trace);
  op.peer = peer;
  op.tag = tag;
  return run(std::move(op));
}

namespace {

// An all-to-all op over spans that must hold exactly the sums of the counts.
Result<CommOp> allToAllOp(std::span<const float> send, std::span<float> recv,
                          std::vector<int> sendCounts, std::vector<int> recvCounts,
                          const CommTrace& trace) {
  const int64_t sent = std::accumulate(sendCounts.begin(), sendCounts.end(), int64_t{0});
  const int64_t received = std::accumulate(recvCounts.begin(), recvCounts.end(), int64_t{0});
  if (sent != static_cast<int64_t>(send.size()) || received != static_cast<int64_t>(recv.size())) {
    return Status::invalidArgument(
        "all_to_all: buffers of " + std::to_string(send.size()) + " and " +
        std::to_string(recv.size()) + " elements do not match the counts (sent " +
        std::to_string(sent) + ", received " + std::to_string(received) + ")");
  }
  CommOp op =
      makeOp(CollectiveKind::kAllToAll, ElementType::kFloat32, send.data(), recv.data(), 0, trace);
  op.counts = std::move(sendCounts);
  op.recvCounts = std::move(recvCounts);
  return op;
}

}  // namespace

Result<CommHandle> Communicator::startAllToAll(std::span<const float> send, std::span<float> recv,
                                               std::vector<int> sendCounts,
                                               std::vector<int> recvCounts,
                                               const CommTrace& trace) {
  BS_ASSIGN_OR_RETURN(CommOp op,
                      allToAllOp(send, recv, std::move(sendCounts), std::move(recvCounts), trace));
  return start(std::move(op));
}

Status Communicator::allToAll(std::span<const float> send, std::span<float> recv,
                              std::vector<int> sendCounts, std::vector<int> recvCounts,
                              const CommTrace& trace) {
  BS_ASSIGN_OR_RETURN(CommOp op,
                      allToAllOp(send, recv, std::move(sendCounts), std::move(recvCounts), trace));
  return run(std::move(op));
}

}  // namespace bubblescope::engine
