// EnclosingSpans: host spans of one rank by thread, to ask which of them were
// open at a moment on a thread (the ops or NVTX ranges around a kernel's
// launch), innermost first. Spans of one thread nest (or are treated as if
// they did: the latest-starting open span is the innermost).
//
// Contract: add() in any order, seal() once, then at(). 32 bytes per span.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bubblescope::import {

class EnclosingSpans {
 public:
  // `item` is the caller's index of the span (returned by at()).
  void add(int64_t tid, int64_t startNs, int64_t endNs, size_t item);
  void seal();
  // The items of the spans of `tid` with start <= timeNs <= end, latest start first.
  std::vector<size_t> at(int64_t tid, int64_t timeNs) const;
  size_t size() const { return spans_.size(); }

 private:
  struct Span {
    int64_t tid;
    int64_t startNs;
    int64_t endNs;
    size_t item;
  };
  std::vector<Span> spans_;  // by start once sealed
  int64_t maxDurationNs_ = 0;  // bounds the backward search in at()
};

}  // namespace bubblescope::import
