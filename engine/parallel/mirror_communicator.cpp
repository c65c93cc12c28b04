#include "engine/parallel/mirror_communicator.h"

#include <cstring>
#include <numeric>

#include "engine/parallel/reduced_types.h"
#include "tracer/clock.h"

namespace bubblescope::engine {

namespace {

std::vector<int32_t> ranksUpTo(int32_t size) {
  std::vector<int32_t> ranks(static_cast<size_t>(size > 0 ? size : 1));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

// An op that completed in launch(): wait() only reports when.
class Done final : public PendingComm {
 public:
  Done(int64_t startNs, int64_t endNs) : startNs_(startNs), endNs_(endNs) {}
  Status wait(CommTimes& times) override {
    times = {startNs_, startNs_, endNs_};
    return Status::ok();
  }

 private:
  int64_t startNs_, endNs_;
};

template <typename T>
void addPlain(const void* in, void* inout, int64_t n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int64_t i = 0; i < n; ++i) b[i] = a[i] + b[i];
}

}  // namespace

MirrorCommunicator::MirrorCommunicator(trace_model::ParallelDim dim, int32_t size)
    : Communicator(dim, ranksUpTo(size), 0) {}

void MirrorCommunicator::sumWithMirrors(ElementType type, void* inout, int64_t count) {
  const auto bytes = static_cast<size_t>(count * elementBytes(type));
  copy_.resize(bytes);
  if (bytes > 0) std::memcpy(copy_.data(), inout, bytes);
  for (int32_t peer = 1; peer < size(); ++peer) {
    switch (type) {
      case ElementType::kFloat32:
        addPlain<float>(copy_.data(), inout, count);
        break;
      case ElementType::kFloat64:
        addPlain<double>(copy_.data(), inout, count);
        break;
      case ElementType::kInt32:
        addPlain<int32_t>(copy_.data(), inout, count);
        break;
      case ElementType::kFloat16:
        addHalves(reinterpret_cast<const uint16_t*>(copy_.data()), static_cast<uint16_t*>(inout),
                  count);
        break;
      case ElementType::kBFloat16:
        addBf16s(reinterpret_cast<const uint16_t*>(copy_.data()), static_cast<uint16_t*>(inout),
                 count);
        break;
      case ElementType::kInt8Block:
        addInt8Blocks(reinterpret_cast<const Int8Block*>(copy_.data()),
                      static_cast<Int8Block*>(inout), count);
        break;
    }
  }
}

Result<std::unique_ptr<PendingComm>> MirrorCommunicator::launch(const CommOp& op, bool blocking) {
  (void)blocking;
  const int64_t cpu0 = tracer::threadCpuNowNs(), wall0 = tracer::hostNowNs();
  auto done = run(op);
  spent_.wallNs += tracer::hostNowNs() - wall0;
  spent_.cpuNs += tracer::threadCpuNowNs() - cpu0;
  return done;
}

Result<std::unique_ptr<PendingComm>> MirrorCommunicator::run(const CommOp& op) {
  const int64_t start = nowNs();
  const int64_t width = elementBytes(op.type);
  switch (op.kind) {
    case CollectiveKind::kAllReduce:
      sumWithMirrors(op.type, op.recv, op.count);
      break;
    case CollectiveKind::kBroadcast:
      break;
    case CollectiveKind::kAllGather: {
      const std::vector<int> at = displacements(op.counts);
      auto* recv = static_cast<std::byte*>(op.recv);
      const std::byte* mine =
          op.send != nullptr ? static_cast<const std::byte*>(op.send) : recv + at[0] * width;
      const auto bytes = static_cast<size_t>(op.counts[0] * width);
      for (int32_t r = 0; r < size(); ++r) {
        if (op.counts[static_cast<size_t>(r)] != op.counts[0]) {
          return Status::invalidArgument(
              "mirror communicator: an all-gather's parts must be equal (every rank holds the "
              "same)");
        }
        std::byte* slot = recv + at[static_cast<size_t>(r)] * width;
        if (slot != mine && bytes > 0) std::memmove(slot, mine, bytes);
      }
      break;
    }
    case CollectiveKind::kReduceScatter: {
      const auto bytes = static_cast<size_t>(op.counts[0] * width);
      if (bytes > 0) std::memcpy(op.recv, op.send, bytes);
      sumWithMirrors(op.type, op.recv, op.counts[0]);
      break;
    }
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv:
    case CollectiveKind::kAllToAll:
      return Status::unsupported(std::string("mirror communicator: no mirror of a ") +
                                 collectiveName(op.kind) + " (a peer would hold other data)");
  }
  return std::unique_ptr<PendingComm>(std::make_unique<Done>(start, nowNs()));
}

}  // namespace bubblescope::engine
