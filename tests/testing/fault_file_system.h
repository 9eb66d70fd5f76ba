// FaultFileSystem: an in-memory FileSystem for crash tests that remembers what was synced.
//
// Model (strict POSIX, as LevelDB's fault-injection env): a file's bytes become durable only
// through WritableFile::sync(); a directory entry (creation, rename, removal, mkdir) only
// through syncDir() of the directory holding it. powerLoss() then throws away what was not
// durable — unsynced bytes, and un-fsynced renames and directory entries — or keeps it, or a
// seeded random mix (torn prefixes included), and lets everything run again.
//
// Faults: failOnce()/failAlways() make a chosen call fail with a chosen errno (ENOSPC, EIO, …)
// mapped to Status exactly like PosixFileSystem. Crash points: every call is numbered
// (opCount()); crashAtOp(n) makes call n and all later calls fail with EIO, as if the machine
// stopped just before call n — then powerLoss() reboots it.
//
// Paths must be absolute ("/w/seat/.daemon-state.json"); "/" always exists and is durable.
//
// Thread safety: every method may be called from any thread.
// Lifetime: must outlive every WritableFile and FileLock it handed out. Files opened before a
// powerLoss() fail with EIO afterwards.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"

namespace shoal {

enum class FsOp : uint8_t {
  kOpen,
  kAppend,
  kSync,
  kClose,
  kRename,
  kSyncDir,
  kRemove,
  kCreateDirs,
  kRead,
  kLock,
};
std::string_view fsOpName(FsOp op);

enum class PowerLossMode : uint8_t {
  kDropUnsynced,  // only synced bytes and synced entries survive
  kKeepUnsynced,  // everything survives (the OS flushed it all in time)
  kRandom,        // per file and per entry, a seeded choice (including torn prefixes)
};

class FaultFileSystem final : public FileSystem {
 public:
  FaultFileSystem();
  ~FaultFileSystem() override;

  // --- FileSystem ---------------------------------------------------------------------------
  Result<std::unique_ptr<WritableFile>> openForWrite(const std::string& path,
                                                     CreateMode mode) override;
  Result<std::string> readFile(const std::string& path) override;
  Status rename(const std::string& from, const std::string& to) override;
  Status syncDir(const std::string& dir) override;
  Status remove(const std::string& path) override;
  Result<std::vector<std::string>> createDirs(const std::string& dir) override;
  bool exists(const std::string& path) override;
  Result<std::unique_ptr<FileLock>> lockFile(const std::string& path,
                                             std::string_view holder) override;

  // --- Faults -------------------------------------------------------------------------------
  // The next call of `op` whose path contains `pathContains` fails with `err`.
  void failOnce(FsOp op, int err, std::string pathContains = {});
  // Every such call fails with `err` until clearFaults().
  void failAlways(FsOp op, int err, std::string pathContains = {});
  // Call number `n` (counted over all calls, see opCount()) fails once with `err`.
  void failAtOp(uint64_t n, int err);
  void clearFaults();

  // --- Crash points and power loss -----------------------------------------------------------
  uint64_t opCount() const;  // calls made so far (the next call gets this number)
  void crashAtOp(uint64_t n);
  bool crashed() const;
  void powerLoss(PowerLossMode mode = PowerLossMode::kDropUnsynced, uint64_t seed = 0);

  // --- Inspection ---------------------------------------------------------------------------
  // Current contents (what a reader sees now), or nullopt.
  std::optional<std::string> contents(const std::string& path) const;
  // What a reader would see after powerLoss(kDropUnsynced), without losing power.
  std::optional<std::string> durableContents(const std::string& path) const;
  // Names in `dir`, sorted.
  std::vector<std::string> listDir(const std::string& dir) const;
  // One line per call: "#12 rename /w/a.tmp -> /w/a" (failed calls end with " = <errno>").
  std::vector<std::string> trace() const;

  struct Inode;
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal
