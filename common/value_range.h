// The one range check of every number a user gives: command-line flags
// (cli/command_line.h), layout files (engine/layout/layout_json.cpp) and the
// values a trace file holds. Each number is checked once, where its text is
// parsed, and every failure reads the same way:
//
//   FIELD: VALUE is outside the allowed range LO to HI
//   FIELD: 'TEXT' is not a number          (integers: not a whole number)
//
// Contract: parseInRange<T>(field, text, lo, hi) accepts the whole text as a
// T (decimal integers for integral T; a finite decimal or exponent form for
// double) with lo <= value <= hi, else returns that one message as an
// invalidArgument Status. Values too large for T are reported with the text
// the user wrote (never a wrapped or infinite value). checkRange() is the
// same check on a value already parsed (NaN is outside every range).
#pragma once

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/result.h"

namespace bubblescope {

// A bound as the message prints it: integers in full, doubles in %g form.
template <class T>
std::string rangeBoundText(T v) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    char text[32];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(v));
    return text;
  }
}

// "FIELD: " before a message ("" : no prefix, for a caller that adds it).
inline std::string fieldPrefix(std::string_view field) {
  return field.empty() ? std::string() : std::string(field) + ": ";
}

// `range`: "LO to HI", or a condition such as "greater than 0".
inline std::string outOfRangeMessage(std::string_view field, std::string_view valueText,
                                     const std::string& range) {
  return fieldPrefix(field) + std::string(valueText) + " is outside the allowed range " + range;
}

template <class T>
std::string rangeText(T lo, T hi) {
  return rangeBoundText(lo) + " to " + rangeBoundText(hi);
}

template <class T>
Status checkRange(std::string_view field, T value, T lo, T hi) {
  static_assert(std::is_arithmetic_v<T>);
  if (lo <= value && value <= hi) return Status::ok();  // false for NaN
  return Status::invalidArgument(
      outOfRangeMessage(field, rangeBoundText(value), rangeText(lo, hi)));
}

// The widest range a T holds (doubles: every finite value).
template <class T>
constexpr T lowestValue() {
  return std::numeric_limits<T>::lowest();
}
template <class T>
constexpr T highestValue() {
  return std::numeric_limits<T>::max();
}

template <class T>
Result<T> parseInRange(std::string_view field, std::string_view text, T lo = lowestValue<T>(),
                       T hi = highestValue<T>()) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  auto outside = [&] {
    return Status::invalidArgument(outOfRangeMessage(field, text, rangeText(lo, hi)));
  };
  if constexpr (std::is_integral_v<T>) {
    // Parsed as the widest integer of T's signedness, so that a value too
    // large for T is reported as out of range rather than as not a number.
    using Wide = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
    Wide wide = 0;
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, wide);
    // "-1" for an unsigned T: a whole number, below the range.
    const bool negativeUnsigned =
        std::is_unsigned_v<T> && digits.size() > 1 && digits[0] == '-' &&
        digits.find_first_not_of("0123456789", 1) == std::string_view::npos;
    if (ec == std::errc::result_out_of_range || negativeUnsigned) return outside();
    if (ec != std::errc() || ptr != end || digits.empty()) {
      // "1e3", "2.5" and the like: a number, but not a whole one.
      char* numberEnd = nullptr;
      const std::string copy(text);
      std::strtod(copy.c_str(), &numberEnd);
      const bool isNumber = !copy.empty() && numberEnd == copy.c_str() + copy.size();
      return Status::invalidArgument(fieldPrefix(field) + "'" + std::string(text) + "' is not " +
                                     (isNumber ? "a whole number" : "a number"));
    }
    if (wide < static_cast<Wide>(lo) || wide > static_cast<Wide>(hi)) return outside();
    return static_cast<T>(wide);
  } else {
    const std::string copy(text);
    char* numberEnd = nullptr;
    errno = 0;
    const double value = std::strtod(copy.c_str(), &numberEnd);
    const bool whole = !copy.empty() && numberEnd == copy.c_str() + copy.size();
    // strtod reads "nan", "inf" and hexadecimal floats too; a user's number
    // is decimal, and an overflow (ERANGE with HUGE_VAL) is out of range.
    const bool decimal = copy.find_first_of("xXnN") == std::string::npos;
    if (!whole || !decimal) {
      return Status::invalidArgument(fieldPrefix(field) + "'" + copy + "' is not a number");
    }
    if (!std::isfinite(value) || !(static_cast<double>(lo) <= value) ||
        !(value <= static_cast<double>(hi))) {
      return outside();
    }
    return static_cast<T>(value);
  }
}

}  // namespace bubblescope
