// ShardLease: the delivery plane's single-writer lease (Cotal wire contract: shard lease). One row,
// `lease.0` in `cotal_delivery_<space>` (bucket TTL 30 s), value
// {"holder":<card id>,"since":<epoch ms>,"ready":bool,"incarnation":<per-process token>}.
//
//   acquire   atomic KV create with ready:false — a second plane's create fails and it must
//             refuse to serve (`lease-held`, naming the holder and how old the row is)
//   markReady CAS update to ready:true, only after every responder is bound
//   renew     CAS update on the last owned revision (call at half the TTL); a failed CAS means
//             the lease was lost: the caller quiesces
//   release   CAS delete on the last owned revision — never unconditional
// Ownership is holder AND incarnation: a restarted process with the same holder id is another
// owner. A crashed holder's row ages out with the bucket TTL.
//
// Thread safety: not thread-safe; one owner (the plane's renew thread after start) uses it.
// Lifetime: must not outlive the JetStream context.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "transport/jetstream.h"
#include "transport/kv.h"

namespace shoal::planes {

struct LeaseRow {
  std::string holder;
  int64_t since = 0;
  bool ready = false;
  std::string incarnation;
};

std::string encodeLeaseRow(const LeaseRow& row);
// Reasons: malformed-json, bad-lease-row.
Result<LeaseRow> decodeLeaseRow(std::string_view json);

class ShardLease {
 public:
  // kFailedPrecondition `lease-held` when another plane holds it.
  static Result<ShardLease> acquire(transport::JetStream& js, std::string_view space,
                                    std::string_view holder);

  Status markReady();
  // kAborted `lease-lost` when the row is no longer ours.
  Status renew();
  Status release();

  const LeaseRow& row() const { return row_; }
  uint64_t revision() const { return revision_; }
  // The current row as stored (nullopt: none), for liveness grading.
  Result<std::optional<std::string>> readStored();

 private:
  ShardLease(transport::KeyValue kv, LeaseRow row, uint64_t revision)
      : kv_(std::move(kv)), row_(std::move(row)), revision_(revision) {}
  Status update();

  transport::KeyValue kv_;
  LeaseRow row_;
  uint64_t revision_ = 0;
  bool released_ = false;
};

}  // namespace shoal::planes
