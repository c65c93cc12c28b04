#include "engine/parallel/host_values_transfer.h"

namespace bubblescope::engine {
namespace {

bool onHost(Backend& backend) {
  return backend.device() == Device::kHost;
}

Tensor staged(Backend& backend, size_t elements) {
  return Tensor({static_cast<int64_t>(elements)}, MemoryCategory::kOther, &backend.allocator());
}

}  // namespace

Status sendHostValues(Communicator& group, Backend& backend, std::span<const float> data,
                      int32_t peer, int32_t tag, const CommTrace& trace) {
  if (onHost(backend)) return group.send(data, peer, tag, trace);
  Tensor buffer = staged(backend, data.size());
  backend.copyToDevice(buffer.data(), data.data(), data.size_bytes());
  return group.send(buffer.span(), peer, tag, trace);
}

Status recvHostValues(Communicator& group, Backend& backend, std::span<float> data, int32_t peer,
                      int32_t tag, const CommTrace& trace) {
  if (onHost(backend)) return group.recv(data, peer, tag, trace);
  Tensor buffer = staged(backend, data.size());
  BS_RETURN_IF_ERROR(group.recv(buffer.span(), peer, tag, trace));
  return backend.copyToHost(data.data(), buffer.data(), data.size_bytes());
}

Status allGatherHostValues(Communicator& group, Backend& backend, std::span<const float> send,
                           std::span<float> recv, std::vector<int> counts,
                           const CommTrace& trace) {
  if (onHost(backend)) return group.allGather(send, recv, std::move(counts), trace);
  Tensor in = staged(backend, send.size());
  Tensor out = staged(backend, recv.size());
  backend.copyToDevice(in.data(), send.data(), send.size_bytes());
  BS_RETURN_IF_ERROR(group.allGather(in.span(), out.span(), std::move(counts), trace));
  return backend.copyToHost(recv.data(), out.data(), recv.size_bytes());
}

}  // namespace bubblescope::engine
