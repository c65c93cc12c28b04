// parseKineto: streams a Kineto (PyTorch profiler) JSON trace through
// nlohmann::json's SAX interface, with no document tree: memory stays bounded
// by one event whatever the file's size.
//
// Contract: `onHeader` is called with what is known of the header (it may
// grow later: keys after "traceEvents" arrive after the events) before the
// first event, and `onRecord` once per event of "traceEvents" (a bare
// top-level array of events is accepted too). An entry that is not an event
// (not an object, or an object without "ph") is skipped and counted in the
// header (skippedEntries, firstSkipped); a bare array without a single
// event is "not a Kineto trace". A callback's error stops the
// parse and is returned. Malformed JSON is one error naming the byte
// offset; a document with no "traceEvents" is "not a Kineto trace".
#pragma once

#include <functional>
#include <istream>

#include "common/result.h"
#include "storage/import/kineto_record.h"

namespace bubblescope::import {

struct KinetoCallbacks {
  std::function<Status(const KinetoHeader&)> onHeader;
  std::function<Status(const KinetoRecord&)> onRecord;
};

// Returns the header as complete at the end of the file.
Result<KinetoHeader> parseKineto(std::istream& in, const KinetoCallbacks& callbacks);

// A Chrome-trace time in microseconds ("1712195495505543.2", "12", "3.5e2")
// as integer nanoseconds: decimal text is converted exactly (digits past the
// nanosecond are rounded), exponent forms through the double.
int64_t microsTextToNs(const std::string& text, double value);

// Parses JSON with a handler that does nothing: the floor for bench import.
Status parseJsonOnly(std::istream& in, int64_t& valuesSeen);

}  // namespace bubblescope::import
