// CompactionLatch: the two-event terminal latch of a Codex compaction turn (seed 004 §1.2).
//
// `codex app-server` may report `thread/status/changed` idle before the compaction turn's
// `turn/completed`. That early idle is recorded only when it belongs to the current generation
// and the exact compaction turn; it ends nothing by itself. The matching completion — same
// generation, same turn — consumes the latch and is the one runtime-idle boundary. A completion
// of another turn or another generation cannot consume it, a second completion of the same
// compaction is a duplicate, and ordinary turns keep their own turn-end boundary.
//
// Thread safety: none (the Codex driver holds its lock around it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shoal::runtime {

class CompactionLatch {
 public:
  enum class Completion {
    kNotOurs,    // another turn or generation: handled as that turn's own end
    kEnds,       // the compaction ended: the one runtime-idle boundary
    kDuplicate,  // the compaction ended already: dropped
  };

  // Compaction was requested in `generation` (thread/compact/start went out): the next
  // turn/started of that generation is the compaction turn.
  void request(uint64_t generation) {
    *this = CompactionLatch();
    generation_ = generation;
    requested_ = true;
  }
  bool requested() const { return requested_ && turn_.empty() && !consumed_; }

  // turn/started. True when it is the requested compaction's turn (and binds the latch to it).
  bool started(uint64_t generation, std::string_view turnId) {
    if (!requested() || generation != generation_ || turnId.empty()) return false;
    turn_ = std::string(turnId);
    return true;
  }

  // `thread/status/changed` idle while `runningTurn` runs. Recorded (true) only for the bound
  // generation and its exact compaction turn, once.
  bool upstreamIdle(uint64_t generation, std::string_view runningTurn) {
    if (!active() || generation != generation_ || runningTurn != turn_) return false;
    idleSeen_ = true;
    return true;
  }

  Completion complete(uint64_t generation, std::string_view turnId) {
    if (turn_.empty() || generation != generation_ || turnId != turn_) {
      return Completion::kNotOurs;
    }
    if (consumed_) return Completion::kDuplicate;
    consumed_ = true;
    return Completion::kEnds;
  }

  // The compaction turn is bound and has not completed.
  bool active() const { return !turn_.empty() && !consumed_; }
  bool idleSeen() const { return idleSeen_; }
  const std::string& turn() const { return turn_; }

 private:
  uint64_t generation_ = 0;
  bool requested_ = false;
  std::string turn_;
  bool idleSeen_ = false;
  bool consumed_ = false;
};

}  // namespace shoal::runtime
