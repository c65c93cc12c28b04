// BucketReduction: the compressed all-reduce of one data-parallel gradient
// bucket (issue 19). DataParallel (ZeRO 0) owns one per bucket when the
// layout's grad_compression is not none; `none` keeps its plain fp32
// all-reduce (no BucketReduction at all, bit for bit as before).
//
// | spec       | what crosses the link                                     | error feedback |
// |------------|-----------------------------------------------------------|----------------|
// | fp16, bf16 | one all-reduce of 16-bit values (reduced_types.h sums)     | no             |
// | int8       | one all-reduce of Int8Blocks (1024 codes + fp32 scale)     | yes (local)    |
// | topk:R     | all-gathers of each rank's k indices (int32) and values    | yes            |
// | powersgd:R | all-reduce of the P factors and the uncompressed rest, then of the Q factors | yes
// |
//
// Contract: start() encodes the bucket's gradients (n elements) and launches
// the first collective(s) without waiting; finish() waits, runs what is left
// (PowerSGD's Q all-reduce, blocking) and writes the group's sum into `sum`.
// They alternate, on every rank of the group in the same order (collective),
// from the training thread. `grads` need not outlive start(). After
// finish(), busBytes() is what this rank put on the wire for the bucket:
// each collective's buffer bytes times its ring bus factor (busBytes()).
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <vector>

#include "engine/layout/grad_comm.h"
#include "engine/parallel/communicator.h"

namespace bubblescope::engine {

// Bytes one rank sends in `kind` over `ranks` ranks on a buffer of `bytes`
// (the buffer a span's bytes count), under the ring algorithm: the
// nccl-tests bus factors (docs/formulas.md): all-reduce 2(n-1)/n, all-gather and
// reduce-scatter (n-1)/n, the others 1. 0 for a group of one.
int64_t busBytes(CollectiveKind kind, int64_t bytes, int32_t ranks);

// A matrix-shaped gradient inside a bucket: rows x cols elements from
// `offset` (bucket-relative), row-major. PowerSGD compresses these.
struct GradMatrix {
  int64_t offset = 0;
  int64_t rows = 0;
  int64_t cols = 0;
};

class BucketReduction {
 public:
  virtual ~BucketReduction() = default;
  virtual Status start(std::span<const float> grads, const CommTrace& trace) = 0;
  virtual Status finish(std::span<float> sum) = 0;
  int64_t busBytes() const { return busBytes_; }

 protected:
  int64_t busBytes_ = 0;
};

// The reduction of `spec` (not none) for a bucket of `elements` over `comm`;
// `matrices` are the bucket's matrix-shaped gradients (PowerSGD only).
Result<std::unique_ptr<BucketReduction>> makeBucketReduction(
    const layout::GradCompressionSpec& spec, Communicator& comm, int64_t elements,
    std::vector<GradMatrix> matrices = {});

// What a rank's gradient reductions sent, summed over buckets and steps, for
// the trace's samples (thread-safe reads): busBytes of the reductions as
// they ran, and of the plain fp32 all-reduces they stand for.
struct GradTraffic {
  std::atomic<int64_t> sentBytes{0};
  std::atomic<int64_t> uncompressedBytes{0};
  // uncompressed / sent (1 for none; 0 before anything was sent).
  double ratio() const;
};

}  // namespace bubblescope::engine
