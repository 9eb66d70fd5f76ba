// A seat's files live under <cwd>/.shoal only; the older layout is moved once; git is told to
// ignore .shoal/ without touching a tracked .gitignore.
#include "daemon/seat_files.h"

#include <fstream>

#include <sys/stat.h>

#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

std::string readAll(const std::string& path) {
  return FileSystem::posix().readFile(path).valueOr("<absent>");
}

// A journal written where seats used to keep it (the project root) moves into .shoal/ once,
// byte for byte, and the old journal and lock are gone from the root.
TEST(SeatFilesTest, AnOldLayoutJournalMovesIntoShoalOnce) {
  auto dir = testing::TempDir::create("seat");
  ASSERT_TRUE(dir.isOk());
  const std::string journal = R"({"version":1,"live":[],"tombstones":[]})";
  std::ofstream(dir->join(".daemon-state.json")) << journal;
  std::ofstream(dir->join(".daemon-state.lock")) << "pid 1";
  FileSystem& fs = FileSystem::posix();
  ASSERT_TRUE(prepareSeatFiles(fs, dir->path()).isOk());
  EXPECT_EQ(readAll(dir->join(".shoal/.daemon-state.json")), journal);
  EXPECT_FALSE(fs.exists(dir->join(".daemon-state.json")));
  EXPECT_FALSE(fs.exists(dir->join(".daemon-state.lock")));
  struct stat st {};
  ASSERT_EQ(::stat(dir->join(".shoal").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // Again: nothing to move, nothing changes.
  ASSERT_TRUE(prepareSeatFiles(fs, dir->path()).isOk());
  EXPECT_EQ(readAll(dir->join(".shoal/.daemon-state.json")), journal);
}

// Two journals cannot be merged by guessing: the seat refuses to open, naming both.
TEST(SeatFilesTest, AJournalInBothPlacesIsRefused) {
  auto dir = testing::TempDir::create("seat");
  ASSERT_TRUE(dir.isOk());
  ASSERT_EQ(::mkdir(dir->join(".shoal").c_str(), 0700), 0);
  std::ofstream(dir->join(".daemon-state.json")) << "old";
  std::ofstream(dir->join(".shoal/.daemon-state.json")) << "new";
  Status st = prepareSeatFiles(FileSystem::posix(), dir->path());
  EXPECT_EQ(st.reason(), "journal-location-conflict");
  EXPECT_EQ(readAll(dir->join(".daemon-state.json")), "old");
  EXPECT_EQ(readAll(dir->join(".shoal/.daemon-state.json")), "new");
}

// Inside a repository (the cwd itself or a folder below its root) .shoal/ is added to
// .git/info/exclude once; the tracked .gitignore is left byte for byte.
TEST(SeatFilesTest, AGitWorktreeExcludesShoalWithoutTouchingGitignore) {
  auto repo = testing::TempDir::create("repo");
  ASSERT_TRUE(repo.isOk());
  ASSERT_EQ(::mkdir(repo->join(".git").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(repo->join("src").c_str(), 0755), 0);
  std::ofstream(repo->join(".gitignore")) << "build/\n";
  ASSERT_TRUE(excludeFromGit(repo->join("src")).isOk());
  ASSERT_TRUE(excludeFromGit(repo->path()).isOk());
  const std::string exclude = readAll(repo->join(".git/info/exclude"));
  EXPECT_NE(exclude.find("\n.shoal/\n"), std::string::npos) << exclude;
  EXPECT_EQ(exclude.find(".shoal/"), exclude.rfind(".shoal/")) << exclude;  // once
  EXPECT_EQ(readAll(repo->join(".gitignore")), "build/\n");
}

// A linked worktree (`.git` is a file naming its gitdir) uses the common dir's info/exclude;
// a folder outside any repository is left alone.
TEST(SeatFilesTest, ALinkedWorktreeUsesTheCommonDirAndNoRepoMeansNothing) {
  auto root = testing::TempDir::create("wt");
  ASSERT_TRUE(root.isOk());
  for (const char* d :
       {"main", "main/.git", "main/.git/worktrees", "main/.git/worktrees/feat", "feat"}) {
    ASSERT_EQ(::mkdir(root->join(d).c_str(), 0755), 0) << d;
  }
  std::ofstream(root->join("feat/.git"))
      << "gitdir: " << root->join("main/.git/worktrees/feat") << "\n";
  std::ofstream(root->join("main/.git/worktrees/feat/commondir")) << "../..\n";
  ASSERT_TRUE(excludeFromGit(root->join("feat")).isOk());
  EXPECT_NE(readAll(root->join("main/.git/info/exclude")).find(".shoal/"), std::string::npos);

  auto plain = testing::TempDir::create("plain");
  ASSERT_TRUE(plain.isOk());
  EXPECT_TRUE(excludeFromGit(plain->path()).isOk());
}

}  // namespace
}  // namespace shoal::daemon
