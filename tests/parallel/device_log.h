// DeviceLog: what a rank's step asked of its device, in order, as the fake
// device of device_step_test.cpp records it (fake_device_backend.h,
// fake_device_communicator.h): every backend op with the device byte ranges
// it reads and writes, every collective's start (the ranges it reads and
// writes) and its wait, and every device buffer freed.
//
// On a GPU the backend's ops run in their queue order on the compute stream;
// a collective started by NcclCommunicator is ordered after the compute
// queued before its start (an event) and the host waits for it in wait();
// host staging copies at start and back at wait. So the log's order is the
// device's order, and a step is right when, for every collective between its
// start and its wait:
//  - no op writes what it reads or writes (its input was final when it
//    started: it waits on the compute that produced it; and nothing
//    overwrites a buffer in flight);
//  - no op reads what it writes (nothing reads a buffer before its transfer
//    completes);
//  - no buffer it uses is freed;
// and every started collective is waited. violations() lists the breaks in
// words (empty: none).
//
// Test-only; the training thread's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bubblescope::engine::testing {

struct ByteRange {
  uintptr_t lo = 0, hi = 0;  // [lo, hi), device addresses
  bool overlaps(const ByteRange& o) const { return lo < o.hi && o.lo < hi; }
};

struct DeviceLogEntry {
  enum class Kind { kOp, kStart, kWait, kFree };
  Kind kind = Kind::kOp;
  std::string name;  // the op's, or the collective's ("all_reduce dp grad_all_reduce")
  std::vector<ByteRange> reads, writes;
  int64_t comm = -1;  // kStart, kWait: the collective's id
};

class DeviceLog {
 public:
  void op(std::string name, std::vector<ByteRange> reads, std::vector<ByteRange> writes);
  int64_t start(std::string name, std::vector<ByteRange> reads, std::vector<ByteRange> writes);
  void wait(int64_t comm);
  void free(ByteRange range);

  const std::vector<DeviceLogEntry>& entries() const { return entries_; }
  void clear() { entries_.clear(); }
  // The breaks of the rules above, one line each.
  std::vector<std::string> violations() const;
  // Backend ops that ran while at least one collective was in flight (a
  // check that found none proves little: nothing overlapped).
  int64_t opsWhileInFlight() const;
  int64_t count(DeviceLogEntry::Kind kind) const;

 private:
  std::vector<DeviceLogEntry> entries_;
  int64_t nextComm_ = 0;
};

}  // namespace bubblescope::engine::testing
