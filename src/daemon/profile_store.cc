#include "daemon/profile_store.h"

#include <algorithm>
#include <optional>

#include <boost/json.hpp>

#include "wire/names.h"
#include "wire/token.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;

// A record's key: `<machine>.<owner>.<actor>`, or the legacy `<owner>.<actor>`.
struct RecordKey {
  std::string keptBy;
  wire::Principal seat;
};

Result<RecordKey> parseKey(const std::string& key) {
  RecordKey k;
  std::string_view rest = key;
  const auto dots = std::count(key.begin(), key.end(), '.');
  if (dots == 2) {
    k.keptBy = key.substr(0, key.find('.'));
    rest.remove_prefix(k.keptBy.size() + 1);
  }
  auto seat = wire::parsePrincipal(rest);
  if ((dots != 1 && dots != 2) || !seat.isOk() || (dots == 2 && !wire::isRoutingToken(k.keptBy))) {
    return dataLoss("bad-stored-profile", "the seat bucket holds a foreign key " + key);
  }
  k.seat = std::move(seat).value();
  return k;
}

Status mapWriteError(const Status& s, const std::string& key, uint64_t expected) {
  if (s.code() == StatusCode::kAborted) {
    return aborted("stale-revision",
                   "seat " + key + " is no longer at revision " + std::to_string(expected) +
                       " (it changed, or was removed and added again); re-read it and retry");
  }
  if (s.code() == StatusCode::kAlreadyExists) {
    return alreadyExists("seat-exists", "a seat " + key + " already exists");
  }
  return s.withContext("writing seat " + key);
}

}  // namespace

Status sealRefusal(SealVerdict verdict, const std::string& seatName) {
  switch (verdict) {
    case SealVerdict::kSealed:
      return Status::ok();
    case SealVerdict::kUnsealed:
      return permissionDenied(
          "unsealed-profile",
          "seat " + seatName +
              " is not run: its stored profile carries no seal from this daemon (written before "
              "seals, or by someone other than you); check its command with `shoal seat show " +
              seatName + "` and, if it is yours, `shoal seat trust " + seatName + "`");
    case SealVerdict::kForeign:
      return failedPrecondition("foreign-profile",
                                "seat " + seatName +
                                    " belongs to another machine's daemon (sealed with another "
                                    "key); it runs there, never here");
    case SealVerdict::kForged:
      return permissionDenied(
          "forged-profile",
          "seat " + seatName +
              " is not run: its stored profile was changed outside the daemon (the seal does not "
              "match); check it with `shoal seat show " +
              seatName + "`, then `shoal seat rm` it or `shoal seat trust` it");
  }
  return Status::ok();
}

Result<ProfileStore> ProfileStore::open(transport::JetStream& js, std::string_view space,
                                        ProfileSealer sealer, std::string machine) {
  if (!machine.empty() && !wire::isRoutingToken(machine)) {
    return invalidArgument("bad-machine-name", "a machine name is a token of [A-Za-z0-9_-]");
  }
  transport::KvConfig config;
  SHOAL_ASSIGN_OR_RETURN(config.bucket, wire::bucketName(wire::Bucket::kSeats, space));
  config.description = "Shoal seat profiles";
  config.history = kSeatBucketHistory;
  config.maxValueSize = static_cast<int32_t>(kMaxProfileBytes);
  SHOAL_ASSIGN_OR_RETURN(auto kv, transport::KeyValue::createBucket(js, config));
  return ProfileStore(std::move(kv), std::string(space), std::move(sealer), std::move(machine));
}

std::string ProfileStore::ownKey(const wire::Principal& seat) const {
  return machine_.empty() ? seat.dotForm() : machine_ + "." + seat.dotForm();
}

