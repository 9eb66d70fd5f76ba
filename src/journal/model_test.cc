// Randomized model test: thousands of seeded runs of random transactions against a small,
// independent reference model of the seed's ownership rules (linear scans, no indexes, no
// undo log). After every step the journal must agree with the model exactly: which
// operations are refused and why, every record field and token, sections, resume safety —
// and the caps must hold after every admission. Every few steps the state is round-tripped
// through the file format, and sometimes re-attached, as a restart would.
#include <algorithm>
#include <map>
#include <random>

#include "journal/journal_state.h"
#include "journal/reasons.h"
#include "journal/test_util.h"

#include <gtest/gtest.h>

namespace shoal::journal {
namespace {

#if defined(SHOAL_JOURNAL_SLOW)
constexpr int kSeeds = 6000;
constexpr int kSteps = 300;
#else
constexpr int kSeeds = 2000;
constexpr int kSteps = 120;
#endif

Limits modelLimits() {
  Limits l;
  l.maxLiveRecords = 6;
  l.maxLiveBytes = 2000;
  l.maxTombstones = 5;
  l.maxTombstoneBytes = 1100;
  l.maxTotalRecords = 10;
  l.maxTotalBytes = 2900;
  l.maxLiveRecordBytes = 600;
  return l;
}

// ---- The reference model ---------------------------------------------------------------------

struct Model {
  Limits lim = modelLimits();
  uint64_t epoch = 0, gen = 1, seq = 1;
  std::vector<OwnershipRecord> recs;
  ResumeSafety safety;
  std::map<std::string, Section> sections;

  static size_t size(const OwnershipRecord& r) { return encodeRecord(r).size(); }
  OwnershipRecord* get(const std::string& id) {
    for (auto& r : recs) {
      if (r.id == id) return &r;
    }
    return nullptr;
  }
  size_t count(bool live) const {
    size_t n = 0;
    for (const auto& r : recs)
      n += isLive(r.state) == live;
    return n;
  }
  size_t bytes(bool live) const {
    size_t n = 0;
    for (const auto& r : recs)
      n += isLive(r.state) == live ? size(r) : 0;
    return n;
  }
  bool tombOver() const {
    return count(false) > lim.maxTombstones || bytes(false) > lim.maxTombstoneBytes ||
           recs.size() > lim.maxTotalRecords || bytes(true) + bytes(false) > lim.maxTotalBytes;
  }
  void pruneOldestTomb() {
    auto it = std::min_element(recs.begin(), recs.end(), [](const auto& a, const auto& b) {
      uint64_t ka = isLive(a.state) ? UINT64_MAX : a.terminalSeq;
      uint64_t kb = isLive(b.state) ? UINT64_MAX : b.terminalSeq;
      return ka < kb;
    });
    recs.erase(it);
  }
  void prune() {
    while (count(false) > 0 && tombOver())
      pruneOldestTomb();
  }
  void terminalize(OwnershipRecord& r, OwnerState outcome, const std::string& reason) {
    r.state = outcome;
    r.body.clear();
    r.wake.clear();
    r.reason = reason.empty() ? (outcome == OwnerState::kSurfaced ? "surfaced" : "failed") : reason;
    r.token = {epoch, gen++};
    r.terminalSeq = seq++;
    r.attempts = 0;
    std::string id = r.id;
    prune();
  }
  std::string check(const std::string& id, const OwnerToken& t) {
    OwnershipRecord* r = get(id);
    if (r == nullptr) return std::string(reason::kUnknownOwner);
    if (isTerminal(r->state)) return std::string(reason::kTerminalIsFinal);
    if (!(r->token == t)) return std::string(reason::kStaleGeneration);
    return "";
  }
  void unsafe() { safety.safe = false; }
  std::string receipt(const std::string& id, const std::optional<RuntimeIdentity>& rt) {
    if (!rt || rt->receipt.empty()) return "";
    for (const auto& r : recs) {
      if (r.id != id && r.runtime.receipt == rt->receipt) {
        return std::string(reason::kReceiptCollision);
      }
    }
    return "";
  }

