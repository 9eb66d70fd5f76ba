#include "daemon/seat_profile.h"

#include <boost/json.hpp>

#include "mesh/credential_rail.h"
#include "wire/channel.h"
#include "wire/token.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;

constexpr size_t kMaxNameBytes = 128;
constexpr size_t kMaxArgBytes = 4096;

bool isEnvName(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool hasControl(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

Status badProfile(std::string_view message) {
  return invalidArgument("bad-seat-profile", message);
}

Result<std::string> stringField(const json::value& v, std::string_view key) {
  if (!v.is_string()) return badProfile(std::string(key) + " must be a string");
  return std::string(v.as_string());
}

Result<std::vector<std::string>> stringArray(const json::value& v, std::string_view key) {
  if (!v.is_array()) return badProfile(std::string(key) + " must be an array of strings");
  std::vector<std::string> out;
  for (const auto& item : v.as_array()) {
    if (!item.is_string()) return badProfile(std::string(key) + " must be an array of strings");
    out.emplace_back(item.as_string());
  }
  return out;
}

json::array toArray(const std::vector<std::string>& items) {
  json::array a;
  for (const auto& s : items)
    a.push_back(json::value(s));
  return a;
}

}  // namespace

std::string_view desiredStateName(DesiredState state) {
  switch (state) {
    case DesiredState::kRunning:
      return "running";
    case DesiredState::kSleeping:
      return "sleeping";
    case DesiredState::kStopped:
      return "stopped";
  }
  return "running";
}

std::optional<DesiredState> parseDesiredState(std::string_view name) {
  for (DesiredState s : {DesiredState::kRunning, DesiredState::kSleeping, DesiredState::kStopped}) {
    if (desiredStateName(s) == name) return s;
  }
  return std::nullopt;
}

Status validateSeatProfile(const SeatProfile& p) {
  if (p.name.empty() || p.name.size() > kMaxNameBytes || !wire::isValidUtf8(p.name) ||
      hasControl(p.name)) {
    return invalidArgument("bad-seat-name",
                           "a seat name is 1 to 128 bytes of UTF-8 text without control "
                           "characters");
  }
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(p.principal));
  if (p.runtime == RuntimeKind::kExec && p.command.empty()) {
    return invalidArgument("missing-command", "an exec seat needs the command to run");
  }
  if (p.command.size() > kMaxCommandArgs) {
    return invalidArgument("too-many-args", "a command has at most 64 arguments");
  }
  for (const auto& arg : p.command) {
    if (arg.size() > kMaxArgBytes || arg.find('\0') != std::string::npos) {
      return invalidArgument("bad-command", "a command argument is at most 4096 bytes, no NUL");
    }
  }
  if (!p.command.empty() && p.command.front().empty()) {
    return invalidArgument("bad-command", "the program to run is empty");
  }
  if (p.cwd.empty() || p.cwd.front() != '/' || p.cwd.find('\0') != std::string::npos ||
      p.cwd.size() > kMaxArgBytes) {
    return invalidArgument("bad-cwd", "the working directory must be an absolute path");
  }
  if (p.role) {
    Status role = wire::validateRole(*p.role);
    if (!role.isOk()) return invalidArgument("bad-role", role.message());
  }
  if (p.channels.size() > kMaxSeatChannels) {
    return invalidArgument("too-many-channels", "a seat joins at most 64 channels at start");
  }
  for (const auto& channel : p.channels) {
    Status c = wire::validateConcreteChannel(channel);
    if (!c.isOk()) return invalidArgument("bad-channel", c.message());
  }
  if (p.env.size() > kMaxEnvNames) {
    return invalidArgument("too-many-env-names", "at most 64 environment variables pass through");
  }
  for (const auto& name : p.env) {
    if (!isEnvName(name)) {
      return invalidArgument("bad-env-name",
                             "`" + name + "` is not an environment variable name [A-Z_][A-Z0-9_]*");
    }
  }
  if (p.acks && p.runtime != RuntimeKind::kExec) {
    return invalidArgument("ack-needs-exec",
                           "only an exec seat acknowledges on $SHOAL_ACK_FD: the other runtimes "
                           "acknowledge in their own protocol");
  }
  if (!p.machine.empty()) SHOAL_RETURN_IF_ERROR(mesh::validateMachineName(p.machine));
  return wire::validateLifecycleUid(p.lifecycleUid);
}

