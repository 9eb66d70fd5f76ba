// The machine name a daemon reports: made once, then read back, whatever the host is called.
#include "base/file_system.h"
#include "supervisor/auth_mode.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::supervisor {
namespace {

MeshPaths pathsIn(const shoal::testing::TempDir& dir) {
  MeshPaths p;
  p.space = "main";
  p.stateDir = dir.join("state/shoal");  // not made yet: the first call makes it
  return p;
}

TEST(MachineName, IsMadeOnceThenReadBackAsKept) {
  auto dir = shoal::testing::TempDir::create("machine");
  ASSERT_TRUE(dir.isOk());
  const MeshPaths paths = pathsIn(*dir);
  auto first = thisMachineName(paths);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_FALSE(first->empty());
  EXPECT_EQ(*thisMachineName(paths), *first);
  // Renamed by hand (a host renamed later keeps what the file says).
  ASSERT_TRUE(
      writeFileAtomically(FileSystem::posix(), paths.stateDir + "/machine-name", "build-box-2\n")
          .isOk());
  EXPECT_EQ(*thisMachineName(paths), "build-box-2");
}

TEST(MachineName, AFileThatIsNoMachineNameIsRefusedByName) {
  auto dir = shoal::testing::TempDir::create("machine");
  ASSERT_TRUE(dir.isOk());
  const MeshPaths paths = pathsIn(*dir);
  ASSERT_TRUE(FileSystem::posix().createDirs(paths.stateDir).isOk());
  ASSERT_TRUE(
      writeFileAtomically(FileSystem::posix(), paths.stateDir + "/machine-name", "two words\n")
          .isOk());
  EXPECT_EQ(thisMachineName(paths).status().reason(), "bad-machine-name");
}

}  // namespace
}  // namespace shoal::supervisor
