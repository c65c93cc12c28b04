#include "engine/parallel/bucket_reduction.h"

#include <algorithm>
#include <string>

#include "engine/parallel/half_cast_compressor.h"
#include "engine/parallel/int8_compressor.h"
#include "engine/parallel/power_sgd_reduction.h"
#include "engine/parallel/reduced_types.h"
#include "engine/parallel/sparse_all_reduce.h"
#include "engine/parallel/top_k_compressor.h"

namespace bubblescope::engine {

int64_t busBytes(CollectiveKind kind, int64_t bytes, int32_t ranks) {
  if (ranks <= 1) return 0;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (ranks - 1) * bytes / ranks;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return (ranks - 1) * bytes / ranks;
    default:
      return bytes;
  }
}

double GradTraffic::ratio() const {
  const int64_t sent = sentBytes.load();
  return sent > 0 ? static_cast<double>(uncompressedBytes.load()) / static_cast<double>(sent) : 0.0;
}

namespace {

CommTrace named(const CommTrace& trace, const char* name) {
  CommTrace t = trace;
  t.name = name;
  return t;
}

// fp16 / bf16: every value cast (round to nearest even), summed as 16-bit
// values by the all-reduce (reduced_types.h), widened back.
class HalfReduction final : public BucketReduction {
 public:
  HalfReduction(Communicator& comm, bool bf16) : comm_(comm), cast_(bf16), bf16_(bf16) {}
  Status start(std::span<const float> grads, const CommTrace& trace) override {
    BS_RETURN_IF_ERROR(cast_.compress(grads, encoded_));
    const int64_t n = encoded_.elements;
    BS_ASSIGN_OR_RETURN(
        handle_, comm_.startAllReduce(
                     bf16_ ? ElementType::kBFloat16 : ElementType::kFloat16, encoded_.halves.data(),
                     n, named(trace, bf16_ ? "grad_all_reduce.bf16" : "grad_all_reduce.fp16")));
    busBytes_ = engine::busBytes(CollectiveKind::kAllReduce, 2 * n, comm_.size());
    return Status::ok();
  }
  Status finish(std::span<float> sum) override {
    BS_RETURN_IF_ERROR(comm_.wait(handle_));
    return cast_.decompress(encoded_, sum);
  }

 private:
  Communicator& comm_;
  HalfCastCompressor cast_;
  bool bf16_;
  CompressedGrad encoded_;
  CommHandle handle_;
};

// int8: Int8Compressor's codes and scales (error feedback on this rank's
// quantisation) packed into Int8Blocks and all-reduced as such: each
// combination of two partial sums decodes, adds and quantises again.
class Int8Reduction final : public BucketReduction {
 public:
  Int8Reduction(Communicator& comm, int64_t elements)
      : comm_(comm), quantize_(elements, kInt8BlockElements) {}
  Status start(std::span<const float> grads, const CommTrace& trace) override {
    BS_RETURN_IF_ERROR(quantize_.compress(grads, encoded_));
    const int64_t n = encoded_.elements;
    blocks_.assign(static_cast<size_t>((n + kInt8BlockElements - 1) / kInt8BlockElements),
                   Int8Block{});
    for (size_t b = 0; b < blocks_.size(); ++b) {
      const int64_t lo = static_cast<int64_t>(b) * kInt8BlockElements;
      blocks_[b].scale = encoded_.scales[b];
      std::copy(encoded_.codes.begin() + lo,
                encoded_.codes.begin() + std::min(n, lo + kInt8BlockElements), blocks_[b].codes);
    }
    const auto count = static_cast<int64_t>(blocks_.size());
    BS_ASSIGN_OR_RETURN(handle_, comm_.startAllReduce(ElementType::kInt8Block, blocks_.data(),
                                                      count, named(trace, "grad_all_reduce.int8")));
    busBytes_ = engine::busBytes(CollectiveKind::kAllReduce,
                                 count * elementBytes(ElementType::kInt8Block), comm_.size());
    return Status::ok();
  }
  Status finish(std::span<float> sum) override {
    BS_RETURN_IF_ERROR(comm_.wait(handle_));
    for (size_t i = 0; i < sum.size(); ++i) {
      const Int8Block& b = blocks_[i / kInt8BlockElements];
      sum[i] = static_cast<float>(b.codes[i % kInt8BlockElements]) * b.scale;
    }
    return Status::ok();
  }

 private:
  Communicator& comm_;
  Int8Compressor quantize_;
  CompressedGrad encoded_;
  std::vector<Int8Block> blocks_;  // (ceil(n / 1024))
  CommHandle handle_;
};

// topk:R: each rank's k largest (error feedback), all-gathered and summed
// in rank order (sparse_all_reduce.h).
class TopKReduction final : public BucketReduction {
 public:
  TopKReduction(Communicator& comm, int64_t elements, double ratio)
      : comm_(comm), select_(elements, ratio) {}
  Status start(std::span<const float> grads, const CommTrace& trace) override {
    BS_RETURN_IF_ERROR(select_.compress(grads, encoded_));
    BS_RETURN_IF_ERROR(sparse_.start(comm_, encoded_, trace));
    const int64_t gathered = static_cast<int64_t>(encoded_.indices.size()) * comm_.size() * 4;
    busBytes_ = 2 * engine::busBytes(CollectiveKind::kAllGather, gathered, comm_.size());
    return Status::ok();
  }
  Status finish(std::span<float> sum) override { return sparse_.finish(sum); }

 private:
  Communicator& comm_;
  TopKCompressor select_;
  CompressedGrad encoded_;
  SparseAllReduce sparse_;
};

}  // namespace

Result<std::unique_ptr<BucketReduction>> makeBucketReduction(
    const layout::GradCompressionSpec& spec, Communicator& comm, int64_t elements,
    std::vector<GradMatrix> matrices) {
  using layout::GradCompression;
  switch (spec.kind) {
    case GradCompression::kNone:
      return Status::invalidArgument("grad compression none has no bucket reduction");
    case GradCompression::kFp16:
    case GradCompression::kBf16:
      return std::unique_ptr<BucketReduction>(
          new HalfReduction(comm, spec.kind == GradCompression::kBf16));
    case GradCompression::kInt8:
      return std::unique_ptr<BucketReduction>(new Int8Reduction(comm, elements));
    case GradCompression::kTopK:
      if (!(spec.ratio > 0.0) || spec.ratio > 1.0) {
        return Status::invalidArgument("topk: ratio " + std::to_string(spec.ratio) +
                                       " is not in (0, 1]");
      }
      return std::unique_ptr<BucketReduction>(new TopKReduction(comm, elements, spec.ratio));
    case GradCompression::kPowerSgd:
      if (spec.rank < 1) {
        return Status::invalidArgument("powersgd: rank " + std::to_string(spec.rank) + " < 1");
      }
      return std::unique_ptr<BucketReduction>(
          new PowerSgdReduction(comm, elements, std::move(matrices), spec.rank));
  }
  return Status::internal("grad compression: unknown kind");
}

}  // namespace bubblescope::engine
