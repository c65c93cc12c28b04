#include "trace_model/profiler_step.h"

namespace bubblescope::trace_model {

std::optional<int32_t> profilerStepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  size_t i = kPrefix.size();
  const auto skipSpaces = [&] {
    while (i < name.size() && (name[i] == ' ' || name[i] == '\t')) ++i;
  };
  skipSpaces();
  if (i >= name.size() || name[i] != '#') return std::nullopt;
  ++i;
  skipSpaces();
  int64_t n = 0;
  size_t digits = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i, ++digits) {
    if (digits == 9) return std::nullopt;
    n = n * 10 + (name[i] - '0');
  }
  if (digits == 0) return std::nullopt;
  return static_cast<int32_t>(n);
}

}  // namespace bubblescope::trace_model
