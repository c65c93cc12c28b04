// DataLoader: next-token batches sampled from a token stream.
//
// Contract: batch(step, microBatch) depends only on (seed, step, microBatch)
// and the stream, never on call order, so every rank of any layout (and a
// resumed run) draws the same global batch. Sequence i of a micro-batch
// starts at an offset drawn from mixSeed(seed, step, microBatch, i).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::engine {

struct Batch {
  int64_t batch = 0;             // B
  int64_t seq = 0;               // T
  std::vector<int32_t> tokens;   // (B, T)
  std::vector<int32_t> targets;  // (B, T): tokens shifted by one
};

class DataLoader {
 public:
  // `stream` must hold at least T + 1 tokens, all in [0, vocabSize);
  // `source` names the data in errors ("data file 'x.txt'").
  static Result<DataLoader> create(std::vector<int32_t> stream, const std::string& source,
                                   int32_t vocabSize, uint64_t seed, int64_t b, int64_t t);

  Batch batch(int64_t step, int32_t microBatch) const;
  void fill(int64_t step, int32_t microBatch, Batch& out) const;  // reuses out's storage

  int64_t tokenCount() const { return static_cast<int64_t>(stream_.size()); }
  uint64_t seed() const { return seed_; }

 private:
  DataLoader(std::vector<int32_t> stream, uint64_t seed, int64_t b, int64_t t)
      : stream_(std::move(stream)), seed_(seed), b_(b), t_(t) {}
  std::vector<int32_t> stream_;
  uint64_t seed_;
  int64_t b_;
  int64_t t_;
};

}  // namespace bubblescope::engine
