// The `.daemon-state.json` format: golden bytes, version rules, fail-closed decoding.
#include "journal/format.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "journal/journal_state.h"
#include "journal/reasons.h"
#include "journal/test_util.h"

#include <gtest/gtest.h>

namespace shoal::journal {
namespace {

using testutil::admitOp;
using testutil::txnOf;

constexpr int64_t kNow = 1'700'000'000'000;
constexpr size_t kTrailer = 23;  // ,\n"crc32c":"xxxxxxxx"}\n

// One state that uses every field and every state of the format.
JournalState goldenState() {
  JournalState s;
  s.attach(kNow);
  auto apply = [&s](Operation op, int64_t at) {
    auto r = s.apply(txnOf(std::move(op)), at);
    EXPECT_TRUE(r.isOk()) << r.status().toString();
  };
  Admit q = admitOp("0190a3c2-7b1e-7000-8000-000000000001", "{\"text\":\"hi \\\"there\\\"\\n\"}");
  q.target = "dm:local.alice";
  q.wake = "{\"class\":\"directed\"}";
  apply(q, kNow + 1);
  apply(admitOp("0190a3c2-7b1e-7000-8000-000000000002", "stdin frame\n"), kNow + 2);
  const std::string inflight = "0190a3c2-7b1e-7000-8000-000000000002";
  apply(BeginInflight{inflight, s.find(inflight)->token, InflightPhase::kDispatching,
                      RuntimeIdentity{"thread-9", "session-9", ""}, ""},
        kNow + 3);
  apply(MarkOutcomeUnknown{inflight, s.find(inflight)->token, std::nullopt, "transport closed"},
        kNow + 4);
  apply(admitOp("binary-body", std::string("\x00\xff\x10 raw", 7)), kNow + 5);
  apply(admitOp("will-surface", "x"), kNow + 6);
  apply(MarkSurfaced{"will-surface", std::nullopt, "correlated_ack"}, kNow + 7);
  Admit f = admitOp("will-fail", "y");
  f.target = "channel:general";
  apply(f, kNow + 8);
  apply(MarkFailed{"will-fail", s.find("will-fail")->token, "reconcile_budget_exhausted"},
        kNow + 9);
  apply(SetSection{"identity", "{ \"owner\": \"local\", \"actor\": \"alice\" }", std::nullopt},
        kNow + 10);
  apply(SetSection{"runtimePolicy", "{\"fingerprint\":\"abc\",\"n\":[1,2.5,null,true]}", 0},
        kNow + 11);
  apply(SetResumeSafety{{false, 3, 7}}, kNow + 12);
  return s;
}

std::string goldenPath(uint32_t version) {
  return std::string(SHOAL_JOURNAL_TESTDATA) + "/golden_v" + std::to_string(version) + ".json";
}

// golden_v2.json: what this build writes; golden_v1.json: the same state as version 1 wrote it.
std::string readGolden(uint32_t version = kSchemaVersion) {
  std::ifstream in(goldenPath(version), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces the checksum trailer so a deliberately edited file passes the checksum of the
// version it says it is.
std::string reframe(std::string bytes, uint32_t version = kSchemaVersion) {
  bytes.resize(bytes.size() - kTrailer);
  auto sum = checksumFor(bytes, version);
  EXPECT_TRUE(sum.isOk()) << sum.status().toString();
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", sum.isOk() ? *sum : 0u);
  return bytes + ",\n\"crc32c\":\"" + hex + "\"}\n";
}

std::string replaceOnce(std::string s, const std::string& from, const std::string& to) {
  size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

// The encoder produces exactly the committed golden bytes of schemaVersion 1. If this fails,
// the format changed: bump kSchemaVersion, keep a reader for version 2, and write the new
// version's golden file with SHOAL_UPDATE_GOLDEN=1 (docs/journal-format.md, "Changing the
// format"). golden_v1.json is never regenerated: it is what version 1 wrote.
TEST(FormatTest, GoldenBytesV2) {
  std::string bytes = goldenState().encode();
  if (std::getenv("SHOAL_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(goldenPath(kSchemaVersion), std::ios::binary) << bytes;
  }
  EXPECT_EQ(kSchemaVersion, 2u) << "a new version needs its own golden file";
  EXPECT_EQ(bytes, readGolden());
}

// A version-1 file is read by version 1's rule (the checksum over every byte) into the very
// state it holds, and written back as version 2: nothing lost, nothing reinterpreted.
TEST(FormatTest, AVersion1FileIsReadByItsRuleAndWrittenAsVersion2) {
  std::string v1 = readGolden(1);
  ASSERT_EQ(v1.rfind("{\"schemaVersion\":1,", 0), 0u);
  auto decoded = decodeFile(v1);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(decoded->sourceVersion, 1u);
  auto s = JournalState::decode(v1);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->encode(), goldenState().encode());
  EXPECT_EQ(s->encode(), readGolden(2));
  // Version 1's checksum still guards a version-1 file: a version-2 checksum does not pass.
  EXPECT_FALSE(decodeFile(reframe(v1, 2)).isOk());
  EXPECT_TRUE(decodeFile(reframe(v1, 1)).isOk());
}

// Version 2's checksum covers each piece through its CRC: an edit inside a record, inside the
// sections object or in the framing between them is caught; moving a record from one list to
// the other is caught too.
TEST(FormatTest, TheVersion2ChecksumCoversEveryPiece) {
  std::string golden = readGolden(2);
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"reason\":\"correlated_ack\"", "\"reason\":\"correlated_acK\""},
           {"\"owner\":\"local\"", "\"owner\":\"locaL\""},
           {"\"nextSeq\":", "\"nextSeq\": "},
           {"],\n\"tombstones\":[\n", ",\n\"tombstones\":[\n"},
       }) {
    std::string bad = replaceOnce(golden, from, to);
    auto r = decodeFile(bad);
    ASSERT_FALSE(r.isOk()) << to;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << to << r.status().toString();
  }
}

// The golden file decodes, and re-encodes to the very same bytes.
TEST(FormatTest, GoldenFileRoundTrips) {
  std::string golden = readGolden();
  auto s = JournalState::decode(golden);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->encode(), golden);
  EXPECT_TRUE(s->checkInvariants().isOk());
  EXPECT_EQ(s->find("binary-body")->body, std::string("\x00\xff\x10 raw", 7));
  EXPECT_EQ(s->find("0190a3c2-7b1e-7000-8000-000000000002")->state, OwnerState::kOutcomeUnknown);
}

// Any body bytes round-trip exactly (non-UTF-8 bodies are stored as base64).
TEST(FormatTest, ArbitraryBodyBytesRoundTripExactly) {
  JournalState s;
  std::string all;
  for (int i = 0; i < 256; ++i)
    all += static_cast<char>(i);
  ASSERT_TRUE(s.apply(txnOf(admitOp("all-bytes", all)), kNow).isOk());
  ASSERT_TRUE(
      s.apply(txnOf(admitOp("utf8", "h\xc3\xa9llo \xf0\x9f\x90\x9f \x01\x1f\"\\")), kNow).isOk());
  ASSERT_TRUE(s.apply(txnOf(admitOp("empty", "")), kNow).isOk());
  auto back = JournalState::decode(s.encode());
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->find("all-bytes")->body, all);
  EXPECT_EQ(back->find("utf8")->body, "h\xc3\xa9llo \xf0\x9f\x90\x9f \x01\x1f\"\\");
  EXPECT_EQ(back->find("empty")->body, "");
}

