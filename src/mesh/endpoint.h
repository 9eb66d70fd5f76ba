// Endpoint: one principal on the mesh — its presence, its view of everyone else's, and its
// traffic (seed 000 "Presence", "Three delivery modes", "Durable transport"; Cotal SPEC §5–§8;
// docs/endpoint.md). The CLI's `join`, `send` and `watch`, and later the seat daemon, are built
// on it.
//
// What open() sets up, in order:
//   1. a Connection (reconnecting; its events feed the roster view and the warning handler);
//   2. with `receiveDirect` or `serviceRoles`: asks the manager plane, over the provisioning
//      rail, for this lifecycle's DM durable `dm_<o>-<a>-<uid>` and the `svc_<role>` durables,
//      then BINDS them (an endpoint never creates a stream or a durable);
//   3. with `presence`: a PresencePublisher for its own key (on its own event loop, so a slow
//      KV write never stalls the roster view);
//   4. a RosterView of the whole presence bucket (registered when publishing);
//   5. one DurablePump per bound durable (with `deferReceiving`, at startReceiving()).
//
// Receiving. Every inbound message, whatever its path (durable DM / svc copy, live channel
// subscription, history replay on join), passes one admission in this order:
//   wire::readDelivery (subject shape, real owner, envelope, from.id = subject sender; the
//   delivery kind comes from the subject, never the payload) → a DM must be addressed to this
//   principal → own echo (from.id = own id) dropped → dedup by `id` (never on "") → handler.
// Durable copies are acked only after the handler accepted (or after a duplicate / own echo
// was recognised); refused envelopes are permanent anomalies and are `term`ed; kRetryLater
// naks with a delay. Live and history copies carry no ack. Handler calls are serialised: never
// two at once, from whichever thread delivered the message.
//
// Sending. sendDirect / post / ask publish with `Nats-Msg-Id` = message id and return a
// receipt of facts: the stored stream sequence plus what the roster said at send (recipient
// status, mention resolution, present role holders) — never "delivered". Names resolve through
// the roster view: exact id > unique live name > unique offline name; an ambiguous name is
// refused with the candidate ids; a name the view cannot verify (stale / unpopulated) is
// refused with the view's condition, never as "unknown peer". A principal id is accepted
// without a roster row. Every mention must resolve, or the post is not sent.
//
// Thread safety: every public method may be called from any thread except the endpoint's own
// event loops (a roster handler must not call back into roster(), sendDirect(), post() or
// ask(); it gets kFailedPrecondition). Handlers run on endpoint threads; they must not block
// for long.
// Lifetime: close() (or the destructor) leaves gracefully: pumps stop, channels are left, one
// final `offline` presence record is written, the connection closes. No handler runs after
// close() returns. close() must not be called from a delivery or roster handler (it joins the
// threads those run on).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/clock.h"
#include "base/executor.h"
#include "base/result.h"
#include "base/status.h"
#include "mesh/channel_history.h"
#include "mesh/channel_join.h"
#include "mesh/dedup_window.h"
#include "mesh/delivery.h"
#include "mesh/outbound.h"
#include "mesh/presence_publisher.h"
#include "mesh/roster_view.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "transport/pull_consumer.h"
#include "wire/inbound.h"
#include "wire/message.h"
#include "wire/principal.h"

