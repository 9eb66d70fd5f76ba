#include "wire/channel.h"

#include <string>

#include "wire/reasons.h"
#include "wire/text_internal.h"
#include "wire/token.h"

namespace shoal::wire {

namespace {

using internal::quoted;

enum class ChannelShape { kConcrete, kPattern };

Status validateChannel(std::string_view channel, ChannelShape shape) {
  if (channel.size() > kMaxChannelLength) {
    return invalidArgument(reason::kChannelTooLong, "channel is " + std::to_string(channel.size()) +
                                                        " bytes; the limit is " +
                                                        std::to_string(kMaxChannelLength));
  }
  size_t index = 0;
  size_t begin = 0;
  while (true) {
    const size_t dot = channel.find('.', begin);
    const bool last = dot == std::string_view::npos;
    const std::string_view segment =
        channel.substr(begin, last ? std::string_view::npos : dot - begin);
    // Built only on the failure paths: validation runs on every publish and receive.
    const auto where = [&] {
      return "channel " + quoted(channel) + " segment " + std::to_string(index);
    };
    if (segment.empty()) {
      return invalidArgument(reason::kChannelEmptySegment,
                             where() + " is empty (no leading, trailing or doubled dots)");
    }
    if (segment == "*" || segment == ">") {
      if (shape == ChannelShape::kConcrete) {
        return invalidArgument(reason::kChannelWildcardInPublish,
                               where() + " is the wildcard '" + std::string(segment) +
                                   "'; a publish target must be a concrete channel");
      }
      if (segment == ">" && !last) {
        return invalidArgument(reason::kChannelWildcardNotLast,
                               where() + " is '>', which may only be the last segment");
      }
    } else if (!isRoutingToken(segment)) {
      return invalidArgument(reason::kChannelBadChar,
                             where() + " " + quoted(segment) +
                                 " has a character outside [A-Za-z0-9_-] ('*' and '>' only as "
                                 "whole segments)");
    }
    if (last) return Status::ok();
    begin = dot + 1;
    ++index;
  }
}

// Calls fn(segment, isLast) for every `.`-separated segment of s (at least one).
template <typename Fn>
void forEachSegment(std::string_view s, Fn&& fn) {
  size_t begin = 0;
  while (true) {
    const size_t dot = s.find('.', begin);
    if (dot == std::string_view::npos) {
      fn(s.substr(begin), true);
      return;
    }
    fn(s.substr(begin, dot - begin), false);
    begin = dot + 1;
  }
}

}  // namespace

Status validateConcreteChannel(std::string_view channel) {
  return validateChannel(channel, ChannelShape::kConcrete);
}

bool isConcreteChannel(std::string_view channel) {
  return validateConcreteChannel(channel).isOk();
}

Status validateChannelPattern(std::string_view pattern) {
  return validateChannel(pattern, ChannelShape::kPattern);
}

std::string sanitizeChannel(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  bool first = true;
  forEachSegment(internal::trimJs(raw), [&](std::string_view segment, bool last) {
    if (!first) out.push_back('.');
    first = false;
    const std::string_view trimmed = internal::trimJs(segment);
    if (trimmed == "*" || (trimmed == ">" && last)) {
      out += trimmed;
    } else {
      out += sanitizeToken(segment);
    }
  });
  return out;
}

bool channelMatches(std::string_view pattern, std::string_view channel) {
  size_t p = 0;
  size_t c = 0;
  while (true) {
    const size_t pDot = pattern.find('.', p);
    const std::string_view pSeg =
        pattern.substr(p, pDot == std::string_view::npos ? std::string_view::npos : pDot - p);
    if (pSeg == ">") return pDot == std::string_view::npos;  // one or more remain: matched
    const size_t cDot = channel.find('.', c);
    const std::string_view cSeg =
        channel.substr(c, cDot == std::string_view::npos ? std::string_view::npos : cDot - c);
    if (pSeg != "*" && pSeg != cSeg) return false;
    const bool pEnd = pDot == std::string_view::npos;
    const bool cEnd = cDot == std::string_view::npos;
    if (pEnd || cEnd) return pEnd && cEnd;
    p = pDot + 1;
    c = cDot + 1;
  }
}

}  // namespace shoal::wire
