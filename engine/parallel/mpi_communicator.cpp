#include "engine/parallel/mpi_communicator.h"

#include <chrono>
#include <functional>
#include <string>

#include "engine/parallel/mpi_check.h"
#include "engine/parallel/reduced_types.h"

namespace bubblescope::engine {

Status mpiError(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string name(call);
  name = name.substr(0, name.find('('));
  return Status::internal(name + " failed on rank " + std::to_string(rank) + " (" + file + ":" +
                          std::to_string(line) + "): " + std::string(text, length));
}

struct MpiCommunicator::Job {
  CommOp op;
  Status status;
  int64_t startNs = 0;
  int64_t endNs = 0;
  bool done = false;
  std::condition_variable finished;  // wakes only this job's waiter
};

namespace {

// The user-defined types and sums of reduced_types.h, created once (MPI is
// initialised before any communicator exists) and never freed (they live
// until MPI_Finalize).
struct ReducedMpiTypes {
  MPI_Datatype int8Block = MPI_DATATYPE_NULL;
  MPI_Op halfSum = MPI_OP_NULL, bf16Sum = MPI_OP_NULL, int8BlockSum = MPI_OP_NULL;
};

const ReducedMpiTypes& reducedMpiTypes() {
  static const ReducedMpiTypes types = [] {
    ReducedMpiTypes t;
    MPI_Type_contiguous(static_cast<int>(sizeof(Int8Block)), MPI_BYTE, &t.int8Block);
    MPI_Type_commit(&t.int8Block);
    MPI_Op_create(
        [](void* in, void* inout, int* n, MPI_Datatype*) {
          addHalves(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(inout), *n);
        },
        /*commute=*/1, &t.halfSum);
    MPI_Op_create(
        [](void* in, void* inout, int* n, MPI_Datatype*) {
          addBf16s(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(inout), *n);
        },
        /*commute=*/1, &t.bf16Sum);
    MPI_Op_create(
        [](void* in, void* inout, int* n, MPI_Datatype*) {
          addInt8Blocks(static_cast<const Int8Block*>(in), static_cast<Int8Block*>(inout), *n);
        },
        /*commute=*/1, &t.int8BlockSum);
    return t;
  }();
  return types;
}

MPI_Datatype mpiType(ElementType type) {
  switch (type) {
    case ElementType::kFloat64:
      return MPI_DOUBLE;
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
      return MPI_UINT16_T;
    case ElementType::kInt32:
      return MPI_INT32_T;
    case ElementType::kInt8Block:
      return reducedMpiTypes().int8Block;
    case ElementType::kFloat32:
      return MPI_FLOAT;
  }
  return MPI_FLOAT;
}

MPI_Op mpiSum(ElementType type) {
  switch (type) {
    case ElementType::kFloat16:
      return reducedMpiTypes().halfSum;
    case ElementType::kBFloat16:
      return reducedMpiTypes().bf16Sum;
    case ElementType::kInt8Block:
      return reducedMpiTypes().int8BlockSum;
    default:
      return MPI_SUM;
  }
}

// An op that already completed on the calling thread.
class CompletedComm final : public PendingComm {
 public:
  CompletedComm(Status status, const CommTimes& times)
      : status_(std::move(status)), times_(times) {}
  Status wait(CommTimes& times) override {
    times = times_;
    return status_;
  }

 private:
  Status status_;
  CommTimes times_;
};

// Calls `ready` until it says true, sleeping briefly between calls so a
// waiting rank leaves the core to ranks that compute (runs are often
// oversubscribed). Returns whether it had to call more than once, i.e. the
// peers were not there when the wait began.
template <typename Ready>
Result<bool> pollUntil(Ready ready) {
  for (int polls = 0;; ++polls) {
    BS_ASSIGN_OR_RETURN(const bool done, ready());
    if (done) return polls > 0;
    std::this_thread::sleep_for(std::chrono::microseconds(polls < 100 ? 10 : 100));
  }
}

}  // namespace

// A collective queued for the worker. A waiter whose op is next in line and
// not started runs it itself: it would block anyway, and it saves waking
// the worker (a scheduler round on a loaded machine).
class MpiCommunicator::QueuedComm final : public PendingComm {
 public:
  QueuedComm(std::shared_ptr<Job> job, MpiCommunicator* owner)
      : job_(std::move(job)), owner_(owner) {}
  Status wait(CommTimes& times) override {
    std::unique_lock<std::mutex> lock(owner_->mutex_);
    if (!job_->done && !owner_->busy_ && !owner_->queue_.empty() &&
        owner_->queue_.front() == job_) {
      owner_->queue_.pop_front();
      owner_->busy_ = true;
      lock.unlock();
      owner_->runJob(*job_);
      lock.lock();
    }
    job_->finished.wait(lock, [&] { return job_->done; });
    times = {job_->startNs, job_->startNs, job_->endNs};
    return job_->status;
  }

