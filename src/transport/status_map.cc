#include "transport/status_map.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include <nats/nats.h>

namespace shoal::transport {
namespace {

using C = StatusCode;

// Row i is natsStatus i; natsStatusTable_test checks the order and completeness.
constexpr std::array kNatsRows = {
    NatsStatusRow{NATS_OK, "NATS_OK", C::kOk, "ok"},
    NatsStatusRow{NATS_ERR, "NATS_ERR", C::kUnavailable, "nats-error"},
    NatsStatusRow{NATS_PROTOCOL_ERROR, "NATS_PROTOCOL_ERROR", C::kUnavailable, "protocol-error"},
    NatsStatusRow{NATS_IO_ERROR, "NATS_IO_ERROR", C::kUnavailable, "io-error"},
    NatsStatusRow{NATS_LINE_TOO_LONG, "NATS_LINE_TOO_LONG", C::kResourceExhausted, "line-too-long"},
    NatsStatusRow{NATS_CONNECTION_CLOSED, "NATS_CONNECTION_CLOSED", C::kUnavailable,
                  "connection-closed"},
    NatsStatusRow{NATS_NO_SERVER, "NATS_NO_SERVER", C::kUnavailable, "no-server"},
    NatsStatusRow{NATS_STALE_CONNECTION, "NATS_STALE_CONNECTION", C::kUnavailable,
                  "stale-connection"},
    NatsStatusRow{NATS_SECURE_CONNECTION_WANTED, "NATS_SECURE_CONNECTION_WANTED",
                  C::kFailedPrecondition, "tls-not-offered"},
    NatsStatusRow{NATS_SECURE_CONNECTION_REQUIRED, "NATS_SECURE_CONNECTION_REQUIRED",
                  C::kFailedPrecondition, "tls-required"},
    NatsStatusRow{NATS_CONNECTION_DISCONNECTED, "NATS_CONNECTION_DISCONNECTED", C::kUnavailable,
                  "disconnected"},
    NatsStatusRow{NATS_CONNECTION_AUTH_FAILED, "NATS_CONNECTION_AUTH_FAILED", C::kPermissionDenied,
                  "auth-failed"},
    NatsStatusRow{NATS_NOT_PERMITTED, "NATS_NOT_PERMITTED", C::kPermissionDenied,
                  "permission-violation"},
    NatsStatusRow{NATS_NOT_FOUND, "NATS_NOT_FOUND", C::kNotFound, "not-found"},
    NatsStatusRow{NATS_ADDRESS_MISSING, "NATS_ADDRESS_MISSING", C::kInvalidArgument,
                  "address-missing"},
    NatsStatusRow{NATS_INVALID_SUBJECT, "NATS_INVALID_SUBJECT", C::kInvalidArgument,
                  "invalid-subject"},
    NatsStatusRow{NATS_INVALID_ARG, "NATS_INVALID_ARG", C::kInvalidArgument, "invalid-argument"},
    NatsStatusRow{NATS_INVALID_SUBSCRIPTION, "NATS_INVALID_SUBSCRIPTION", C::kFailedPrecondition,
                  "invalid-subscription"},
    NatsStatusRow{NATS_INVALID_TIMEOUT, "NATS_INVALID_TIMEOUT", C::kInvalidArgument,
                  "invalid-timeout"},
    NatsStatusRow{NATS_ILLEGAL_STATE, "NATS_ILLEGAL_STATE", C::kFailedPrecondition,
                  "illegal-state"},
    NatsStatusRow{NATS_SLOW_CONSUMER, "NATS_SLOW_CONSUMER", C::kResourceExhausted, "slow-consumer"},
    NatsStatusRow{NATS_MAX_PAYLOAD, "NATS_MAX_PAYLOAD", C::kResourceExhausted, "max-payload"},
    NatsStatusRow{NATS_MAX_DELIVERED_MSGS, "NATS_MAX_DELIVERED_MSGS", C::kResourceExhausted,
                  "max-delivered"},
    NatsStatusRow{NATS_INSUFFICIENT_BUFFER, "NATS_INSUFFICIENT_BUFFER", C::kResourceExhausted,
                  "insufficient-buffer"},
    NatsStatusRow{NATS_NO_MEMORY, "NATS_NO_MEMORY", C::kResourceExhausted, "no-memory"},
    NatsStatusRow{NATS_SYS_ERROR, "NATS_SYS_ERROR", C::kUnavailable, "system-error"},
    NatsStatusRow{NATS_TIMEOUT, "NATS_TIMEOUT", C::kDeadlineExceeded, "timeout"},
    NatsStatusRow{NATS_FAILED_TO_INITIALIZE, "NATS_FAILED_TO_INITIALIZE", C::kInternal,
                  "nats-init-failed"},
    NatsStatusRow{NATS_NOT_INITIALIZED, "NATS_NOT_INITIALIZED", C::kInternal,
                  "nats-not-initialized"},
    NatsStatusRow{NATS_SSL_ERROR, "NATS_SSL_ERROR", C::kUnavailable, "tls-error"},
    NatsStatusRow{NATS_NO_SERVER_SUPPORT, "NATS_NO_SERVER_SUPPORT", C::kFailedPrecondition,
                  "no-server-support"},
    NatsStatusRow{NATS_NOT_YET_CONNECTED, "NATS_NOT_YET_CONNECTED", C::kUnavailable,
                  "not-yet-connected"},
    NatsStatusRow{NATS_DRAINING, "NATS_DRAINING", C::kFailedPrecondition, "draining"},
    NatsStatusRow{NATS_INVALID_QUEUE_NAME, "NATS_INVALID_QUEUE_NAME", C::kInvalidArgument,
                  "invalid-queue-name"},
    NatsStatusRow{NATS_NO_RESPONDERS, "NATS_NO_RESPONDERS", C::kUnavailable, "no-responders"},
    NatsStatusRow{NATS_MISMATCH, "NATS_MISMATCH", C::kDataLoss, "consumer-sequence-mismatch"},
    NatsStatusRow{NATS_MISSED_HEARTBEAT, "NATS_MISSED_HEARTBEAT", C::kUnavailable,
                  "missed-heartbeat"},
};

// Ascending by code.
constexpr std::array kJsRows = {
    JsErrorRow{JSAccountResourcesExceededErr, "JSAccountResourcesExceededErr",
               C::kResourceExhausted, "account-resources-exceeded"},
    JsErrorRow{JSBadRequestErr, "JSBadRequestErr", C::kInvalidArgument, "bad-request"},
    JsErrorRow{JSClusterNotAvailErr, "JSClusterNotAvailErr", C::kUnavailable,
               "jetstream-unavailable"},
    JsErrorRow{JSClusterNotLeaderErr, "JSClusterNotLeaderErr", C::kUnavailable, "not-leader"},
    JsErrorRow{JSConsumerCreateErr, "JSConsumerCreateErr", C::kFailedPrecondition,
               "consumer-create-failed"},
    JsErrorRow{JSConsumerNameExistErr, "JSConsumerNameExistErr", C::kAlreadyExists,
               "consumer-name-in-use"},
    JsErrorRow{JSConsumerNotFoundErr, "JSConsumerNotFoundErr", C::kNotFound, "consumer-not-found"},
    JsErrorRow{JSInsufficientResourcesErr, "JSInsufficientResourcesErr", C::kResourceExhausted,
               "insufficient-resources"},
    JsErrorRow{JSInvalidJSONErr, "JSInvalidJSONErr", C::kInvalidArgument, "invalid-json"},
    JsErrorRow{JSMaximumConsumersLimitErr, "JSMaximumConsumersLimitErr", C::kResourceExhausted,
               "max-consumers"},
    JsErrorRow{JSMaximumStreamsLimitErr, "JSMaximumStreamsLimitErr", C::kResourceExhausted,
               "max-streams"},
    JsErrorRow{JSMemoryResourcesExceededErr, "JSMemoryResourcesExceededErr", C::kResourceExhausted,
               "memory-exceeded"},
    JsErrorRow{JSNoMessageFoundErr, "JSNoMessageFoundErr", C::kNotFound, "no-message-found"},
    JsErrorRow{JSNotEnabledForAccountErr, "JSNotEnabledForAccountErr", C::kFailedPrecondition,
               "jetstream-not-enabled"},
    JsErrorRow{JSSequenceNotFoundErr, "JSSequenceNotFoundErr", C::kNotFound, "sequence-not-found"},
    JsErrorRow{JSStorageResourcesExceededErr, "JSStorageResourcesExceededErr",
               C::kResourceExhausted, "storage-exceeded"},
    JsErrorRow{JSStreamInvalidConfig, "JSStreamInvalidConfig", C::kInvalidArgument,
               "invalid-stream-config"},
    JsErrorRow{JSStreamLimitsErr, "JSStreamLimitsErr", C::kResourceExhausted, "stream-limits"},
    JsErrorRow{JSStreamMessageExceedsMaximumErr, "JSStreamMessageExceedsMaximumErr",
               C::kResourceExhausted, "message-too-large"},
    JsErrorRow{JSStreamNameExistErr, "JSStreamNameExistErr", C::kAlreadyExists,
               "stream-name-in-use"},
    JsErrorRow{JSStreamNotFoundErr, "JSStreamNotFoundErr", C::kNotFound, "stream-not-found"},
    JsErrorRow{JSStreamNotMatchErr, "JSStreamNotMatchErr", C::kFailedPrecondition,
               "stream-mismatch"},
    JsErrorRow{JSStreamSubjectOverlapErr, "JSStreamSubjectOverlapErr", C::kAlreadyExists,
               "subject-overlap"},
    JsErrorRow{JSStreamWrongLastMsgIDErr, "JSStreamWrongLastMsgIDErr", C::kAborted,
               "wrong-last-msg-id"},
    JsErrorRow{JSStreamWrongLastSequenceErr, "JSStreamWrongLastSequenceErr", C::kAborted,
               "wrong-last-sequence"},
    JsErrorRow{JSNotEnabledErr, "JSNotEnabledErr", C::kFailedPrecondition, "jetstream-not-enabled"},
    JsErrorRow{JSStreamStoreFailedErr, "JSStreamStoreFailedErr", C::kUnavailable, "store-failed"},
    JsErrorRow{JSConsumerFilterNotSubsetErr, "JSConsumerFilterNotSubsetErr", C::kInvalidArgument,
               "filter-not-subset"},
    JsErrorRow{JSConsumerWQMultipleUnfilteredErr, "JSConsumerWQMultipleUnfilteredErr",
               C::kFailedPrecondition, "workqueue-multiple-unfiltered"},
    JsErrorRow{JSConsumerWQConsumerNotUniqueErr, "JSConsumerWQConsumerNotUniqueErr",
               C::kAlreadyExists, "workqueue-consumer-not-unique"},
    JsErrorRow{JSConsumerBadDurableNameErr, "JSConsumerBadDurableNameErr", C::kInvalidArgument,
               "bad-durable-name"},
    JsErrorRow{JSConsumerExistingActiveErr, "JSConsumerExistingActiveErr", C::kAlreadyExists,
               "consumer-active"},
    JsErrorRow{JSConsumerReplacementWithDifferentNameErr,
               "JSConsumerReplacementWithDifferentNameErr", C::kAlreadyExists,
               "consumer-exists-different-config"},
    JsErrorRow{JSStreamSealedErr, "JSStreamSealedErr", C::kFailedPrecondition, "stream-sealed"},
    // Not in nats.c 3.4's enum; sent by nats-server 2.9+ (10131) and 2.10+ (10148).
    JsErrorRow{10131, "JSConsumerCreateFilterSubjectMismatchErr", C::kInvalidArgument,
               "filter-subject-mismatch"},
    JsErrorRow{10148, "JSConsumerAlreadyExists", C::kAlreadyExists, "consumer-exists"},
};

bool containsIgnoringCase(std::string_view haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b));
                        });
  return it != haystack.end();
}

