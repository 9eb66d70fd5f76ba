// InboxLeases (daemon/inbox_leases.h): generation-bound acknowledgements, expiry, the barrier.
#include "daemon/inbox_leases.h"

#include <thread>

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

InboxClaim claim(std::string receipt, uint64_t generation, Clock::time_point deadline) {
  InboxClaim c;
  c.receipt = std::move(receipt);
  c.id = "m-" + c.receipt;
  c.generation = generation;
  c.deadline = deadline;
  return c;
}

TEST(InboxLeases, ACompleteWriteOfTheOpenGenerationIsAcknowledged) {
  InboxLeases leases;
  const auto later = Clock::now() + std::chrono::minutes(6);
  EXPECT_FALSE(leases.add({claim("r1", 1, later)}));  // nothing open yet
  leases.open(1);
  ASSERT_TRUE(leases.add({claim("r1", 1, later), claim("r2", 1, later)}));
  EXPECT_TRUE(leases.holds("m-r1"));
  auto acked = leases.finishWrite({"r1", "r2"}, 1, true);
  leases.handled(2);
  ASSERT_EQ(acked.size(), 2u);
  EXPECT_EQ(acked[0].id, "m-r1");
  EXPECT_EQ(leases.size(), 0u);
  EXPECT_TRUE(leases.drain(Clock::now()));
}

TEST(InboxLeases, AFailedWriteKeepsTheLeaseUntilItsDeadline) {
  InboxLeases leases;
  leases.open(1);
  const auto deadline = Clock::now() + milliseconds(50);
  ASSERT_TRUE(leases.add({claim("r1", 1, deadline)}));
  EXPECT_TRUE(leases.finishWrite({"r1"}, 1, false).empty());
  leases.handled(1);
  EXPECT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases.nextDeadline(), deadline);
  EXPECT_TRUE(leases.expire(deadline - milliseconds(1)).empty());
  auto expired = leases.expire(deadline);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].receipt, "r1");
  EXPECT_FALSE(leases.nextDeadline().has_value());
}

TEST(InboxLeases, AReplacementGenerationNeverReceivesTheOldAcknowledgement) {
  InboxLeases leases;
  const auto later = Clock::now() + std::chrono::minutes(6);
  leases.open(1);
  ASSERT_TRUE(leases.add({claim("r1", 1, later)}));
  leases.close();  // generation 1 retired
  leases.open(2);  // its replacement
  EXPECT_TRUE(leases.finishWrite({"r1"}, 1, true).empty());
  EXPECT_TRUE(leases.finishWrite({"r1"}, 2, true).empty());
  leases.handled(1);
  EXPECT_TRUE(leases.holds("m-r1"));  // it ends at its deadline, failed
  EXPECT_FALSE(leases.accepting(1));
  EXPECT_TRUE(leases.accepting(2));
}

TEST(InboxLeases, DrainWaitsForWriteOutcomes) {
  InboxLeases leases;
  leases.open(1);
  ASSERT_TRUE(leases.add({claim("r1", 1, Clock::now() + std::chrono::minutes(6))}));
  leases.close();
  EXPECT_FALSE(leases.drain(Clock::now() + milliseconds(20)));
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(30));
    (void)leases.finishWrite({"r1"}, 1, true);
    leases.handled(1);
  });
  EXPECT_TRUE(leases.drain(Clock::now() + std::chrono::seconds(10)));
  writer.join();
}

}  // namespace
}  // namespace shoal::daemon
