// ProfileStore against a real nats-server: CAS writes, exact snapshots, no ABA.
#include "daemon/profile_store.h"

#include "testing/nats_fixture.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

class ProfileStoreTest : public shoal::testing::JetStreamServerTest {
 protected:
  void SetUp() override {
    JetStreamServerTest::SetUp();
    if (HasFatalFailure()) return;
    auto store =
        ProfileStore::open(*js_, "main", ProfileSealer::withKeyForTest(std::string(64, 'a')));
    ASSERT_TRUE(store.isOk()) << store.status().toString();
    store_.emplace(std::move(store).value());
  }

  static SeatProfile seat(const std::string& actor) {
    SeatProfile p;
    p.name = actor;
    p.principal = wire::Principal{"local", actor};
    p.command = {"/bin/cat"};
    p.cwd = "/tmp/" + actor;
    p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    return p;
  }

  std::optional<ProfileStore> store_;
};

TEST_F(ProfileStoreTest, CreateReturnsTheCommittedSnapshot) {
  auto created = store_->create(seat("alice"));
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  EXPECT_EQ(created->profile, seat("alice"));
  EXPECT_GT(created->revision, 0u);
  auto read = store_->get(seat("alice").principal);
  ASSERT_TRUE(read.isOk());
  EXPECT_EQ(read->revision, created->revision);
  EXPECT_EQ(read->profile, created->profile);
  EXPECT_EQ(store_->create(seat("alice")).status().reason(), "seat-exists");
}

TEST_F(ProfileStoreTest, StaleRevisionIsRefused) {
  auto v1 = store_->create(seat("alice"));
  ASSERT_TRUE(v1.isOk());
  SeatProfile changed = seat("alice");
  changed.role = "reviewer";
  auto v2 = store_->update(changed, v1->revision);
  ASSERT_TRUE(v2.isOk()) << v2.status().toString();
  EXPECT_GT(v2->revision, v1->revision);
  EXPECT_EQ(v2->profile.role, "reviewer");

  SeatProfile other = seat("alice");
  other.channels = {"ops"};
  auto stale = store_->update(other, v1->revision);
  ASSERT_FALSE(stale.isOk());
  EXPECT_EQ(stale.status().reason(), "stale-revision");
  EXPECT_EQ(store_->get(seat("alice").principal)->profile.role, "reviewer");
  EXPECT_EQ(store_->remove(seat("alice").principal, v1->revision).reason(), "stale-revision");
}

// Removed and added again: a writer still holding the first incarnation's revision is refused.
TEST_F(ProfileStoreTest, RemoveThenRecreateIsNotABA) {
  auto first = store_->create(seat("bob"));
  ASSERT_TRUE(first.isOk());
  ASSERT_TRUE(store_->remove(seat("bob").principal, first->revision).isOk());
  EXPECT_EQ(store_->get(seat("bob").principal).status().reason(), "unknown-seat");
  auto second = store_->create(seat("bob"));
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_GT(second->revision, first->revision);
  EXPECT_EQ(store_->update(seat("bob"), first->revision).status().reason(), "stale-revision");
}

TEST_F(ProfileStoreTest, ListIsSortedAndReportsDamage) {
  ASSERT_TRUE(store_->create(seat("carol")).isOk());
  ASSERT_TRUE(store_->create(seat("alice")).isOk());
  auto all = store_->list();
  ASSERT_TRUE(all.isOk());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].profile.name, "alice");
  EXPECT_EQ((*all)[1].profile.name, "carol");

  // A value written behind the store's back that does not decode is reported, not skipped.
  auto kv = transport::KeyValue::openBucket(*js_, "shoal_seats_main");
  ASSERT_TRUE(kv.isOk());
  ASSERT_TRUE(kv->put("local.dave", "{not json").isOk());
  auto damaged = store_->list();
  ASSERT_FALSE(damaged.isOk());
  EXPECT_EQ(damaged.status().reason(), "bad-stored-profile");
  EXPECT_NE(damaged.status().message().find("local.dave"), std::string::npos);
  // A profile stored under another seat's key is damage too.
  ASSERT_TRUE(kv->put("local.dave", *encodeSeatProfile(seat("alice"))).isOk());
  EXPECT_EQ(store_->get(wire::Principal{"local", "dave"}).status().reason(), "bad-stored-profile");
}