  // Applies one operation; returns "" or the refusal reason.
  std::string apply(const Operation& op) {
    if (auto* a = std::get_if<Admit>(&op)) {
      if (get(a->id) != nullptr) return "";
      if (auto e = receipt(a->id, a->runtime); !e.empty()) return e;
      OwnershipRecord r;
      r.id = a->id;
      r.state = a->dispatching ? OwnerState::kDispatching : OwnerState::kQueued;
      r.body = a->body;
      r.target = a->target;
      r.wake = a->wake;
      r.runtime = a->runtime;
      r.seq = seq++;
      r.token = {epoch, gen++};
      size_t s = size(r);
      if (s > lim.maxLiveRecordBytes) return std::string(reason::kOversized);
      for (;;) {
        bool liveOver = count(true) + 1 > lim.maxLiveRecords || bytes(true) + s > lim.maxLiveBytes;
        bool totalOver = recs.size() + 1 > lim.maxTotalRecords ||
                         bytes(true) + bytes(false) + s > lim.maxTotalBytes;
        if (!liveOver && !totalOver) break;
        if (liveOver || count(false) == 0) {
          OwnershipRecord* oldest = nullptr;
          for (auto& x : recs) {
            if (isLive(x.state) && (oldest == nullptr || x.seq < oldest->seq)) oldest = &x;
          }
          terminalize(*oldest, OwnerState::kFailed, std::string(reason::kBacklogReclaimed));
        } else {
          pruneOldestTomb();
        }
      }
      recs.push_back(r);
      unsafe();
      return "";
    }
    if (auto* b = std::get_if<BeginInflight>(&op)) {
      if (auto e = check(b->id, b->expected); !e.empty()) return e;
      OwnershipRecord* r = get(b->id);
      if (r->state != OwnerState::kQueued) return std::string(reason::kWrongState);
      if (auto e = receipt(b->id, b->runtime); !e.empty()) return e;
      r->state = b->phase == InflightPhase::kDispatching ? OwnerState::kDispatching
                                                         : OwnerState::kOutcomeUnknown;
      if (b->runtime) r->runtime = *b->runtime;
      r->reason = b->reason;
      r->token = {epoch, gen++};
      if (size(*r) > lim.maxLiveRecordBytes) return std::string(reason::kOversized);
      unsafe();
      return "";
    }
    if (auto* u = std::get_if<MarkOutcomeUnknown>(&op)) {
      if (auto e = check(u->id, u->expected); !e.empty()) return e;
      OwnershipRecord* r = get(u->id);
      if (!isInflight(r->state)) return std::string(reason::kWrongState);
      if (auto e = receipt(u->id, u->runtime); !e.empty()) return e;
      r->state = OwnerState::kOutcomeUnknown;
      if (u->runtime) r->runtime = *u->runtime;
      if (!u->reason.empty()) r->reason = u->reason;
      r->token = {epoch, gen++};
      if (size(*r) > lim.maxLiveRecordBytes) return std::string(reason::kOversized);
      unsafe();
      return "";
    }
    if (auto* q = std::get_if<Requeue>(&op)) {
      if (auto e = check(q->id, q->expected); !e.empty()) return e;
      OwnershipRecord* r = get(q->id);
      if (!isInflight(r->state)) return std::string(reason::kWrongState);
      r->state = OwnerState::kQueued;
      r->reason = q->reason;
      r->token = {epoch, gen++};
      if (size(*r) > lim.maxLiveRecordBytes) return std::string(reason::kOversized);
      unsafe();
      return "";
    }
    if (auto* s = std::get_if<MarkSurfaced>(&op)) {
      OwnershipRecord* r = get(s->id);
      if (r == nullptr) return std::string(reason::kUnknownOwner);
      if (r->state == OwnerState::kSurfaced) return "";
      if (r->state == OwnerState::kFailed) {
        r->state = OwnerState::kSurfaced;
        r->reason = s->reason.empty() ? "surfaced" : s->reason;
        r->token = {epoch, gen++};
        prune();
        return "";
      }
      if (s->expected && !(r->token == *s->expected)) return std::string(reason::kStaleGeneration);
      terminalize(*r, OwnerState::kSurfaced, s->reason);
      return "";
    }
    if (auto* f = std::get_if<MarkFailed>(&op)) {
      OwnershipRecord* r = get(f->id);
      if (r == nullptr) return std::string(reason::kUnknownOwner);
      if (r->state == OwnerState::kSurfaced) return std::string(reason::kTerminalIsFinal);
      if (r->state == OwnerState::kFailed) return "";
      if (!(r->token == f->expected)) return std::string(reason::kStaleGeneration);
      terminalize(*r, OwnerState::kFailed, f->reason);
      return "";
    }
    if (auto* d = std::get_if<RemoveLive>(&op)) {
      if (auto e = check(d->id, d->expected); !e.empty()) return e;
      recs.erase(std::find_if(recs.begin(), recs.end(), [&](auto& x) { return x.id == d->id; }));
      return "";
    }
    if (auto* s = std::get_if<SetSection>(&op)) {
      uint64_t cur = sections.count(s->name) ? sections[s->name].revision : 0;
      if (s->expectedRevision && *s->expectedRevision != cur) {
        return std::string(reason::kStaleSection);
      }
      sections[s->name] = Section{cur + 1, s->valueJson};
      return "";
    }
    const ResumeSafety& next = std::get<SetResumeSafety>(op).next;
    if (next == safety) return "";
    if (std::tie(next.launchEpoch, next.version) <= std::tie(safety.launchEpoch, safety.version)) {
      return std::string(reason::kStaleResumeSafety);
    }
    if (next.safe && count(true) > 0) return std::string(reason::kLiveOwnerPresent);
    safety = next;
    return "";
  }

