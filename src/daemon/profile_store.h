// ProfileStore: the seat profiles of a space, in the KV bucket `shoal_seats_<space>`.
//
// Keys: a daemon writes only under its machine's prefix, `<machine>.<owner>.<actor>`, so in
// auth mode its credential can be confined to `$KV.shoal_seats_<space>.<machine>.>` (issue 19
// item 5; decision 022). A store opened without a machine name writes `<owner>.<actor>`, the
// form from before prefixes ("legacy"), which any store still reads.
//
// Records and seats. One seat usually has one record. A record kept by machine K whose profile
// names machine M ≠ K is an offer (`seat move`, `seat add --machine`): K cannot write M's
// prefix, so M's daemon takes the seat by writing its own record (adopt, on `shoal seat trust`)
// and K then removes its offer. Of several records of one seat, get() and list() report the
// one that governs it, in this order: this machine's own record for itself; a record kept by
// the machine it names (the seat's home elsewhere); a legacy record; an offer.
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
// A record that does not parse, under another machine's prefix, is that machine's damage: it is
// skipped here (its own daemon reports it), so no machine can break another's seat list.
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
  std::string keptBy;  // the machine whose prefix holds the record; empty: a legacy record
  std::string key;     // the record's KV key
};

// Why a profile with `verdict` is not run here (empty for kSealed); `seatName` names it.
Status sealRefusal(SealVerdict verdict, const std::string& seatName);

class ProfileStore {
 public:
  // Binds to the space's seat bucket, creating it when absent (it is this machine-independent
  // daemon state, not a Cotal resource). `machine` is the prefix this store writes under
  // (empty: legacy keys); kInvalidArgument `bad-machine-name` for one that is not a token.
  static Result<ProfileStore> open(transport::JetStream& js, std::string_view space,
                                   ProfileSealer sealer, std::string machine = "");

  // Writes under this machine's prefix. create() refuses a seat any record already names,
  // under any prefix (`seat-exists`). update(), remove() and handOver() change this machine's
  // own record; when the seat's governing record is kept elsewhere they refuse with
  // kFailedPrecondition `seat-kept-elsewhere`, naming the machine.
  Result<ProfileSnapshot> create(const SeatProfile& profile);
  Result<ProfileSnapshot> update(const SeatProfile& profile, uint64_t expectedRevision);
  Status remove(const wire::Principal& seat, uint64_t expectedRevision);
  // Writes `profile` without a seal (compare-and-set like update): a seat handed to another
  // machine, whose daemon runs it only once its owner there vouches (`shoal seat trust`).
  Result<ProfileSnapshot> handOver(const SeatProfile& profile, uint64_t expectedRevision);
  // Takes a seat whose governing record is not this machine's own (an offer to this machine,
  // or a legacy record): writes `profile`, sealed, as this machine's record (created, or
  // replacing an older record of ours). The other record stays until its keeper removes it.
  Result<ProfileSnapshot> adopt(const SeatProfile& profile);
  // Removes one record by its key, compare-and-set on its revision (a superseded offer of ours,
  // a legacy record once adopted).
  Status removeRecord(const ProfileSnapshot& record);
  Result<ProfileSnapshot> get(const wire::Principal& seat);
  // Every seat, sorted by id: its governing record.
  Result<std::vector<ProfileSnapshot>> list();
  // Every record, sorted by key (a seat being handed over has two).
  Result<std::vector<ProfileSnapshot>> records();
  // The governing record of each seat among `records` (sorted by key), sorted by id.
  std::vector<ProfileSnapshot> governing(std::vector<ProfileSnapshot> records) const;
  const std::string& machine() const { return machine_; }

 private:
  ProfileStore(transport::KeyValue kv, std::string space, ProfileSealer sealer, std::string machine)
      : kv_(std::move(kv)),
        space_(std::move(space)),
        sealer_(std::move(sealer)),
        machine_(std::move(machine)) {}
  std::string ownKey(const wire::Principal& seat) const;
  int rank(const ProfileSnapshot& record) const;
  Result<ProfileSnapshot> snapshotOf(const std::string& bytes, uint64_t revision,
                                     const std::string& key);
  Result<ProfileSnapshot> read(const std::string& key);
  Result<std::vector<ProfileSnapshot>> recordsOf(const wire::Principal& seat);
  Result<std::string> sealedBytes(const SeatProfile& profile) const;
  Status keptElsewhere(const wire::Principal& seat, const Status& writeFailure, uint64_t expected);

  transport::KeyValue kv_;
  std::string space_;
  ProfileSealer sealer_;
  std::string machine_;
};

// `shoal seat forget`: the space admin removes every record of `seat` (a seat of a machine that
// is gone — revoked, wiped — whose daemon can no longer remove them), under whichever machine's
// prefix, legacy records included; returns the keys removed. Refusals: kNotFound `unknown-seat`;
// kFailedPrecondition `seat-is-here` when `thisMachine` keeps one of them (its own daemon
// removes it: `shoal seat rm`). Needs writes of every prefix: in auth mode the seat keeper's
// credential (planes/grants.h seatKeeperGrants). A daemon that still runs the seat closes it.
Result<std::vector<std::string>> forgetSeatRecords(transport::JetStream& js, std::string_view space,
                                                   const wire::Principal& seat,
                                                   const std::string& thisMachine);

}  // namespace shoal::daemon
