// Memory a user's sizes are checked against before anything is allocated
// (a batch size, a model's width, a checkpoint or data file), so that a size
// too large is one message naming what and how many bytes, not a
// std::bad_alloc (or the OOM killer) seconds into a run.
//
// Contract: availableMemoryBytes() is MemAvailable of /proc/meminfo, lowered
// to the cgroup v2 limit's headroom (memory.max - memory.current) when the
// process runs in a limited cgroup, and to an address-space limit's
// headroom (ulimit -v, less what is mapped); -1 when none can be read (then every
// check passes). checkFitsInMemory() is ok when `bytes` fit, else
// InvalidArgument "WHAT needs 40 GiB (42949672960 bytes), more than the 6.2 GiB
// available to this process".
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace bubblescope::engine {

int64_t availableMemoryBytes();

Status checkFitsInMemory(std::string_view what, double bytes);

// `path` names a regular file (not /dev/zero, a pipe or a directory) whose
// size fits in memory; `what` names it in the message ("checkpoint
// 'ckpt.st'"). Errors: missing, not a regular file, too large.
Status checkFileFitsInMemory(std::string_view what, const std::string& path);

}  // namespace bubblescope::engine
