#include "supervisor/mesh_paths.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace shoal::supervisor {
namespace {

class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvGuard() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// XDG directories place data, store, registry and logs (docs/architecture.md, Where files live).
TEST(MeshPaths, FollowsXdgDirectories) {
  EnvGuard data("XDG_DATA_HOME", "/d");
  EnvGuard state("XDG_STATE_HOME", "/s");
  auto p = MeshPaths::resolve("main");
  ASSERT_TRUE(p.isOk());
  EXPECT_EQ(p->brokerStoreDir, "/d/shoal/main/broker");
  EXPECT_EQ(p->registryFile, "/s/shoal/meshes/main.json");
  EXPECT_EQ(p->brokerLog, "/s/shoal/logs/main-broker.log");
}

// Without XDG variables the defaults hang off HOME.
TEST(MeshPaths, DefaultsUnderHome) {
  EnvGuard home("HOME", "/home/ada");
  EnvGuard data("XDG_DATA_HOME", nullptr);
  EnvGuard state("XDG_STATE_HOME", nullptr);
  auto p = MeshPaths::resolve("main");
  ASSERT_TRUE(p.isOk());
  EXPECT_EQ(p->dataDir, "/home/ada/.local/share/shoal/main");
  EXPECT_EQ(p->registryFile, "/home/ada/.local/state/shoal/meshes/main.json");
}

// A space name cannot escape its folder: it is sanitised to a routing token.
TEST(MeshPaths, SpaceNameCannotEscape) {
  EnvGuard data("XDG_DATA_HOME", "/d");
  EnvGuard state("XDG_STATE_HOME", "/s");
  // Refused, never rewritten into another space's name.
  for (const std::string& bad :
       std::vector<std::string>{"../../etc", "", "a b", "a.b", std::string(65, 's')}) {
    auto p = MeshPaths::resolve(bad);
    EXPECT_EQ(p.status().reason(), "bad-space") << bad;
  }
  auto ok = MeshPaths::resolve(std::string(64, 's'));
  ASSERT_TRUE(ok.isOk());
  EXPECT_EQ(ok->dataDir, "/d/shoal/" + std::string(64, 's'));
}

// With neither HOME nor XDG variables there is nowhere to put files: a clear refusal.
TEST(MeshPaths, NoHomeIsRefused) {
  EnvGuard home("HOME", nullptr);
  EnvGuard data("XDG_DATA_HOME", nullptr);
  EnvGuard state("XDG_STATE_HOME", nullptr);
  auto p = MeshPaths::resolve("main");
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace shoal::supervisor
