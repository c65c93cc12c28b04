#include "storage/import/kineto_parser.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace bubblescope::import {
namespace {

using json = nlohmann::json;

// Where the parser is in the document.
enum class Ctx {
  kRoot,        // before the top-level value
  kTop,         // the top-level object
  kEvents,      // the "traceEvents" array
  kEvent,       // one event object
  kArgs,        // its "args" object
  kDistInfo,    // "distributedInfo"
  kGroups,      // distributedInfo.pg_config
  kGroup,       // one pg_config entry
  kDevices,     // "deviceProperties"
  kDevice,      // one device
  kRanks,       // a pg_config entry's "ranks"
  kInputDims,   // args "Input Dims": one array per input
  kInputDim,    // the dims of one input
  kInputTypes,  // args "Input type"
  kSkip,        // anything else (its nested values are ignored)
};

// A JSON scalar as the handler sees it.
struct Scalar {
  const char* what = "null";  // "a number", "a string", ...: for messages
  bool isNumber = false;
  bool isFloat = false;
  int64_t integer = 0;
  double real = 0;
  const std::string* text = nullptr;  // a float's text, or the string
};

int64_t microsToNs(const Scalar& v) {
  return v.isFloat ? microsTextToNs(*v.text, v.real) : v.integer * 1000;
}

int64_t toInt(const Scalar& v) {
  if (v.isNumber) return v.integer;
  if (v.text == nullptr) return -1;
  try {
    return std::stoll(*v.text, nullptr, 0);  // "0x0", "2560"
  } catch (...) {
    return -1;
  }
}

class KinetoSax {
 public:
  explicit KinetoSax(const KinetoCallbacks& callbacks) : callbacks_(callbacks) {}

  bool null() { return scalar({"null"}); }
  bool boolean(bool) { return scalar({"a boolean"}); }
  bool number_integer(json::number_integer_t v) {
    return scalar({"a number", true, false, v, static_cast<double>(v), nullptr});
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return scalar(
        {"a number", true, false, static_cast<int64_t>(v), static_cast<double>(v), nullptr});
  }
  bool number_float(json::number_float_t v, const std::string& s) {
    const bool inRange = std::isfinite(v) && std::fabs(v) < 9e18;
    return scalar({"a number", true, true, inRange ? static_cast<int64_t>(v) : 0, v, &s});
  }
  bool string(std::string& s) { return scalar({"a string", false, false, 0, 0, &s}); }
  bool binary(json::binary_t&) { return scalar({"binary data"}); }

  bool key(std::string& k) {
    key_ = k;
    return true;
  }

  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    if (status_.isOk()) {
      std::string what = e.what();
      // nlohmann's text starts with "[json.exception.parse_error.101] parse error at line 1, ...".
      if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
      status_ = Status::corrupt("malformed JSON at byte " + std::to_string(position) + ": " + what);
    }
    return false;
  }

  const Status& status() const { return status_; }
  KinetoHeader& header() { return header_; }
  bool rootIsArray() const { return rootIsArray_; }
  int64_t events() const { return events_; }
  int64_t entries() const { return entries_; }

 private:
  Ctx top() const { return stack_.empty() ? Ctx::kRoot : stack_.back(); }

  bool open(bool object) {
    const Ctx at = top();
    Ctx next = Ctx::kSkip;
    switch (at) {
      case Ctx::kRoot:
        next = object ? Ctx::kTop : Ctx::kEvents;
        rootIsArray_ = !object;
        if (!object) header_.sawTraceEvents = true;
        break;
      case Ctx::kTop:
        if (key_ == "traceEvents" && !object) {
          next = Ctx::kEvents;
          header_.sawTraceEvents = true;
        } else if (key_ == "distributedInfo" && object) {
          next = Ctx::kDistInfo;
          header_.hasDistributedInfo = true;
        } else if (key_ == "deviceProperties" && !object) {
          next = Ctx::kDevices;
        }
        break;
      case Ctx::kEvents:
        ++entries_;
        if (object) {
          record_.clear();
          next = Ctx::kEvent;
        } else {
          skipEntry("an array");
        }
        break;
      case Ctx::kEvent:
        if (key_ == "args" && object) next = Ctx::kArgs;
        break;
      case Ctx::kArgs:
        if (key_ == "Input Dims" && !object) next = Ctx::kInputDims;
        if (key_ == "Input type" && !object) next = Ctx::kInputTypes;
        break;
      case Ctx::kInputDims:
        if (!object) {
          record_.inputElems.push_back(-1);  // -1 until a dim arrives ([] = no tensor)
          next = Ctx::kInputDim;
        }
        break;
      case Ctx::kGroup:
        if (key_ == "ranks" && !object) next = Ctx::kRanks;
        break;
      case Ctx::kDistInfo:
        if (key_ == "pg_config" && !object) next = Ctx::kGroups;
        break;
      case Ctx::kGroups:
        if (object) {
          header_.groups.emplace_back();
          next = Ctx::kGroup;
        }
        break;
      case Ctx::kDevices:
        if (object) {
          header_.deviceNames.emplace_back();
          next = Ctx::kDevice;
        }
        break;
      default:
        break;
    }
    stack_.push_back(next);
    return true;
  }

