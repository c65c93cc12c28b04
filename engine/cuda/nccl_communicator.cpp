#include "engine/cuda/nccl_communicator.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "engine/cuda/cuda_check.h"
#include "engine/parallel/mpi_check.h"

namespace bubblescope::engine {
namespace {

Status ncclError(ncclResult_t code, const char* call, const char* file, int line) {
  std::string name(call);
  name = name.substr(0, name.find('('));
  return Status::internal(name + " failed (" + file + ":" + std::to_string(line) +
                          "): " + ncclGetErrorString(code));
}

#define BS_NCCL_CHECK(call)                                     \
  do {                                                          \
    const ncclResult_t bs_nccl_rc_ = (call);                    \
    if (bs_nccl_rc_ != ncclSuccess) {                           \
      return ncclError(bs_nccl_rc_, #call, __FILE__, __LINE__); \
    }                                                           \
  } while (0)

// kInt8Block has no NCCL type (enqueue() refuses it).
ncclDataType_t ncclType(ElementType type) {
  switch (type) {
    case ElementType::kFloat64:
      return ncclFloat64;
    case ElementType::kFloat16:
      return ncclFloat16;
    case ElementType::kBFloat16:
      return ncclBfloat16;
    case ElementType::kInt32:
      return ncclInt32;
    default:
      return ncclFloat32;
  }
}

// An op queued on the communication stream; `done` fires when it finished.
class NcclPending final : public PendingComm {
 public:
  NcclPending(cudaEvent_t done, int64_t startNs, const Communicator* owner)
      : done_(done), startNs_(startNs), owner_(owner) {}
  ~NcclPending() override {
    if (done_ != nullptr) cudaEventDestroy(done_);
  }
  Status wait(CommTimes& times) override {
    BS_CUDA_CHECK(cudaEventSynchronize(done_));
    times = {startNs_, startNs_, owner_->nowNs()};  // NCCL does not show when peers joined
    return Status::ok();
  }

 private:
  cudaEvent_t done_;
  int64_t startNs_;
  const Communicator* owner_;
};

}  // namespace

Result<std::unique_ptr<NcclCommunicator>> NcclCommunicator::create(const MpiCommunicator& group,
                                                                   cudaStream_t computeStream,
                                                                   bool pointToPoint) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (group.rank() == 0) BS_NCCL_CHECK(ncclGetUniqueId(&id));
  BS_MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, group.comm()));
  std::unique_ptr<NcclCommunicator> c(
      new NcclCommunicator(group.dim(), group.worldRanks(), group.rank()));
  c->compute_ = computeStream;
  BS_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking));
  BS_NCCL_CHECK(ncclCommInitRank(&c->comm_, group.size(), id, group.rank()));
  c->sendLinks_.resize(group.size());
  c->recvLinks_.resize(group.size());
  if (pointToPoint) BS_RETURN_IF_ERROR(c->joinLinks(group));
  return c;
}

Status NcclCommunicator::joinLinks(const MpiCommunicator& group) {
  constexpr int kIdTag = 32000;  // above the engine's pipeline tags
  const int me = group.rank();
  // Every ordered pair (sender, receiver) in one global order; each rank
  // takes part in the pairs it belongs to.
  for (int from = 0; from < group.size(); ++from) {
    for (int to = 0; to < group.size(); ++to) {
      if (from == to || (me != from && me != to)) continue;
      ncclUniqueId id;
      std::memset(&id, 0, sizeof(id));
      if (me == from) {
        BS_NCCL_CHECK(ncclGetUniqueId(&id));
        BS_MPI_CHECK(MPI_Send(&id, sizeof(id), MPI_BYTE, to, kIdTag, group.comm()));
      } else {
        BS_MPI_CHECK(
            MPI_Recv(&id, sizeof(id), MPI_BYTE, from, kIdTag, group.comm(), MPI_STATUS_IGNORE));
      }
      Link& link = me == from ? sendLinks_[to] : recvLinks_[from];
      BS_CUDA_CHECK(cudaStreamCreateWithFlags(&link.stream, cudaStreamNonBlocking));
      BS_NCCL_CHECK(ncclCommInitRank(&link.comm, 2, id, me == from ? 0 : 1));
    }
  }
  return Status::ok();
}

NcclCommunicator::~NcclCommunicator() {
  for (auto* links : {&sendLinks_, &recvLinks_}) {
    for (Link& l : *links) {
      if (l.comm != nullptr) ncclCommDestroy(l.comm);
      if (l.stream != nullptr) cudaStreamDestroy(l.stream);
    }
  }
  if (comm_ != nullptr) ncclCommDestroy(comm_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

std::vector<const void*> NcclCommunicator::deviceStreams() const {
  std::vector<const void*> out{stream_};
  for (const auto* links : {&sendLinks_, &recvLinks_}) {
    for (const Link& l : *links) {
      if (l.stream != nullptr) out.push_back(l.stream);
    }
  }
  return out;
}

Status NcclCommunicator::enqueue(const CommOp& op, cudaStream_t& stream) {
  stream = stream_;
  if (op.type == ElementType::kInt8Block) {
    return Status::unsupported("NCCL cannot sum int8 blocks (grad compression int8)");
  }
  const ncclDataType_t type = ncclType(op.type);
  const size_t elem = static_cast<size_t>(elementBytes(op.type));
  const auto count = static_cast<size_t>(op.count);
  switch (op.kind) {
    case CollectiveKind::kAllReduce:
      BS_NCCL_CHECK(ncclAllReduce(op.recv, op.recv, count, type, ncclSum, comm_, stream_));
      return Status::ok();
    case CollectiveKind::kBroadcast:
      BS_NCCL_CHECK(ncclBroadcast(op.recv, op.recv, count, type, op.peer, comm_, stream_));
      return Status::ok();
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv: {
      const bool sending = op.kind == CollectiveKind::kSend;
      const Link& link = sending ? sendLinks_[op.peer] : recvLinks_[op.peer];
      if (link.comm == nullptr) {
        return Status::failedPrecondition(
            std::string(collectiveName(op.kind)) +
            " on an NCCL communicator made without point-to-point links");
      }
      stream = link.stream;
      if (sending) {
        BS_NCCL_CHECK(ncclSend(op.send, count, type, /*peer=*/1, link.comm, stream));
      } else {
        BS_NCCL_CHECK(ncclRecv(op.recv, count, type, /*peer=*/0, link.comm, stream));
      }
      return Status::ok();
    }
    case CollectiveKind::kAllToAll:
      return enqueueAllToAll(op);
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      break;
  }
  const std::vector<int>& counts = op.counts;
  std::vector<size_t> displs(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
  const bool even =
      std::all_of(counts.begin(), counts.end(), [&](int c) { return c == counts[0]; });
  auto* recv = static_cast<std::byte*>(op.recv);
  const auto* send = static_cast<const std::byte*>(op.send);
  const auto me = static_cast<size_t>(rank());
  if (op.kind == CollectiveKind::kReduceScatter) {
    if (even) {
      BS_NCCL_CHECK(ncclReduceScatter(op.send, op.recv, static_cast<size_t>(counts[0]), type,
                                      ncclSum, comm_, stream_));
      return Status::ok();
    }
    BS_NCCL_CHECK(ncclGroupStart());
    for (size_t r = 0; r < counts.size(); ++r) {
      const ncclResult_t rc =
          ncclReduce(send + displs[r] * elem, recv, static_cast<size_t>(counts[r]), type, ncclSum,
                     static_cast<int>(r), comm_, stream_);
      if (rc != ncclSuccess) {
        (void)ncclGroupEnd();
        return ncclError(rc, "ncclReduce", __FILE__, __LINE__);
      }
    }
    BS_NCCL_CHECK(ncclGroupEnd());
    return Status::ok();
  }
  // All-gather; send null: this rank's part already sits in recv.
  const void* mine = send != nullptr ? static_cast<const void*>(send) : recv + displs[me] * elem;
  if (even) {
    BS_NCCL_CHECK(
        ncclAllGather(mine, op.recv, static_cast<size_t>(counts[0]), type, comm_, stream_));
    return Status::ok();
  }
  BS_NCCL_CHECK(ncclGroupStart());
  for (size_t r = 0; r < counts.size(); ++r) {
    const ncclResult_t rc =
        ncclBroadcast(r == me ? mine : recv + displs[r] * elem, recv + displs[r] * elem,
                      static_cast<size_t>(counts[r]), type, static_cast<int>(r), comm_, stream_);
    if (rc != ncclSuccess) {
      (void)ncclGroupEnd();
      return ncclError(rc, "ncclBroadcast", __FILE__, __LINE__);
    }
  }
  BS_NCCL_CHECK(ncclGroupEnd());
  return Status::ok();
}

// One grouped ncclSend / ncclRecv per peer on the group's communicator (NCCL
// has no all-to-all-v; this is how nccl-tests and PyTorch build one). Parts
// of 0 elements are skipped on both sides (the counts agree pairwise).
Status NcclCommunicator::enqueueAllToAll(const CommOp& op) {
  const ncclDataType_t type = ncclType(op.type);
  const size_t elem = static_cast<size_t>(elementBytes(op.type));
  const std::vector<int> sendDispls = displacements(op.counts);
  const std::vector<int> recvDispls = displacements(op.recvCounts);
  const auto* send = static_cast<const std::byte*>(op.send);
  auto* recv = static_cast<std::byte*>(op.recv);
  BS_NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < size(); ++r) {
    ncclResult_t rc = ncclSuccess;
    if (op.counts[r] > 0) {
      rc = ncclSend(send + static_cast<size_t>(sendDispls[r]) * elem,
                    static_cast<size_t>(op.counts[r]), type, r, comm_, stream_);
    }
    if (rc == ncclSuccess && op.recvCounts[r] > 0) {
      rc = ncclRecv(recv + static_cast<size_t>(recvDispls[r]) * elem,
                    static_cast<size_t>(op.recvCounts[r]), type, r, comm_, stream_);
    }
    if (rc != ncclSuccess) {
      (void)ncclGroupEnd();
      return ncclError(rc, "ncclSend/ncclRecv", __FILE__, __LINE__);
    }
  }
  BS_NCCL_CHECK(ncclGroupEnd());
  return Status::ok();
}

Result<std::unique_ptr<PendingComm>> NcclCommunicator::launch(const CommOp& op, bool) {
  const int64_t startNs = nowNs();
  // After the compute queued so far: the buffers hold what it produced.
  const bool pointToPoint = op.kind == CollectiveKind::kSend || op.kind == CollectiveKind::kRecv;
  cudaStream_t stream = stream_;
  if (pointToPoint) {
    const Link& link = op.kind == CollectiveKind::kSend ? sendLinks_[op.peer] : recvLinks_[op.peer];
    if (link.stream != nullptr) stream = link.stream;
  }
  cudaEvent_t ready = nullptr, done = nullptr;
  BS_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  BS_CUDA_CHECK(cudaEventRecord(ready, compute_));
  const cudaError_t waited = cudaStreamWaitEvent(stream, ready, 0);
  cudaEventDestroy(ready);  // released once the wait is satisfied
  BS_CUDA_CHECK(waited);
  BS_RETURN_IF_ERROR(enqueue(op, stream));
  BS_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  auto pending = std::make_unique<NcclPending>(done, startNs, this);
  BS_CUDA_CHECK(cudaEventRecord(done, stream));
  return std::unique_ptr<PendingComm>(std::move(pending));
}

Result<std::unique_ptr<CudaDeviceCopier>> CudaDeviceCopier::create(cudaStream_t computeStream) {
  cudaStream_t copy = nullptr;
  BS_CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  return std::unique_ptr<CudaDeviceCopier>(new CudaDeviceCopier(computeStream, copy));
}

CudaDeviceCopier::~CudaDeviceCopier() {
  if (copy_ != nullptr) cudaStreamDestroy(copy_);
}

Status CudaDeviceCopier::copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return Status::ok();
  cudaEvent_t queued = nullptr;  // everything on the compute stream so far
  BS_CUDA_CHECK(cudaEventCreateWithFlags(&queued, cudaEventDisableTiming));
  cudaError_t e = cudaEventRecord(queued, compute_);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(copy_, queued, 0);
  cudaEventDestroy(queued);  // released once the wait is satisfied
  BS_CUDA_CHECK(e);
  BS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, copy_));
  BS_CUDA_CHECK(cudaStreamSynchronize(copy_));  // the host buffer may go after this
  return Status::ok();
}