int ProfileStore::rank(const ProfileSnapshot& r) const {
  if (r.keptBy == machine_ && (machine_.empty() || r.profile.machine == machine_)) return 0;
  if (!r.keptBy.empty() && r.keptBy == r.profile.machine) return 1;  // its home elsewhere
  if (r.keptBy.empty()) return 2;                                    // from before prefixes
  return 3;                                                          // an offer
}

Result<std::string> ProfileStore::sealedBytes(const SeatProfile& profile) const {
  SHOAL_ASSIGN_OR_RETURN(std::string canonical, encodeSeatProfile(profile));
  ProfileSealValue seal = sealer_.seal(space_, canonical);
  return R"({"profile":)" + canonical + R"(,"seal":{"key":")" + seal.keyId + R"(","mac":")" +
         seal.mac + R"("}})";
}

Result<ProfileSnapshot> ProfileStore::snapshotOf(const std::string& bytes, uint64_t revision,
                                                 const std::string& key) {
  // Version 2 wraps the profile with its seal; version 1 is the bare profile.
  std::string profileBytes = bytes;
  std::optional<ProfileSealValue> seal;
  boost::system::error_code ec;
  json::value v = json::parse(bytes, ec);
  if (!ec && v.is_object() && v.as_object().contains("profile")) {
    const json::object& o = v.as_object();
    const json::value* s = o.if_contains("seal");
    const json::object* so = s != nullptr && s->is_object() ? &s->as_object() : nullptr;
    const json::value* keyId = so != nullptr ? so->if_contains("key") : nullptr;
    const json::value* mac = so != nullptr ? so->if_contains("mac") : nullptr;
    if (o.size() != 2 || !o.at("profile").is_object() || keyId == nullptr || mac == nullptr ||
        !keyId->is_string() || !mac->is_string() || so->size() != 2) {
      return dataLoss("bad-stored-profile",
                      "the stored profile of seat " + key + " is not a sealed profile");
    }
    profileBytes = json::serialize(o.at("profile"));
    seal = ProfileSealValue{std::string(keyId->as_string()), std::string(mac->as_string())};
  }
  auto profile = decodeSeatProfile(profileBytes);
  if (!profile.isOk()) {
    return dataLoss("bad-stored-profile", "the stored profile of seat " + key +
                                              " does not decode: " + profile.status().toString());
  }
  SHOAL_ASSIGN_OR_RETURN(RecordKey parts, parseKey(key));
  if (parts.seat != profile->principal) {
    return dataLoss("bad-stored-profile", "the profile stored under seat " + key +
                                              " names another seat, " +
                                              profile->principal.dotForm());
  }
  SHOAL_ASSIGN_OR_RETURN(std::string canonical, encodeSeatProfile(*profile));
  SealVerdict verdict = sealer_.verify(space_, canonical, seal ? &*seal : nullptr);
  ProfileSnapshot out{std::move(profile).value(), revision, verdict, parts.keptBy, key};
  // A record without a machine, under a machine's prefix, is that machine's.
  if (out.profile.machine.empty()) out.profile.machine = out.keptBy;
  return out;
}

Result<ProfileSnapshot> ProfileStore::read(const std::string& key) {
  auto entry = kv_.get(key);
  if (!entry.isOk()) {
    if (entry.status().code() == StatusCode::kNotFound) {
      return notFound("unknown-seat", "no seat " + key + " (see `shoal seat list`)");
    }
    return entry.status().withContext("reading seat " + key);
  }
  return snapshotOf(entry->value, entry->revision, key);
}

Result<std::vector<ProfileSnapshot>> ProfileStore::records() {
  SHOAL_ASSIGN_OR_RETURN(auto keys, kv_.keys());
  std::sort(keys.begin(), keys.end());
  std::vector<ProfileSnapshot> out;
  for (const auto& key : keys) {
    // Damage under another machine's prefix is that machine's to report.
    const bool ours = machine_.empty() || std::count(key.begin(), key.end(), '.') < 2 ||
                      key.rfind(machine_ + ".", 0) == 0;
    auto record = read(key);
    if (!record.isOk()) {
      if (record.status().code() == StatusCode::kNotFound) continue;  // removed meanwhile
      if (record.status().code() == StatusCode::kDataLoss && !ours) continue;
      return record.status();
    }
    out.push_back(std::move(record).value());
  }
  return out;
}