 private:
  std::shared_ptr<Job> job_;
  MpiCommunicator* owner_;
};

namespace {

// A send or receive posted with MPI_Isend / MPI_Irecv. Waited for by
// polling with sleeps, not MPI_Wait, which spins: a pipeline stage whose
// last sends its slower neighbour had not yet taken spun in it at the step's
// end for up to 76 ms (dp1 x pp4 GPipe m16 on 2 cores), holding a core the
// stages still computing needed (docs/prediction.md, "Four stages on two
// cores").
class RequestComm final : public PendingComm {
 public:
  RequestComm(MPI_Request request, int64_t startNs, std::function<int64_t()> now)
      : request_(request), startNs_(startNs), now_(std::move(now)) {}
  Status wait(CommTimes& times) override {
    BS_RETURN_IF_ERROR(pollUntil([&]() -> Result<bool> {
                         int flag = 0;
                         BS_MPI_CHECK(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE));
                         return flag != 0;
                       }).status());
    times = {startNs_, startNs_, now_()};
    return Status::ok();
  }

 private:
  MPI_Request request_;
  int64_t startNs_;
  std::function<int64_t()> now_;
};

}  // namespace

Result<std::unique_ptr<MpiCommunicator>> MpiCommunicator::split(MPI_Comm parent, int color, int key,
                                                                trace_model::ParallelDim dim) {
  MPI_Comm comm = MPI_COMM_NULL;
  BS_MPI_CHECK(MPI_Comm_split(parent, color, key, &comm));
  BS_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // World ranks of the group, for traced peers.
  MPI_Group group, world;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> local(size), global(size);
  for (int i = 0; i < size; ++i) local[i] = i;
  MPI_Group_translate_ranks(group, size, local.data(), world, global.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  std::vector<int32_t> worldRanks(global.begin(), global.end());
  return std::unique_ptr<MpiCommunicator>(
      new MpiCommunicator(comm, dim, std::move(worldRanks), rank));
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, trace_model::ParallelDim dim,
                                 std::vector<int32_t> worldRanks, int32_t rank)
    : Communicator(dim, std::move(worldRanks), rank), comm_(comm) {}

MpiCommunicator::~MpiCommunicator() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Status MpiCommunicator::execute(const CommOp& op) {
  const MPI_Datatype type = mpiType(op.type);
  const int count = static_cast<int>(op.count);
  switch (op.kind) {
    case CollectiveKind::kAllReduce:
      if (pacer_) {
        return pacedRingAllReduce(comm_, op.recv, op.count, type, elementBytes(op.type),
                                  mpiSum(op.type), nodeOf_, *pacer_);
      }
      BS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, op.recv, count, type, mpiSum(op.type), comm_));
      return Status::ok();
    case CollectiveKind::kReduceScatter:
      BS_MPI_CHECK(
          MPI_Reduce_scatter(op.send, op.recv, op.counts.data(), type, mpiSum(op.type), comm_));
      return Status::ok();
    case CollectiveKind::kAllGather: {
      const std::vector<int> displs = displacements(op.counts);
      const void* send = op.send ? op.send : MPI_IN_PLACE;
      BS_MPI_CHECK(MPI_Allgatherv(send, op.counts[rank()], type, op.recv, op.counts.data(),
                                  displs.data(), type, comm_));
      return Status::ok();
    }
    case CollectiveKind::kAllToAll: {
      const std::vector<int> sendDispls = displacements(op.counts);
      const std::vector<int> recvDispls = displacements(op.recvCounts);
      BS_MPI_CHECK(MPI_Alltoallv(op.send, op.counts.data(), sendDispls.data(), type, op.recv,
                                 op.recvCounts.data(), recvDispls.data(), type, comm_));
      return Status::ok();
    }
    case CollectiveKind::kBroadcast:
      BS_MPI_CHECK(MPI_Bcast(op.recv, count, type, op.peer, comm_));
      return Status::ok();
    case CollectiveKind::kSend:
      BS_MPI_CHECK(MPI_Send(op.send, count, type, op.peer, op.tag, comm_));
      return Status::ok();
    case CollectiveKind::kRecv:
      BS_MPI_CHECK(MPI_Recv(op.recv, count, type, op.peer, op.tag, comm_, MPI_STATUS_IGNORE));
      return Status::ok();
  }
  return Status::internal("unknown collective");
}

