// AdmittedSeqs: the DM stream sequences a seat has admitted, as a bounded set of closed
// intervals, kept in the seat's journal (section `seat.dm_admitted`) and committed in the same
// transaction as each admission.
//
// Why: the journal keeps at most 512 tombstones (seed 004 §2.1 caps), but a DM that a killed
// daemon had admitted and not yet acked comes back only after the durable's 60 s ack wait —
// possibly after its tombstone was pruned. Its sequence in this set proves it was admitted
// before, so it is acked and never surfaced twice. A sequence that a killed daemon fetched but
// never admitted leaves a gap (a newer daemon admits later messages first), so it is NOT in the
// set and is admitted when it comes back. Admissions are mostly consecutive, so the set stays a
// handful of intervals; past `kMaxIntervals` the lowest (oldest) ones are dropped.
//
// JSON: {"seq":[[lo,hi],…]} ascending, disjoint, non-adjacent.
//
// Thread safety: a value type; the seat guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/result.h"

namespace shoal::daemon {

class AdmittedSeqs {
 public:
  static constexpr size_t kMaxIntervals = 256;

  void insert(uint64_t seq);
  bool contains(uint64_t seq) const;
  size_t intervals() const { return runs_.size(); }

  std::string toJson() const;
  // kDataLoss `bad-admitted-seqs` when the section is not this shape.
  static Result<AdmittedSeqs> fromJson(std::string_view json);

 private:
  std::map<uint64_t, uint64_t> runs_;  // lo → hi
};

}  // namespace shoal::daemon
