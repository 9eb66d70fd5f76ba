// SeatProfile: what one seat is — a principal on the mesh plus the runtime that speaks for it —
// and its JSON form in the seat-profile bucket (issue 5; docs/architecture.md, Modules).
//
// JSON (one compact object, every key known; an unknown key is refused, so a typo never
// silently becomes a default):
//   {"name":"Reviewer 1",            the seat's public display name (1–128 chars, no controls)
//    "id":"local.reviewer_1",        its principal dot-form
//    "runtime":"exec"|"claude"|"codex"|"opencode",
//    "command":["./agent","--x"],    argv; required for exec, optional (a default) otherwise
//    "cwd":"/abs/path",              absolute working directory (the journal lives there)
//    "role":"reviewer",              optional; the seat takes anycast work for it
//    "channels":["team.backend"],    concrete channels joined at start
//    "env":["ANTHROPIC_API_KEY"],    names of environment variables passed to the runtime
//    "lifecycleUid":"…",             [a-z0-9]{26,32}, minted once when the seat is added
//    "state":"running",              what the daemon keeps the seat at: running | sleeping |
//                                    stopped (optional, default running; `seat start|sleep|
//                                    stop` write it)
//    "machine":"laptop",             optional: the machine whose daemon runs it (absent: a
//                                    profile from before machines; any daemon runs it)
//    "ack":true}                     exec only, optional (default false): the program
//                                    acknowledges each message it handled on $SHOAL_ACK_FD
//                                    (`ack <id>`), and only that acknowledgement surfaces it
//
// Thread safety: value types and pure functions.
// Lifetime: owns its strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "runtime/kind.h"
#include "wire/principal.h"

namespace shoal::daemon {

// A profile names its runtime by runtime/kind.h's kinds.
using runtime::parseRuntimeKind;
using runtime::RuntimeKind;
using runtime::runtimeKindName;

// running: on the mesh with a Process; sleeping: on the mesh, admitting, no Process until a
// fresh directed message; stopped: off the mesh (its messages wait in the broker).
enum class DesiredState { kRunning, kSleeping, kStopped };

std::string_view desiredStateName(DesiredState state);  // "running" | "sleeping" | "stopped"
std::optional<DesiredState> parseDesiredState(std::string_view name);

// Bounds that keep one profile a small KV value.
inline constexpr size_t kMaxCommandArgs = 64;
inline constexpr size_t kMaxSeatChannels = 64;
inline constexpr size_t kMaxEnvNames = 64;
inline constexpr size_t kMaxProfileBytes = 64 * 1024;

struct SeatProfile {
  std::string name;
  wire::Principal principal;
  RuntimeKind runtime = RuntimeKind::kExec;
  std::vector<std::string> command;
  std::string cwd;
  std::optional<std::string> role;
  std::vector<std::string> channels;
  std::vector<std::string> env;
  std::string lifecycleUid;
  DesiredState state = DesiredState::kRunning;
  bool acks = false;    // exec: surfaced on the program's `ack <id>`, not on its read
  std::string machine;  // the daemon's machine that runs it; empty: any

  bool operator==(const SeatProfile&) const = default;
};

// Every rule above; reasons: bad-seat-name, the principal's wire reasons, missing-command,
// too-many-args, bad-cwd, bad-role, bad-channel, bad-env-name, too-many-*, bad-lifecycle-uid,
// ack-needs-exec, bad-machine-name.
Status validateSeatProfile(const SeatProfile& profile);

// validateSeatProfile, then compact JSON.
Result<std::string> encodeSeatProfile(const SeatProfile& profile);
// Reasons: malformed-json, bad-seat-profile (not an object, unknown key, wrong type, too
// large), then validateSeatProfile's.
Result<SeatProfile> decodeSeatProfile(std::string_view json);

}  // namespace shoal::daemon
