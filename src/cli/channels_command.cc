// `shoal channels list|set|default`: the space's channel registry (the `cotal_channels_<space>`
// bucket, wire/channel_config.h) — each channel's delivery class, replay on join, replay window,
// description and instructions, and the space defaults (`=defaults`). Every write is a
// compare-and-set on the record's revision, merged from what is stored now; bad values (a
// description over 200 characters, instructions over 2000, a malformed window) are refused
// before anything is written, never truncated.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "wire/channel.h"
#include "wire/channel_config.h"
#include "wire/membership.h"
#include "wire/names.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct ChannelsArgs {
  MeshTargetArgs target;
  std::string channel;  // set
  std::string deliveryClass;
  std::string replay;  // on | off
  std::string replayWindow;
  std::optional<std::string> description;
  std::optional<std::string> instructions;
  bool json = false;
};

// The registry bucket of the target space, over a connection that lives as long as it.
struct Registry {
  std::unique_ptr<transport::Connection> conn;
  std::optional<transport::JetStream> js;
  std::optional<transport::KeyValue> kv;
  std::string space;
};

// In auth mode every channels command connects under the person's registrar credential: the
// registry is a privileged write and the durable membership registry no agent may read.
Result<Registry> openRegistry(const MeshTargetArgs& args) {
  SHOAL_ASSIGN_OR_RETURN(MeshTarget target, resolveMeshTarget(args));
  SHOAL_RETURN_IF_ERROR(
      usePrivilege(args, target, supervisor::Privilege::kRegistryWrites, "shoal channels"));
  Registry r;
  SHOAL_ASSIGN_OR_RETURN(r.conn, openConnection(target, "shoal channels", args.timeout()));
  SHOAL_ASSIGN_OR_RETURN(auto js, transport::JetStream::create(*r.conn));
  r.js.emplace(std::move(js));
  SHOAL_ASSIGN_OR_RETURN(std::string bucket,
                         wire::bucketName(wire::Bucket::kChannels, target.space));
  auto kv = transport::KeyValue::openBucket(*r.js, bucket);
  if (!kv.isOk()) {
    return notFound("no-channel-registry",
                    fmt::format("space {} has no channel registry ({}); `shoal up` provisions it",
                                target.space, kv.status().message()));
  }
  r.kv.emplace(std::move(kv).value());
  r.space = target.space;
  return r;
}

// The stored record of `key` and its revision (0: none).
Result<std::pair<std::string, uint64_t>> readRecord(transport::KeyValue& kv,
                                                    const std::string& key) {
  auto entry = kv.get(key);
  if (!entry.isOk()) {
    if (entry.status().code() == StatusCode::kNotFound) return std::make_pair(std::string(), 0ul);
    return entry.status();
  }
  if (entry->operation != transport::KvOperation::kPut) return std::make_pair(std::string(), 0ul);
  return std::make_pair(entry->value, entry->revision);
}

Status writeRecord(transport::KeyValue& kv, const std::string& key, const std::string& value,
                   uint64_t revision) {
  auto written = revision == 0 ? kv.create(key, value) : kv.update(key, value, revision);
  if (written.isOk()) return Status::ok();
  const StatusCode code = written.status().code();
  if (code != StatusCode::kAborted && code != StatusCode::kAlreadyExists &&
      written.status().reason() != "wrong-last-sequence") {
    return written.status().withContext(
        "writing " + (key == wire::kChannelDefaultsKey ? "the space defaults" : "#" + key));
  }
  return aborted("registry-changed",
                 fmt::format("{} changed while this command ran ({}); run it again",
                             key == wire::kChannelDefaultsKey ? "the space defaults" : "#" + key,
                             written.status().message()));
}

// The flags shared by `set` and `default`, applied over `into`; a malformed value is refused.
template <typename Record>
Status applyCommon(const ChannelsArgs& a, Record& into) {
  if (!a.deliveryClass.empty()) {
    if (a.deliveryClass == "live") {
      into.deliveryClass = wire::DeliveryClass::kLive;
    } else if (a.deliveryClass == "durable") {
      into.deliveryClass = wire::DeliveryClass::kDurable;
    } else {
      return invalidArgument("bad-delivery-class", "--class is live or durable");
    }
  }
  if (!a.replay.empty()) {
    if (a.replay != "on" && a.replay != "off")
      return invalidArgument("bad-replay", "--replay is on or off");
    into.replay = a.replay == "on";
  }
  if (a.replayWindow == "none") {
    into.replayWindow.reset();
  } else if (!a.replayWindow.empty()) {
    into.replayWindow = a.replayWindow;
  }
  return Status::ok();
}

std::string describe(const wire::ChannelConfig& c, const wire::ChannelDefaults& d) {
  const auto window = wire::effectiveReplayWindowMs(c, d);
  std::string line = fmt::format(
      "class {} · replay {}", wire::deliveryClassName(wire::effectiveClass(c, d)),
      wire::effectiveReplay(c, d)
          ? (window ? "on (window " + c.replayWindow.value_or(d.replayWindow.value_or("")) + ")"
                    : std::string("on"))
          : std::string("off"));
  if (c.description) line += " · " + *c.description;
  return line;
}