void MpiCommunicator::emulateInterNodeLink(std::vector<int32_t> nodeOfGroupRank,
                                           const InterNodeLink& link) {
  nodeOf_ = std::move(nodeOfGroupRank);
  pacer_ = std::make_unique<LinkPacer>(link);
}

Status MpiCommunicator::receiveWhenArrived(const CommOp& op, CommTimes& times) {
  MPI_Message message = MPI_MESSAGE_NULL;
  BS_ASSIGN_OR_RETURN(
      const bool waited, pollUntil([&]() -> Result<bool> {
        int flag = 0;
        BS_MPI_CHECK(MPI_Improbe(op.peer, op.tag, comm_, &flag, &message, MPI_STATUS_IGNORE));
        return flag != 0;
      }));
  times.readyNs = waited ? nowNs() : times.startNs;
  BS_MPI_CHECK(MPI_Mrecv(op.recv, static_cast<int>(op.count), mpiType(op.type), &message,
                         MPI_STATUS_IGNORE));
  return Status::ok();
}

Status MpiCommunicator::awaitGroup(CommTimes& times) {
  MPI_Request request = MPI_REQUEST_NULL;
  BS_MPI_CHECK(MPI_Ibarrier(comm_, &request));
  BS_ASSIGN_OR_RETURN(const bool waited, pollUntil([&]() -> Result<bool> {
                        int flag = 0;
                        BS_MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
                        return flag != 0;
                      }));
  times.readyNs = waited ? nowNs() : times.startNs;
  return Status::ok();
}

Result<std::unique_ptr<PendingComm>> MpiCommunicator::launch(const CommOp& op, bool blocking) {
  const bool pointToPoint = op.kind == CollectiveKind::kSend || op.kind == CollectiveKind::kRecv;
  if (pointToPoint) {
    // Point-to-point messages never match collectives: no need to queue.
    const int64_t startNs = nowNs();
    if (blocking) {
      CommTimes times{startNs, startNs, 0};
      Status status =
          op.kind == CollectiveKind::kRecv ? receiveWhenArrived(op, times) : execute(op);
      times.endNs = nowNs();
      return std::unique_ptr<PendingComm>(new CompletedComm(std::move(status), times));
    }
    MPI_Request request = MPI_REQUEST_NULL;
    const MPI_Datatype type = mpiType(op.type);
    if (op.kind == CollectiveKind::kSend) {
      BS_MPI_CHECK(
          MPI_Isend(op.send, static_cast<int>(op.count), type, op.peer, op.tag, comm_, &request));
    } else {
      BS_MPI_CHECK(
          MPI_Irecv(op.recv, static_cast<int>(op.count), type, op.peer, op.tag, comm_, &request));
    }
    return std::unique_ptr<PendingComm>(
        new RequestComm(request, startNs, [this] { return nowNs(); }));
  }
  if (blocking) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return queue_.empty() && !busy_; });
      busy_ = true;
    }
    const int64_t startNs = nowNs();
    CommTimes times{startNs, startNs, 0};
    // A pipeline group's collectives synchronise the stages: first wait
    // until every stage has joined (a wait, not communication).
    Status status = dim() == trace_model::ParallelDim::kPp ? awaitGroup(times) : Status::ok();
    if (status.isOk()) status = execute(op);
    times.endNs = nowNs();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
    changed_.notify_all();
    return std::unique_ptr<PendingComm>(new CompletedComm(std::move(status), times));
  }
  auto job = std::make_shared<Job>();
  job->op = op;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!worker_.joinable()) worker_ = std::thread([this] { workerLoop(); });
    queue_.push_back(job);
  }
  changed_.notify_all();
  return std::unique_ptr<PendingComm>(new QueuedComm(job, this));
}

void MpiCommunicator::runJob(Job& job) {
  job.startNs = nowNs();
  Status status = execute(job.op);
  const int64_t endNs = nowNs();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job.status = std::move(status);
    job.endNs = endNs;
    job.done = true;
    busy_ = false;
    job.finished.notify_all();
  }
  changed_.notify_all();
}

void MpiCommunicator::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return (!queue_.empty() && !busy_) || (stop_ && queue_.empty()); });
    if (queue_.empty()) return;  // stopping with nothing left
    std::shared_ptr<Job> job = queue_.front();
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    runJob(*job);
    lock.lock();
  }
}

}  // namespace bubblescope::engine