// A newer (unknown) schemaVersion is refused as kFailedPrecondition, not read as corrupt.
TEST(FormatTest, UnknownVersionIsRefusedAsFailedPrecondition) {
  std::string golden = readGolden();
  for (const char* v : {"3", "0", "4294967296", "99999999999999999999"}) {
    std::string bytes =
        replaceOnce(golden, "{\"schemaVersion\":2,", std::string("{\"schemaVersion\":") + v + ",");
    auto r = decodeFile(bytes);
    ASSERT_FALSE(r.isOk()) << v;
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << v << r.status().toString();
    EXPECT_EQ(r.status().reason(), reason::kUnknownVersion) << v;
  }
}

// A JSON file without schemaVersion (an unversioned format) is refused, never guessed at.
TEST(FormatTest, UnversionedFileIsRefused) {
  auto r = decodeFile("{\"owners\":{\"m1\":{\"state\":\"queued\"}}}");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().reason(), reason::kUnknownVersion);
}

// A known version carrying an unknown state, phase, outcome or field is unknown ownership
// semantics: refused as kFailedPrecondition, never reinterpreted.
TEST(FormatTest, UnknownOwnershipSemanticsAreRefused) {
  const std::pair<std::string, std::string> edits[] = {
      {"\"state\":\"queued\"", "\"state\":\"paused\""},
      {"\"phase\":\"outcome_unknown\"", "\"phase\":\"half_sent\""},
      {"\"outcome\":\"failed\"", "\"outcome\":\"expired\""},
      {"\"seq\":", "\"lease\":7,\"seq\":"},
      {"\"storeEpoch\":", "\"extra\":{},\"storeEpoch\":"},
      {"\"version\":7}", "\"version\":7,\"fence\":1}"},
  };
  for (uint32_t version : {1u, 2u}) {
    std::string file = readGolden(version);
    for (const auto& [from, to] : edits) {
      auto r = decodeFile(reframe(replaceOnce(file, from, to), version));
      ASSERT_FALSE(r.isOk()) << to;
      EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << to << r.status().toString();
      EXPECT_EQ(r.status().reason(), reason::kUnknownSemantics) << to;
    }
  }
}

