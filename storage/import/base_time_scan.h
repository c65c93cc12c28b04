// scanBaseTimeNs: the `baseTimeNanoseconds` of a Kineto trace, found without
// parsing it. Kineto writes the key after "traceEvents", so the streaming
// importer learns it only after the events it must shift; it reads the tail
// of the file's text first (the last kTailBytes: for a plain file a seek, for
// a .gz file one inflate pass, about a tenth of the parse).
//
// Contract: nullopt when the tail has no such key with an integer value (a
// key further back than kTailBytes from the end is missed: the importer then
// says so and keeps that file's times unshifted). Errors reading the file are
// left to the parse that follows, which reports them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace bubblescope::import {

inline constexpr int64_t kBaseTimeTailBytes = 1 << 20;

std::optional<int64_t> scanBaseTimeNs(const std::string& path);

// The value of the last `"baseTimeNanoseconds": N` in `text`, if any.
std::optional<int64_t> findBaseTimeNs(const std::string& text);

}  // namespace bubblescope::import
