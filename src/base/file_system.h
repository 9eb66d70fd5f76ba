// FileSystem: the seam between Shoal and the disk, so crash tests can fake it.
//
// Everything Shoal persists itself (the ownership journal, registries, seat state) goes
// through this interface. The durable-commit recipe is: write a temp file in the target's
// directory → sync() → close() → rename() over the target → syncDir() on the parent.
// A fault-injecting implementation (dropping unsynced data on "power loss", failing chosen
// calls) lives with the journal's tests.
//
// Every call returns a Status; nothing throws. Errors carry the path and the OS message, and
// map errno to codes: ENOSPC/EDQUOT → kResourceExhausted, ENOENT → kNotFound,
// EEXIST → kAlreadyExists, EACCES/EPERM/EROFS → kPermissionDenied, EIO → kDataLoss,
// anything else → kUnavailable.
//
// Thread safety: PosixFileSystem may be used from any thread; a WritableFile is owned by one
// thread at a time.
// Lifetime: a WritableFile must be closed (or destroyed, which closes without syncing).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"

namespace shoal {

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status append(std::string_view data) = 0;
  // Makes the appended bytes durable (fsync/fdatasync).
  virtual Status sync() = 0;
  virtual Status close() = 0;
};

enum class CreateMode { kTruncate, kExclusive };

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Opens `path` for writing, mode 0600. kExclusive fails with kAlreadyExists if it exists.
  virtual Result<std::unique_ptr<WritableFile>> openForWrite(const std::string& path,
                                                             CreateMode mode) = 0;
  virtual Result<std::string> readFile(const std::string& path) = 0;
  // Atomically replaces `to` with `from` (same directory).
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  // fsyncs the directory itself, making renames and creations in it durable.
  virtual Status syncDir(const std::string& dir) = 0;
  virtual Status remove(const std::string& path) = 0;
  // Creates `dir` and its missing parents (mode 0700). Returns the directories it created,
  // outermost first, so a caller can syncDir() each new entry's parent.
  virtual Result<std::vector<std::string>> createDirs(const std::string& dir) = 0;
  virtual bool exists(const std::string& path) = 0;

  // The process-wide real file system.
  static FileSystem& posix();
};

// Convenience: durable whole-file replacement with the recipe above.
Status writeFileAtomically(FileSystem& fs, const std::string& path, std::string_view contents);

}  // namespace shoal
