#include "supervisor/mesh_record.h"

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

namespace shoal::supervisor {
namespace {

MeshRecord sample() {
  MeshRecord r;
  r.space = "main";
  r.url = "nats://127.0.0.1:40001";
  r.host = "127.0.0.1";
  r.port = 40001;
  r.storeDir = "/tmp/x/broker";
  r.brokerPid = 124;
  r.supervisorPid = 123;
  r.startedAtMs = 1'764'500'000'000;
  return r;
}

// A record survives an encode/decode round trip unchanged, with or without a secret file.
TEST(MeshRecord, RoundTrips) {
  auto back = decodeMeshRecord(encodeMeshRecord(sample()), "f");
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, sample());
  MeshRecord withSecret = sample();
  withSecret.secretFile = "/state/shoal/secrets/main.nk";
  auto again = decodeMeshRecord(encodeMeshRecord(withSecret), "f");
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(*again, withSecret);
}

// The on-disk format is pinned: changing it needs a version bump (docs/decisions/001). An added
// optional field (daemonPid) is compatible both ways: old readers ignore it, absent reads as 0.
TEST(MeshRecord, GoldenBytes) {
  EXPECT_EQ(encodeMeshRecord(sample()),
            "{\"version\":1,\"space\":\"main\",\"url\":\"nats://127.0.0.1:40001\","
            "\"host\":\"127.0.0.1\",\"port\":40001,\"storeDir\":\"/tmp/x/broker\","
            "\"brokerPid\":124,\"supervisorPid\":123,\"servePid\":0,\"daemonPid\":0,"
            "\"startedAtMs\":1764500000000,"
            "\"mode\":\"open\"}\n");
  MeshRecord withSecret = sample();
  withSecret.secretFile = "/s/main.nk";
  std::string bytes = encodeMeshRecord(withSecret);
  EXPECT_NE(bytes.find(",\"mode\":\"open\",\"secretFile\":\"/s/main.nk\"}\n"), std::string::npos)
      << bytes;
}

// Unknown fields are ignored, so a newer writer's extra facts do not break an older reader.
TEST(MeshRecord, UnknownFieldsIgnored) {
  std::string text = encodeMeshRecord(sample());
  text.insert(1, "\"futureField\":[1,2],");
  EXPECT_TRUE(decodeMeshRecord(text, "f").isOk());
}

// A damaged record is refused as data loss, naming the file and `shoal down --force`.
TEST(MeshRecord, DamagedRecordNamesFileAndRemedy) {
  for (std::string_view bad :
       {"", "{", "[]", "{\"version\":2}", "{\"version\":1,\"space\":\"main\"}"}) {
    auto r = decodeMeshRecord(bad, "/state/meshes/main.json");
    ASSERT_FALSE(r.isOk()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(r.status().message().find("/state/meshes/main.json"), std::string_view::npos);
    EXPECT_NE(r.status().message().find("shoal down --force"), std::string_view::npos);
  }
}

// A port outside 1..65535 is refused.
TEST(MeshRecord, PortOutOfRangeRefused) {
  MeshRecord r = sample();
  r.port = 70000;
  EXPECT_FALSE(decodeMeshRecord(encodeMeshRecord(r), "f").isOk());
}

// Writing creates the registry folder and reading gives the record back; absent is kNotFound.
TEST(MeshRecord, WriteCreatesFolderAndReadsBack) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "shoal-rec-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  FileSystem& fs = FileSystem::posix();
  std::string path = tmpl + "/meshes/main.json";
  EXPECT_EQ(readMeshRecord(fs, path).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(writeMeshRecord(fs, path, sample()).isOk());
  auto back = readMeshRecord(fs, path);
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(*back, sample());
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace shoal::supervisor