Result<std::vector<ProfileSnapshot>> ProfileStore::recordsOf(const wire::Principal& seat) {
  SHOAL_ASSIGN_OR_RETURN(auto all, records());
  std::vector<ProfileSnapshot> out;
  for (auto& r : all)
    if (r.profile.principal == seat) out.push_back(std::move(r));
  return out;
}

std::vector<ProfileSnapshot> ProfileStore::governing(std::vector<ProfileSnapshot> records) const {
  std::vector<ProfileSnapshot> out;
  for (auto& r : records) {
    auto same = std::find_if(out.begin(), out.end(), [&](const ProfileSnapshot& o) {
      return o.profile.principal == r.profile.principal;
    });
    if (same == out.end()) {
      out.push_back(std::move(r));
    } else if (rank(r) < rank(*same)) {  // records come sorted by key: ties keep the first
      *same = std::move(r);
    }
  }
  std::sort(out.begin(), out.end(), [](const ProfileSnapshot& a, const ProfileSnapshot& b) {
    return a.profile.principal.dotForm() < b.profile.principal.dotForm();
  });
  return out;
}

Result<ProfileSnapshot> ProfileStore::get(const wire::Principal& seat) {
  SHOAL_ASSIGN_OR_RETURN(auto records, recordsOf(seat));
  std::vector<ProfileSnapshot> one = governing(std::move(records));
  if (one.empty()) {
    return notFound("unknown-seat", "no seat " + seat.dotForm() + " (see `shoal seat list`)");
  }
  return std::move(one.front());
}

Result<std::vector<ProfileSnapshot>> ProfileStore::list() {
  SHOAL_ASSIGN_OR_RETURN(auto all, records());
  return governing(std::move(all));
}

Status ProfileStore::keptElsewhere(const wire::Principal& seat, const Status& writeFailure,
                                   uint64_t expected) {
  const std::string key = ownKey(seat);
  if (writeFailure.code() == StatusCode::kAborted &&
      read(key).status().code() == StatusCode::kNotFound) {
    auto governing = get(seat);
    if (governing.isOk()) {
      const std::string keeper = governing->keptBy.empty()
                                     ? "no machine (a profile from before machine prefixes)"
                                     : "machine " + governing->keptBy;
      const std::string remedy =
          governing->profile.machine == machine_
              ? "it is offered to this machine: take it with `shoal seat trust " + seat.dotForm() +
                    "`"
              : "change it with that machine's daemon";
      return failedPrecondition("seat-kept-elsewhere", "seat " + seat.dotForm() +
                                                           "'s profile is kept by " + keeper +
                                                           ", not by " + machine_ + ": " + remedy);
    }
  }
  return mapWriteError(writeFailure, key, expected);
}

Result<ProfileSnapshot> ProfileStore::create(const SeatProfile& profile) {
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, sealedBytes(profile));
  SHOAL_ASSIGN_OR_RETURN(auto existing, recordsOf(profile.principal));
  if (!existing.empty()) {
    const ProfileSnapshot& held = existing.front();
    return alreadyExists("seat-exists", "a seat " + profile.principal.dotForm() +
                                            " already exists" +
                                            (held.keptBy.empty() || held.keptBy == machine_
                                                 ? std::string()
                                                 : " (kept by machine " + held.keptBy + ")"));
  }
  const std::string key = ownKey(profile.principal);
  auto rev = kv_.create(key, bytes);
  if (!rev.isOk()) return mapWriteError(rev.status(), key, 0);
  return snapshotOf(bytes, *rev, key);
}

