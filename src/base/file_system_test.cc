#include "base/file_system.h"

#include <cstdlib>
#include <filesystem>
#include <thread>

#include <sys/stat.h>

#include <gtest/gtest.h>

namespace shoal {
namespace {

class FileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "shoal-fs-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  FileSystem& fs_ = FileSystem::posix();
};

// An atomic write replaces the whole file and leaves no temp file behind.
TEST_F(FileSystemTest, AtomicWriteReplacesWholeFile) {
  std::string path = dir_ + "/state.json";
  ASSERT_TRUE(writeFileAtomically(fs_, path, "first").isOk());
  ASSERT_TRUE(writeFileAtomically(fs_, path, "second, longer").isOk());
  auto got = fs_.readFile(path);
  ASSERT_TRUE(got.isOk());
  EXPECT_EQ(*got, "second, longer");
  EXPECT_FALSE(fs_.exists(path + ".tmp"));
}

// A vectored append writes its parts in order, whatever their number (more than one writev
// takes) and however many are empty; the default for other file systems writes the same bytes.
TEST_F(FileSystemTest, AppendAllWritesEveryPartInOrder) {
  std::vector<std::string> owned;
  for (int i = 0; i < 2500; ++i)
    owned.push_back(i % 7 == 0 ? std::string() : std::to_string(i) + ",");
  std::vector<std::string_view> parts(owned.begin(), owned.end());
  std::string expected;
  for (auto p : parts)
    expected += p;
  const std::string path = dir_ + "/parts";
  auto file = fs_.openForWrite(path, CreateMode::kTruncate);
  ASSERT_TRUE(file.isOk());
  ASSERT_TRUE((*file)->appendAll(parts).isOk());
  ASSERT_TRUE((*file)->close().isOk());
  EXPECT_EQ(*fs_.readFile(path), expected);

  class Recording final : public WritableFile {
   public:
    Status append(std::string_view data) override {
      got += data;
      ++calls;
      return Status::ok();
    }
    Status sync() override { return Status::ok(); }
    Status close() override { return Status::ok(); }
    std::string got;
    int calls = 0;
  } recording;
  ASSERT_TRUE(recording.appendAll(parts).isOk());
  EXPECT_EQ(recording.got, expected);
  EXPECT_EQ(recording.calls, 1);
}

// Files are created owner-only (0600).
TEST_F(FileSystemTest, FilesAreOwnerOnly) {
  std::string path = dir_ + "/secret";
  ASSERT_TRUE(writeFileAtomically(fs_, path, "x").isOk());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Exclusive create refuses an existing file with kAlreadyExists.
TEST_F(FileSystemTest, ExclusiveCreateRefusesExisting) {
  std::string path = dir_ + "/lock";
  ASSERT_TRUE(fs_.openForWrite(path, CreateMode::kExclusive).isOk());
  auto again = fs_.openForWrite(path, CreateMode::kExclusive);
  ASSERT_FALSE(again.isOk());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
}

// Reading a missing file is kNotFound and names the path.
TEST_F(FileSystemTest, MissingFileIsNotFound) {
  auto got = fs_.readFile(dir_ + "/nope");
  ASSERT_FALSE(got.isOk());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_NE(got.status().message().find("nope"), std::string_view::npos);
}

// createDirs makes the missing chain and reports exactly the directories it created.
TEST_F(FileSystemTest, CreateDirsReportsNewEntries) {
  auto made = fs_.createDirs(dir_ + "/a/b/c");
  ASSERT_TRUE(made.isOk());
  ASSERT_EQ(made->size(), 3u);
  EXPECT_EQ((*made)[0], dir_ + "/a");
  EXPECT_EQ((*made)[2], dir_ + "/a/b/c");
  auto again = fs_.createDirs(dir_ + "/a/b/c");
  ASSERT_TRUE(again.isOk());
  EXPECT_TRUE(again->empty());
  EXPECT_TRUE(fs_.syncDir(dir_ + "/a/b").isOk());
}

// Removing a file makes it gone; removing it twice is kNotFound.
TEST_F(FileSystemTest, RemoveTwiceIsNotFound) {
  std::string path = dir_ + "/f";
  ASSERT_TRUE(writeFileAtomically(fs_, path, "x").isOk());
  ASSERT_TRUE(fs_.remove(path).isOk());
  EXPECT_EQ(fs_.remove(path).code(), StatusCode::kNotFound);
}

// A second lock on the same file is refused (even in-process) and names the first holder;
// releasing the first lets the next caller in.
TEST_F(FileSystemTest, SecondLockIsRefusedAndNamesTheHolder) {
  std::string path = dir_ + "/x.lock";
  auto first = fs_.lockFile(path, "pid 42 (first holder)");
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  auto second = fs_.lockFile(path, "pid 43");
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().reason(), "lock-held");
  EXPECT_NE(second.status().message().find("pid 42 (first holder)"), std::string_view::npos);
  first->reset();
  auto third = fs_.lockFile(path, "pid 44");
  EXPECT_TRUE(third.isOk()) << third.status().toString();
}

// A waiting lock gets in once the holder lets go, and gives up at its deadline naming the
// holder. The release comes from another thread (the holder elsewhere).
TEST_F(FileSystemTest, AWaitingLockGetsInWhenTheHolderLetsGoAndGivesUpAtItsDeadline) {
  std::string path = dir_ + "/w.lock";
  auto first = fs_.lockFile(path, "pid 42 (first holder)");
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  auto refused = lockFileWaiting(fs_, path, "pid 43", std::chrono::milliseconds(30));
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().reason(), "lock-held");
  EXPECT_NE(refused.status().message().find("pid 42 (first holder)"), std::string_view::npos);

  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    first->reset();
  });
  auto waited = lockFileWaiting(fs_, path, "pid 44", std::chrono::seconds(10));
  release.join();
  EXPECT_TRUE(waited.isOk()) << waited.status().toString();
}

// A lock file is created owner-only, like every file Shoal writes.
TEST_F(FileSystemTest, LockFileIsOwnerOnly) {
  std::string path = dir_ + "/y.lock";
  auto lock = fs_.lockFile(path, "me");
  ASSERT_TRUE(lock.isOk());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
}  // namespace shoal