namespace shoal::mesh {

class DurablePump;

struct EndpointOptions {
  std::vector<std::string> servers;  // empty: nats://127.0.0.1:4222
  std::string nkeySeedFile;          // the broker credential (ConnectOptions::nkeySeedFile)
  std::string credentialsFile;       // or a user `.creds` (auth mode)
  std::string inboxPrefix;           // empty: `_INBOX_<connId>`; auth mode: the minted one
  std::string tlsCaFile;             // a broker that requires TLS: the CA to trust
  std::string space = "main";
  wire::Principal principal;
  std::string displayName;
  wire::EndpointKind cardKind = wire::EndpointKind::kAgent;
  std::optional<std::string> role;        // on the card and in from.role
  std::vector<std::string> serviceRoles;  // svc_<role> durables to pull work from
  std::string lifecycleUid;               // empty: a fresh one for this endpoint
  bool presence = true;       // publish presence; false: an observer that is not in the roster
  bool receiveDirect = true;  // bind this lifecycle's DM durable
  // True: open() binds the durables but fetches nothing until startReceiving() — for an owner
  // that uses the endpoint's connection to prepare before its first admission.
  bool deferReceiving = false;
  std::optional<std::string> environment;
  std::string connectionName;  // empty: "shoal <name>"
  std::chrono::milliseconds reconnectWait{250};
  std::chrono::milliseconds provisionTimeout{5000};
  std::chrono::milliseconds heartbeat = kPresenceHeartbeat;
  std::chrono::milliseconds ttl = kPresenceTtl;
  std::chrono::milliseconds fetchWait{500};
  // kRetryLater naks with this delay, doubling with each redelivery of the same message up to
  // maxRetryDelay: a message a handler keeps refusing costs a bounded rate, never a tight loop.
  std::chrono::milliseconds retryDelay{1000};
  std::chrono::milliseconds maxRetryDelay{30000};
  size_t dedupCapacity = kDefaultDedupCapacity;
  // True: a history-replay copy does not enter the dedup window, so a later live or durable
  // copy of the same message still reaches the handler (a seat replaces a post it took in as
  // historical with the copy that proves it was sent while it was away). The handler then
  // dedups by id itself.
  bool historyYieldsToLaterCopies = false;
  DeliveryHandler onDelivery;  // required to receive
  // Optional: the DM and task pumps hand each fetched batch (what passed the endpoint's own
  // checks) to this in one call — for a handler that makes a batch durable in one write. Every
  // other copy still goes to onDelivery.
  BatchHandler onDeliveries;
  std::function<void(const Status&)> onWarning;           // recoverable problems, in words
  std::function<void(const RefusedDelivery&)> onRefused;  // optional: DMs terminated unadmittable
  std::function<void(const RosterEvent&, const std::optional<RosterRow>&)> onRoster;
};

struct SendReceipt {
  StoredReceipt stored;
  wire::DeliveryKind kind = wire::DeliveryKind::kDm;
  std::string target;  // recipient id, channel or role
  // dm: the recipient's status at send as the view saw it (absent: no row / no verdict).
  std::optional<std::string> recipientStatus;
  std::vector<std::string> mentionIds;  // channel: the ids the mentions resolved to
  std::string note;                     // the roster facts in words
};

struct ReceiveCounters {
  uint64_t surfaced = 0;
  uint64_t duplicates = 0;
  uint64_t ownEchoes = 0;
  uint64_t anomalies = 0;  // refused envelopes (termed / dropped)
  uint64_t retries = 0;
};

class Endpoint {
 public:
  static Result<std::unique_ptr<Endpoint>> open(EndpointOptions options);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  const wire::Principal& principal() const { return options_.principal; }
  const std::string& id() const { return selfId_; }
  const std::string& space() const { return options_.space; }
  const std::string& lifecycleUid() const { return options_.lifecycleUid; }
  // Empty when the endpoint does not receive DMs.
  const std::string& dmDurable() const { return dmDurable_; }
  // Empty when no durable channel copies are received (no DLV durable bound).
  const std::string& dlvDurable() const { return dlvDurable_; }
  transport::Connection& connection() { return *conn_; }
  transport::JetStream& jetStream() { return *js_; }
  // Starts fetching from the bound durables (at open unless deferReceiving). Idempotent.
  void startReceiving();

  // --- Sending (blocking: one roster lookup and one publish round trip) ---
  // `replyTo`: the id of the message this one answers (the envelope's `replyTo`).
  Result<SendReceipt> sendDirect(std::string_view toNameOrId, std::string_view text,
                                 std::optional<std::string> replyTo = std::nullopt);
  Result<SendReceipt> post(std::string_view channel, std::string_view text,
                           const std::vector<std::string>& mentions = {},
                           std::optional<std::string> replyTo = std::nullopt);
  Result<SendReceipt> ask(std::string_view role, std::string_view text);

  // --- Channels ---
  // Subscribes live (effective only once the broker accepted it); a refusal is
  // kPermissionDenied `join-refused` and leaves nothing subscribed.
  Result<JoinReport> join(std::string_view channel, const JoinOptions& options = {});
  // A durable membership is tombstoned at the delivery plane first (fail-closed: if that fails,
  // nothing is unsubscribed and the error says why), then the live subscription ends.
  // kNotFound `not-joined` if not joined. Leaving the last channel is allowed. close() keeps
  // durable memberships: going offline is what the backstop is for.
  Status leave(std::string_view channel);
  // Ends this lifecycle's durable membership of a channel it has not joined here (a seat whose
  // profile no longer declares it), its generation looked up at the plane; none is ok.
  Status endDurableMembership(std::string_view channel);
  std::vector<std::string> channels() const;
  // A read-only look at a channel's stored posts (never consumes, never surfaces).
  Result<HistoryPage> history(std::string_view channel, const HistoryOptions& options = {});

