#include "daemon/admitted_seqs.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

TEST(AdmittedSeqs, ConsecutiveAdmissionsStayOneIntervalAndGapsStayOut) {
  AdmittedSeqs s;
  for (uint64_t seq : {1, 2, 3, 4, 8, 9, 10})
    s.insert(seq);
  EXPECT_EQ(s.intervals(), 2u);
  EXPECT_TRUE(s.contains(3));
  EXPECT_TRUE(s.contains(9));
  // 5..7: fetched by a daemon that died before admitting them — must read as not admitted.
  for (uint64_t seq : {5, 6, 7, 11, 0})
    EXPECT_FALSE(s.contains(seq)) << seq;
  s.insert(6);
  EXPECT_EQ(s.intervals(), 3u);
  s.insert(5);
  s.insert(7);
  EXPECT_EQ(s.intervals(), 1u) << s.toJson();
  EXPECT_EQ(s.toJson(), R"({"seq":[[1,10]]})");
}

TEST(AdmittedSeqs, RoundTripsAndRefusesDamage) {
  AdmittedSeqs s;
  for (uint64_t seq : {3, 4, 7})
    s.insert(seq);
  auto back = AdmittedSeqs::fromJson(s.toJson());
  ASSERT_TRUE(back.isOk());
  EXPECT_TRUE(back->contains(4));
  EXPECT_FALSE(back->contains(5));
  EXPECT_TRUE(back->contains(7));
  for (const char* bad : {"[]", R"({"seq":3})", R"({"seq":[[2,1]]})", R"({"seq":[[0,1]]})",
                          R"({"seq":[["a",1]]})", "nope"}) {
    EXPECT_EQ(AdmittedSeqs::fromJson(bad).status().reason(), "bad-admitted-seqs") << bad;
  }
}

TEST(AdmittedSeqs, IsBoundedByDroppingTheOldestIntervals) {
  AdmittedSeqs s;
  for (uint64_t i = 1; i <= AdmittedSeqs::kMaxIntervals + 10; ++i)
    s.insert(i * 2);  // every other sequence: one interval each
  EXPECT_EQ(s.intervals(), AdmittedSeqs::kMaxIntervals);
  EXPECT_FALSE(s.contains(2));
  EXPECT_TRUE(s.contains((AdmittedSeqs::kMaxIntervals + 10) * 2));
}

}  // namespace
}  // namespace shoal::daemon
