#include "storage/import/nsys_steps.h"

namespace bubblescope::import {

namespace {
constexpr size_t kMaxStepNameBytes = 512;  // longer names are ops, never steps
}

Result<StepRangePattern> StepRangePattern::compile(const std::string& regex) {
  StepRangePattern p;
  p.text_ = regex.empty() ? std::string(kDefaultStepRange) : regex;
  try {
    p.regex_ = std::regex(p.text_, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return Status::invalidArgument("--step-range " + p.text_ + ": not a regular expression (" +
                                   e.what() + ")");
  }
  return p;
}

std::optional<int64_t> StepRangePattern::match(const std::string& name) const {
  if (name.size() > kMaxStepNameBytes) return std::nullopt;
  std::smatch m;
  if (!std::regex_match(name, m, regex_)) return std::nullopt;
  for (size_t i = 1; i < m.size(); ++i) {
    if (!m[i].matched) continue;
    const std::string digits = m[i].str();
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    return std::stoll(digits);
  }
  return -1;
}

}  // namespace bubblescope::import
