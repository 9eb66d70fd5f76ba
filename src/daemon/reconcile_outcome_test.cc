// Every reconciliation outcome of seed 004 §3.2, from the thread/read answer on the wire to the
// per-owner verdict: surfaced, pending, absent, unknown.
#include "daemon/reconcile_outcome.h"

#include <string>
#include <vector>

#include "runtime/codex/rpc.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

using O = ReconcileOutcome;

// A thread/read answer for thread `T` with `status`; `turns` false: no turns member at all.
std::string readAnswer(const std::string& thread, const std::string& status, bool turns,
                       const std::string& items = "") {
  std::string out = R"({"id":4,"result":{"thread":{"id":")" + thread + R"(","status":{"type":")" +
                    status + R"("})";
  if (turns) out += R"(,"turns":[{"id":"t1","status":"completed","items":[)" + items + "]}]";
  return out + "}}}";
}

// The kReconciled event the Codex driver makes of `answer`, read for thread `asked`.
runtime::DriverEvent reconciled(const std::string& answer, const std::string& asked) {
  auto line = runtime::parseCodexLine(answer);
  EXPECT_TRUE(line.isOk()) << line.status().toString();
  runtime::DriverEvent e;
  e.kind = runtime::DriverEvent::Kind::kReconciled;
  e.threadId = asked;
  if (!line.isOk()) return e;
  runtime::CodexReadSnapshot snapshot = runtime::codexReadSnapshot(*line, asked);
  e.clientIds = std::move(snapshot.clientIds);
  e.markers = std::move(snapshot.markers);
  e.complete = snapshot.complete;
  e.pending = snapshot.pending;
  return e;
}

TEST(ReconcileOutcome, EveryOutcomeOfAThreadRead) {
  const std::string marker = "shoal-rcpt-" + std::string(32, 'd');
  const std::string user = R"({"type":"userMessage","clientId":"h-1"})";
  const std::string tool =
      R"({"type":"mcpToolCall","result":{"content":[{"type":"text","text":"shoal_inbox receipts [)" +
      marker + R"(]"}]}})";
  struct Row {
    const char* name;
    std::string answer;
    std::string identity;
    bool marker;
    O want;
  };
  const std::vector<Row> rows = {
      {"echoed clientId on an idle thread", readAnswer("T", "idle", true, user), "h-1", false,
       O::kSurfaced},
      {"echoed clientId on an active thread", readAnswer("T", "active", true, user), "h-1", false,
       O::kSurfaced},
      {"receipt marker in a tool item", readAnswer("T", "idle", true, tool), marker, true,
       O::kSurfaced},
      {"complete idle history without it", readAnswer("T", "idle", true, user), "h-2", false,
       O::kAbsent},
      {"complete notLoaded history without it", readAnswer("T", "notLoaded", true), "h-2", false,
       O::kAbsent},
      {"complete systemError history without it", readAnswer("T", "systemError", true), "h-2",
       false, O::kAbsent},
      {"complete active history without it", readAnswer("T", "active", true, user), "h-2", false,
       O::kPending},
      {"no turns in the answer (incomplete)", readAnswer("T", "idle", false), "h-1", false,
       O::kUnknown},
      {"an unknown status", readAnswer("T", "archived", true), "h-2", false, O::kUnknown},
      {"the answer is for another thread", readAnswer("U", "idle", true, user), "h-1", false,
       O::kUnknown},
      {"a marker only in a userMessage proves nothing", readAnswer("T", "active", true, user),
       marker, true, O::kPending},
      {"a clientId is not looked for among markers", readAnswer("T", "active", true, user), "h-1",
       true, O::kPending},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    runtime::DriverEvent read = reconciled(row.answer, "T");
    EXPECT_EQ(reconcileOutcomeName(reconcileOutcome(read, "T", row.identity, row.marker)),
              reconcileOutcomeName(row.want));
  }
}

TEST(ReconcileOutcome, AFailedReadOrAnotherOwnersThreadProvesNothing) {
  runtime::DriverEvent read = reconciled(readAnswer("T", "idle", true), "T");
  ASSERT_EQ(reconcileOutcome(read, "T", "h-9", false), O::kAbsent);
  EXPECT_EQ(reconcileOutcome(read, "U", "h-9", false), O::kUnknown) << "another owner's thread";
  EXPECT_EQ(reconcileOutcome(read, "T", "", false), O::kUnknown) << "no identity";
  read.detail = "thread/read refused: busy";
  EXPECT_EQ(reconcileOutcome(read, "T", "h-9", false), O::kUnknown) << "a refused read";
  runtime::DriverEvent notARead;
  notARead.threadId = "T";
  notARead.complete = true;
  EXPECT_EQ(reconcileOutcome(notARead, "T", "h-9", false), O::kUnknown) << "not a kReconciled";
}

}  // namespace
}  // namespace shoal::daemon