  void attach() {
    epoch++;
    std::vector<OwnershipRecord*> live;
    for (auto& r : recs) {
      if (r.state == OwnerState::kDispatching) live.push_back(&r);
    }
    std::sort(live.begin(), live.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
    for (auto* r : live) {
      r->state = OwnerState::kOutcomeUnknown;
      r->token = {epoch, gen++};
    }
  }
};

// ---- Comparison ------------------------------------------------------------------------------

std::string compare(const Model& m, const JournalState& s) {
  RestartView v = s.view();
  std::vector<OwnershipRecord> live, tombs;
  for (const auto& r : m.recs)
    (isLive(r.state) ? live : tombs).push_back(r);
  std::sort(live.begin(), live.end(), [](auto& a, auto& b) { return a.seq < b.seq; });
  std::sort(tombs.begin(), tombs.end(),
            [](auto& a, auto& b) { return a.terminalSeq < b.terminalSeq; });
  auto strip = [](std::vector<OwnershipRecord> rs) {
    for (auto& r : rs)
      r.admittedAtMs = r.stateSinceMs = 0;
    return rs;
  };
  if (strip(v.live) != strip(live)) return "live owners differ";
  if (strip(v.tombstones) != strip(tombs)) return "tombstones differ";
  if (!(v.resumeSafety == m.safety)) return "resume safety differs";
  if (v.sections.size() != m.sections.size()) return "section count differs";
  for (const auto& [name, sec] : m.sections) {
    if (!v.sections.count(name) || !(v.sections.at(name) == sec)) return "section " + name;
  }
  if (s.header().nextGeneration != m.gen || s.header().nextSeq != m.seq) return "counters";
  return "";
}

// ---- Random operations -----------------------------------------------------------------------

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint64_t operator()(uint64_t n) { return rng_() % n; }

  Operation op(const JournalState& s, std::map<std::string, std::vector<OwnerToken>>& seen) {
    RestartView v = s.view();
    std::vector<std::string> ids;
    for (const auto& r : v.live)
      ids.push_back(r.id);
    for (const auto& r : v.tombstones)
      ids.push_back(r.id);
    for (const auto& [id, t] : seen)
      ids.push_back(id);  // includes pruned ones
    auto someId = [&]() -> std::string {
      if (ids.empty() || (*this)(8) == 0) return "m" + std::to_string(next_++);
      return ids[(*this)(ids.size())];
    };
    auto token = [&](const std::string& id) -> OwnerToken {
      const OwnershipRecord* r = s.find(id);
      auto& old = seen[id];
      if (r != nullptr && (*this)(5) != 0) return r->token;  // usually current
      if (!old.empty() && (*this)(2) == 0) return old[(*this)(old.size())];
      return OwnerToken{(*this)(3), (*this)(50)};
    };
    auto reasonText = [&]() {
      return (*this)(3) == 0 ? std::string() : "r" + std::to_string((*this)(9));
    };
    switch ((*this)(13)) {
      case 0:
      case 1:
      case 2: {
        Admit a = testutil::admitOp(someId(), std::string((*this)(520), 'b'), (*this)(4) == 0);
        if ((*this)(3) == 0) a.target = std::string((*this)(80), 't');
        if ((*this)(3) == 0) a.wake = "w" + std::to_string((*this)(100));
        if ((*this)(5) == 0) a.runtime.receipt = "rc" + std::to_string((*this)(6));
        return a;
      }
      case 3: {
        std::string id = someId();
        std::optional<RuntimeIdentity> rt;
        if ((*this)(2)) rt = RuntimeIdentity{"th", "", std::string((*this)(40), 'r')};
        return BeginInflight{
            id, token(id),
            (*this)(2) ? InflightPhase::kDispatching : InflightPhase::kOutcomeUnknown, rt,
            reasonText()};
      }
      case 4: {
        std::string id = someId();
        std::optional<RuntimeIdentity> rt;
        if ((*this)(3) == 0) rt = RuntimeIdentity{"", "s", "rc" + std::to_string((*this)(6))};
        return MarkOutcomeUnknown{id, token(id), rt, reasonText()};
      }
      case 5: {
        std::string id = someId();
        return Requeue{id, token(id), reasonText()};
      }
      case 6: {
        std::string id = someId();
        std::optional<OwnerToken> t;
        if ((*this)(2)) t = token(id);
        return MarkSurfaced{id, t, reasonText()};
      }
      case 7:
      case 8: {
        std::string id = someId();
        return MarkFailed{id, token(id), reasonText()};
      }
      case 9: {
        std::string id = someId();
        return RemoveLive{id, token(id)};
      }
      case 10: {
        std::string name = (*this)(2) ? "identity" : "runtimePolicy";
        std::optional<uint64_t> rev;
        if ((*this)(2)) rev = (*this)(4);
        return SetSection{name, std::to_string((*this)(1000)), rev};
      }
      default: {
        ResumeSafety cur = s.resumeSafety();
        ResumeSafety next{(*this)(2) == 0, cur.launchEpoch + (*this)(2),
                          (*this)(3) == 0 ? cur.version : cur.version + 1};
        if ((*this)(6) == 0) next.launchEpoch = cur.launchEpoch > 0 ? cur.launchEpoch - 1 : 0;
        return SetResumeSafety{next};
      }
    }
  }

