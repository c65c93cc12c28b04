// Export of one run to the Chrome trace event format (JSON), which Perfetto
// and chrome://tracing open (ts and dur in µs; docs/formulas.md).
//
// Layout of the output: one process per rank (pid = rank, named
// "rank 3 (dp1 tp1 pp0)", sorted by rank), one thread per lane (tid = lane
// number, named "compute", "communication", "pipeline", "data", "cuda api"
// or "gpu stream N"), every event a complete event ("ph":"X") with ts and dur
// in µs (ns / 1000, exact to the ns), cat = the event kind, args = step, mb,
// stage, chunk, dim, bytes, flops, peer, correlation where they apply. Each send is joined
// to its receive by a flow ("ph":"s" at the send's start, "ph":"f","bp":"e"
// at the receive's start, cat "p2p", the same integer id): the n-th send from
// rank a to rank b for (step, micro-batch) matches the n-th receive on b from
// a for the same (step, micro-batch), in start order (MPI's non-overtaking
// order). A send or receive whose partner is not in the trace (a run cut short)
// keeps its half of a flow, which viewers ignore. Each launch call (lane
// "cuda api") is joined to the GPU record it launched (same rank, same
// Event::correlationId, args.correlation) by a flow "ph":"s" at the launch's
// start to "ph":"f","bp":"e" at the record's start on its stream lane, cat
// "launch", as Nsight Systems and Perfetto draw them; only complete pairs are
// written. Flow ids are unique in the file.
//
// Contract: streams rank by rank (TraceReader::visitEvents), the ranks of
// one pipeline one after another (by dp, tp, then pp; the output's sort
// indexes keep the viewer's order by rank), so memory is bounded by the
// flows still waiting for their other side, about one rank's transfers, not
// by the run.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "storage/trace_reader.h"

namespace bubblescope::analysis {

struct ChromeExportStats {
  int64_t events = 0;       // complete events written
  int64_t flows = 0;        // send/receive pairs joined
  int64_t launchFlows = 0;  // launch call -> GPU record pairs joined
  // The most send/receive ends held at once waiting for their partner: the
  // export's memory beyond its constant part (about 100 bytes each).
  int64_t peakWaitingFlowEnds = 0;
  int64_t bytes = 0;  // size of the JSON written
};

// Writes run `runId` to `outPath` (replaced if present). Errors: the run is
// missing (kNotFound), the file cannot be written (kIoError), reader errors.
Result<ChromeExportStats> exportChromeTrace(storage::TraceReader& reader, int64_t runId,
                                            const std::string& outPath);

}  // namespace bubblescope::analysis
