// MachineClaim: one seat daemon per machine name in a space (issue 19 item 5). Seat profiles
// name the machine whose daemon runs them, so two daemons answering to one name would run the
// same agents twice. A daemon claims its name in the KV bucket `shoal_machines_<space>`
// (values expire after `ttl`, 30 s) and renews the claim every third of it:
//
//   key <machine>   {"holder":"<sealing key id>","instance":"<fresh per start>",
//                    "host":"<host name>","pid":N,"since":<ms>}
//
// The holder is the daemon's profile-sealing key id (daemon/profile_seal.h): the identity of
// one home. A daemon finding the name held by another holder refuses to start
// (`machine-in-use`, naming the host and pid); one finding its own holder — itself restarted
// after a crash — takes the claim over at once. A holder that died without releasing frees the
// name within `ttl`. A renewal that timed out in a broker stall can still land; the next one
// adopts it (KeyValue::updateOwn) rather than taking its own write for a rival's. A daemon that
// did lose its claim runs no seats and retakes the name once it is free.
//
// Thread safety: one thread at a time (the daemon's control thread).
// Lifetime: must not outlive the JetStream; the destructor releases the claim.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/result.h"
#include "transport/jetstream.h"
#include "transport/kv.h"

namespace shoal::daemon {

inline constexpr std::chrono::milliseconds kMachineClaimTtl{30'000};

class MachineClaim {
 public:
  static Result<std::unique_ptr<MachineClaim>> claim(
      transport::JetStream& js, std::string_view space, const std::string& machine,
      const std::string& holder, std::chrono::milliseconds ttl = kMachineClaimTtl);
  ~MachineClaim();
  MachineClaim(const MachineClaim&) = delete;
  MachineClaim& operator=(const MachineClaim&) = delete;

  // Renews the claim when a third of its lifetime has passed; a claim taken meanwhile by
  // another holder (this daemon was stalled longer than the ttl) is kAborted `machine-lost`.
  Status renewIfDue();
  // After `machine-lost`: claims the name again if it is free (the other holder let it lapse)
  // or holds this daemon's own value; kFailedPrecondition `machine-in-use` while another
  // daemon holds it. OK at once while the claim is held.
  Status retake();
  bool held() const { return revision_ != 0; }

 private:
  MachineClaim(transport::KeyValue kv, std::string machine, std::string value,
               std::chrono::milliseconds ttl)
      : kv_(std::move(kv)), machine_(std::move(machine)), value_(std::move(value)), ttl_(ttl) {}

  transport::KeyValue kv_;
  const std::string machine_;
  const std::string value_;
  const std::chrono::milliseconds ttl_;
  uint64_t revision_ = 0;
  std::chrono::steady_clock::time_point renewedAt_{};
};

}  // namespace shoal::daemon