 private:
  std::mt19937_64 rng_;
  int next_ = 0;
};

std::string opName(const Operation& op) {
  static const char* kNames[] = {"admit",  "begin",  "unknown", "requeue", "surfaced",
                                 "failed", "remove", "section", "safety"};
  return kNames[op.index()];
}

void runSeed(uint64_t seed) {
  Gen g(seed);
  Model model;
  JournalState state(modelLimits());
  std::map<std::string, std::vector<OwnerToken>> seen;
  for (int step = 0; step < kSteps; ++step) {
    Transaction txn;
    int ops = g(6) == 0 ? 2 + static_cast<int>(g(2)) : 1;
    for (int i = 0; i < ops; ++i)
      txn.add(g.op(state, seen));
    // The model applies the transaction to a copy and keeps it only if every op succeeds.
    Model next = model;
    std::string refusal;
    for (const Operation& op : txn.ops) {
      refusal = next.apply(op);
      if (!refusal.empty()) break;
    }
    auto result = state.apply(txn, 0);
    std::string got = result.isOk() ? "" : std::string(result.status().reason());
    ASSERT_EQ(got, refusal) << "seed " << seed << " step " << step << " first op "
                            << opName(txn.ops[0]) << ": " << result.status().toString();
    if (refusal.empty()) model = std::move(next);
    std::string diff = compare(model, state);
    ASSERT_EQ(diff, "") << "seed " << seed << " step " << step << " after " << opName(txn.ops[0]);
    if (result.isOk()) {
      for (const auto& r : result->results) {
        if (r.record) seen[r.record->id].push_back(r.record->token);
      }
      // Caps hold after every admission that wrote a new owner (existing-owner growth earlier in
      // the same transaction is recovered by that admission too).
      const OperationResult& last = result->results.back();
      if (std::holds_alternative<Admit>(txn.ops.back()) && last.changed) {
        JournalStats st = state.stats();
        const Limits& l = model.lim;
        ASSERT_LE(st.liveRecords, l.maxLiveRecords) << seed;
        ASSERT_LE(st.liveBytes, l.maxLiveBytes) << seed;
        ASSERT_LE(st.tombstones, l.maxTombstones) << seed;
        ASSERT_LE(st.tombstoneBytes, l.maxTombstoneBytes) << seed;
        ASSERT_LE(st.liveRecords + st.tombstones, l.maxTotalRecords) << seed;
        ASSERT_LE(st.liveBytes + st.tombstoneBytes, l.maxTotalBytes) << seed;
      }
    }
    if (step % 25 == 24) {  // a restart: through the file format, then attach
      std::string bytes = state.encode();
      auto back = JournalState::decode(bytes, modelLimits());
      ASSERT_TRUE(back.isOk()) << back.status().toString();
      ASSERT_EQ(back->encode(), bytes) << "seed " << seed;
      state = std::move(back).value();
      if (g(2) == 0) {
        state.attach(0);
        model.attach();
        ASSERT_EQ(compare(model, state), "") << "seed " << seed << " after attach";
      }
    }
    ASSERT_TRUE(state.checkInvariants().isOk()) << state.checkInvariants().toString();
  }
}

// Thousands of seeded random runs agree with the reference model at every step.
TEST(SHOAL_JOURNAL_SUITE(ModelTest), JournalAgreesWithReferenceModel) {
  for (int seed = 1; seed <= kSeeds; ++seed) {
    runSeed(static_cast<uint64_t>(seed));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace shoal::journal