// Only what this store sealed reads as sealed: a bare profile written behind its back is
// unsealed, one sealed with another key foreign, one whose content changed after sealing
// forged (the daemon runs none of them).
TEST_F(ProfileStoreTest, ProfilesNotSealedByThisKeyAreNamedByTheirVerdict) {
  auto created = store_->create(seat("alice"));
  ASSERT_TRUE(created.isOk());
  EXPECT_EQ(created->seal, SealVerdict::kSealed);
  EXPECT_EQ(store_->get(seat("alice").principal)->seal, SealVerdict::kSealed);

  auto kv = transport::KeyValue::openBucket(*js_, "shoal_seats_main");
  ASSERT_TRUE(kv.isOk());
  SeatProfile evil = seat("mallory");
  evil.command = {"/bin/sh", "-c", "touch /tmp/pwned"};
  ASSERT_TRUE(kv->put("local.mallory", *encodeSeatProfile(evil)).isOk());
  auto unsealed = store_->get(evil.principal);
  ASSERT_TRUE(unsealed.isOk()) << unsealed.status().toString();
  EXPECT_EQ(unsealed->seal, SealVerdict::kUnsealed);

  // The same store code with another daemon's key: foreign to ours.
  auto other =
      ProfileStore::open(*js_, "main", ProfileSealer::withKeyForTest(std::string(64, 'b')));
  ASSERT_TRUE(other.isOk());
  ASSERT_TRUE(other->create(seat("bob")).isOk());
  EXPECT_EQ(store_->get(seat("bob").principal)->seal, SealVerdict::kForeign);

  // Alice's sealed bytes with the command swapped: the MAC no longer matches.
  auto entry = kv->get("local.alice");
  ASSERT_TRUE(entry.isOk());
  std::string bytes = entry->value;
  size_t at = bytes.find("/bin/cat");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 8, "/bin/sh ");
  ASSERT_TRUE(kv->put("local.alice", bytes).isOk());
  EXPECT_EQ(store_->get(seat("alice").principal)->seal, SealVerdict::kForged);

  EXPECT_EQ(sealRefusal(SealVerdict::kUnsealed, "mallory").reason(), "unsealed-profile");
  EXPECT_EQ(sealRefusal(SealVerdict::kForged, "alice").reason(), "forged-profile");
  EXPECT_EQ(sealRefusal(SealVerdict::kForeign, "bob").reason(), "foreign-profile");
  EXPECT_TRUE(sealRefusal(SealVerdict::kSealed, "x").isOk());
}

// Machine prefixes (decision 022): each store writes `<machine>.<owner>.<actor>` and reads
// every machine's records; another machine's seat is neither re-created nor changed here.
class MachineProfileStoreTest : public ProfileStoreTest {
 protected:
  ProfileStore machineStore(const std::string& machine, char key) {
    auto store = ProfileStore::open(*js_, "main",
                                    ProfileSealer::withKeyForTest(std::string(64, key)), machine);
    EXPECT_TRUE(store.isOk()) << store.status().toString();
    return std::move(store).value();
  }
};

TEST_F(MachineProfileStoreTest, EachMachineWritesUnderItsOwnPrefixOnly) {
  ProfileStore alpha = machineStore("alpha", 'a');
  ProfileStore beta = machineStore("beta", 'b');
  SeatProfile ann = seat("ann");
  ann.machine = "alpha";
  auto created = alpha.create(ann);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  EXPECT_EQ(created->key, "alpha.local.ann");
  EXPECT_EQ(created->keptBy, "alpha");

  auto seen = beta.get(ann.principal);
  ASSERT_TRUE(seen.isOk()) << seen.status().toString();
  EXPECT_EQ(seen->keptBy, "alpha");
  EXPECT_EQ(seen->seal, SealVerdict::kForeign);
  auto twice = beta.create(ann);
  EXPECT_EQ(twice.status().reason(), "seat-exists");
  EXPECT_NE(twice.status().message().find("kept by machine alpha"), std::string::npos);
  SeatProfile changed = ann;
  changed.command = {"/bin/sh", "-c", "id"};
  auto rewrite = beta.update(changed, seen->revision);
  EXPECT_EQ(rewrite.status().reason(), "seat-kept-elsewhere") << rewrite.status().toString();
  EXPECT_EQ(beta.remove(ann.principal, seen->revision).reason(), "seat-kept-elsewhere");
  EXPECT_EQ(alpha.get(ann.principal)->profile, ann) << "alpha's record is untouched";
}

