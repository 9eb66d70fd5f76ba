// The one table that turns NATS outcomes into Shoal Status codes.
//
// Every `natsStatus` value of nats.c 3.4 (NATS_OK … NATS_MISSED_HEARTBEAT) has exactly one row
// here, and so does every JetStream API error code Shoal reacts to. A JetStream error code,
// when present and known, wins over the natsStatus that carried it (nats.c reports most API
// errors as NATS_ERR). Where nats.c drops the JetStream code (its KV calls), the server's text
// is recognised instead: "wrong last sequence" → the 10071 row, "Permissions Violation" → the
// NATS_NOT_PERMITTED row.
//
// The resulting Status carries the row's code, its reason token (e.g. `wrong-last-sequence`,
// `no-responders`) and a message "<operation>: <nats.c error text> [nats <NAME>, jetstream
// <code>]" so a person can see what the library and the server said.
//
// Thread safety: the tables are immutable; every function may be called from any thread.
#pragma once

#include <span>
#include <string_view>

#include "base/status.h"

namespace shoal::transport {

// One natsStatus value (the integer of nats.c's enum) and what it means for a caller.
struct NatsStatusRow {
  int natsStatus;
  std::string_view name;  // "NATS_TIMEOUT"
  StatusCode code;
  std::string_view reason;
};

// One JetStream API error code (jsErrCode, e.g. 10071) and what it means for a caller.
struct JsErrorRow {
  int jsErrCode;
  std::string_view name;  // "JSStreamWrongLastSequenceErr"
  StatusCode code;
  std::string_view reason;
};

// Every natsStatus, in enum order (row i has natsStatus == i).
std::span<const NatsStatusRow> natsStatusTable();
// The JetStream error codes Shoal distinguishes, ascending.
std::span<const JsErrorRow> jsErrorTable();

// The Status for a NATS outcome. `natsStatus` 0 (NATS_OK) with `jsErrCode` 0 is OK.
// `jsErrCode` 0 means "none"; an unknown non-zero code maps to kFailedPrecondition, reason
// `jetstream-error`. `operation` names what was attempted ("publish to cotal.main.chat…"),
// `errorText` is nats.c's last error text (may be empty).
Status statusFromNats(int natsStatus, int jsErrCode, std::string_view operation,
                      std::string_view errorText);

}  // namespace shoal::transport
