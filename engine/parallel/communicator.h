// Communicator: the collectives and transfers of one process group (the dp,
// tp or pp group of a rank, or the world), blocking or non-blocking with a
// handle, each traced as one span on the communication lane.
//
// Contract:
// - One Communicator per group per rank; its methods are called from one
//   thread (the rank's training thread). Every rank of the group issues the
//   group's collectives in the same order (MPI's rule).
// - start() returns a handle that must be waited exactly once; the buffers
//   of the op must stay alive and untouched (recv side) until wait()
//   returns. Blocking calls are start() + wait().
// - Ranks in arguments (root, peer) are ranks in the group; traced peers are
//   world ranks (events.peer).
// - Reductions are sums. Counts are elements, bytes are elements × size.
// - Tracing: wait() records the span [start of the transfer, completion] on
//   the Recorder given to setRecorder() (kind from the op, Lane
//   kCommunication, dim the communicator's or the op's, bytes = the bytes
//   this rank sends or receives: the buffer for all-reduce and broadcast,
//   the whole gathered/scattered buffer for all-gather and reduce-scatter,
//   the whole send buffer for all-to-all (what nccl-tests counts as its
//   size, this rank's own part included), the message for send and
//   receive). Sends and receives go on Lane
//   kPipeline, everything else on kCommunication. A group of one rank
//   runs its collectives as local copies and records no span: nothing
//   crosses a link, so a dp 1 run shows no dp traffic.
// - Waiting is not communication (docs/design.md: a bubble is never hidden in a
//   receive). When the backend saw the call wait for its peers (CommTimes::
//   readyNs > startNs) the span is split in two: [start, ready] is an
//   EventKind::kWait span on the same lane (same dim, step, micro-batch,
//   stage, chunk and peer; 0 bytes; name CommTrace::waitName or "wait"), and
//   only [ready, end] is the op's span with its bytes. MpiCommunicator
//   observes it for blocking receives and for the blocking collectives of a
//   pp group (see there); other calls report readyNs = startNs. This is the
//   one place a wait is split from its transfer: the schedule executor's
//   pipeline receives are blocking receives here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/result.h"
#include "tracer/recorder.h"

namespace bubblescope::engine {

enum class CollectiveKind : uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kSend,
  kRecv,
  kAllToAll,  // variable sizes (MPI_Alltoallv)
};
const char* collectiveName(CollectiveKind kind);  // "all_reduce", ...
trace_model::EventKind eventKindOf(CollectiveKind kind);

// What a buffer's elements are. Sums of the 16-bit and int8-block types are
// defined once in reduced_types.h (every backend adds them that way).
enum class ElementType : uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,    // IEEE binary16 bit patterns
  kBFloat16,   // bfloat16 bit patterns
  kInt32,      // e.g. Top-K indices
  kInt8Block,  // Int8Block (reduced_types.h): int8 codes with their fp32 scale
};
int64_t elementBytes(ElementType type);

// How a call appears in the trace.
struct CommTrace {
  const char* name = nullptr;  // null: the collective's name; must outlive the span
  int32_t step = -1;
  int32_t microBatch = -1;
  int32_t stage = -1;  // pipeline transfers: the stage and chunk they serve
  int32_t chunk = -1;
  std::optional<trace_model::ParallelDim> dim;  // unset: the communicator's dimension
  // Record the span when start() returns (the posting), not at wait(): for
  // pipeline sends, whose completion the sender only observes at the end of
  // the step (the receiver's span shows the transfer).
  bool spanAtStart = false;
  const char* waitName = nullptr;  // the wait span's name (null: "wait"); must outlive it
};

// When a call ran, on the communicator's clock. readyNs: when its peers were
// there (a receive's message had arrived, every rank of a collective had
// joined); startNs when the call did not wait for them or the backend cannot
// tell. startNs <= readyNs <= endNs.
struct CommTimes {
  int64_t startNs = 0;
  int64_t readyNs = 0;
  int64_t endNs = 0;
};

// One call. Buffers are not owned.
struct CommOp {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  ElementType type = ElementType::kFloat32;
  // all-reduce: data in recv (in place). broadcast: data in recv.
  // reduce-scatter: send holds sum(counts) elements, recv counts[rank].
  // all-gather: send holds counts[rank] elements (null: already in place at
  //   its displacement in recv), recv sum(counts).
  // send: send holds count elements; recv: recv receives count elements.
  // all-to-all: send holds sum(counts) elements, counts[r] of them (in rank
  //   order) for group rank r; recv receives sum(recvCounts), recvCounts[r]
  //   of them from rank r, in rank order. Rank a's counts[b] must equal rank
  //   b's recvCounts[a] (the caller's contract; MPI fails on a mismatch).
  const void* send = nullptr;
  void* recv = nullptr;
  int64_t count = 0;            // all-reduce, broadcast, send, recv
  std::vector<int> counts;      // reduce-scatter, all-gather, all-to-all (sent): one per group rank
  std::vector<int> recvCounts;  // all-to-all (received): one per group rank
  int32_t peer = -1;            // broadcast: root; send, recv: the other group rank
  int32_t tag = 0;              // send, recv
  CommTrace trace;

  int64_t elements() const;  // what the traced bytes count
  int64_t bytes() const { return elements() * elementBytes(type); }
};

// The backend's side of a started op.
class PendingComm {
 public:
  virtual ~PendingComm() = default;
  // Blocks until the op completed and says when it ran.
  virtual Status wait(CommTimes& times) = 0;
};