Result<ProfileSnapshot> ProfileStore::update(const SeatProfile& profile,
                                             uint64_t expectedRevision) {
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, sealedBytes(profile));
  const std::string key = ownKey(profile.principal);
  if (expectedRevision == 0) {
    return invalidArgument("no-revision", "an update names the revision it was read at");
  }
  auto rev = kv_.update(key, bytes, expectedRevision);
  if (!rev.isOk()) return keptElsewhere(profile.principal, rev.status(), expectedRevision);
  return snapshotOf(bytes, *rev, key);
}

Result<ProfileSnapshot> ProfileStore::handOver(const SeatProfile& profile,
                                               uint64_t expectedRevision) {
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, encodeSeatProfile(profile));
  const std::string key = ownKey(profile.principal);
  if (expectedRevision == 0) {
    return invalidArgument("no-revision", "a hand-over names the revision it was read at");
  }
  auto rev = kv_.update(key, bytes, expectedRevision);
  if (!rev.isOk()) return keptElsewhere(profile.principal, rev.status(), expectedRevision);
  return snapshotOf(bytes, *rev, key);
}

Result<ProfileSnapshot> ProfileStore::adopt(const SeatProfile& profile) {
  SeatProfile mine = profile;
  if (mine.machine.empty()) mine.machine = machine_;
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, sealedBytes(mine));
  const std::string key = ownKey(mine.principal);
  auto held = read(key);
  if (!held.isOk() && held.status().code() != StatusCode::kNotFound) return held.status();
  auto rev = held.isOk() ? kv_.update(key, bytes, held->revision) : kv_.create(key, bytes);
  if (!rev.isOk()) return mapWriteError(rev.status(), key, held.isOk() ? held->revision : 0);
  return snapshotOf(bytes, *rev, key);
}

Status ProfileStore::removeRecord(const ProfileSnapshot& record) {
  Status removed = kv_.remove(record.key, record.revision);
  if (!removed.isOk()) return mapWriteError(removed, record.key, record.revision);
  return Status::ok();
}

Status ProfileStore::remove(const wire::Principal& seat, uint64_t expectedRevision) {
  const std::string key = ownKey(seat);
  if (expectedRevision == 0) {
    return invalidArgument("no-revision", "a removal names the revision it was read at");
  }
  Status removed = kv_.remove(key, expectedRevision);
  if (!removed.isOk()) return keptElsewhere(seat, removed, expectedRevision);
  return Status::ok();
}

Result<std::vector<std::string>> forgetSeatRecords(transport::JetStream& js, std::string_view space,
                                                   const wire::Principal& seat,
                                                   const std::string& thisMachine) {
  SHOAL_ASSIGN_OR_RETURN(std::string bucket, wire::bucketName(wire::Bucket::kSeats, space));
  SHOAL_ASSIGN_OR_RETURN(transport::KeyValue kv, transport::KeyValue::openBucket(js, bucket));
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> keys, kv.keys());
  const std::string id = seat.dotForm();
  std::vector<std::string> records;
  for (const auto& key : keys) {
    if (key == id) {
      records.push_back(key);  // legacy
    } else if (key.size() > id.size() && key.ends_with("." + id)) {
      const std::string machine = key.substr(0, key.size() - id.size() - 1);
      if (machine.find('.') != std::string::npos) continue;  // not `<machine>.<o>.<a>`
      if (machine == thisMachine) {
        return failedPrecondition("seat-is-here",
                                  "seat " + id + " is kept by this machine (" + machine +
                                      "): its daemon removes it, `shoal seat rm " + id + "`");
      }
      records.push_back(key);
    }
  }
  if (records.empty()) {
    return notFound("unknown-seat", "no seat " + id + " in the space (see `shoal seat list`)");
  }
  for (const auto& key : records) {
    SHOAL_RETURN_IF_ERROR(kv.remove(key).withContext("forgetting seat record " + key));
  }
  return records;
}

}  // namespace shoal::daemon
