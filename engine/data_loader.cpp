#include "engine/data_loader.h"

#include <algorithm>

#include "engine/rng.h"

namespace bubblescope::engine {

Result<DataLoader> DataLoader::create(std::vector<int32_t> stream, const std::string& source,
                                      int32_t vocabSize, uint64_t seed, int64_t b, int64_t t) {
  if (b <= 0 || t <= 0) {
    return Status::invalidArgument("batch size and sequence length must be positive, got " +
                                   std::to_string(b) + " and " + std::to_string(t));
  }
  if (static_cast<int64_t>(stream.size()) < t + 1) {
    return Status::invalidArgument(source + " has " + std::to_string(stream.size()) +
                                   " tokens; sequences of " + std::to_string(t) +
                                   " need at least " + std::to_string(t + 1));
  }
  const auto [lo, hi] = std::minmax_element(stream.begin(), stream.end());
  if (*lo < 0 || *hi >= vocabSize) {
    return Status::invalidArgument(source + " holds token " + std::to_string(*hi) +
                                   " outside the model's vocabulary of " +
                                   std::to_string(vocabSize));
  }
  return DataLoader(std::move(stream), seed, b, t);
}

Batch DataLoader::batch(int64_t step, int32_t microBatch) const {
  Batch out;
  fill(step, microBatch, out);
  return out;
}

void DataLoader::fill(int64_t step, int32_t microBatch, Batch& out) const {
  out.batch = b_;
  out.seq = t_;
  out.tokens.resize(static_cast<size_t>(b_ * t_));
  out.targets.resize(static_cast<size_t>(b_ * t_));
  const uint64_t starts = static_cast<uint64_t>(tokenCount() - t_);  // offsets [0, n - T)
  const uint64_t base =
      mixSeed(mixSeed(seed_, static_cast<uint64_t>(step)), static_cast<uint64_t>(microBatch));
  for (int64_t i = 0; i < b_; ++i) {
    Rng rng(mixSeed(base, static_cast<uint64_t>(i)));
    const int64_t offset = static_cast<int64_t>(rng.below(starts));
    std::copy_n(stream_.begin() + offset, t_, out.tokens.begin() + i * t_);
    std::copy_n(stream_.begin() + offset + 1, t_, out.targets.begin() + i * t_);
  }
}

}  // namespace bubblescope::engine
