#include "daemon/profile_store.h"

#include <algorithm>
#include <optional>

#include <boost/json.hpp>

#include "wire/names.h"
#include "wire/token.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;

std::string keyOf(const wire::Principal& p) {
  return p.dotForm();
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
                                        ProfileSealer sealer) {
  transport::KvConfig config;
  SHOAL_ASSIGN_OR_RETURN(config.bucket, wire::bucketName(wire::Bucket::kSeats, space));
  config.description = "Shoal seat profiles";
  config.history = kSeatBucketHistory;
  config.maxValueSize = static_cast<int32_t>(kMaxProfileBytes);
  SHOAL_ASSIGN_OR_RETURN(auto kv, transport::KeyValue::createBucket(js, config));
  return ProfileStore(std::move(kv), std::string(space), std::move(sealer));
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
  if (keyOf(profile->principal) != key) {
    return dataLoss("bad-stored-profile", "the profile stored under seat " + key +
                                              " names another seat, " +
                                              profile->principal.dotForm());
  }
  SHOAL_ASSIGN_OR_RETURN(std::string canonical, encodeSeatProfile(*profile));
  SealVerdict verdict = sealer_.verify(space_, canonical, seal ? &*seal : nullptr);
  return ProfileSnapshot{std::move(profile).value(), revision, verdict};
}

Result<ProfileSnapshot> ProfileStore::create(const SeatProfile& profile) {
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, sealedBytes(profile));
  const std::string key = keyOf(profile.principal);
  auto rev = kv_.create(key, bytes);
  if (!rev.isOk()) return mapWriteError(rev.status(), key, 0);
  return snapshotOf(bytes, *rev, key);
}

Result<ProfileSnapshot> ProfileStore::update(const SeatProfile& profile,
                                             uint64_t expectedRevision) {
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, sealedBytes(profile));
  const std::string key = keyOf(profile.principal);
  if (expectedRevision == 0) {
    return invalidArgument("no-revision", "an update names the revision it was read at");
  }
  auto rev = kv_.update(key, bytes, expectedRevision);
  if (!rev.isOk()) return mapWriteError(rev.status(), key, expectedRevision);
  return snapshotOf(bytes, *rev, key);
}

Result<ProfileSnapshot> ProfileStore::handOver(const SeatProfile& profile,
                                               uint64_t expectedRevision) {
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, encodeSeatProfile(profile));
  const std::string key = keyOf(profile.principal);
  if (expectedRevision == 0) {
    return invalidArgument("no-revision", "a hand-over names the revision it was read at");
  }
  auto rev = kv_.update(key, bytes, expectedRevision);
  if (!rev.isOk()) return mapWriteError(rev.status(), key, expectedRevision);
  return snapshotOf(bytes, *rev, key);
}

Status ProfileStore::remove(const wire::Principal& seat, uint64_t expectedRevision) {
  const std::string key = keyOf(seat);
  if (expectedRevision == 0) {
    return invalidArgument("no-revision", "a removal names the revision it was read at");
  }
  Status removed = kv_.remove(key, expectedRevision);
  if (!removed.isOk()) return mapWriteError(removed, key, expectedRevision);
  return Status::ok();
}

Result<ProfileSnapshot> ProfileStore::get(const wire::Principal& seat) {
  const std::string key = keyOf(seat);
  auto entry = kv_.get(key);
  if (!entry.isOk()) {
    if (entry.status().code() == StatusCode::kNotFound) {
      return notFound("unknown-seat", "no seat " + key + " (see `shoal seat list`)");
    }
    return entry.status().withContext("reading seat " + key);
  }
  return snapshotOf(entry->value, entry->revision, key);
}

Result<std::vector<ProfileSnapshot>> ProfileStore::list() {
  SHOAL_ASSIGN_OR_RETURN(auto keys, kv_.keys());
  std::sort(keys.begin(), keys.end());
  std::vector<ProfileSnapshot> out;
  for (const auto& key : keys) {
    auto principal = wire::parsePrincipal(key);
    if (!principal.isOk()) {
      return dataLoss("bad-stored-profile", "the seat bucket holds a foreign key " + key);
    }
    auto snapshot = get(*principal);
    if (!snapshot.isOk()) {
      if (snapshot.status().code() == StatusCode::kNotFound) continue;  // removed meanwhile
      return snapshot.status();
    }
    out.push_back(std::move(snapshot).value());
  }
  return out;
}

}  // namespace shoal::daemon
