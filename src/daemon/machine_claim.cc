#include "daemon/machine_claim.h"

#include <boost/json.hpp>
#include <unistd.h>

#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"
#include "mesh/credential_rail.h"
#include "wire/names.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;

std::string hostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "?";
  return host;
}

struct Claimant {
  std::string holder;
  std::string host;
  int64_t pid = 0;
};

Claimant claimantOf(const std::string& value) {
  Claimant c;
  boost::system::error_code ec;
  json::value v = json::parse(value, ec);
  if (ec || !v.is_object()) return c;
  const json::object& o = v.as_object();
  if (const auto* h = o.if_contains("holder"); h != nullptr && h->is_string()) {
    c.holder = std::string(h->as_string());
  }
  if (const auto* h = o.if_contains("host"); h != nullptr && h->is_string()) {
    c.host = std::string(h->as_string());
  }
  if (const auto* p = o.if_contains("pid"); p != nullptr && p->is_int64()) c.pid = p->as_int64();
  return c;
}

}  // namespace

Result<std::unique_ptr<MachineClaim>> MachineClaim::claim(transport::JetStream& js,
                                                          std::string_view space,
                                                          const std::string& machine,
                                                          const std::string& holder,
                                                          std::chrono::milliseconds ttl) {
  SHOAL_RETURN_IF_ERROR(mesh::validateMachineName(machine));
  transport::KvConfig config;
  SHOAL_ASSIGN_OR_RETURN(config.bucket, wire::bucketName(wire::Bucket::kMachines, space));
  config.description = "Shoal seat daemons' machine claims";
  config.ttl = ttl;
  config.maxValueSize = 1024;
  SHOAL_ASSIGN_OR_RETURN(auto kv, transport::KeyValue::createBucket(js, config));
  SHOAL_ASSIGN_OR_RETURN(std::string instance, newHexToken(8));
  json::object o{{"holder", holder},
                 {"instance", instance},
                 {"host", hostName()},
                 {"pid", static_cast<int64_t>(::getpid())},
                 {"since", Clock::real().wallMs()}};
  std::unique_ptr<MachineClaim> c(
      new MachineClaim(std::move(kv), machine, json::serialize(o), ttl));
  auto created = c->kv_.create(machine, c->value_);
  if (created.isOk()) {
    c->revision_ = *created;
  } else {
    if (created.status().reason() != "key-exists") return created.status();
    SHOAL_ASSIGN_OR_RETURN(transport::KvEntry held, c->kv_.get(machine));
    const Claimant other = claimantOf(held.value);
    if (other.holder != holder) {
      return failedPrecondition(
          "machine-in-use",
          "machine " + machine + " is claimed by another seat daemon (pid " +
              std::to_string(other.pid) + " on host " + other.host +
              "): two daemons under one name would run the same seats twice; stop that one, or "
              "give this one its own name with --machine");
    }
    // This home's own claim, left by a daemon that ended without releasing it.
    SHOAL_ASSIGN_OR_RETURN(c->revision_, c->kv_.update(machine, c->value_, held.revision));
  }
  c->renewedAt_ = std::chrono::steady_clock::now();
  return c;
}

MachineClaim::~MachineClaim() {
  if (revision_ != 0) (void)kv_.remove(machine_, revision_);
}

Status MachineClaim::renewIfDue() {
  const auto now = std::chrono::steady_clock::now();
  if (revision_ == 0 || now - renewedAt_ < ttl_ / 3) return Status::ok();
  // updateOwn: a renewal that timed out in a broker stall may have landed after all.
  auto renewed = kv_.updateOwn(machine_, value_, revision_);
  if (!renewed.isOk()) {
    if (renewed.status().code() == StatusCode::kUnavailable ||
        renewed.status().code() == StatusCode::kDeadlineExceeded) {
      return renewed.status();  // the broker is away: the next tick tries again
    }
    // Lapsed (a broker or daemon stall longer than the ttl): take it back if no one else did.
    if (auto again = kv_.create(machine_, value_); again.isOk()) {
      revision_ = *again;
      renewedAt_ = now;
      return Status::ok();
    }
    revision_ = 0;
    return aborted("machine-lost", "this daemon's claim on machine " + machine_ +
                                       " lapsed and was taken (" + renewed.status().toString() +
                                       ")");
  }
  revision_ = *renewed;
  renewedAt_ = now;
  return Status::ok();
}

Status MachineClaim::retake() {
  if (revision_ != 0) return Status::ok();
  auto created = kv_.create(machine_, value_);
  if (!created.isOk()) {
    if (created.status().reason() != "key-exists") return created.status();
    SHOAL_ASSIGN_OR_RETURN(transport::KvEntry held, kv_.get(machine_));
    if (held.value != value_) {
      const Claimant other = claimantOf(held.value);
      return failedPrecondition("machine-in-use",
                                "machine " + machine_ +
                                    " is still claimed by another seat daemon (pid " +
                                    std::to_string(other.pid) + " on host " + other.host + ")");
    }
    created = held.revision;  // this daemon's own write, landed late
  }
  revision_ = *created;
  renewedAt_ = std::chrono::steady_clock::now();
  return Status::ok();
}

}  // namespace shoal::daemon