json::object configJson(const std::string& name, const wire::ChannelConfig& c,
                        const wire::ChannelDefaults& d) {
  json::object o{
      {"channel", name},
      {"record", json::parse(wire::encodeChannelConfig(c).valueOr("{}"))},
      {"effective", json::object{{"deliveryClass",
                                  std::string(wire::deliveryClassName(wire::effectiveClass(c, d)))},
                                 {"replay", wire::effectiveReplay(c, d)}}}};
  if (auto w = wire::effectiveReplayWindowMs(c, d))
    o["effective"].as_object()["replayWindowMs"] = *w;
  return o;
}

int runList(const ChannelsArgs& a) {
  const std::string what = "shoal channels list";
  auto registry = openRegistry(a.target);
  if (!registry.isOk()) return printFailure(what, registry.status());
  transport::KeyValue& kv = *registry->kv;
  auto defaultsRecord = readRecord(kv, std::string(wire::kChannelDefaultsKey));
  if (!defaultsRecord.isOk()) return printFailure(what, defaultsRecord.status());
  wire::ChannelDefaults defaults;
  if (!defaultsRecord->first.empty()) {
    auto d = wire::decodeChannelDefaults(defaultsRecord->first);
    if (!d.isOk()) return printFailure(what + ": the space defaults", d.status());
    defaults = *d;
  }
  auto keys = kv.keys();
  if (!keys.isOk()) return printFailure(what, keys.status());
  json::array rows;
  std::vector<std::string> lines;
  for (const auto& key : *keys) {
    if (key == wire::kChannelDefaultsKey) continue;
    auto record = readRecord(kv, key);
    if (!record.isOk() || record->first.empty()) continue;
    auto c = wire::decodeChannelConfig(record->first);
    if (!c.isOk()) {
      lines.push_back(fmt::format("#{:<24} unreadable record: {}", key, c.status().message()));
      continue;
    }
    rows.push_back(configJson(key, *c, defaults));
    lines.push_back(fmt::format("#{:<24} {}", key, describe(*c, defaults)));
  }
  // Durable memberships, as the delivery plane recorded them (current members only).
  std::map<std::string, std::vector<wire::MembershipRecord>> members;
  if (auto bucket = wire::bucketName(wire::Bucket::kMembers, registry->space); bucket.isOk()) {
    if (auto mkv = transport::KeyValue::openBucket(*registry->js, *bucket); mkv.isOk()) {
      auto memberKeys = mkv->keys();
      if (!memberKeys.isOk()) {
        return printFailure(what, memberKeys.status().withContext("reading " + *bucket));
      }
      for (const auto& key : *memberKeys) {
        auto row = readRecord(*mkv, key);
        if (!row.isOk() || row->first.empty()) continue;
        auto r = wire::decodeMembership(row->first);
        if (r.isOk() && r->active()) members[r->channel].push_back(*r);
      }
    }
  }
  json::object memberJson;
  for (const auto& [channel, rs] : members) {
    json::array list;
    for (const auto& r : rs) {
      list.push_back(json::object{{"member", r.member.dotForm()},
                                  {"lifecycleUid", r.lifecycleUid},
                                  {"generation", r.generation},
                                  {"joinCursor", r.joinCursor}});
    }
    memberJson[channel] = std::move(list);
  }
  if (a.json) {
    json::object out{{"defaults", json::parse(wire::encodeChannelDefaults(defaults).valueOr("{}"))},
                     {"channels", std::move(rows)},
                     {"members", std::move(memberJson)}};
    printResult(out);
    return 0;
  }
  printOk("defaults: " + describe(wire::ChannelConfig{}, defaults) +
          " (a channel with no record of its own)");
  if (lines.empty()) printDetail("no channel has a record of its own (`shoal channels set`)");
  for (const auto& line : lines)
    printDetail(line);
  for (const auto& [channel, rs] : members) {
    std::vector<std::string> who;
    for (const auto& r : rs)
      who.push_back(r.member.dotForm());
    printDetail(fmt::format("#{:<24} durable members: {}", channel, fmt::join(who, ", ")));
  }
  return 0;
}

