// Status: the outcome of an operation that can fail in an expected way.
//
// A Status is OK or carries a code that tells the caller what to do next, a short stable
// `reason` token (machine-readable, e.g. "malformed-subject", "presence-write-stuck") and a
// human message that names the remedy. Modelled on absl::Status: codes are few and mean an
// action, not a cause.
//
//   code                 what the caller should do
//   kInvalidArgument     the input is wrong; fix it, never retry as is
//   kNotFound            the thing does not exist; create it or look elsewhere
//   kAlreadyExists       it exists; use it, or pick another name
//   kFailedPrecondition  the system is not in a state for this; do not retry until it changes
//   kAborted             a concurrent change won (CAS conflict); re-read and retry the transaction
//   kUnavailable         transient; retry with backoff
//   kDeadlineExceeded    it did not finish in time; the outcome may be unknown
//   kResourceExhausted   a cap or quota was hit; shed load or free space
//   kPermissionDenied    the caller may not do this; do not retry with the same identity
//   kDataLoss            stored data is corrupt or lost; stop and alert a person
//   kInternal            a bug in Shoal; report it
//   kCancelled           the caller asked to stop
//
// Thread safety: a Status is a value; distinct objects may be used from any thread.
// Lifetime: owns its strings.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace shoal {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kAborted,
  kUnavailable,
  kDeadlineExceeded,
  kResourceExhausted,
  kPermissionDenied,
  kDataLoss,
  kInternal,
  kCancelled,
};

// Stable lower-case name of a code ("invalid-argument", ...); used in --json output.
std::string_view statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  // OK.
  Status() = default;
  Status(StatusCode code, std::string_view reason, std::string_view message);

  static Status ok() { return Status(); }

  bool isOk() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // Short stable token naming the rule that failed, e.g. "sender-mismatch"; empty when OK.
  std::string_view reason() const;
  std::string_view message() const;

  // "invalid-argument (malformed-subject): subject has 5 tokens, a DM subject needs 7".
  std::string toString() const;

  // Prefix the message with context ("reading presence: ...") keeping code and reason.
  Status withContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b);

 private:
  struct Rep {
    StatusCode code;
    std::string reason;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;  // shared: Status is copied often and never mutated
};

// Constructors named after the code, so call sites read as what happened.
Status invalidArgument(std::string_view reason, std::string_view message);
Status notFound(std::string_view reason, std::string_view message);
Status alreadyExists(std::string_view reason, std::string_view message);
Status failedPrecondition(std::string_view reason, std::string_view message);
Status aborted(std::string_view reason, std::string_view message);
Status unavailable(std::string_view reason, std::string_view message);
Status deadlineExceeded(std::string_view reason, std::string_view message);
Status resourceExhausted(std::string_view reason, std::string_view message);
Status permissionDenied(std::string_view reason, std::string_view message);
Status dataLoss(std::string_view reason, std::string_view message);
Status internalError(std::string_view reason, std::string_view message);
Status cancelled(std::string_view reason, std::string_view message);

}  // namespace shoal

// Return early from the enclosing function when `expr` yields a non-OK Status.
#define SHOAL_RETURN_IF_ERROR(expr)                  \
  do {                                               \
    ::shoal::Status shoal_status_ = (expr);          \
    if (!shoal_status_.isOk()) return shoal_status_; \
  } while (false)
