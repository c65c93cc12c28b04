#include "storage/event_row.h"

namespace bubblescope::storage {

void bindEventRow(SqliteStatement& s, int64_t runId, const trace_model::Event& e, int64_t nameId) {
  s.bind(1, runId);
  s.bind(2, int64_t{e.rank});
  s.bind(3, int64_t{static_cast<int32_t>(e.lane)});
  s.bind(4, int64_t{static_cast<int32_t>(e.kind)});
  s.bind(5, nameId);
  s.bind(6, e.startNs);
  s.bind(7, e.endNs);
  s.bind(8, int64_t{e.step});
  s.bind(9, int64_t{e.microBatch});
  s.bind(10, int64_t{e.stage});
  s.bind(11, int64_t{e.chunk});
  s.bind(12, int64_t{static_cast<int32_t>(e.dim)});
  s.bind(13, e.bytes);
  s.bind(14, e.flops);
  s.bind(15, int64_t{e.peer});
  s.bind(16, e.correlationId);
  s.bind(17, e.cpuNs);
}

}  // namespace bubblescope::storage
