// The trace `bubblescope --bench-render --events N --ranks R` measures: a
// simulated 1F1B run (storage/simulated_run.h, the schedule simulator's
// replay written as `bubblescope-cli simulate` writes it: gpt2-124m, pp 8 ×
// dp R/8 (pp 1 when 8 does not divide R), 16 micro-batches, the CLI's
// default op costs) of at least N events, in $TMPDIR (default /tmp). These
// files are large (about 64 bytes an event): delete them after measuring.
#pragma once

#include <QString>
#include <cstdint>
#include <ostream>

#include "common/result.h"

namespace bubblescope::gui {

// The path of the trace for (events, ranks); writes it unless it already
// holds a finished run of `ranks` ranks and at least `events` events.
// Reports what it does on `log`. Errors: events < 1, ranks < 1, or what the
// writer reports.
Result<QString> ensureRenderTrace(int64_t events, int32_t ranks, std::ostream& log);

}  // namespace bubblescope::gui