  bool close() {
    const Ctx at = top();
    if (!stack_.empty()) stack_.pop_back();
    if (at == Ctx::kEvent) {
      // Chrome's trace format: every event names its phase.
      if (record_.ph.empty()) {
        skipEntry("an object without \"ph\"");
        return true;
      }
      ++events_;
      if (!headerSent_) {
        headerSent_ = true;
        if (callbacks_.onHeader) status_ = callbacks_.onHeader(header_);
        if (!status_.isOk()) return false;
      }
      if (callbacks_.onRecord) status_ = callbacks_.onRecord(record_);
      return status_.isOk();
    }
    return true;
  }

  bool scalar(const Scalar& v) {
    switch (top()) {
      case Ctx::kRoot:
        status_ = Status::unsupported("not a Kineto trace: the JSON is not an object or array");
        return false;
      case Ctx::kTop:
        if (key_ == "baseTimeNanoseconds" && v.isNumber) header_.baseTimeNs = v.integer;
        return true;
      case Ctx::kEvents:
        ++entries_;
        skipEntry(v.what);
        return true;
      case Ctx::kEvent:
        return eventField(v);
      case Ctx::kArgs:
        return argField(v);
      case Ctx::kDistInfo:
        if (key_ == "rank" && v.isNumber) header_.rank = v.integer;
        if (key_ == "world_size" && v.isNumber) header_.worldSize = v.integer;
        if (key_ == "backend" && v.text && !v.isNumber) header_.backend = *v.text;
        return true;
      case Ctx::kGroup: {
        KinetoGroup& g = header_.groups.back();
        if (key_ == "pg_name" && v.text && !v.isNumber) g.name = *v.text;
        if (key_ == "pg_desc" && v.text && !v.isNumber) g.desc = *v.text;
        if (key_ == "pg_size" && v.isNumber) g.size = v.integer;
        return true;
      }
      case Ctx::kDevice:
        if (key_ == "name" && v.text && !v.isNumber) header_.deviceNames.back() = *v.text;
        return true;
      case Ctx::kRanks:
        if (v.isNumber) header_.groups.back().ranks.push_back(v.integer);
        return true;
      case Ctx::kInputDim:
        if (v.isNumber) {
          // A negative dim or an overflowing product: 0, i.e. no usable size.
          int64_t& elems = record_.inputElems.back();
          const int64_t dim = std::max<int64_t>(v.integer, 0);
          if (elems < 0) {
            elems = dim;
          } else if (__builtin_mul_overflow(elems, dim, &elems)) {
            elems = 0;
          }
        }
        return true;
      case Ctx::kInputTypes:
        if (v.text && !v.isNumber) record_.inputTypes.push_back(*v.text);
        return true;
      default:
        return true;
    }
  }

  bool eventField(const Scalar& v) {
    KinetoRecord& r = record_;
    const std::string& k = key_;
    if (k == "ph" && v.text && !v.isNumber) {
      r.ph = *v.text;
    } else if (k == "cat" && v.text && !v.isNumber) {
      r.cat = *v.text;
    } else if (k == "name" && v.text && !v.isNumber) {
      r.name = *v.text;
    } else if (k == "ts" && v.isNumber) {
      r.tsNs = microsToNs(v);
    } else if (k == "dur" && v.isNumber) {
      r.durNs = microsToNs(v);
    } else if (k == "pid") {
      r.pid = v.isNumber ? v.integer : -1;
    } else if (k == "tid") {
      r.tid = v.isNumber ? v.integer : -1;
    } else if (k == "id") {
      r.flowId = toInt(v);
    }
    return true;
  }

  bool argField(const Scalar& v) {
    KinetoRecord& r = record_;
    const std::string& k = key_;
    if (k == "device") {
      r.device = toInt(v);
    } else if (k == "stream") {
      r.stream = toInt(v);
    } else if (k == "correlation") {
      r.correlation = toInt(v);
    } else if (k == "bytes") {
      r.bytes = toInt(v);
    } else if (k == "Collective name" && v.text && !v.isNumber) {
      r.collective = *v.text;
    } else if (k == "dtype" && v.text && !v.isNumber) {
      r.dtype = *v.text;
    } else if (k == "Process Group Name" && v.text && !v.isNumber) {
      r.groupName = *v.text;
    } else if (k == "Process Group Description" && v.text && !v.isNumber) {
      r.groupDesc = *v.text;
    } else if (k == "In msg nelems") {
      r.inNelems = toInt(v);
    } else if (k == "Out msg nelems") {
      r.outNelems = toInt(v);
    } else if (k == "Process Group Ranks" && v.text && !v.isNumber) {
      r.groupRanks = *v.text;
    } else if (k == "Group size") {
      r.groupSize = toInt(v);
    } else if (k == "name" && v.text && !v.isNumber) {
      r.metaName = *v.text;
    }
    return true;
  }

