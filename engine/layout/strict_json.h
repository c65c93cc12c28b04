// Reading a user's JSON (layout files, --layout-json, model objects)
// strictly: every number is range-checked where it is read, with the one
// message of common/value_range.h ("seq_len: 2147483648 is outside the
// allowed range 1 to 2147483647"); a number a double cannot hold (1e400) and
// a key given twice in one object are errors naming the key, never an
// exception or a silently dropped value.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/value_range.h"

namespace bubblescope::layout {

// JSON text (// and /* */ comments allowed) as a value. Errors: not JSON
// ("<what> is not valid JSON: ..."), a number out of a double's range, a
// duplicate key ("duplicate key 'dp'").
Result<nlohmann::json> parseStrictJson(const std::string& text, std::string_view what);

// `v` (the value of `field`) as an integer T in [lo, hi]: a JSON integer, or
// one of the messages above (a fraction: "not a whole number"; a string or
// other value: "must be an integer, got ...").
template <class T>
Result<T> jsonInteger(std::string_view field, const nlohmann::json& v, T lo = lowestValue<T>(),
                      T hi = highestValue<T>()) {
  if (!v.is_number()) {
    return Status::invalidArgument(std::string(field) + " must be an integer, got " + v.dump());
  }
  return parseInRange<T>(field, v.dump(), lo, hi);  // dump() writes the number exactly
}

// `v` as a finite double in [lo, hi].
inline Result<double> jsonNumber(std::string_view field, const nlohmann::json& v,
                                 double lo = lowestValue<double>(),
                                 double hi = highestValue<double>()) {
  if (!v.is_number()) {
    return Status::invalidArgument(std::string(field) + " must be a number, got " + v.dump());
  }
  return parseInRange<double>(field, v.dump(), lo, hi);
}

}  // namespace bubblescope::layout
