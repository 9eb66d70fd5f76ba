// DeliveryPlane: the durable channel backstop of one space (seed 000 "Channel delivery";
// Cotal SPEC §7, §8; Cotal wire contract: shard lease; docs/channels.md). Three pieces behind
// one shard lease:
//
//   fan-out    the `fanout` durable on CHAT (every post, DeliverNew). For each post it checks the
//              envelope against the subject, resolves the channel's class fresh from the
//              registry (mesh/channel_registry.h) and writes one FanoutEntry per recipient to
//              `dinbox.<o>.<a>.<uid>` (INBOX): durable class — every member whose membership
//              covers the post's sequence, except the sender; live class — each @mention that
//              resolves to exactly one peer in presence whose read ACL covers the channel. Each
//              copy carries the per-copy Nats-Msg-Id, so a post fanned out twice stores one copy.
//              The post is acked last; a failure naks it (retry) up to maxDeliveries, then terms.
//   reader     the `reader` durable on INBOX. Re-authorises every copy against the member's read
//              ACL (`cotal_acl_<space>`, read fresh) and, for durable-channel copies, the current
//              membership interval, then publishes the DeliveryFrame to `dlv.<o>.<a>.<uid>` (the
//              member's own `dlv_…` durable) and only then acks the entry. Unknown ACL ⇒ nak with
//              a delay, termed with a logged reason after maxDeliveries; revoked ACL or a copy
//              outside the membership ⇒ acked and dropped (counted).
//   membership the rail `cotal.<space>.ep.one.delivery.<op>.*.*.*.*` (mesh/delivery_rail.h): join
//              (ACL-checked; joinCursor = the caller's watermark, capped at CHAT's last_seq; an
//              existing active membership is kept as it is; copies for posts the fan-out already
//              passed are made at once), leave (tombstone at CHAT's last_seq; generation checked),
//              list, jobs. Rows live in `cotal_members_<space>`, written only here, each write a
//              revision CAS.
//
// start(): acquire the lease (create-if-absent; `lease-held` ⇒ refuse), load the membership rows,
// ensure the two consumers, bind the pumps, the rail and the `delivery` liveness responder, then
// mark the lease ready. The lease is renewed on the plane's loop at half its TTL; a lost CAS
// quiesces the plane (pumps and rail stop; the connection stays) and calls onLost. stop()
// releases the lease by CAS. Liveness grades from the stored lease row (responderFromLease).
//
// Every fan-out and hand-off has a job record (planes/fanout_jobs.h), served by the `jobs` op.
//
// Thread safety: start/stop/accessors from any thread except the plane's own; the pumps, the
// rail loop and the liveness responder run on their own threads and share the membership map
// under one mutex. Lifetime: must not outlive `conn` / `js`; the destructor stops (without
// releasing the lease if stop() was not called: a crashed-looking exit, the row ages out).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/executor.h"
#include "base/result.h"
#include "planes/fanout_jobs.h"
#include "planes/liveness_responder.h"
#include "planes/shard_lease.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "wire/delivery_frame.h"
#include "wire/membership.h"

namespace shoal::mesh {
class DurablePump;
}
namespace shoal::transport {
class JsMessage;
}

namespace shoal::planes {

inline constexpr std::string_view kFanoutDurable = "fanout";
inline constexpr std::string_view kReaderDurable = "reader";

struct DeliveryPlaneOptions {
  std::string space = "main";
  std::string holder = "local.delivery";        // the plane's card id in the lease row
  std::chrono::milliseconds renewEvery{15000};  // half the lease TTL
  // The ack wait the fanout / reader consumers are created with (an existing consumer keeps
  // its own). A post left unacked by a killed plane comes back after it.
  std::chrono::milliseconds ackWait{60000};
  std::chrono::milliseconds retryDelay{2000};  // nak delay: unknown ACL, failed copy
  int maxDeliveries = 10;
  size_t maxCatchUp = 1000;                   // posts copied at a join for the fan-out's past
  std::function<void(const Status&)> onLost;  // the lease was lost; the plane has quiesced
};

struct DeliveryPlaneCounters {
  uint64_t posts = 0;
  uint64_t copies = 0;
  uint64_t joins = 0;
  uint64_t leaves = 0;
};

class DeliveryPlane {
 public:
  // kFailedPrecondition `lease-held` when another plane serves the space.
  static Result<std::unique_ptr<DeliveryPlane>> start(transport::Connection& conn,
                                                      transport::JetStream& js,
                                                      DeliveryPlaneOptions options);
  ~DeliveryPlane();
  DeliveryPlane(const DeliveryPlane&) = delete;
  DeliveryPlane& operator=(const DeliveryPlane&) = delete;

  // Stops serving and releases the lease (CAS). Idempotent.
  Status stop();
  void onConnectionEvent(const transport::ConnectionEvent& event);

  bool quiesced() const { return quiesced_.load(); }
  const std::string& incarnation() const { return incarnation_; }
  std::string livenessInstance() const;
  DeliveryPlaneCounters counters() const;
  const FanoutJobs& jobs() const { return jobs_; }

 private:
  struct Member {
    wire::MembershipRecord record;
    uint64_t revision = 0;
  };

  DeliveryPlane(transport::Connection& conn, transport::JetStream& js, DeliveryPlaneOptions o);
  Status bind();
  Status loadMembers();
  Status ensureConsumers();
  void fanout(transport::JsMessage& m);
  void read(transport::JsMessage& m);
  void handleRail(const transport::Message& request);
  Result<std::string> join(const wire::Principal& caller, const std::string& uid,
                           std::string_view body);
  Result<std::string> leave(const wire::Principal& caller, const std::string& uid,
                            std::string_view body);
  std::string list(const std::string& uid);
  std::string jobsJson();
  // One copy to dinbox (the per-copy id dedups a repeat).
  Status copyTo(const wire::Principal& member, const std::string& uid, uint64_t generation,
                wire::FanoutReason reason, const std::string& channel, uint64_t seq,
                const wire::CotalMessage& msg);
  Result<std::optional<wire::AclRecord>> readAcl(const wire::Principal& p, const std::string& uid);
  void renewSoon();
  void quiesce(const Status& why);

  transport::Connection& conn_;
  transport::JetStream& js_;
  const DeliveryPlaneOptions options_;
  std::string incarnation_;
  std::string chatStream_, inboxStream_;
  std::optional<ShardLease> lease_;               // used on loop_ after start
  std::optional<transport::KeyValue> leaseView_;  // liveness reads (nats.c thread)
  std::optional<transport::KeyValue> membersKv_;
  std::optional<transport::KeyValue> aclKv_;
  std::optional<transport::KeyValue> presenceKv_;

  mutable std::mutex mu_;
  std::map<std::string, Member> members_;  // guarded by mu_; key = memberKey
  DeliveryPlaneCounters counters_;         // guarded by mu_

  FanoutJobs jobs_;
  EventLoopThread loop_;  // rail requests and lease renewal
  std::unique_ptr<mesh::DurablePump> fanoutPump_;
  std::unique_ptr<mesh::DurablePump> readerPump_;
  std::unique_ptr<LivenessResponder> liveness_;
  std::optional<transport::Subscription> railSub_;
  std::atomic<bool> quiesced_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace shoal::planes