// A seat moved from alpha to beta: alpha's record becomes an offer naming beta; beta takes it
// by writing its own record, which then governs it everywhere, and alpha removes its offer.
TEST_F(MachineProfileStoreTest, AnOfferIsTakenByTheMachineItNames) {
  ProfileStore alpha = machineStore("alpha", 'a');
  ProfileStore beta = machineStore("beta", 'b');
  SeatProfile ann = seat("ann");
  ann.machine = "alpha";
  auto created = alpha.create(ann);
  ASSERT_TRUE(created.isOk());
  SeatProfile moved = ann;
  moved.machine = "beta";
  auto offered = alpha.handOver(moved, created->revision);
  ASSERT_TRUE(offered.isOk()) << offered.status().toString();

  auto offer = beta.get(ann.principal);
  ASSERT_TRUE(offer.isOk());
  EXPECT_EQ(offer->keptBy, "alpha");
  EXPECT_EQ(offer->profile.machine, "beta");
  EXPECT_EQ(offer->seal, SealVerdict::kUnsealed);
  auto taken = beta.adopt(offer->profile);
  ASSERT_TRUE(taken.isOk()) << taken.status().toString();
  EXPECT_EQ(taken->key, "beta.local.ann");
  EXPECT_EQ(taken->seal, SealVerdict::kSealed);

  // Both records exist until alpha removes its offer; beta's governs on both machines.
  EXPECT_EQ(beta.get(ann.principal)->keptBy, "beta");
  auto fromAlpha = alpha.get(ann.principal);
  ASSERT_TRUE(fromAlpha.isOk());
  EXPECT_EQ(fromAlpha->keptBy, "beta");
  auto records = alpha.records();
  ASSERT_TRUE(records.isOk());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ(alpha.list()->size(), 1u);
  EXPECT_EQ((*records)[0].key, "alpha.local.ann");
  ASSERT_TRUE(alpha.removeRecord((*records)[0]).isOk());
  EXPECT_EQ(alpha.records()->size(), 1u);
  EXPECT_EQ(alpha.get(ann.principal)->keptBy, "beta");
}

// A record from before prefixes is read by every store and taken by adoption; damage under
// another machine's prefix does not break this machine's list, its own damage does.
TEST_F(MachineProfileStoreTest, LegacyRecordsAreAdoptedAndForeignDamageIsSkipped) {
  ASSERT_TRUE(store_->create(seat("ada")).isOk());  // the legacy store: key `local.ada`
  ProfileStore alpha = machineStore("alpha", 'a');  // the same sealing key
  auto legacy = alpha.get(seat("ada").principal);
  ASSERT_TRUE(legacy.isOk());
  EXPECT_EQ(legacy->key, "local.ada");
  EXPECT_EQ(legacy->keptBy, "");
  EXPECT_EQ(legacy->seal, SealVerdict::kSealed);
  auto adopted = alpha.adopt(legacy->profile);
  ASSERT_TRUE(adopted.isOk()) << adopted.status().toString();
  EXPECT_EQ(adopted->profile.machine, "alpha");
  EXPECT_EQ(alpha.get(seat("ada").principal)->key, "alpha.local.ada");

  auto kv = transport::KeyValue::openBucket(*js_, "shoal_seats_main");
  ASSERT_TRUE(kv.isOk());
  ASSERT_TRUE(kv->put("beta.local.zed", "{not json").isOk());
  ASSERT_TRUE(kv->put("beta.local.x.y", "{}").isOk());
  auto listed = alpha.list();
  ASSERT_TRUE(listed.isOk()) << listed.status().toString();
  EXPECT_EQ(listed->size(), 1u);
  ASSERT_TRUE(kv->put("alpha.local.zed", "{not json").isOk());
  EXPECT_EQ(alpha.list().status().reason(), "bad-stored-profile");
}

}  // namespace
}  // namespace shoal::daemon
