// Result<T>: a value of T, or the Status saying why there is none.
//
// Invariant: exactly one of {value, non-OK status} is present. Constructing a Result from an
// OK Status is a bug and becomes an internal error (never a silent empty value).
//
// Thread safety: a value type; distinct objects may be used from any thread.
// Lifetime: owns its value.
#pragma once

#include <optional>
#include <type_traits>
#include <utility>

#include "base/assert.h"
#include "base/status.h"

namespace shoal {

template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "use Status, not Result<Status>");

 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status)                          // NOLINT(google-explicit-constructor)
      : status_(status.isOk()
                    ? internalError("ok-status-as-error", "a Result was built from an OK Status")
                    : std::move(status)) {}

  bool isOk() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // Preconditions: isOk(). Checked in every build: reading an absent value is a bug.
  T& value() & {
    SHOAL_CHECK(value_.has_value(), "Result::value() on an error: %s", status_.toString().c_str());
    return *value_;
  }
  const T& value() const& {
    SHOAL_CHECK(value_.has_value(), "Result::value() on an error: %s", status_.toString().c_str());
    return *value_;
  }
  T&& value() && {
    SHOAL_CHECK(value_.has_value(), "Result::value() on an error: %s", status_.toString().c_str());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The value, or `fallback` when this holds an error.
  T valueOr(T fallback) const& { return value_ ? *value_ : std::move(fallback); }

 private:
  std::optional<T> value_;
  Status status_;  // OK iff value_ is set
};

}  // namespace shoal

#define SHOAL_CONCAT_INNER(a, b) a##b
#define SHOAL_CONCAT(a, b) SHOAL_CONCAT_INNER(a, b)

// `SHOAL_ASSIGN_OR_RETURN(auto x, makeX());` — binds the value or returns the error Status.
#define SHOAL_ASSIGN_OR_RETURN(lhs, expr) \
  SHOAL_ASSIGN_OR_RETURN_IMPL(SHOAL_CONCAT(shoal_result_, __LINE__), lhs, expr)
#define SHOAL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.isOk()) return tmp.status();             \
  lhs = std::move(tmp).value()
