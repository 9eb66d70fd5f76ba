#include "daemon/machine_claim.h"

#include "testing/eventually.h"
#include "testing/nats_fixture.h"
#include "transport/kv.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

using std::chrono::milliseconds;

class MachineClaimTest : public shoal::testing::JetStreamServerTest {
 protected:
  // The claims bucket as another process sees it.
  transport::KeyValue bucket() {
    auto kv = transport::KeyValue::openBucket(*js_, "shoal_machines_main");
    EXPECT_TRUE(kv.isOk()) << kv.status().toString();
    return std::move(kv).value();
  }
};

// The soak's broker stall: a renewal sent into a SIGSTOPped broker times out, then lands when
// the broker resumes. The next renewal must adopt that write (it is this daemon's own value),
// not report `machine-lost` and stop every seat as it did.
TEST_F(MachineClaimTest, ARenewalThatLandedAfterItsTimeoutIsNotALostClaim) {
  transport::JetStreamOptions quick;
  quick.defaultTimeout = milliseconds(300);
  auto js = transport::JetStream::create(*conn_, quick);
  ASSERT_TRUE(js.isOk()) << js.status().toString();
  const milliseconds ttl(1'500);  // renewals every 500 ms
  auto claim = MachineClaim::claim(*js, "main", "vm", "home-1", ttl);
  ASSERT_TRUE(claim.isOk()) << claim.status().toString();
  auto kv = bucket();
  const uint64_t before = kv.get("vm")->revision;

  ASSERT_TRUE(shoal::testing::eventually([&] {
    if (!server_->stall().isOk()) return false;
    Status renewed = (*claim)->renewIfDue();
    (void)server_->resume();
    return renewed.code() == StatusCode::kDeadlineExceeded;
  })) << "no renewal timed out in the stall";
  ASSERT_TRUE(shoal::testing::eventually([&] { return kv.get("vm")->revision > before; }))
      << "the timed-out renewal never landed";

  Status next;
  ASSERT_TRUE(shoal::testing::eventually([&] {
    const uint64_t was = kv.get("vm")->revision;
    next = (*claim)->renewIfDue();
    return !next.isOk() || kv.get("vm")->revision > was;
  }));
  EXPECT_TRUE(next.isOk()) << next.toString();
  EXPECT_TRUE((*claim)->held());
}

// A claim another daemon really took is lost; it is retaken only once that daemon lets the
// name go, and never while the other value stands.
TEST_F(MachineClaimTest, ALostClaimIsRetakenOnceTheNameIsFree) {
  const milliseconds ttl(1'500);
  auto claim = MachineClaim::claim(*js_, "main", "vm", "home-1", ttl);
  ASSERT_TRUE(claim.isOk()) << claim.status().toString();
  auto kv = bucket();
  ASSERT_TRUE(kv.put("vm", R"({"holder":"home-2","instance":"aa","host":"b","pid":7})").isOk());

  Status lost;
  ASSERT_TRUE(shoal::testing::eventually([&] {
    lost = (*claim)->renewIfDue();
    return !lost.isOk();
  }));
  EXPECT_EQ(lost.reason(), "machine-lost") << lost.toString();
  EXPECT_FALSE((*claim)->held());

  Status refused = (*claim)->retake();
  EXPECT_EQ(refused.reason(), "machine-in-use") << refused.toString();
  EXPECT_NE(refused.message().find("pid 7 on host b"), std::string::npos) << refused.toString();
  EXPECT_FALSE((*claim)->held());

  ASSERT_TRUE(kv.remove("vm").isOk());  // the other daemon stopped
  Status retaken = (*claim)->retake();
  ASSERT_TRUE(retaken.isOk()) << retaken.toString();
  EXPECT_TRUE((*claim)->held());
  EXPECT_NE(kv.get("vm")->value.find("home-1"), std::string::npos);
}

}  // namespace
}  // namespace shoal::daemon
