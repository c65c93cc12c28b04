// FakeDeviceCommunicator: the Communicator of a group of fake-device ranks
// (fake_device_backend.h), standing for NCCL or host staging in
// device_step_test.cpp: every op must hand it fake device buffers (a host
// buffer is an error, as NCCL faults on one); it records the op's start,
// with the device ranges it reads and writes, and its wait in the DeviceLog
// (device_log.h), and runs it through an MPI communicator of the same
// group on the host addresses behind the buffers.
//
// `kind` is what it stands for ("nccl" or "host-staged"); kept for the
// tests of which groups a layout builds with which communicator.
//
// Test-only; the inner communicator and the log outlive it (the inner one
// is owned).
#pragma once

#include <memory>
#include <string>

#include "device_log.h"
#include "engine/parallel/communicator.h"

namespace bubblescope::engine::testing {

class FakeDeviceCommunicator final : public Communicator {
 public:
  FakeDeviceCommunicator(std::unique_ptr<Communicator> inner, DeviceLog& log, std::string kind,
                         bool pointToPoint);
  const std::string& kind() const { return kind_; }
  bool pointToPoint() const { return pointToPoint_; }

 protected:
  Result<std::unique_ptr<PendingComm>> launch(const CommOp& op, bool blocking) override;

 private:
  class Pending;
  std::unique_ptr<Communicator> inner_;
  DeviceLog& log_;
  std::string kind_;
  bool pointToPoint_;
};

}  // namespace bubblescope::engine::testing
