// libFuzzer target for the `.daemon-state.json` loader (journal/format.h, JournalState::decode).
//
// Input modes, chosen by the first byte:
//   '!'  the rest is a file body WITHOUT its checksum trailer; the harness appends a valid one,
//        so the fuzzer explores the JSON, version and ownership layers behind the checksum;
//   else the input is the whole file, as read from disk.
// Properties (beyond "no crash, no sanitizer report"): a refusal is kDataLoss or
// kFailedPrecondition only; a file that loads re-encodes to bytes that load again to the same
// bytes (a fixpoint) with every invariant intact, and survives an attach.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "journal/format.h"
#include "journal/journal_state.h"

#define JOURNAL_FUZZ_REQUIRE(cond)                                                           \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "fuzz property failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      __builtin_trap();                                                                      \
    }                                                                                        \
  } while (false)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal::journal;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!bytes.empty() && bytes[0] == '!') {
    bytes.erase(0, 1);
    // Framed as the version the text says it is (1 checksums the bytes, 2 their pieces' CRCs).
    const uint32_t version = bytes.rfind("{\"schemaVersion\":2,", 0) == 0 ? 2 : 1;
    auto sum = checksumFor(bytes, version);
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", sum.isOk() ? *sum : 0u);
    bytes += ",\n\"crc32c\":\"";
    bytes += hex;
    bytes += "\"}\n";
  }
  auto state = JournalState::decode(bytes);
  if (!state.isOk()) {
    shoal::StatusCode code = state.status().code();
    JOURNAL_FUZZ_REQUIRE(code == shoal::StatusCode::kDataLoss ||
                         code == shoal::StatusCode::kFailedPrecondition);
    return 0;
  }
  JOURNAL_FUZZ_REQUIRE(state->checkInvariants().isOk());
  std::string again = state->encode();
  auto second = JournalState::decode(again);
  JOURNAL_FUZZ_REQUIRE(second.isOk());
  JOURNAL_FUZZ_REQUIRE(second->encode() == again);
  state->attach(0);
  JOURNAL_FUZZ_REQUIRE(state->checkInvariants().isOk());
  JOURNAL_FUZZ_REQUIRE(JournalState::decode(state->encode()).isOk());
  return 0;
}
