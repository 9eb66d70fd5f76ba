#include "daemon/local_inbox.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace shoal::daemon {

std::string_view inboxClassName(InboxClass c) {
  switch (c) {
    case InboxClass::kPullOnly:
      return "pull-only";
    case InboxClass::kChannel:
      return "channel";
    case InboxClass::kDirected:
      return "directed";
  }
  return "directed";
}

InboxChoice chooseInboxVictims(const std::vector<InboxEntry>& queued, InboxClass arrival,
                               size_t capacity) {
  capacity = std::max<size_t>(capacity, 1);
  if (queued.size() < capacity) return {};
  const size_t need = queued.size() + 1 - capacity;

  // Candidates by (class, age); the arrival is the newest of its class. Indices only: the
  // queued entries are not copied.
  constexpr size_t kArrival = std::numeric_limits<size_t>::max();
  std::vector<size_t> ranked(queued.size());
  for (size_t i = 0; i < queued.size(); ++i)
    ranked[i] = i;
  ranked.push_back(kArrival);
  auto key = [&](size_t i) {
    if (i == kArrival)
      return std::make_tuple(arrival, uint64_t{1}, std::numeric_limits<uint64_t>::max());
    return std::make_tuple(queued[i].inboxClass, uint64_t{0}, queued[i].order);
  };
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(need),
                    ranked.end(), [&](size_t a, size_t b) { return key(a) < key(b); });

  InboxChoice out;
  for (size_t k = 0; k < need; ++k) {
    const size_t i = ranked[k];
    // The arrival ranks before what is left: it gives way, and nothing is evicted for it.
    if (i == kArrival) return InboxChoice{InboxVerdict::kEvictArrival, {}};
    // Only directed items are left to give way: a queued one is already acknowledged and
    // would be lost, so the arrival is refused and waits at the broker instead.
    if (queued[i].inboxClass == InboxClass::kDirected) {
      return InboxChoice{InboxVerdict::kRefuseArrival, {}};
    }
    out.evict.push_back(queued[i].id);
  }
  return out;
}

uint32_t EvictionCounts::note(const std::string& id) {
  auto it = counts_.find(id);
  if (it != counts_.end()) return ++it->second.count;
  order_.push_back(id);
  counts_.emplace(id, Entry{1, std::prev(order_.end())});
  while (counts_.size() > std::max<size_t>(capacity_, 1)) {
    counts_.erase(order_.front());
    order_.pop_front();
  }
  return 1;
}

uint32_t EvictionCounts::count(const std::string& id) const {
  auto it = counts_.find(id);
  return it == counts_.end() ? 0 : it->second.count;
}

void EvictionCounts::forget(const std::string& id) {
  auto it = counts_.find(id);
  if (it == counts_.end()) return;
  order_.erase(it->second.at);
  counts_.erase(it);
}

}  // namespace shoal::daemon
