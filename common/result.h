// Result<T>: a value or the Status that explains why there is none.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "common/status.h"

namespace bubblescope {

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).isOk() && "Result built from an ok Status has no value");
  }

  bool isOk() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return isOk(); }

  // Precondition for value() and operator->: isOk().
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  Status status() const { return isOk() ? Status::ok() : std::get<Status>(state_); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace bubblescope

// Declares `lhs` from a Result-returning `expr`, or returns its Status.
#define BS_ASSIGN_OR_RETURN(lhs, expr) \
  BS_ASSIGN_OR_RETURN_IMPL_(BS_CONCAT_(bs_result_, __LINE__), lhs, expr)
#define BS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.isOk()) return tmp.status();           \
  lhs = std::move(tmp).value()
