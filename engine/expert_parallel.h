// ExpertParallelGroup: what a mixture-of-experts block needs of its expert-
// parallel (ep) group: its rank and size, and an all-to-all with variable
// sizes. The engine core sees only this interface; engine/parallel
// implements it over a Communicator (MPI), so the model never depends on MPI.
//
// Expert placement: the E experts are split in contiguous blocks of E / size
// experts; group rank r holds experts r·E/size .. (r + 1)·E/size − 1
// (DeepSpeed-MoE and Megatron-LM place them so).
//
// Contract: every rank of the group calls allToAll() in the same order (the
// MoE blocks do: per forward a count exchange, a dispatch and a combine; per
// backward input pass a dispatch and a combine of the gradients), rank a's
// sendCounts[b] equal to rank b's recvCounts[a]. `send` holds sum(sendCounts)
// values, the part for rank r after those for ranks < r; `recv` receives
// sum(recvCounts) values, rank r's part after those of ranks < r. The call
// is traced as one communication span (kind all_to_all, dimension ep) named
// `name`, with the bytes of `send` and `where`'s step, micro-batch, stage
// and chunk. Called on the model's thread; the group outlives the models
// that use it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "engine/trace_context.h"

namespace bubblescope::engine {

class ExpertParallelGroup {
 public:
  virtual ~ExpertParallelGroup() = default;
  virtual int32_t rank() const = 0;
  virtual int32_t size() const = 0;
  virtual Status allToAll(std::span<const float> send, std::span<float> recv,
                          const std::vector<int>& sendCounts, const std::vector<int>& recvCounts,
                          const char* name, const TraceContext& where) = 0;
};

}  // namespace bubblescope::engine
