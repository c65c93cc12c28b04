// StepRangePattern: which NVTX ranges of an Nsight Systems export are
// training steps, and their numbers. The default matches PyTorch's
// `ProfilerStep#N` and the `iteration N` / `step N` ranges training loops
// push (Megatron-style, any of ' ', '_', '#', ':' between word and number);
// `import --step-range REGEX` replaces it (ECMAScript, the whole name must
// match). A step's number is the first group of digits the pattern captured,
// else its position among the matching ranges of its rank.
//
// Contract: compile() fails with one message on a bad regex. Matching is
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>

#include "common/result.h"

namespace bubblescope::import {

inline constexpr char kDefaultStepRange[] =
    R"(ProfilerStep\s*#\s*(\d+)|[Ii]teration[ _#:]*(\d+)|[Ss]tep[ _#:]*(\d+))";

class StepRangePattern {
 public:
  // An empty `regex` is the default.
  static Result<StepRangePattern> compile(const std::string& regex);
  // nullopt: not a step; -1: a step without a number; else its number.
  std::optional<int64_t> match(const std::string& name) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::regex regex_;
};

}  // namespace bubblescope::import
