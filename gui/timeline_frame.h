// Value structs the TimelineModel hands to the painter: rows, and what one
// frame shows (individual spans, or per-pixel coverage when zoomed out).
//
// Units: times are ns on the run's aligned timeline; a "column" is one pixel
// of the frame's width, column c covering [t0 + c·w, t0 + (c+1)·w) with
// w = (t1 − t0) / columns.
#pragma once

#include <QString>
#include <cstdint>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::gui {

// One lane of one rank. Rows are ordered by pipeline stage, then dp, tp,
// rank, then lane (compute, communication, pipeline, data, cuda api, GPU
// streams).
struct TimelineRow {
  int32_t rank = 0;
  trace_model::Lane lane = trace_model::Lane::kCompute;
  int32_t pp = 0, tp = 0, dp = 0;
  bool firstOfRank = false;   // the row that carries the rank label
  bool firstOfStage = false;  // the first row of a pipeline stage group
  QString rankLabel;          // "rank 5 · pp1 tp0 dp1"
  QString laneLabel;          // "compute", "comm", "pipeline", "data", "cuda api", "gpu stream 7"
};

// One event, as drawn (index into the model's row cache).
struct FrameSpan {
  int32_t row = 0;
  int64_t startNs = 0;
  int64_t endNs = 0;
  trace_model::EventKind kind = trace_model::EventKind::kOther;
  int32_t microBatch = -1;
  int32_t chunk = -1;  // the model chunk of an interleaved schedule (-1: none)
  // A GPU stream record's trace_model::KernelCategory, coloured by it; -1:
  // not a GPU stream record (coloured by kind).
  int8_t kernelCategory = -1;
};

// Coverage of one kind (or, on a GPU stream row, one kernel category) on one
// row: fraction[c] in [0, 1] is the share of
// column c the kind's spans cover (overlapping spans of a kind add up and
// are clamped to 1).
struct KindCoverage {
  trace_model::EventKind kind = trace_model::EventKind::kOther;
  // As FrameSpan::kernelCategory, in window and overview frames alike (the
  // overview bins GPU records by category).
  int8_t kernelCategory = -1;
  std::vector<float> fraction;
};

struct RowCoverage {
  int32_t row = 0;
  std::vector<KindCoverage> kinds;  // legend order
};

// Idle time inside a step of one rank (a bubble), exact, at least a column wide.
struct BubbleInterval {
  int32_t rank = 0;
  int64_t startNs = 0;
  int64_t endNs = 0;
};

// Per-column idle mask of one rank, when coverage is drawn.
struct RankIdleColumns {
  int32_t rank = 0;
  std::vector<uint8_t> idle;  // 1: the column is inside a step and holds no work at all
};

// Columns [firstColumn, columns) of one rank that the whole-run overview has
// not reached yet (its events are still being indexed): drawn as their own
// neutral state, neither busy nor idle.
struct RankUnindexed {
  int32_t rank = 0;
  int firstColumn = 0;
};

// From a send to its matching receive (same peers, step, micro-batch, in order).
struct FrameArrow {
  int32_t fromRank = 0;
  int32_t toRank = 0;
  int64_t fromNs = 0;  // the send's start
  int64_t toNs = 0;    // the receive's end
};

struct TimelineFrame {
  double t0Ns = 0;
  double t1Ns = 1;
  int columns = 1;
  int firstRow = 0, lastRow = -1;  // the rows this frame covers (inclusive)
  std::vector<FrameSpan> spans;
  std::vector<RowCoverage> coverage;
  std::vector<BubbleInterval> bubbles;
  std::vector<RankIdleColumns> idleColumns;
  std::vector<RankUnindexed> unindexed;  // only while the overview is being built
  std::vector<FrameArrow> arrows;
  bool fromOverview = false;  // true: coverage comes from the whole-run overview
  QString note;               // e.g. "indexing 40%" while the overview grows

  double columnNs() const { return (t1Ns - t0Ns) / columns; }
};

}  // namespace bubblescope::gui
