#include "base/status.h"

namespace shoal {

std::string_view statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid-argument";
    case StatusCode::kNotFound:
      return "not-found";
    case StatusCode::kAlreadyExists:
      return "already-exists";
    case StatusCode::kFailedPrecondition:
      return "failed-precondition";
    case StatusCode::kAborted:
      return "aborted";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kDeadlineExceeded:
      return "deadline-exceeded";
    case StatusCode::kResourceExhausted:
      return "resource-exhausted";
    case StatusCode::kPermissionDenied:
      return "permission-denied";
    case StatusCode::kDataLoss:
      return "data-loss";
    case StatusCode::kInternal:
      return "internal";
    case StatusCode::kCancelled:
      return "cancelled";
  }
  return "unknown-code";
}

Status::Status(StatusCode code, std::string_view reason, std::string_view message) {
  if (code == StatusCode::kOk) return;  // an OK status carries nothing
  rep_ = std::make_shared<const Rep>(Rep{code, std::string(reason), std::string(message)});
}

std::string_view Status::reason() const {
  return rep_ ? std::string_view(rep_->reason) : "";
}
std::string_view Status::message() const {
  return rep_ ? std::string_view(rep_->message) : "";
}

std::string Status::toString() const {
  if (isOk()) return "ok";
  std::string out(statusCodeName(rep_->code));
  if (!rep_->reason.empty()) {
    out += " (";
    out += rep_->reason;
    out += ')';
  }
  if (!rep_->message.empty()) {
    out += ": ";
    out += rep_->message;
  }
  return out;
}

Status Status::withContext(std::string_view context) const {
  if (isOk()) return *this;
  std::string message(context);
  message += ": ";
  message += rep_->message;
  return Status(rep_->code, rep_->reason, message);
}

bool operator==(const Status& a, const Status& b) {
  return a.code() == b.code() && a.reason() == b.reason() && a.message() == b.message();
}

#define SHOAL_STATUS_CTOR(fn, code)                              \
  Status fn(std::string_view reason, std::string_view message) { \
    return Status(StatusCode::code, reason, message);            \
  }
SHOAL_STATUS_CTOR(invalidArgument, kInvalidArgument)
SHOAL_STATUS_CTOR(notFound, kNotFound)
SHOAL_STATUS_CTOR(alreadyExists, kAlreadyExists)
SHOAL_STATUS_CTOR(failedPrecondition, kFailedPrecondition)
SHOAL_STATUS_CTOR(aborted, kAborted)
SHOAL_STATUS_CTOR(unavailable, kUnavailable)
SHOAL_STATUS_CTOR(deadlineExceeded, kDeadlineExceeded)
SHOAL_STATUS_CTOR(resourceExhausted, kResourceExhausted)
SHOAL_STATUS_CTOR(permissionDenied, kPermissionDenied)
SHOAL_STATUS_CTOR(dataLoss, kDataLoss)
SHOAL_STATUS_CTOR(internalError, kInternal)
SHOAL_STATUS_CTOR(cancelled, kCancelled)
#undef SHOAL_STATUS_CTOR

}  // namespace shoal
