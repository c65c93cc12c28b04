// forEachRankInParallel: per-rank work of one trace on several threads.
//
// Contract: calls `work(reader, i)` once for every i in [0, count), on up to
// `threads` threads: the calling thread with `reader`, every other thread with
// its own TraceReader of the same file (a reader is not thread-safe; a thread
// that cannot open one leaves its share to the others). `work` must touch
// only state of its own i. `onDone(done)`, when set, is called on the calling
// thread once per finished item, with done = 1, 2, … count in that order;
// returning false stops the work (items not started are skipped) and the call
// returns FailedPrecondition("analysis cancelled"). The first error of any
// item is returned; the other threads stop after their current item.
#pragma once

#include <cstdint>
#include <functional>

#include "common/status.h"
#include "storage/trace_reader.h"

namespace bubblescope::analysis {

using RankWork = std::function<Status(storage::TraceReader& reader, int64_t index)>;

Status forEachRankInParallel(storage::TraceReader& reader, int64_t count, int threads,
                             const RankWork& work, const std::function<bool(int64_t)>& onDone);

// The threads an analysis uses: the machine's cores, at least 1, at most 8.
int analysisThreads();

}  // namespace bubblescope::analysis