int runSet(const ChannelsArgs& a) {
  const std::string what = "shoal channels set";
  if (Status valid = wire::validateConcreteChannel(a.channel); !valid.isOk()) {
    printFailure(what, valid);
    return 2;
  }
  auto registry = openRegistry(a.target);
  if (!registry.isOk()) return printFailure(what, registry.status());
  transport::KeyValue& kv = *registry->kv;
  auto stored = readRecord(kv, a.channel);
  if (!stored.isOk()) return printFailure(what, stored.status());
  wire::ChannelConfig c;
  if (!stored->first.empty()) {
    auto decoded = wire::decodeChannelConfig(stored->first);
    if (!decoded.isOk()) return printFailure(what + ": the stored record", decoded.status());
    c = *decoded;
  }
  if (Status s = applyCommon(a, c); !s.isOk()) {
    printFailure(what, s);
    return 2;
  }
  if (a.description) c.description = a.description->empty() ? std::nullopt : a.description;
  if (a.instructions) c.instructions = a.instructions->empty() ? std::nullopt : a.instructions;
  if (Status valid = wire::validateChannelConfig(c); !valid.isOk()) {
    printFailure(what + ": nothing written", valid);
    return 2;
  }
  auto encoded = wire::encodeChannelConfig(c);
  if (!encoded.isOk()) return printFailure(what, encoded.status());
  if (Status w = writeRecord(kv, a.channel, *encoded, stored->second); !w.isOk())
    return printFailure(what, w);
  if (a.json) {
    printResult(json::parse(*encoded));
  } else {
    printOk(fmt::format("#{}: {}", a.channel, *encoded));
  }
  return 0;
}

int runDefault(const ChannelsArgs& a) {
  const std::string what = "shoal channels default";
  auto registry = openRegistry(a.target);
  if (!registry.isOk()) return printFailure(what, registry.status());
  transport::KeyValue& kv = *registry->kv;
  const std::string key(wire::kChannelDefaultsKey);
  auto stored = readRecord(kv, key);
  if (!stored.isOk()) return printFailure(what, stored.status());
  wire::ChannelDefaults d;
  if (!stored->first.empty()) {
    auto decoded = wire::decodeChannelDefaults(stored->first);
    if (!decoded.isOk()) return printFailure(what + ": the stored record", decoded.status());
    d = *decoded;
  }
  if (Status s = applyCommon(a, d); !s.isOk()) {
    printFailure(what, s);
    return 2;
  }
  if (Status valid = wire::validateChannelDefaults(d); !valid.isOk()) {
    printFailure(what + ": nothing written", valid);
    return 2;
  }
  auto encoded = wire::encodeChannelDefaults(d);
  if (!encoded.isOk()) return printFailure(what, encoded.status());
  if (Status w = writeRecord(kv, key, *encoded, stored->second); !w.isOk())
    return printFailure(what, w);
  if (a.json) {
    printResult(json::parse(*encoded));
  } else {
    printOk("space defaults: " + *encoded);
  }
  return 0;
}

void addCommonFlags(CLI::App* cmd, ChannelsArgs& a) {
  cmd->add_option("--class", a.deliveryClass,
                  "live (copies only for @mentioned members) or durable (a copy per member)");
  cmd->add_option("--replay", a.replay, "on or off: a fresh joiner gets recent history");
  cmd->add_option("--replay-window", a.replayWindow,
                  "how far back replay goes, e.g. 24h, 30m, 7d; `none` removes the bound");
}

}  // namespace

void registerChannelsCommands(CLI::App& app, CommandResult& result) {
  CLI::App* channels = app.add_subcommand(
      "channels", "the space's channel registry: delivery class, replay, descriptions");
  channels->require_subcommand(0, 1);

  auto list = std::make_shared<ChannelsArgs>();
  CLI::App* l = channels->add_subcommand("list", "the defaults and every channel's record");
  addMeshTargetOptions(l, list->target, "the broker");
  l->add_flag("--json", list->json, "machine-readable output");
  l->callback([list, &result] { result.exitCode = runList(*list); });
  // Bare `shoal channels` lists, with the same options.
  addMeshTargetOptions(channels, list->target, "the broker");
  channels->add_flag("--json", list->json, "machine-readable output");
  channels->callback([channels, list, &result] {
    if (channels->get_subcommands().empty()) result.exitCode = runList(*list);
  });

  auto set = std::make_shared<ChannelsArgs>();
  CLI::App* s = channels->add_subcommand(
      "set", "change one channel's record (only the flags given; \"\" clears a text)");
  s->add_option("channel", set->channel, "a concrete channel, e.g. team.backend")->required();
  addCommonFlags(s, *set);
  s->add_option("--description", set->description, "at most 200 characters");
  s->add_option("--instructions", set->instructions,
                "what members should do there, at most 2000 characters");
  addMeshTargetOptions(s, set->target, "the broker");
  s->add_flag("--json", set->json, "print the stored record as JSON");
  s->callback([set, &result] { result.exitCode = runSet(*set); });

  auto def = std::make_shared<ChannelsArgs>();
  CLI::App* d = channels->add_subcommand(
      "default", "change the space defaults every channel without its own value uses");
  addCommonFlags(d, *def);
  addMeshTargetOptions(d, def->target, "the broker");
  d->add_flag("--json", def->json, "print the stored record as JSON");
  d->callback([def, &result] { result.exitCode = runDefault(*def); });
}

}  // namespace shoal::cli
