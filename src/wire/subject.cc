#include "wire/subject.h"

#include <string>
#include <vector>

#include "wire/channel.h"
#include "wire/reasons.h"
#include "wire/text_internal.h"
#include "wire/token.h"

namespace shoal::wire {

namespace {

using internal::quoted;

Status malformed(std::string_view subject, std::string_view why) {
  return invalidArgument(reason::kMalformedSubject,
                         "subject " + quoted(subject) + " " + std::string(why) +
                             "; it names no sender and must not be read as a delivery");
}

Status inContext(const Status& s, std::string_view role) {
  return s.isOk() ? s : s.withContext(role);
}

// Joins `cotal`, space and the given tokens with dots, refusing an over-long result.
Result<std::string> assemble(std::string_view space,
                             std::initializer_list<std::string_view> parts) {
  std::string out;
  out.reserve(64);
  out += kSubjectRoot;
  out += '.';
  out += space;
  for (std::string_view part : parts) {
    out += '.';
    out += part;
  }
  if (out.size() > kMaxSubjectBytes) {
    return invalidArgument(reason::kSubjectTooLong,
                           "subject would be " + std::to_string(out.size()) +
                               " bytes; the limit is " + std::to_string(kMaxSubjectBytes));
  }
  return out;
}

}  // namespace

std::string_view subjectKindName(SubjectKind kind) {
  switch (kind) {
    case SubjectKind::kChat:
      return "chat";
    case SubjectKind::kInst:
      return "inst";
    case SubjectKind::kSvc:
      return "svc";
    case SubjectKind::kLive:
      return "live";
    case SubjectKind::kDinbox:
      return "dinbox";
    case SubjectKind::kDlv:
      return "dlv";
    case SubjectKind::kWake:
      return "wake";
    case SubjectKind::kRcpt:
      return "rcpt";
  }
  return "unknown";
}

Result<ParsedSubject> parseSubject(std::string_view subject) {
  if (subject.size() > kMaxSubjectBytes) {
    return malformed(subject, "is " + std::to_string(subject.size()) + " bytes (limit " +
                                  std::to_string(kMaxSubjectBytes) + ")");
  }
  for (char c : subject) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b == 0x7F) return malformed(subject, "contains white space or a control byte");
  }
  std::vector<std::string_view> tokens;
  tokens.reserve(8);
  size_t begin = 0;
  while (true) {
    const size_t dot = subject.find('.', begin);
    const std::string_view token =
        subject.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin);
    if (token.empty()) return malformed(subject, "has an empty token");
    if (token == "*" || token == ">") return malformed(subject, "has a wildcard token");
    tokens.push_back(token);
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
  if (tokens[0] != kSubjectRoot) return malformed(subject, "does not start with 'cotal.'");
  if (tokens.size() < 3) return malformed(subject, "has no kind token");

  const std::string_view kind = tokens[2];
  const auto arity = [&](size_t want) -> Status {
    if (tokens.size() == want) return Status::ok();
    return malformed(subject, "has " + std::to_string(tokens.size()) + " tokens; a '" +
                                  std::string(kind) + "' subject has exactly " +
                                  std::to_string(want));
  };
  ParsedSubject out;
  out.space = std::string(tokens[1]);
  if (kind == "chat") {
    if (tokens.size() < 6) {
      return malformed(subject, "has no channel token (a 'chat' subject has at least 6 tokens)");
    }
    out.kind = SubjectKind::kChat;
    out.principal = {std::string(tokens[3]), std::string(tokens[4])};
    // The channel is the rest of the subject, dots included.
    const size_t channelStart = static_cast<size_t>(tokens[5].data() - subject.data());
    out.rest = std::string(subject.substr(channelStart));
  } else if (kind == "inst" || kind == "rcpt") {
    SHOAL_RETURN_IF_ERROR(arity(7));
    const bool inst = kind == "inst";
    out.kind = inst ? SubjectKind::kInst : SubjectKind::kRcpt;
    // inst: recipient then sender; rcpt: sender then recipient.
    const size_t senderAt = inst ? 5 : 3;
    const size_t recipientAt = inst ? 3 : 5;
    out.principal = {std::string(tokens[senderAt]), std::string(tokens[senderAt + 1])};
    out.recipient =
        Principal{std::string(tokens[recipientAt]), std::string(tokens[recipientAt + 1])};
    out.rest = out.recipient->dotForm();
  } else if (kind == "svc" || kind == "live") {
    SHOAL_RETURN_IF_ERROR(arity(6));
    out.kind = kind == "svc" ? SubjectKind::kSvc : SubjectKind::kLive;
    out.principal = {std::string(tokens[4]), std::string(tokens[5])};
    out.rest = std::string(tokens[3]);
  } else if (kind == "dinbox" || kind == "dlv") {
    SHOAL_RETURN_IF_ERROR(arity(6));
    out.kind = kind == "dinbox" ? SubjectKind::kDinbox : SubjectKind::kDlv;
    out.principal = {std::string(tokens[3]), std::string(tokens[4])};
    out.rest = std::string(tokens[5]);
  } else if (kind == "wake") {
    SHOAL_RETURN_IF_ERROR(arity(5));
    out.kind = SubjectKind::kWake;
    out.principal = {std::string(tokens[3]), std::string(tokens[4])};
  } else if (kind == "ctl" || kind == "control") {
    return malformed(subject, "is a retired control subject (Cotal §13.11); nothing serves it");
  } else {
    return malformed(subject, "has unknown kind " + quoted(kind));
  }
  return out;
}

