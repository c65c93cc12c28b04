// MemoryCopies: one rank's memory copies and sets by kind (docs/analysis.md,
// "Memory copies"): the GPU records of kind memcpy or memset, grouped by
// the direction their name gives ("Memcpy HtoD (Pageable -> Device)" is
// HtoD, as both importers name them: DtoH, DtoD, HtoD, PtoP, ...), "memset"
// for sets, and "memcpy" for a copy whose name gives no direction (the
// engine's CUPTI tracer names them "memcpy"). Per kind: records, bytes (the
// sum of the stored sizes; unknown when no record of the kind has one) and
// summed duration.
//
// Contract: add() in any order (records of other kinds are ignored), then
// finish(). A few numbers per kind. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::analysis {

// The kind of a memcpy or memset record (see above); "" for other kinds.
std::string memoryCopyKind(trace_model::EventKind kind, std::string_view name);

struct MemoryCopyKind {
  std::string kind;
  int64_t count = 0;
  std::optional<int64_t> bytes;
  int64_t ns = 0;
};

class MemoryCopiesBuilder {
 public:
  void add(const trace_model::Event& e);
  // Adds the records of `other`.
  void merge(const MemoryCopiesBuilder& other);
  // By kind, in name order.
  std::vector<MemoryCopyKind> finish() const;

 private:
  std::vector<MemoryCopyKind> kinds_;
};

}  // namespace bubblescope::analysis
