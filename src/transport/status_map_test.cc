#include "transport/status_map.h"

#include <set>

#include <nats/nats.h>

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

// Every natsStatus value of nats.c has exactly one row, in enum order.
TEST(StatusMap, EveryNatsStatusHasOneRowInOrder) {
  auto table = natsStatusTable();
  ASSERT_EQ(table.size(), static_cast<size_t>(NATS_MISSED_HEARTBEAT) + 1);
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].natsStatus, static_cast<int>(i)) << table[i].name;
    EXPECT_FALSE(table[i].reason.empty()) << table[i].name;
    EXPECT_EQ(table[i].name.substr(0, 5), "NATS_") << table[i].name;
  }
}

// Each natsStatus row maps to its code and reason (NATS_OK to OK).
TEST(StatusMap, EachNatsRowMapsToItsCodeAndReason) {
  for (const auto& row : natsStatusTable()) {
    Status st = statusFromNats(row.natsStatus, 0, "op", "");
    EXPECT_EQ(st.code(), row.code) << row.name;
    if (row.natsStatus == NATS_OK) {
      EXPECT_TRUE(st.isOk());
    } else {
      EXPECT_EQ(st.reason(), row.reason) << row.name;
      EXPECT_NE(st.message().find(row.name), std::string_view::npos) << st.toString();
    }
  }
}

// Each JetStream row wins over the natsStatus that carried it, and codes are unique.
TEST(StatusMap, EachJetStreamRowMapsToItsCodeAndReason) {
  std::set<int> seen;
  int previous = 0;
  for (const auto& row : jsErrorTable()) {
    EXPECT_TRUE(seen.insert(row.jsErrCode).second) << "duplicate " << row.jsErrCode;
    EXPECT_GT(row.jsErrCode, previous) << "table must be ascending at " << row.name;
    previous = row.jsErrCode;
    Status st = statusFromNats(NATS_ERR, row.jsErrCode, "op", "server said no");
    EXPECT_EQ(st.code(), row.code) << row.name;
    EXPECT_EQ(st.reason(), row.reason) << row.name;
    EXPECT_NE(st.message().find(std::to_string(row.jsErrCode)), std::string_view::npos);
  }
}

// A CAS conflict (wrong last sequence) tells the caller to re-read and retry.
TEST(StatusMap, WrongLastSequenceIsAborted) {
  Status st =
      statusFromNats(NATS_ERR, JSStreamWrongLastSequenceErr, "update", "wrong last sequence: 4");
  EXPECT_EQ(st.code(), StatusCode::kAborted);
  EXPECT_EQ(st.reason(), "wrong-last-sequence");
}

// nats.c's KV calls drop the JetStream code; the server's words still map to the CAS row.
TEST(StatusMap, WrongLastSequenceTextWithoutCodeIsAborted) {
  Status st = statusFromNats(NATS_ERR, 0, "kv update", "wrong last sequence: 7");
  EXPECT_EQ(st.code(), StatusCode::kAborted);
  EXPECT_EQ(st.reason(), "wrong-last-sequence");
}

// Missing streams and consumers are kNotFound; name clashes are kAlreadyExists.
TEST(StatusMap, MissingAndExistingJetStreamAssets) {
  EXPECT_EQ(statusFromNats(NATS_NOT_FOUND, JSStreamNotFoundErr, "", "").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(statusFromNats(NATS_NOT_FOUND, JSConsumerNotFoundErr, "", "").reason(),
            "consumer-not-found");
  EXPECT_EQ(statusFromNats(NATS_ERR, JSStreamNameExistErr, "", "").code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(statusFromNats(NATS_ERR, JSConsumerNameExistErr, "", "").code(),
            StatusCode::kAlreadyExists);
}

// Connectivity failures are transient (kUnavailable); a timeout is kDeadlineExceeded.
TEST(StatusMap, ConnectivityIsUnavailableAndTimeoutIsDeadline) {
  for (natsStatus s :
       {NATS_NO_SERVER, NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED, NATS_IO_ERROR}) {
    EXPECT_EQ(statusFromNats(s, 0, "", "").code(), StatusCode::kUnavailable) << s;
  }
  EXPECT_EQ(statusFromNats(NATS_TIMEOUT, 0, "", "").code(), StatusCode::kDeadlineExceeded);
}

// No responders is kUnavailable with its own reason, so callers can tell it from a timeout.
TEST(StatusMap, NoRespondersHasItsOwnReason) {
  Status st = statusFromNats(NATS_NO_RESPONDERS, 0, "request to x", "");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.reason(), "no-responders");
  EXPECT_NE(st.message().find("request to x"), std::string_view::npos);
}

// Permission refusals are kPermissionDenied, whether by status or by the server's text.
TEST(StatusMap, PermissionViolationIsPermissionDenied) {
  EXPECT_EQ(statusFromNats(NATS_NOT_PERMITTED, 0, "", "").code(), StatusCode::kPermissionDenied);
  Status byText = statusFromNats(NATS_ERR, 0, "", "Permissions Violation for Publish to \"a.b\"");
  EXPECT_EQ(byText.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(byText.reason(), "permission-violation");
}

// Oversized payloads are a cap (kResourceExhausted); bad arguments are kInvalidArgument.
TEST(StatusMap, MaxPayloadIsResourceExhaustedAndInvalidArgIsInvalid) {
  EXPECT_EQ(statusFromNats(NATS_MAX_PAYLOAD, 0, "", "").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(statusFromNats(NATS_INVALID_ARG, 0, "", "").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(statusFromNats(NATS_NOT_FOUND, 0, "", "").code(), StatusCode::kNotFound);
}

// An unknown JetStream code is still an error that names the code.
TEST(StatusMap, UnknownJetStreamCodeIsFailedPrecondition) {
  Status st = statusFromNats(NATS_ERR, 19999, "op", "");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.reason(), "jetstream-error");
  EXPECT_NE(st.message().find("19999"), std::string_view::npos);
}

// The nats.c text is kept in the message for people.
TEST(StatusMap, MessageKeepsOperationAndText) {
  Status st = statusFromNats(NATS_TIMEOUT, 0, "fetch from dm_x", "timeout waiting");
  EXPECT_EQ(st.message(), "fetch from dm_x: timeout waiting [nats NATS_TIMEOUT]");
}

}  // namespace
}  // namespace shoal::transport
