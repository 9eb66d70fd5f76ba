// The seat's bounded local inbox: which item gives way when it is full, and how often one id may
// be turned away before it is dropped (issue 7 point 5; seed 000 "A recipient's connector
// acknowledges a DM only once…"; decision 007).
//
// The local inbox is the journal's queued backlog: records admitted and not yet handed to the
// runtime or claimed by an inbox page. It holds at most `capacity` of them (200 by default,
// `SeatOptions::inboxCapacity`). When an arrival finds it full, victims are chosen among the
// queued items and the arrival, in this order:
//   1. pull-only backlog (a quiet channel's posts, historical ambient replays), oldest first;
//   2. channel traffic (whatever arrived on a channel subject, @mentions of the seat included),
//      oldest first;
//   3. the oldest directed item (DM, anycast) — only when everything left is directed.
// Directed-ness comes from the subject a delivery arrived on, never from its payload: a post
// that @mentions the seat is still channel traffic here.
//
// A queued record has been acknowledged at the broker (the journal is the seat's proof of
// ownership), so evicting one drops it. Hence the choice never evicts a queued directed item:
// where that is what the order names, the arrival is refused instead (`kRefuseArrival`) and
// waits, unacknowledged, at the broker. What the seat does with each verdict
// (daemon/seat/admission.cc, admit):
//   kAdmit          the `evict` records end `failed` (`local-inbox-evicted`) in the transaction
//                   that admits the arrival; logged and counted (`inboxEvicted`);
//   kEvictArrival   the arrival is the lowest-ranked item (always channel-class): a live copy is
//                   dropped (never journaled, nor remembered as seen by the endpoint, so a
//                   durable copy of it still meets these rules; `inboxDropped`); a durable copy
//                   is not acknowledged (`inboxRefused`) until EvictionCounts says it was turned
//                   away kMaxInboxEvictions times, then it is acknowledged and dropped;
//   kRefuseArrival  a directed arrival into an inbox full of directed items: not acknowledged
//                   (`inboxRefused`); the broker redelivers it until the session drains. The
//                   eviction bound never drops a directed item.
// Nothing is evicted for an arrival that does not enter.
//
// Thread safety: chooseInboxVictims is a pure function; EvictionCounts is not synchronised,
// the seat guards it.
// Lifetime: values own their strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shoal::daemon {

// The default capacity of a seat's local inbox, in queued records.
inline constexpr size_t kLocalInboxCapacity = 200;
// A durable channel copy turned away this many times is acknowledged and dropped at the next.
inline constexpr uint32_t kMaxInboxEvictions = 3;
// How many ids EvictionCounts remembers; the oldest is forgotten first.
inline constexpr size_t kEvictionIdsRemembered = 1024;
// The reason token of a queued record the full inbox ended (a failed receipt carries it).
inline constexpr std::string_view kInboxEvictedReason = "local-inbox-evicted";

// In eviction order: the first class goes first.
enum class InboxClass { kPullOnly, kChannel, kDirected };

std::string_view inboxClassName(InboxClass c);

struct InboxEntry {
  std::string id;
  InboxClass inboxClass = InboxClass::kDirected;
  uint64_t order = 0;  // admission order (the journal record's seq): smaller is older
};

enum class InboxVerdict {
  kAdmit,          // the arrival enters, after the `evict` items (none when there was room)
  kEvictArrival,   // the arrival is the victim: it does not enter
  kRefuseArrival,  // the victim would be a queued directed item: the arrival is refused instead
};

struct InboxChoice {
  InboxVerdict verdict = InboxVerdict::kAdmit;
  std::vector<std::string> evict;  // kAdmit only: queued channel-class ids, in victim order
};

// The choice for an arrival of class `arrival` (newer than every queued item) into an inbox of
// `capacity` (at least 1) holding `queued`. A full inbox frees exactly the room the arrival
// needs: more than one victim only when it already holds more than `capacity` (a smaller
// capacity after a restart).
InboxChoice chooseInboxVictims(const std::vector<InboxEntry>& queued, InboxClass arrival,
                               size_t capacity);

// How many times each id was turned away by the full inbox, for the ids seen last. Bounded: past
// `capacity` ids the one noted first is forgotten (a forgotten id starts again from zero, which
// only delays its drop).
class EvictionCounts {
 public:
  explicit EvictionCounts(size_t capacity = kEvictionIdsRemembered) : capacity_(capacity) {}
  EvictionCounts(const EvictionCounts&) = delete;  // the map points into the list
  EvictionCounts& operator=(const EvictionCounts&) = delete;

  // One more turn-away of `id`; returns how many it has had now (1 the first time).
  uint32_t note(const std::string& id);
  // 0 for an id never noted or forgotten.
  uint32_t count(const std::string& id) const;
  // The id entered the inbox or was dropped: nothing more to count.
  void forget(const std::string& id);
  size_t size() const { return counts_.size(); }

 private:
  struct Entry {
    uint32_t count = 0;
    std::list<std::string>::iterator at;
  };
  size_t capacity_;
  std::list<std::string> order_;  // oldest noted first
  std::unordered_map<std::string, Entry> counts_;
};

}  // namespace shoal::daemon
