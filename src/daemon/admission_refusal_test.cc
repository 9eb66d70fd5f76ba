// Every admission refusal is either permanent (terminate + failed receipt) or transient (nak
// with backoff): one row per refusal the journal can give an Admit.
#include "daemon/admission_refusal.h"

#include "journal/reasons.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

namespace jr = journal::reason;

TEST(AdmissionRefusal, AFieldTheJournalCannotHoldIsPermanent) {
  EXPECT_EQ(classifyAdmissionRefusal(invalidArgument(jr::kBadField, "MessageID")),
            RefusalKind::kPermanent);
}

TEST(AdmissionRefusal, ARecordOverThePerRecordCapIsPermanent) {
  EXPECT_EQ(classifyAdmissionRefusal(resourceExhausted(jr::kOversized, "too big")),
            RefusalKind::kPermanent);
}

TEST(AdmissionRefusal, AggregateCapacityRecovers) {
  EXPECT_EQ(classifyAdmissionRefusal(resourceExhausted(jr::kCapacity, "full")),
            RefusalKind::kTransient);
  EXPECT_EQ(classifyAdmissionRefusal(resourceExhausted(jr::kSectionTooLarge, "section")),
            RefusalKind::kTransient);
}

TEST(AdmissionRefusal, APoisonedJournalIsTransient) {
  EXPECT_EQ(classifyAdmissionRefusal(failedPrecondition(jr::kPoisoned, "disk full")),
            RefusalKind::kTransient);
}

TEST(AdmissionRefusal, ALostRaceIsTransient) {
  EXPECT_EQ(classifyAdmissionRefusal(aborted(jr::kStaleGeneration, "raced")),
            RefusalKind::kTransient);
}

TEST(AdmissionRefusal, AFailedWriteIsTransient) {
  EXPECT_EQ(classifyAdmissionRefusal(Status(StatusCode::kUnavailable, "io", "ENOSPC")),
            RefusalKind::kTransient);
  EXPECT_EQ(classifyAdmissionRefusal(Status(StatusCode::kDataLoss, "io", "short write")),
            RefusalKind::kTransient);
}

}  // namespace
}  // namespace shoal::daemon