  // An entry of the events array that is not an event: counted, the first
  // one described ("traceEvents[3] is a number").
  void skipEntry(const char* what) {
    if (header_.skippedEntries++ == 0) {
      header_.firstSkipped = std::string(rootIsArray_ ? "entry " : "traceEvents[") +
                             std::to_string(entries_ - 1) + (rootIsArray_ ? "" : "]") + " is " +
                             what;
    }
  }

  const KinetoCallbacks& callbacks_;
  std::vector<Ctx> stack_;
  bool rootIsArray_ = false;
  int64_t entries_ = 0;  // entries of the events array
  int64_t events_ = 0;   // of them, events (objects with "ph")
  std::string key_;
  KinetoRecord record_;
  KinetoHeader header_;
  bool headerSent_ = false;
  Status status_;
};

// Counts values and does nothing else.
struct NullSax {
  int64_t values = 0;
  bool null() { return ++values; }
  bool boolean(bool) { return ++values; }
  bool number_integer(json::number_integer_t) { return ++values; }
  bool number_unsigned(json::number_unsigned_t) { return ++values; }
  bool number_float(json::number_float_t, const std::string&) { return ++values; }
  bool string(std::string&) { return ++values; }
  bool binary(json::binary_t&) { return ++values; }
  bool key(std::string&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_object() { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }
};

}  // namespace

void KinetoRecord::clear() {
  ph.clear();
  cat.clear();
  name.clear();
  pid = tid = -1;
  tsNs.reset();
  durNs.reset();
  flowId = 0;
  device = stream = -1;
  correlation = 0;
  bytes = -1;
  collective.clear();
  dtype.clear();
  groupName.clear();
  groupDesc.clear();
  groupRanks.clear();
  inputElems.clear();
  inputTypes.clear();
  inNelems = outNelems = groupSize = -1;
  metaName.clear();
}

int64_t microsTextToNs(const std::string& text, double value) {
  constexpr int64_t kMaxWholeMicros = 9'000'000'000'000'000;  // 9e15 µs: fits int64 ns
  const size_t n = text.size();
  size_t i = 0;
  const bool negative = n > 0 && text[0] == '-';
  if (negative) ++i;
  int64_t whole = 0;
  int digits = 0;
  for (; i < n && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    whole = whole * 10 + (text[i] - '0');
    if (whole > kMaxWholeMicros) return std::llround(value * 1000.0);  // past int64 ns
  }
  int64_t frac = 0;
  int fracDigits = 0;
  bool roundUp = false;
  if (i < n && text[i] == '.') {
    for (++i; i < n && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (fracDigits < 3) {
        frac = frac * 10 + (text[i] - '0');
        ++fracDigits;
      } else if (fracDigits == 3) {
        roundUp = text[i] >= '5';
        ++fracDigits;
      }
    }
  }
  if (i != n || digits == 0) return std::llround(value * 1000.0);  // exponent or odd text
  for (int d = std::min(fracDigits, 3); d < 3; ++d) frac *= 10;
  const int64_t ns = whole * 1000 + frac + (roundUp ? 1 : 0);
  return negative ? -ns : ns;
}

Result<KinetoHeader> parseKineto(std::istream& in, const KinetoCallbacks& callbacks) {
  KinetoSax sax(callbacks);
  const bool ok = json::sax_parse(in, &sax, json::input_format_t::json, /*strict=*/true);
  if (!sax.status().isOk()) return sax.status();
  if (!ok) return Status::corrupt("malformed JSON");
  if (!sax.header().sawTraceEvents) {
    return Status::unsupported("not a Kineto trace: it has no \"traceEvents\" array");
  }
  // A bare array is a trace only if it holds events (old Chrome traces).
  if (sax.rootIsArray() && sax.events() == 0) {
    return Status::unsupported(
        "not a Kineto trace: a top-level JSON array of " + std::to_string(sax.entries()) +
        " values, none of them a trace event (an object with \"ph\")" +
        (sax.header().firstSkipped.empty() ? "" : "; " + sax.header().firstSkipped));
  }
  return std::move(sax.header());
}

Status parseJsonOnly(std::istream& in, int64_t& valuesSeen) {
  NullSax sax;
  const bool ok = json::sax_parse(in, &sax, json::input_format_t::json, /*strict=*/true);
  valuesSeen = sax.values;
  return ok ? Status::ok() : Status::corrupt("malformed JSON");
}

}  // namespace bubblescope::import