class CommHandle {
 public:
  CommHandle() = default;
  bool valid() const { return pending_ != nullptr; }

 private:
  friend class Communicator;
  std::unique_ptr<PendingComm> pending_;
  CommOp op_;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int32_t rank() const { return rank_; }  // in the group
  int32_t size() const { return static_cast<int32_t>(worldRanks_.size()); }
  trace_model::ParallelDim dim() const { return dim_; }
  int32_t worldRankOf(int32_t groupRank) const { return worldRanks_.at(groupRank); }
  const std::vector<int32_t>& worldRanks() const { return worldRanks_; }
  // The device streams (cudaStream_t handles) this communicator launches its
  // GPU kernels on and that no other work uses, so the tracer can tag their
  // kernels with dim() (tracer/stream_dims.h); none for a host communicator.
  virtual std::vector<const void*> deviceStreams() const { return {}; }

  // Spans of later wait() calls go here (null: none). Not while ops are in flight.
  void setRecorder(tracer::Recorder* recorder) { recorder_ = recorder; }
  tracer::Recorder* recorder() const { return recorder_; }
  // The clock of spans: the recorder's, or the host's.
  int64_t nowNs() const { return recorder_ ? recorder_->now() : tracer::hostNowNs(); }

  // Checks the op against the group (counts, peer, sizes) and starts it.
  Result<CommHandle> start(CommOp op);
  // Completes a started op and records its span; the handle becomes invalid.
  // `times` (optional) receives when it ran (a wrapping backend passes them on).
  Status wait(CommHandle& handle, CommTimes* times = nullptr);
  // start + wait (a backend may run it on the calling thread).
  Status run(CommOp op, CommTimes* times = nullptr);

  // Typed conveniences over start()/run(); spans are float32 unless double.
  Result<CommHandle> startAllReduce(std::span<float> data, const CommTrace& trace = {});
  Status allReduce(std::span<float> data, const CommTrace& trace = {});
  Status allReduce(std::span<double> data, const CommTrace& trace = {});
  // The same for any element type: `count` elements of `type` at `data`.
  Result<CommHandle> startAllReduce(ElementType type, void* data, int64_t count,
                                    const CommTrace& trace = {});
  // recv (counts[rank()]) = this rank's part of the sum of every rank's send.
  Result<CommHandle> startReduceScatter(std::span<const float> send, std::span<float> recv,
                                        std::vector<int> counts, const CommTrace& trace = {});
  Status reduceScatter(std::span<const float> send, std::span<float> recv, std::vector<int> counts,
                       const CommTrace& trace = {});
  // recv = every rank's part in rank order; send empty: in place (this rank's
  // part already sits at its displacement in recv).
  Result<CommHandle> startAllGather(std::span<const float> send, std::span<float> recv,
                                    std::vector<int> counts, const CommTrace& trace = {});
  Status allGather(std::span<const float> send, std::span<float> recv, std::vector<int> counts,
                   const CommTrace& trace = {});
  // The same for any element type; `send` holds counts[rank()] elements (not
  // null), `recv` sum(counts).
  Result<CommHandle> startAllGather(ElementType type, const void* send, void* recv,
                                    std::vector<int> counts, const CommTrace& trace = {});
  Status broadcast(std::span<float> data, int32_t root, const CommTrace& trace = {});
  Result<CommHandle> startSend(std::span<const float> data, int32_t peer, int32_t tag,
                               const CommTrace& trace = {});
  Status send(std::span<const float> data, int32_t peer, int32_t tag, const CommTrace& trace = {});
  Result<CommHandle> startRecv(std::span<float> data, int32_t peer, int32_t tag,
                               const CommTrace& trace = {});
  Status recv(std::span<float> data, int32_t peer, int32_t tag, const CommTrace& trace = {});
  // All-to-all with variable sizes: send[sendCounts[0..r) prefix, + sendCounts[r]]
  // goes to group rank r; recv receives recvCounts[r] elements from rank r,
  // packed in rank order. Both spans must hold exactly the sums of their counts.
  Result<CommHandle> startAllToAll(std::span<const float> send, std::span<float> recv,
                                   std::vector<int> sendCounts, std::vector<int> recvCounts,
                                   const CommTrace& trace = {});
  Status allToAll(std::span<const float> send, std::span<float> recv, std::vector<int> sendCounts,
                  std::vector<int> recvCounts, const CommTrace& trace = {});

 protected:
  Communicator(trace_model::ParallelDim dim, std::vector<int32_t> worldRanks, int32_t rank)
      : dim_(dim), worldRanks_(std::move(worldRanks)), rank_(rank) {}
  // Starts a checked op. `blocking`: the caller waits right away, so the
  // backend may complete it before returning.
  virtual Result<std::unique_ptr<PendingComm>> launch(const CommOp& op, bool blocking) = 0;

 private:
  Status check(const CommOp& op) const;
  void record(const CommOp& op, const CommTimes& times);

  trace_model::ParallelDim dim_;
  std::vector<int32_t> worldRanks_;
  int32_t rank_;
  tracer::Recorder* recorder_ = nullptr;
};

// Offsets of packed parts: displacements(c)[r] = c[0] + ... + c[r-1].
std::vector<int> displacements(const std::vector<int>& counts);

// Per-rank element counts of `total` elements split as evenly as possible in
// rank order (the first total % n ranks get one more).
std::vector<int> evenCounts(int64_t total, int32_t n);

}  // namespace bubblescope::engine
