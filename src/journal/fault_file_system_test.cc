// The fault-injecting FileSystem keeps exactly what was synced across a power loss.
#include "testing/fault_file_system.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace shoal {
namespace {

Status writeFile(FileSystem& fs, const std::string& path, const std::string& data, bool sync) {
  auto f = fs.openForWrite(path, CreateMode::kTruncate);
  if (!f.isOk()) return f.status();
  SHOAL_RETURN_IF_ERROR((*f)->append(data));
  if (sync) SHOAL_RETURN_IF_ERROR((*f)->sync());
  return (*f)->close();
}

// Bytes never synced are gone after a power loss; synced bytes in a synced entry survive.
TEST(FaultFileSystemTest, PowerLossDropsUnsyncedData) {
  FaultFileSystem fs;
  ASSERT_TRUE(fs.createDirs("/w").isOk());
  ASSERT_TRUE(fs.syncDir("/").isOk());
  ASSERT_TRUE(writeFile(fs, "/w/a", "synced", true).isOk());
  ASSERT_TRUE(writeFile(fs, "/w/b", "unsynced", false).isOk());
  ASSERT_TRUE(fs.syncDir("/w").isOk());
  auto f = fs.openForWrite("/w/a", CreateMode::kTruncate);
  ASSERT_TRUE(f.isOk());
  ASSERT_TRUE((*f)->append("newer, never synced").isOk());
  fs.powerLoss(PowerLossMode::kDropUnsynced);
  EXPECT_EQ(fs.contents("/w/a"), "synced");
  EXPECT_EQ(fs.contents("/w/b"), "");  // the entry was synced, the data was not
  EXPECT_EQ((*f)->append("x").code(), StatusCode::kDataLoss);  // a file from before the loss
}

// A rename whose directory was not fsynced is undone by a power loss.
TEST(FaultFileSystemTest, UnsyncedRenameIsReverted) {
  FaultFileSystem fs;
  ASSERT_TRUE(fs.createDirs("/w").isOk());
  ASSERT_TRUE(fs.syncDir("/").isOk());
  ASSERT_TRUE(writeFile(fs, "/w/state", "old", true).isOk());
  ASSERT_TRUE(fs.syncDir("/w").isOk());
  ASSERT_TRUE(writeFile(fs, "/w/state.tmp", "new", true).isOk());
  ASSERT_TRUE(fs.rename("/w/state.tmp", "/w/state").isOk());
  EXPECT_EQ(fs.contents("/w/state"), "new");
  EXPECT_EQ(fs.durableContents("/w/state"), "old");
  fs.powerLoss(PowerLossMode::kDropUnsynced);
  EXPECT_EQ(fs.contents("/w/state"), "old");
  EXPECT_FALSE(fs.contents("/w/state.tmp").has_value());
}

// A directory whose entry in its parent was never synced disappears with its contents.
TEST(FaultFileSystemTest, UnsyncedDirectoryEntryIsLost) {
  FaultFileSystem fs;
  auto made = fs.createDirs("/a/b");
  ASSERT_TRUE(made.isOk());
  EXPECT_EQ(made->size(), 2u);
  ASSERT_TRUE(fs.syncDir("/").isOk());  // "/a" is durable, "/a/b" is not
  ASSERT_TRUE(writeFile(fs, "/a/b/f", "data", true).isOk());
  ASSERT_TRUE(fs.syncDir("/a/b").isOk());
  fs.powerLoss(PowerLossMode::kDropUnsynced);
  EXPECT_TRUE(fs.exists("/a"));
  EXPECT_FALSE(fs.exists("/a/b"));
  EXPECT_FALSE(fs.contents("/a/b/f").has_value());
}

// Keeping unsynced state models an OS that flushed everything in time.
TEST(FaultFileSystemTest, KeepModeKeepsEverything) {
  FaultFileSystem fs;
  ASSERT_TRUE(fs.createDirs("/w").isOk());
  ASSERT_TRUE(writeFile(fs, "/w/a", "kept", false).isOk());
  fs.powerLoss(PowerLossMode::kKeepUnsynced);
  EXPECT_EQ(fs.contents("/w/a"), "kept");
}

// failOnce fails the next matching call with the chosen errno, mapped like PosixFileSystem.
TEST(FaultFileSystemTest, FailOnceFailsOneMatchingCall) {
  FaultFileSystem fs;
  ASSERT_TRUE(fs.createDirs("/w").isOk());
  fs.failOnce(FsOp::kAppend, ENOSPC, "/w/x");
  Status st = writeFile(fs, "/w/x", "data", true);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(writeFile(fs, "/w/x", "data", true).isOk());
  fs.failAlways(FsOp::kSyncDir, EIO);
  EXPECT_EQ(fs.syncDir("/w").code(), StatusCode::kDataLoss);
  EXPECT_EQ(fs.syncDir("/w").code(), StatusCode::kDataLoss);
  fs.clearFaults();
  EXPECT_TRUE(fs.syncDir("/w").isOk());
}

// A crash point stops the machine: that call and every later one fail with EIO.
TEST(FaultFileSystemTest, CrashAtOpFailsThatCallAndAllLater) {
  FaultFileSystem fs;
  ASSERT_TRUE(fs.createDirs("/w").isOk());
  ASSERT_TRUE(fs.syncDir("/").isOk());
  fs.crashAtOp(fs.opCount() + 1);
  auto f = fs.openForWrite("/w/a", CreateMode::kTruncate);
  ASSERT_TRUE(f.isOk());
  EXPECT_FALSE((*f)->append("x").isOk());
  EXPECT_FALSE(fs.syncDir("/w").isOk());
  EXPECT_TRUE(fs.crashed());
  fs.powerLoss();
  EXPECT_FALSE(fs.crashed());
  EXPECT_TRUE(fs.syncDir("/w").isOk());
}

// A lock is exclusive until released, and a power loss releases every lock.
TEST(FaultFileSystemTest, LocksAreExclusive) {
  FaultFileSystem fs;
  ASSERT_TRUE(fs.createDirs("/w").isOk());
  auto a = fs.lockFile("/w/l", "holder-a");
  ASSERT_TRUE(a.isOk());
  auto b = fs.lockFile("/w/l", "holder-b");
  ASSERT_FALSE(b.isOk());
  EXPECT_NE(b.status().message().find("holder-a"), std::string_view::npos);
  a->reset();
  EXPECT_TRUE(fs.lockFile("/w/l", "holder-c").isOk());
}

}  // namespace
}  // namespace shoal