  // --- Roster ---
  RosterSnapshot roster();
  // The roster once the view is current, or kDeadlineExceeded `presence-snapshot-timeout`.
  Result<RosterSnapshot> waitForRoster(std::chrono::milliseconds timeout);

  // The roster row `idOrName` names (RosterView::find's rules and refusals).
  Result<RosterRow> findPeer(std::string_view idOrName);

  // --- Own presence (no-ops for an observer) ---
  Status setStatus(wire::PresenceStatus status);
  // Refused (`presence-field-too-long`) over wire::kMaxActivityBytes; no-op for an observer.
  Status setActivity(std::optional<std::string> activity);
  // Runs `change` on the publisher's loop (attention, conditions, channel modes, …).
  void updatePresence(std::function<void(PresencePublisher&)> change);

  ReceiveCounters counters() const;
  // Graceful leave (see Lifetime). Idempotent. Returns the final presence write's outcome.
  Status close();

 private:
  explicit Endpoint(EndpointOptions options);
  Status start();
  void onConnectionEvent(const transport::ConnectionEvent& event);
  void warn(const Status& status);
  // Publishes `outbound` from this principal; the receipt's stored/kind/target filled in.
  Result<SendReceipt> publishAsSelf(const Outbound& outbound);

  enum class Path { kLive, kHistory, kDurable };
  struct Admission {
    enum class Outcome { kSurfaced, kDuplicate, kOwnEcho, kAnomaly, kRetry, kRejected };
    Outcome outcome = Outcome::kAnomaly;
    Status why{};
  };
  Admission admit(Path path, std::string_view subject, std::string_view payload, uint64_t streamSeq,
                  uint64_t numDelivered);
  // `payload`: the bytes `inbound` was read from (empty for a history copy: not kept).
  Admission admitRead(Path path, Result<wire::InboundDelivery> inbound, std::string_view subject,
                      std::string_view payload, uint64_t streamSeq, uint64_t numDelivered);
  // The checks before a handler (an Admission when they decide it) and the verdict's effect.
  std::variant<Admission, Delivery> prepare(Path path, Result<wire::InboundDelivery> inbound,
                                            std::string_view subject, std::string_view payload,
                                            uint64_t streamSeq, uint64_t numDelivered);
  Admission conclude(const Delivery& delivery, HandlerVerdict verdict);
  void admitDurable(transport::JsMessage& message);
  void admitDurableBatch(std::vector<transport::JsMessage>& messages);
  // A DM terminated as unadmittable: whoever can be named hears why (onRefused).
  void reportRefused(transport::JsMessage& message, const Admission& a);
  // A delivery-plane copy from the DLV durable: frame checks, then the one admission path.
  void admitFrame(transport::JsMessage& message);
  void settle(transport::JsMessage& message, const Admission& a);

  // Runs `fn` on the view loop and waits; kFailedPrecondition if called from that loop.
  template <typename T>
  Result<T> onView(std::function<Result<T>()> fn);

  EndpointOptions options_;
  std::string selfId_;
  std::string dmDurable_;
  std::string dlvDurable_;

  EventLoopThread viewLoop_;
  EventLoopThread presenceLoop_;
  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
  // Presence writes time out after one heartbeat: a write slower than that is already stale.
  std::optional<transport::JetStream> presenceJs_;
  std::optional<transport::KeyValue> presenceKv_;
  std::unique_ptr<KvPresenceStore> store_;
  std::unique_ptr<PresencePublisher> publisher_;
  std::unique_ptr<KvPresenceWatchSource> watchSource_;
  std::unique_ptr<RosterView> view_;
  struct BoundDurables {
    std::optional<transport::PullConsumer> dm, dlv;
    std::vector<transport::PullConsumer> roles;
  };
  std::mutex pumpsMu_;
  std::optional<BoundDurables> bound_;  // guarded by pumpsMu_: bound, not pumped yet
  std::vector<std::unique_ptr<DurablePump>> pumps_;

  mutable std::mutex channelsMu_;
  std::map<std::string, transport::Subscription> channels_;  // guarded by channelsMu_
  std::map<std::string, uint64_t> durableGenerations_;       // guarded by channelsMu_
  std::mutex historyMu_;  // one chathist consumer per uid: reads are serialised

  std::mutex deniedMu_;
  std::set<std::string> deniedSubjects_;  // guarded by deniedMu_: permission refusals seen

  mutable std::mutex admitMu_;  // serialises handler calls and guards the two below
  DedupWindow seen_;
  ReceiveCounters counters_;

  std::atomic<bool> closed_{false};
  Status finalLeave_{};
};

}  // namespace shoal::mesh
