// SeatHistory: what a seat remembers across daemon lives — its counters (`shoal ps`), its
// generation number, and whether the daemon life that last ran it ended cleanly — kept in the
// seat's journal as the section `seat.history` (docs/journal-format.md sections).
//
//   {"generation":N, "counters":{"admitted":N, …}, "pid":P, "startedAt":ms, "clean":bool}
//
// A seat writes it when a runtime launches (the generation moved), at most once a second while
// its counters move, and with `clean: true` when it stops. A seat that opens and finds
// `clean: false` knows the previous daemon (pid P) ended without stopping it — killed or
// crashed — and says so in a `daemon-restarted` lifecycle event.
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "daemon/seat.h"

namespace shoal::daemon {

inline constexpr std::string_view kSeatHistorySection = "seat.history";

struct SeatHistory {
  uint64_t generation = 0;
  SeatCounters counters;
  int64_t pid = 0;          // the daemon that wrote it
  int64_t startedAtMs = 0;  // when that daemon opened the seat
  bool clean = false;       // that daemon stopped the seat (true) or is still running it / died

  std::string toJson() const;
  // Unknown counters are ignored; a missing or mistyped field is `bad-seat-history`.
  static Result<SeatHistory> fromJson(std::string_view json);
};

// The counter that counts surfaced records proved by evidence `kind` (wire/seat_receipt.h
// evidenceKind); nullptr for a kind it does not know.
uint64_t SeatCounters::*surfacedCounter(std::string_view kind);

// Each evidence kind with the number of records it proved, in a fixed order.
std::vector<std::pair<std::string_view, uint64_t>> surfacedByEvidence(const SeatCounters& c);

// The sentence of the `daemon-restarted` event for the history a seat found at open.
std::string previousLifeText(const SeatHistory& found);

}  // namespace shoal::daemon
