// fuzz_subject: arbitrary bytes through the subject parser, the surfacing check, the channel
// validators and the token sanitizers.
//
// Properties (besides "no crash, no sanitizer report"):
// - a subject that parses and is surfaceable is rebuilt byte-for-byte by its kind's builder;
// - sanitizeToken / actorFromName / sanitizeChannel always yield valid output and are
//   idempotent;
// - a valid concrete channel is a valid pattern and matches itself; parsePrincipal round-trips.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "wire/channel.h"
#include "wire/principal.h"
#include "wire/subject.h"
#include "wire/token.h"

namespace shoal::wire {
namespace {

Result<std::string> rebuild(const ParsedSubject& p) {
  switch (p.kind) {
    case SubjectKind::kChat:
      return chatSubject(p.space, p.principal, p.rest);
    case SubjectKind::kInst:
      return instSubject(p.space, *p.recipient, p.principal);
    case SubjectKind::kSvc:
      return svcSubject(p.space, p.rest, p.principal);
    case SubjectKind::kLive:
      return liveSubject(p.space, *parsePlane(p.rest), p.principal);
    case SubjectKind::kDinbox:
      return dinboxSubject(p.space, p.principal, p.rest);
    case SubjectKind::kDlv:
      return dlvSubject(p.space, p.principal, p.rest);
    case SubjectKind::kWake:
      return wakeSubject(p.space, p.principal);
    case SubjectKind::kRcpt:
      return rcptSubject(p.space, p.principal, *p.recipient);
  }
  return std::string();
}

void checkSubject(std::string_view in) {
  const Result<ParsedSubject> parsed = parseSubject(in);
  if (!parsed.isOk()) {
    FUZZ_REQUIRE(parsed.status().reason() == "malformed-subject");
    return;
  }
  FUZZ_REQUIRE(parsed->recipient.has_value() ==
               (parsed->kind == SubjectKind::kInst || parsed->kind == SubjectKind::kRcpt));
  if (!checkSurfaceable(*parsed).isOk()) return;
  const Result<std::string> again = rebuild(*parsed);
  FUZZ_REQUIRE(again.isOk());
  FUZZ_REQUIRE(*again == in);
}

void checkChannel(std::string_view in) {
  const bool concrete = validateConcreteChannel(in).isOk();
  const bool pattern = validateChannelPattern(in).isOk();
  if (concrete) {
    FUZZ_REQUIRE(pattern);
    FUZZ_REQUIRE(channelMatches(in, in));
    FUZZ_REQUIRE(sanitizeChannel(in) == in);
  }
  const std::string sanitized = sanitizeChannel(in);
  if (sanitized.size() <= kMaxChannelLength) FUZZ_REQUIRE(validateChannelPattern(sanitized).isOk());
  FUZZ_REQUIRE(sanitizeChannel(sanitized) == sanitized);
  // Matching never crashes on junk, whichever side it is on.
  (void)channelMatches(in, "team.backend");
  (void)channelMatches("team.>", in);
}

void checkTokens(std::string_view in) {
  const std::string token = sanitizeToken(in);
  FUZZ_REQUIRE(isRoutingToken(token));
  FUZZ_REQUIRE(sanitizeToken(token) == token);
  const std::string actor = actorFromName(in);
  FUZZ_REQUIRE(isActorToken(actor));
  FUZZ_REQUIRE(actorFromName(actor) == actor);
  const Result<Principal> p = parsePrincipal(in);
  if (p.isOk()) FUZZ_REQUIRE(p->dotForm() == in);
  (void)utf16Length(in);
  (void)isValidUtf8(in);
}

}  // namespace
}  // namespace shoal::wire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  shoal::wire::checkSubject(in);
  shoal::wire::checkChannel(in);
  shoal::wire::checkTokens(in);
  return 0;
}