const JsErrorRow* findJsRow(int code) {
  for (const auto& row : kJsRows) {
    if (row.jsErrCode == code) return &row;
  }
  return nullptr;
}

}  // namespace

std::span<const NatsStatusRow> natsStatusTable() {
  return kNatsRows;
}
std::span<const JsErrorRow> jsErrorTable() {
  return kJsRows;
}

Status statusFromNats(int natsStatus, int jsErrCode, std::string_view operation,
                      std::string_view errorText) {
  if (natsStatus == NATS_OK && jsErrCode == 0) return Status::ok();

  // nats.c's KV layer drops the JetStream code; recognise the server's words instead.
  if (jsErrCode == 0 && containsIgnoringCase(errorText, "wrong last sequence")) {
    jsErrCode = JSStreamWrongLastSequenceErr;
  }
  if (containsIgnoringCase(errorText, "permissions violation")) natsStatus = NATS_NOT_PERMITTED;

  StatusCode code = StatusCode::kUnavailable;
  std::string_view reason = "nats-error";
  std::string_view natsName = "NATS_UNKNOWN";
  if (natsStatus >= 0 && natsStatus < static_cast<int>(kNatsRows.size())) {
    const auto& row = kNatsRows[static_cast<size_t>(natsStatus)];
    code = row.code;
    reason = row.reason;
    natsName = row.name;
  }
  if (jsErrCode != 0) {
    if (const JsErrorRow* row = findJsRow(jsErrCode)) {
      code = row->code;
      reason = row->reason;
    } else {
      code = StatusCode::kFailedPrecondition;
      reason = "jetstream-error";
    }
  }
  if (code == StatusCode::kOk) {
    // NATS_OK with a JetStream code cannot reach here; guard anyway.
    code = StatusCode::kInternal;
    reason = "nats-error";
  }

  std::string message(operation);
  if (!message.empty()) message += ": ";
  if (!errorText.empty()) {
    message += errorText;
  } else if (natsStatus >= 0 && natsStatus < static_cast<int>(kNatsRows.size())) {
    message += natsStatus_GetText(static_cast<::natsStatus>(natsStatus));
  } else {
    message += "unknown nats status " + std::to_string(natsStatus);
  }
  message += " [nats ";
  message += natsName;
  if (jsErrCode != 0) {
    message += ", jetstream ";
    message += std::to_string(jsErrCode);
  }
  message += ']';
  return Status(code, reason, message);
}

}  // namespace shoal::transport
