// fuzz_message: arbitrary bytes through decodeMessage.
//
// Properties (besides "no crash, no sanitizer report"): whatever decodes re-encodes, decodes
// back to an equal message, and re-encodes to the same bytes (encoding is a fixed point);
// readDelivery on the §12 subjects agrees with decodeMessage on what is malformed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "wire/inbound.h"
#include "wire/message.h"
#include "wire/spec_vectors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  using namespace shoal::wire;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const shoal::Result<CotalMessage> m = decodeMessage(in);
  const shoal::Result<InboundDelivery> d = readDelivery(spec::kChatSubject, in);
  if (!m.isOk()) {
    FUZZ_REQUIRE(!d.isOk());
    FUZZ_REQUIRE(d.status().reason() == m.status().reason());
    return 0;
  }
  FUZZ_REQUIRE(validateMessage(*m).isOk());
  const shoal::Result<std::string> encoded = encodeMessage(*m);
  FUZZ_REQUIRE(encoded.isOk());
  const shoal::Result<CotalMessage> again = decodeMessage(*encoded);
  FUZZ_REQUIRE(again.isOk());
  FUZZ_REQUIRE(*again == *m);
  const shoal::Result<std::string> reencoded = encodeMessage(*again);
  FUZZ_REQUIRE(reencoded.isOk());
  FUZZ_REQUIRE(*reencoded == *encoded);
  // Admission on the §12 chat subject: accepted iff from.id is the subject's sender.
  FUZZ_REQUIRE(d.isOk() == (m->from.id == spec::kAlice));
  return 0;
}
