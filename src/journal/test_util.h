// Helpers shared by the journal's tests: operation builders, a comparable "what the journal
// owns" projection of a state, and a scratch directory for tests on the real file system.
//
// Thread safety: plain functions and values.
// Lifetime: ScratchDir removes its directory when destroyed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "journal/journal_state.h"
#include "journal/transaction.h"

// The slow tier compiles the same test files with bigger loops; its suites get a `Slow`
// prefix so the two executables never register the same CTest name.
#if defined(SHOAL_JOURNAL_SLOW)
#define SHOAL_JOURNAL_SUITE(name) Slow##name
#else
#define SHOAL_JOURNAL_SUITE(name) name
#endif

namespace shoal::journal::testutil {

inline Admit admitOp(std::string id, std::string body = "body", bool dispatching = false) {
  Admit a;
  a.id = std::move(id);
  a.body = std::move(body);
  a.dispatching = dispatching;
  return a;
}

inline Transaction txnOf(Operation op) {
  Transaction t;
  t.ops.push_back(std::move(op));
  return t;
}

// What recovery must preserve: ownership facts, independent of tokens and timestamps.
struct OwnerFacts {
  std::string id;
  OwnerState state;
  std::string body;
  std::string reason;
  std::string target;
  std::string wake;
  RuntimeIdentity runtime;
  friend bool operator==(const OwnerFacts&, const OwnerFacts&) = default;
};

struct StateFacts {
  std::vector<OwnerFacts> live;        // in admission order
  std::vector<OwnerFacts> tombstones;  // in terminal order
  bool resumeSafe = false;
  std::vector<std::tuple<std::string, std::string>> sections;  // name, value
  friend bool operator==(const StateFacts&, const StateFacts&) = default;
};

// `restarted`: report inflight(dispatching) as outcome_unknown, as an attach would.
inline StateFacts factsOf(const RestartView& v, bool restarted = true) {
  StateFacts f;
  auto one = [restarted](const OwnershipRecord& r) {
    OwnerState s = r.state;
    if (restarted && s == OwnerState::kDispatching) s = OwnerState::kOutcomeUnknown;
    return OwnerFacts{r.id, s, r.body, r.reason, r.target, r.wake, r.runtime};
  };
  for (const auto& r : v.live)
    f.live.push_back(one(r));
  for (const auto& r : v.tombstones)
    f.tombstones.push_back(one(r));
  f.resumeSafe = v.resumeSafety.safe;
  for (const auto& [name, s] : v.sections)
    f.sections.emplace_back(name, s.valueJson);
  return f;
}

inline std::string describe(const StateFacts& f) {
  std::string out = "live:";
  for (const auto& o : f.live)
    out += " " + o.id + "=" + std::string(ownerStateName(o.state));
  out += " | tombstones:";
  for (const auto& o : f.tombstones) {
    out += " " + o.id + "=" + std::string(ownerStateName(o.state)) + "(" + o.reason + ")";
  }
  out += " | sections:";
  for (const auto& [n, v] : f.sections)
    out += " " + n + "=" + v;
  out += f.resumeSafe ? " | safe" : " | unsafe";
  return out;
}

class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/shoal-journal-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace shoal::journal::testutil
