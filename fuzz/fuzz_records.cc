// fuzz_records: arbitrary bytes through the presence, agent-card, channel-registry and
// liveness decoders. Whatever decodes must re-encode and decode back to an equal value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "wire/agent_card.h"
#include "wire/channel_config.h"
#include "wire/liveness.h"
#include "wire/presence.h"

namespace shoal::wire {
namespace {

// decode → encode → decode must give back an equal value.
template <typename T, typename Decode, typename Encode>
void roundTrip(const Result<T>& first, Decode decode, Encode encode) {
  if (!first.isOk()) return;
  const Result<std::string> encoded = encode(*first);
  FUZZ_REQUIRE(encoded.isOk());
  const Result<T> again = decode(*encoded);
  FUZZ_REQUIRE(again.isOk());
  FUZZ_REQUIRE(*again == *first);
}

}  // namespace
}  // namespace shoal::wire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  using namespace shoal::wire;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kKey = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice";
  const auto presence = [&](std::string_view s) { return decodePresence(kKey, s); };
  roundTrip(presence(in), presence, encodePresence);
  roundTrip(decodeAgentCard(in), decodeAgentCard, encodeAgentCard);
  roundTrip(decodeChannelConfig(in), decodeChannelConfig, encodeChannelConfig);
  roundTrip(decodeChannelDefaults(in), decodeChannelDefaults, encodeChannelDefaults);
  for (Plane plane : {Plane::kManager, Plane::kDelivery}) {
    const auto liveness = [&](std::string_view s) { return decodeLivenessAnswer(s, plane); };
    roundTrip(liveness(in), liveness, encodeLivenessAnswer);
  }
  return 0;
}