Result<std::string> encodeSeatProfile(const SeatProfile& p) {
  SHOAL_RETURN_IF_ERROR(validateSeatProfile(p));
  json::object o;
  o["name"] = p.name;
  o["id"] = p.principal.dotForm();
  o["runtime"] = std::string(runtimeKindName(p.runtime));
  o["command"] = toArray(p.command);
  o["cwd"] = p.cwd;
  if (p.role) o["role"] = *p.role;
  o["channels"] = toArray(p.channels);
  o["env"] = toArray(p.env);
  o["lifecycleUid"] = p.lifecycleUid;
  o["state"] = std::string(desiredStateName(p.state));
  if (p.acks) o["ack"] = true;
  if (!p.machine.empty()) o["machine"] = p.machine;
  return json::serialize(o);
}

Result<SeatProfile> decodeSeatProfile(std::string_view text) {
  if (text.size() > kMaxProfileBytes) return badProfile("a seat profile is at most 64 KiB");
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return invalidArgument("malformed-json", "seat profile: " + ec.message());
  if (!v.is_object()) return badProfile("a seat profile is a JSON object");
  SeatProfile p;
  bool haveName = false, haveId = false, haveRuntime = false, haveCwd = false, haveUid = false;
  for (const auto& [key, value] : v.as_object()) {
    if (key == "name") {
      SHOAL_ASSIGN_OR_RETURN(p.name, stringField(value, key));
      haveName = true;
    } else if (key == "id") {
      SHOAL_ASSIGN_OR_RETURN(std::string id, stringField(value, key));
      SHOAL_ASSIGN_OR_RETURN(p.principal, wire::parsePrincipal(id));
      haveId = true;
    } else if (key == "runtime") {
      SHOAL_ASSIGN_OR_RETURN(std::string runtime, stringField(value, key));
      auto kind = parseRuntimeKind(runtime);
      if (!kind) return badProfile("runtime is exec, claude, codex or opencode");
      p.runtime = *kind;
      haveRuntime = true;
    } else if (key == "command") {
      SHOAL_ASSIGN_OR_RETURN(p.command, stringArray(value, key));
    } else if (key == "cwd") {
      SHOAL_ASSIGN_OR_RETURN(p.cwd, stringField(value, key));
      haveCwd = true;
    } else if (key == "role") {
      SHOAL_ASSIGN_OR_RETURN(p.role, stringField(value, key));
    } else if (key == "channels") {
      SHOAL_ASSIGN_OR_RETURN(p.channels, stringArray(value, key));
    } else if (key == "env") {
      SHOAL_ASSIGN_OR_RETURN(p.env, stringArray(value, key));
    } else if (key == "lifecycleUid") {
      SHOAL_ASSIGN_OR_RETURN(p.lifecycleUid, stringField(value, key));
      haveUid = true;
    } else if (key == "state") {
      SHOAL_ASSIGN_OR_RETURN(std::string state, stringField(value, key));
      auto parsed = parseDesiredState(state);
      if (!parsed) return badProfile("state is running, sleeping or stopped");
      p.state = *parsed;
    } else if (key == "machine") {
      SHOAL_ASSIGN_OR_RETURN(p.machine, stringField(value, key));
    } else if (key == "ack") {
      if (!value.is_bool()) return badProfile("ack is true or false");
      p.acks = value.as_bool();
    } else {
      return badProfile("unknown key `" + std::string(key) + "`");
    }
  }
  if (!haveName || !haveId || !haveRuntime || !haveCwd || !haveUid) {
    return badProfile("a seat profile needs name, id, runtime, cwd and lifecycleUid");
  }
  SHOAL_RETURN_IF_ERROR(validateSeatProfile(p));
  return p;
}

}  // namespace shoal::daemon
