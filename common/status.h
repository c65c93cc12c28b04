// Status: the error value every module returns across its boundary.
//
// Contract: a Status is either ok() or carries a code and one human-readable
// message that names the problem (the file, the field, the rank). Messages are
// complete sentences meant for the user; callers add context with
// withContext() rather than logging and returning. Only main() exits.
#pragma once

#include <string>
#include <utility>

namespace bubblescope {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad input from the user: a layout, a flag, a size
  kNotFound,           // a file, run, rank or key that does not exist
  kIoError,            // the operating system refused (permissions, disk)
  kCorrupt,            // data that exists but cannot be trusted
  kUnsupported,        // well-formed but not ours, or from a newer version
  kFailedPrecondition, // called in the wrong state
  kInternal,           // a bug or a library failure we did not expect
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  static Status invalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status notFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status ioError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
  static Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status failedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool isOk() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns this status with "context: " put in front of the message.
  Status withContext(const std::string& context) const {
    if (isOk()) return *this;
    return Status(code_, context + ": " + message_);
  }

  std::string toString() const { return isOk() ? std::string("ok") : message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace bubblescope

#define BS_CONCAT_INNER_(a, b) a##b
#define BS_CONCAT_(a, b) BS_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (a Status) is not ok.
#define BS_RETURN_IF_ERROR(expr)                              \
  do {                                                        \
    ::bubblescope::Status bs_status_ = (expr);                \
    if (!bs_status_.isOk()) return bs_status_;                \
  } while (0)