Status CudaDeviceCopier::toHost(void* host, const void* device, size_t bytes) {
  return copy(host, device, bytes, cudaMemcpyDeviceToHost);
}

Status CudaDeviceCopier::toDevice(void* device, const void* host, size_t bytes) {
  return copy(device, host, bytes, cudaMemcpyHostToDevice);
}

Result<bool> ranksShareAGpu(const MpiCommunicator& group) {
  int device = 0;
  BS_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  BS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  constexpr int kUuidBytes = sizeof(prop.uuid.bytes);
  std::vector<char> all(static_cast<size_t>(kUuidBytes) * group.size());
  BS_MPI_CHECK(MPI_Allgather(prop.uuid.bytes, kUuidBytes, MPI_BYTE, all.data(), kUuidBytes,
                             MPI_BYTE, group.comm()));
  std::vector<std::string> uuids;
  for (int r = 0; r < group.size(); ++r) uuids.emplace_back(&all[r * kUuidBytes], kUuidBytes);
  std::sort(uuids.begin(), uuids.end());
  return std::adjacent_find(uuids.begin(), uuids.end()) != uuids.end();
}

Result<std::unique_ptr<Communicator>> makeDeviceCommunicator(std::unique_ptr<MpiCommunicator> group,
                                                             cudaStream_t computeStream,
                                                             bool pointToPoint, bool hostStaged) {
  bool staged = hostStaged;
  if (!staged) {
    BS_ASSIGN_OR_RETURN(staged, ranksShareAGpu(*group));
  }
  if (staged) {
    BS_ASSIGN_OR_RETURN(auto copier, CudaDeviceCopier::create(computeStream));
    return std::unique_ptr<Communicator>(
        std::make_unique<HostStagedCommunicator>(std::move(group), std::move(copier)));
  }
  BS_ASSIGN_OR_RETURN(auto nccl, NcclCommunicator::create(*group, computeStream, pointToPoint));
  return std::unique_ptr<Communicator>(std::move(nccl));
}

}  // namespace bubblescope::engine
