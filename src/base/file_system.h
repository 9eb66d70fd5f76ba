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
// Lifetime: a WritableFile must be closed (or destroyed, which closes without syncing). A
// FileLock holds its lock until it is destroyed (or the process dies).
#pragma once

#include <chrono>
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
  // Appends `parts` in order, as append() of their concatenation would. The default joins them
  // and calls append() once; the real file hands them to writev(2) without joining them.
  virtual Status appendAll(const std::vector<std::string_view>& parts);
  // Makes the appended bytes durable (fsync/fdatasync).
  virtual Status sync() = 0;
  virtual Status close() = 0;
};

enum class CreateMode { kTruncate, kExclusive };

// An exclusive advisory lock on a file, held until this object is destroyed. Move-only by
// ownership (held through unique_ptr); releasing never fails.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

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

  // Takes an exclusive, non-blocking advisory lock (flock) on `path`, creating it (0600) if
  // missing, and records `holder` (e.g. "pid 42 (shoal daemon)") in it for the next caller's
  // error message. The lock belongs to the returned object: a second lockFile() on the same
  // path fails even from the same process, and the lock ends when the object is destroyed or
  // the process dies. Held elsewhere → kFailedPrecondition, reason `lock-held`, the message
  // naming the path and the recorded holder. The default implementation (for fakes that do
  // not need it) refuses with kFailedPrecondition, reason `lock-unsupported`.
  virtual Result<std::unique_ptr<FileLock>> lockFile(const std::string& path,
                                                     std::string_view holder);

  // The process-wide real file system.
  static FileSystem& posix();
};

// The Status for a failed call `op` on `path` with `errno` value `err`, by the table above.
// Shared by every FileSystem implementation so a fake fails exactly like the real one.
Status statusFromErrno(int err, std::string_view op, const std::string& path);

// Convenience: durable whole-file replacement with the recipe above.
Status writeFileAtomically(FileSystem& fs, const std::string& path, std::string_view contents);

// lockFile(), waiting up to `timeout` (trying again every few milliseconds) while another
// holder has it: for short critical sections several processes take in turn. Still held at
// the deadline → the `lock-held` status, naming the holder. Other failures at once.
Result<std::unique_ptr<FileLock>> lockFileWaiting(FileSystem& fs, const std::string& path,
                                                  std::string_view holder,
                                                  std::chrono::milliseconds timeout);

}  // namespace shoal