Status checkSurfaceable(const ParsedSubject& parsed) {
  SHOAL_RETURN_IF_ERROR(validateSpace(parsed.space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(parsed.principal), "subject principal"));
  if (parsed.recipient) {
    SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(*parsed.recipient), "subject recipient"));
  }
  switch (parsed.kind) {
    case SubjectKind::kChat:
      return inContext(validateConcreteChannel(parsed.rest), "subject channel");
    case SubjectKind::kSvc:
      return validateRole(parsed.rest);
    case SubjectKind::kLive:
      if (parsePlane(parsed.rest)) return Status::ok();
      return invalidArgument(reason::kBadPlane, "plane " + quoted(parsed.rest) +
                                                    " is neither 'manager' nor 'delivery'");
    case SubjectKind::kDinbox:
    case SubjectKind::kDlv:
      return validateLifecycleUid(parsed.rest);
    case SubjectKind::kInst:
    case SubjectKind::kWake:
    case SubjectKind::kRcpt:
      return Status::ok();
  }
  return Status::ok();
}

Result<std::string> chatSubject(std::string_view space, const Principal& sender,
                                std::string_view channel) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(sender), "sender"));
  SHOAL_RETURN_IF_ERROR(validateConcreteChannel(channel));
  return assemble(space, {"chat", sender.owner, sender.actor, channel});
}

Result<std::string> instSubject(std::string_view space, const Principal& recipient,
                                const Principal& sender) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(recipient), "recipient"));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(sender), "sender"));
  return assemble(space, {"inst", recipient.owner, recipient.actor, sender.owner, sender.actor});
}

Result<std::string> svcSubject(std::string_view space, std::string_view role,
                               const Principal& sender) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(validateRole(role));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(sender), "sender"));
  return assemble(space, {"svc", role, sender.owner, sender.actor});
}

Result<std::string> dinboxSubject(std::string_view space, const Principal& member,
                                  std::string_view lifecycleUid) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(member), "member"));
  SHOAL_RETURN_IF_ERROR(validateLifecycleUid(lifecycleUid));
  return assemble(space, {"dinbox", member.owner, member.actor, lifecycleUid});
}

Result<std::string> dlvSubject(std::string_view space, const Principal& member,
                               std::string_view lifecycleUid) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(member), "member"));
  SHOAL_RETURN_IF_ERROR(validateLifecycleUid(lifecycleUid));
  return assemble(space, {"dlv", member.owner, member.actor, lifecycleUid});
}

Result<std::string> wakeSubject(std::string_view space, const Principal& seat) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(seat), "seat"));
  return assemble(space, {"wake", seat.owner, seat.actor});
}

