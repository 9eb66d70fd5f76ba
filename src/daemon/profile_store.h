// ProfileStore: the seat profiles of a space, in the KV bucket `shoal_seats_<space>` (one key
// per seat: its principal id `<owner>.<actor>`).
//
// Every write is compare-and-set on the key's KV revision and returns the exact committed
// snapshot: the profile as stored (decoded back from the bytes written) and the new revision.
// A KV revision is the bucket stream's sequence, so it only ever grows: a writer holding an
// old revision is refused even if the seat was removed and re-added in between (no ABA).
//   create(p)             only if no seat has that id             → kAlreadyExists `seat-exists`
//   update(p, rev)        only if the seat is still at rev        → kAborted `stale-revision`
//   remove(id, rev)       only if the seat is still at rev        → kAborted `stale-revision`
//   get(id) / list()      a missing seat is kNotFound `unknown-seat`
// A stored value that no longer decodes, or whose id is not its key, is reported (kDataLoss
// `bad-stored-profile`, naming the key), never silently skipped or rewritten.
//
// Every write is sealed with this daemon's key (profile_seal.h) and every read reports the
// seal's verdict; the daemon opens only `kSealed` profiles. Stored value (version 2):
//   {"profile":{…canonical seat profile…},"seal":{"key":"<key id>","mac":"<hex>"}}
// A bare profile object (version 1, before seals) reads as kUnsealed.
//
// Thread safety: every method may be called from any thread.
// Lifetime: must not outlive the JetStream / Connection it was opened on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "daemon/profile_seal.h"
#include "daemon/seat_profile.h"
#include "transport/jetstream.h"
#include "transport/kv.h"

namespace shoal::daemon {

inline constexpr int kSeatBucketHistory = 8;

struct ProfileSnapshot {
  SeatProfile profile;
  uint64_t revision = 0;
  SealVerdict seal = SealVerdict::kSealed;
};

// Why a profile with `verdict` is not run here (empty for kSealed); `seatName` names it.
Status sealRefusal(SealVerdict verdict, const std::string& seatName);

class ProfileStore {
 public:
  // Binds to the space's seat bucket, creating it when absent (it is this machine-independent
  // daemon state, not a Cotal resource).
  static Result<ProfileStore> open(transport::JetStream& js, std::string_view space,
                                   ProfileSealer sealer);

  Result<ProfileSnapshot> create(const SeatProfile& profile);
  Result<ProfileSnapshot> update(const SeatProfile& profile, uint64_t expectedRevision);
  Status remove(const wire::Principal& seat, uint64_t expectedRevision);
  // Writes `profile` without a seal (compare-and-set like update): a seat handed to another
  // machine, whose daemon runs it only once its owner there vouches (`shoal seat trust`).
  Result<ProfileSnapshot> handOver(const SeatProfile& profile, uint64_t expectedRevision);
  Result<ProfileSnapshot> get(const wire::Principal& seat);
  // Every seat, sorted by id.
  Result<std::vector<ProfileSnapshot>> list();

 private:
  ProfileStore(transport::KeyValue kv, std::string space, ProfileSealer sealer)
      : kv_(std::move(kv)), space_(std::move(space)), sealer_(std::move(sealer)) {}
  Result<ProfileSnapshot> snapshotOf(const std::string& bytes, uint64_t revision,
                                     const std::string& key);
  Result<std::string> sealedBytes(const SeatProfile& profile) const;

  transport::KeyValue kv_;
  std::string space_;
  ProfileSealer sealer_;
};

}  // namespace shoal::daemon
