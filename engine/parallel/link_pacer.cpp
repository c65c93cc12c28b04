#include "engine/parallel/link_pacer.h"

#include <algorithm>
#include <thread>

#include "engine/parallel/communicator.h"
#include "engine/parallel/mpi_check.h"

namespace bubblescope::engine {

void LinkPacer::pace(int64_t bytes) {
  using Clock = std::chrono::steady_clock;
  const auto transmit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
      link_.gbps > 0.0 ? static_cast<double>(bytes) * 8.0 / (link_.gbps * 1e9) : 0.0));
  const auto latency = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::micro>(link_.latencyUs));
  const Clock::time_point start = std::max(Clock::now(), freeAt_);
  freeAt_ = start + transmit;
  std::this_thread::sleep_until(freeAt_ + latency);
}

Status pacedRingAllReduce(MPI_Comm comm, void* data, int64_t count, MPI_Datatype type,
                          int64_t elementBytes, MPI_Op op, const std::vector<int32_t>& nodeOf,
                          LinkPacer& pacer) {
  int rank = 0, n = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  if (n == 1 || count == 0) return Status::ok();
  const std::vector<int> counts = evenCounts(count, n);
  std::vector<int64_t> offsets(n + 1, 0);
  for (int i = 0; i < n; ++i) offsets[i + 1] = offsets[i] + counts[i];
  auto* bytes = static_cast<char*>(data);
  auto chunk = [&](int i) { return bytes + offsets[i] * elementBytes; };
  const int right = (rank + 1) % n, left = (rank + n - 1) % n;
  const bool paced = nodeOf.at(right) != nodeOf.at(rank);
  std::vector<char> incoming(static_cast<size_t>(*std::max_element(counts.begin(), counts.end())) *
                             static_cast<size_t>(elementBytes));
  // Step s of the reduce-scatter: send chunk (rank - s), receive chunk
  // (rank - s - 1) and add this rank's into it; after n - 1 steps chunk
  // (rank + 1) holds the sum of every rank's.
  for (int s = 0; s < n - 1; ++s) {
    const int send = (rank - s + n) % n, recv = (rank - s - 1 + n) % n;
    if (paced) pacer.pace(counts[send] * elementBytes);
    BS_MPI_CHECK(MPI_Sendrecv(chunk(send), counts[send], type, right, 0, incoming.data(),
                              counts[recv], type, left, 0, comm, MPI_STATUS_IGNORE));
    BS_MPI_CHECK(MPI_Reduce_local(incoming.data(), chunk(recv), counts[recv], type, op));
  }
  // All-gather: pass the summed chunks on around the ring.
  for (int s = 0; s < n - 1; ++s) {
    const int send = (rank + 1 - s + n) % n, recv = (rank - s + n) % n;
    if (paced) pacer.pace(counts[send] * elementBytes);
    BS_MPI_CHECK(MPI_Sendrecv(chunk(send), counts[send], type, right, 1, chunk(recv), counts[recv],
                              type, left, 1, comm, MPI_STATUS_IGNORE));
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