Result<std::string> rcptSubject(std::string_view space, const Principal& sender,
                                const Principal& recipient) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(sender), "sender"));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(recipient), "recipient"));
  return assemble(space, {"rcpt", sender.owner, sender.actor, recipient.owner, recipient.actor});
}

Result<std::string> liveSubject(std::string_view space, Plane plane, const Principal& caller) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(caller), "caller"));
  return assemble(space, {"live", planeName(plane), caller.owner, caller.actor});
}

Result<std::string> livenessReplySubject(std::string_view request, std::string_view nonce) {
  if (!isRoutingToken(nonce)) {
    return invalidArgument(reason::kBadToken,
                           "reply nonce " + quoted(nonce) + " must be a token [A-Za-z0-9_-]+");
  }
  SHOAL_ASSIGN_OR_RETURN(ParsedSubject parsed, parseSubject(request));
  if (parsed.kind != SubjectKind::kLive) {
    return invalidArgument(reason::kBadReplySubject,
                           "subject " + quoted(request) + " is not a liveness probe subject");
  }
  std::string out = std::string(request) + ".reply." + std::string(nonce);
  if (out.size() > kMaxSubjectBytes) {
    return invalidArgument(reason::kSubjectTooLong,
                           "reply subject would be " + std::to_string(out.size()) + " bytes");
  }
  return out;
}

Status checkLivenessReplyTarget(std::string_view request, std::string_view reply) {
  constexpr std::string_view kInfix = ".reply.";
  const bool under = reply.size() > request.size() + kInfix.size() &&
                     reply.substr(0, request.size()) == request &&
                     reply.substr(request.size(), kInfix.size()) == kInfix;
  if (!under || !isRoutingToken(reply.substr(request.size() + kInfix.size()))) {
    return invalidArgument(reason::kBadReplySubject,
                           "reply target " + quoted(reply) + " is not '<request>.reply.<nonce>'");
  }
  return Status::ok();
}

Status checkRailReplyTarget(std::string_view reply) {
  constexpr std::string_view kInbox = "_INBOX";
  const size_t dot = reply.find('.');
  const bool under = reply.substr(0, kInbox.size()) == kInbox && dot != std::string_view::npos &&
                     dot + 1 < reply.size();
  if (!under) {
    return invalidArgument(reason::kBadReplySubject,
                           "reply target " + quoted(reply) + " is not under an _INBOX prefix");
  }
  return Status::ok();
}

Result<std::string> livenessServeFilter(std::string_view space, Plane plane) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  return assemble(space, {"live", planeName(plane), "*", "*"});
}

std::string livenessQueueGroup(Plane plane) {
  return "live." + std::string(planeName(plane));
}

Result<std::string> livenessReplyGrant(std::string_view space, Plane plane) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  return assemble(space, {"live", planeName(plane), "*", "*", "reply", ">"});
}

Result<std::string> chatFilter(std::string_view space, std::string_view channelPattern) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(validateChannelPattern(channelPattern));
  return assemble(space, {"chat", "*", "*", channelPattern});
}

Result<std::string> dmFilter(std::string_view space, const Principal& recipient) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(recipient), "recipient"));
  return assemble(space, {"inst", recipient.owner, recipient.actor, ">"});
}

Result<std::string> svcFilter(std::string_view space, std::string_view role) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(validateRole(role));
  return assemble(space, {"svc", role, ">"});
}

Result<std::string> rcptFilter(std::string_view space, const Principal& sender) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  SHOAL_RETURN_IF_ERROR(inContext(validatePrincipal(sender), "sender"));
  return assemble(space, {"rcpt", sender.owner, sender.actor, ">"});
}

Result<std::string> wakeFilter(std::string_view space, const std::optional<Principal>& seat) {
  if (seat) return wakeSubject(space, *seat);
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  return assemble(space, {"wake", ">"});
}

std::string_view planeName(Plane plane) {
  switch (plane) {
    case Plane::kManager:
      return "manager";
    case Plane::kDelivery:
      return "delivery";
  }
  return "unknown";
}

std::optional<Plane> parsePlane(std::string_view name) {
  if (name == "manager") return Plane::kManager;
  if (name == "delivery") return Plane::kDelivery;
  return std::nullopt;
}

}  // namespace shoal::wire