// Every truncation of a valid file (of either version) fails closed with kDataLoss; none
// decodes as empty.
TEST(FormatTest, TruncatedFileFailsClosedWithDataLoss) {
  for (uint32_t version : {1u, 2u}) {
    std::string golden = readGolden(version);
    for (size_t n = 0; n < golden.size(); ++n) {
      auto r = JournalState::decode(std::string_view(golden).substr(0, n));
      ASSERT_FALSE(r.isOk()) << "v" << version << " prefix of " << n << " bytes decoded";
      EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << n << ": " << r.status().toString();
    }
  }
}

// Every single-byte corruption (of either version) is detected (checksum, framing or
// version), never loaded.
TEST(FormatTest, ByteCorruptionIsDetected) {
  for (uint32_t version : {1u, 2u}) {
    std::string golden = readGolden(version);
    for (size_t i = 0; i < golden.size(); ++i) {
      for (int bit : {0x01, 0x20, 0x80}) {
        std::string bad = golden;
        bad[i] = static_cast<char>(bad[i] ^ bit);
        auto r = JournalState::decode(bad);
        ASSERT_FALSE(r.isOk()) << "v" << version << " flip " << bit << " at " << i << " loaded";
        EXPECT_TRUE(r.status().code() == StatusCode::kDataLoss ||
                    r.status().code() == StatusCode::kFailedPrecondition)
            << r.status().toString();
      }
    }
  }
}

// Cross-record invariants are checked on load: a checksum-valid but inconsistent file is
// kDataLoss, not silently repaired.
TEST(FormatTest, InconsistentFileIsDataLoss) {
  std::string golden = readGolden();
  const std::pair<std::string, std::string> bad[] = {
      {"\"id\":\"binary-body\"", "\"id\":\"0190a3c2-7b1e-7000-8000-000000000001\""},  // dup
      {"\"storeEpoch\":1", "\"storeEpoch\":0"},           // records from the future
      {"\"nextGeneration\":10", "\"nextGeneration\":5"},  // generations from the future
      {"\"state\":\"queued\",", "\"state\":\"terminal\",\"outcome\":\"failed\","},  // misplaced
      {"\"seq\":2,", "\"seq\":1,"},                                                 // seq reused
      {",\"body\":\"stdin frame\\n\"", ""},          // live owner without body
      {",\"reason\":\"correlated_ack\"", ""},        // tombstone without reason
      {"[1,2.5E0,null,true]", "[1e999,null,true]"},  // a section number JSON cannot carry
  };
  for (const auto& [from, to] : bad) {
    auto r = JournalState::decode(reframe(replaceOnce(golden, from, to)));
    ASSERT_FALSE(r.isOk()) << to;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << to << ": " << r.status().toString();
  }
  // An escaped NUL inside a body is data, not corruption.
  auto nul = JournalState::decode(reframe(replaceOnce(golden, "stdin frame", "stdin\\u0000frame")));
  ASSERT_TRUE(nul.isOk()) << nul.status().toString();
  EXPECT_EQ(nul->find("0190a3c2-7b1e-7000-8000-000000000002")->body,
            std::string("stdin\0frame\n", 12));
}

// A section value the journal could not write back byte for byte (a number that overflows to
// infinity) is refused at the write, so the journal never stores a file it cannot reload.
TEST(FormatTest, NonFiniteSectionNumberIsRefusedAtWrite) {
  JournalState s;
  s.attach(kNow);
  auto r = s.apply(txnOf(SetSection{"identity", "{\"n\":1e999}", std::nullopt}), kNow);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().toString();
  EXPECT_TRUE(JournalState::decode(s.encode()).isOk());
}

// Empty files and non-JSON garbage are kDataLoss.
TEST(FormatTest, EmptyOrGarbageFileIsDataLoss) {
  for (const char* bytes :
       {"", "\n", "garbage", "{\"schemaVersion\":1,", "[1,2]", "{\"schemaVersion\":x}"}) {
    auto r = decodeFile(bytes);
    ASSERT_FALSE(r.isOk()) << bytes;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << bytes << r.status().toString();
  }
}

// CRC-32C matches the standard check value.
TEST(FormatTest, Crc32cCheckValue) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
}

}  // namespace
}  // namespace shoal::journal
