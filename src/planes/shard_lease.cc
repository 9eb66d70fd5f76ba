#include "planes/shard_lease.h"

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "base/ids.h"
#include "wire/names.h"

namespace shoal::planes {
namespace {

namespace json = boost::json;

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string encodeLeaseRow(const LeaseRow& row) {
  json::object o;
  o["holder"] = row.holder;
  o["since"] = row.since;
  o["ready"] = row.ready;
  o["incarnation"] = row.incarnation;
  return json::serialize(o);
}

Result<LeaseRow> decodeLeaseRow(std::string_view text) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return invalidArgument("malformed-json", "the lease row is not JSON");
  const json::object& o = v.get_object();
  LeaseRow row;
  const json::value* holder = o.if_contains("holder");
  if (holder == nullptr || !holder->is_string()) {
    return invalidArgument("bad-lease-row", "holder must be a string");
  }
  row.holder = std::string(holder->get_string());
  if (const json::value* s = o.if_contains("since"); s != nullptr && s->is_number()) {
    row.since = static_cast<int64_t>(s->to_number<double>());
  }
  if (const json::value* r = o.if_contains("ready"); r != nullptr && r->is_bool()) {
    row.ready = r->get_bool();
  }
  if (const json::value* i = o.if_contains("incarnation"); i != nullptr && i->is_string()) {
    row.incarnation = std::string(i->get_string());
  }
  return row;
}

Result<ShardLease> ShardLease::acquire(transport::JetStream& js, std::string_view space,
                                       std::string_view holder) {
  SHOAL_ASSIGN_OR_RETURN(std::string bucket, wire::bucketName(wire::Bucket::kDelivery, space));
  auto kv = transport::KeyValue::openBucket(js, bucket);
  if (!kv.isOk()) return kv.status().withContext("opening the delivery lease bucket");
  LeaseRow row;
  row.holder = std::string(holder);
  row.since = nowMs();
  row.ready = false;
  SHOAL_ASSIGN_OR_RETURN(row.incarnation, newHexToken(16));
  auto created = kv->create(wire::kDeliveryLeaseKey, encodeLeaseRow(row));
  if (created.isOk()) return ShardLease(std::move(*kv), std::move(row), *created);
  if (created.status().code() != StatusCode::kAlreadyExists) {
    return created.status().withContext("creating the delivery lease");
  }
  std::string who = "another delivery plane";
  if (auto stored = kv->get(wire::kDeliveryLeaseKey); stored.isOk()) {
    if (auto other = decodeLeaseRow(stored->value); other.isOk()) {
      who = fmt::format("{} (incarnation {}, {}, row {} s old)", other->holder,
                        other->incarnation.substr(0, 8), other->ready ? "ready" : "starting",
                        (nowMs() - stored->createdMs) / 1000);
    }
  }
  return failedPrecondition(
      "lease-held",
      fmt::format("the delivery plane of space '{}' is already held by {}; one plane serves a "
                  "space. Stop it first, or wait: a crashed holder's lease expires after 30 s",
                  space, who));
}

Status ShardLease::update() {
  // updateOwn: a renewal that timed out in a broker stall may have landed after all; the row
  // carries this plane's incarnation, so an equal row is its own.
  auto updated = kv_.updateOwn(wire::kDeliveryLeaseKey, encodeLeaseRow(row_), revision_);
  if (!updated.isOk()) {
    if (updated.status().code() == StatusCode::kAborted ||
        updated.status().code() == StatusCode::kFailedPrecondition ||
        updated.status().code() == StatusCode::kAlreadyExists) {
      return aborted("lease-lost", "the delivery lease row changed under this plane (revision " +
                                       std::to_string(revision_) + "): another plane holds it now");
    }
    return updated.status().withContext("renewing the delivery lease");
  }
  revision_ = *updated;
  return Status::ok();
}

Status ShardLease::markReady() {
  row_.ready = true;
  return update();
}

Status ShardLease::renew() {
  return update();
}

Status ShardLease::release() {
  if (released_) return Status::ok();
  released_ = true;
  return kv_.remove(wire::kDeliveryLeaseKey, revision_);
}

Result<std::optional<std::string>> ShardLease::readStored() {
  auto entry = kv_.get(wire::kDeliveryLeaseKey);
  if (entry.isOk()) {
    if (entry->operation != transport::KvOperation::kPut) return std::optional<std::string>();
    return std::optional<std::string>(entry->value);
  }
  if (entry.status().code() == StatusCode::kNotFound) return std::optional<std::string>();
  return entry.status();
}

}  // namespace shoal::planes
