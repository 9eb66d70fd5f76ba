// DedupWindow: the bounded set of message ids an endpoint has already surfaced, so one logical
// delivery arriving by several paths (live channel copy, history backfill, a durable copy, a
// redelivery) reaches the handler once (Cotal SPEC §4, §7 step 5).
//
// The empty id is never a key: `contains("")` is false and `insert("")` does nothing, so two
// `id:""` messages are never coalesced (Cotal §4). The window keeps the most recent `capacity`
// ids and forgets the oldest first; a redelivery older than the window is surfaced again,
// which the receiver's own journal (the daemon's) catches.
//
// Thread safety: none; the owner serialises access.
// Lifetime: owns its strings.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_set>

namespace shoal::mesh {

inline constexpr size_t kDefaultDedupCapacity = 16384;

class DedupWindow {
 public:
  explicit DedupWindow(size_t capacity = kDefaultDedupCapacity) : capacity_(capacity) {}

  bool contains(std::string_view id) const;
  // Remembers `id` (no-op for "" or an id already held); evicts the oldest when full.
  void insert(std::string_view id);
  size_t size() const { return order_.size(); }

 private:
  size_t capacity_;
  std::deque<std::string> order_;
  std::unordered_set<std::string_view> ids_;  // views into order_'s strings
};

}  // namespace shoal::mesh
