#include "base/file_system.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace shoal {

Status WritableFile::appendAll(const std::vector<std::string_view>& parts) {
  size_t total = 0;
  for (auto p : parts)
    total += p.size();
  std::string joined;
  joined.reserve(total);
  for (auto p : parts)
    joined += p;
  return append(joined);
}

namespace {

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  PosixWritableFile(const PosixWritableFile&) = delete;
  PosixWritableFile& operator=(const PosixWritableFile&) = delete;

  Status append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return statusFromErrno(errno, "write", path_);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::ok();
  }

  Status appendAll(const std::vector<std::string_view>& parts) override {
    std::vector<iovec> iov;
    iov.reserve(std::min<size_t>(parts.size(), IOV_MAX));
    size_t next = 0;  // the first part not yet in `iov`
    while (next < parts.size() || !iov.empty()) {
      while (next < parts.size() && iov.size() < IOV_MAX) {
        if (!parts[next].empty())
          iov.push_back(iovec{const_cast<char*>(parts[next].data()), parts[next].size()});
        ++next;
      }
      if (iov.empty()) break;
      ssize_t n = ::writev(fd_, iov.data(), static_cast<int>(iov.size()));
      if (n < 0) {
        if (errno == EINTR) continue;
        return statusFromErrno(errno, "write", path_);
      }
      // Drop what was written; a short write leaves the rest of its part at the front.
      size_t done = static_cast<size_t>(n);
      size_t whole = 0;
      while (whole < iov.size() && done >= iov[whole].iov_len)
        done -= iov[whole++].iov_len;
      iov.erase(iov.begin(), iov.begin() + static_cast<std::ptrdiff_t>(whole));
      if (!iov.empty() && done > 0) {
        iov.front().iov_base = static_cast<char*>(iov.front().iov_base) + done;
        iov.front().iov_len -= done;
      }
    }
    return Status::ok();
  }

  Status sync() override {
    if (::fdatasync(fd_) != 0) return statusFromErrno(errno, "fsync", path_);
    return Status::ok();
  }

  Status close() override {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return statusFromErrno(errno, "close", path_);
    return Status::ok();
  }

 private:
  int fd_;
  std::string path_;
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing the description releases the flock
  PosixFileLock(const PosixFileLock&) = delete;
  PosixFileLock& operator=(const PosixFileLock&) = delete;

 private:
  int fd_;
};

// The holder text another process recorded in a lock file (bounded, printable only).
std::string readHolder(int fd) {
  char buf[256];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  std::string out;
  for (ssize_t i = 0; i < n; ++i) {
    char c = buf[i];
    out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  return out.empty() ? "an unknown holder" : out;
}

class PosixFileSystem final : public FileSystem {
 public:
  Result<std::unique_ptr<FileLock>> lockFile(const std::string& path,
                                             std::string_view holder) override {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return statusFromErrno(errno, "open lock", path);
    int rc;
    do {
      rc = ::flock(fd, LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      int err = errno;
      std::string other = err == EWOULDBLOCK ? readHolder(fd) : std::string();
      ::close(fd);
      if (err != EWOULDBLOCK) return statusFromErrno(err, "flock", path);
      return failedPrecondition("lock-held", path + " is locked by " + other +
                                                 " (stop that process, or use another directory)");
    }
    // Best effort: the holder text only improves the next caller's error message.
    if (::ftruncate(fd, 0) == 0) {
      (void)!::pwrite(fd, holder.data(), holder.size(), 0);
    }
    return std::unique_ptr<FileLock>(new PosixFileLock(fd));
  }

  Result<std::unique_ptr<WritableFile>> openForWrite(const std::string& path,
                                                     CreateMode mode) override {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
    flags |= mode == CreateMode::kExclusive ? O_EXCL : O_TRUNC;
    int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0) return statusFromErrno(errno, "open", path);
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path));
  }

  Result<std::string> readFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return statusFromErrno(errno, "open", path);
    std::string out;
    char buf[64 * 1024];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return statusFromErrno(err, "read", path);
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
  }

  Status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return statusFromErrno(errno, "rename", from);
    return Status::ok();
  }

  Status syncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return statusFromErrno(errno, "open directory", dir);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return statusFromErrno(err, "fsync directory", dir);
    return Status::ok();
  }

  Status remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return statusFromErrno(errno, "remove", path);
    return Status::ok();
  }

  Result<std::vector<std::string>> createDirs(const std::string& dir) override {
    std::vector<std::string> created;
    if (dir.empty()) return invalidArgument("empty-path", "createDirs: empty path");
    size_t pos = dir[0] == '/' ? 1 : 0;
    for (;;) {
      size_t slash = dir.find('/', pos);
      std::string prefix = dir.substr(0, slash);
      if (!prefix.empty() && ::mkdir(prefix.c_str(), 0700) == 0) {
        created.push_back(prefix);
      } else if (!prefix.empty() && errno != EEXIST) {
        return statusFromErrno(errno, "mkdir", prefix);
      }
      if (slash == std::string::npos) break;
      pos = slash + 1;
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return statusFromErrno(errno, "stat", dir);
    if (!S_ISDIR(st.st_mode))
      return failedPrecondition("not-a-directory", dir + " is not a directory");
    return created;
  }

  bool exists(const std::string& path) override {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  }
};

std::string parentDir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Result<std::unique_ptr<FileLock>> FileSystem::lockFile(const std::string& path,
                                                       std::string_view /*holder*/) {
  return failedPrecondition("lock-unsupported", "this file system cannot lock " + path);
}

Status statusFromErrno(int err, std::string_view op, const std::string& path) {
  std::string message(op);
  message += ' ';
  message += path;
  message += ": ";
  message += std::strerror(err);
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return resourceExhausted("disk-full", message + " (free disk space and retry)");
    case ENOENT:
      return notFound("no-such-file", message);
    case EEXIST:
      return alreadyExists("file-exists", message);
    case EACCES:
    case EPERM:
    case EROFS:
      return permissionDenied("file-permission", message);
    case EIO:
      return dataLoss("io-error", message);
    default:
      return unavailable("file-error", message);
  }
}

FileSystem& FileSystem::posix() {
  static PosixFileSystem fs;
  return fs;
}

Status writeFileAtomically(FileSystem& fs, const std::string& path, std::string_view contents) {
  std::string tmp = path + ".tmp";
  auto file = fs.openForWrite(tmp, CreateMode::kTruncate);
  if (!file.isOk()) return file.status();
  Status st = (*file)->append(contents);
  if (st.isOk()) st = (*file)->sync();
  Status closed = (*file)->close();
  if (st.isOk()) st = closed;
  if (!st.isOk()) {
    (void)fs.remove(tmp);  // best effort: the target is untouched either way
    return st;
  }
  SHOAL_RETURN_IF_ERROR(fs.rename(tmp, path));
  return fs.syncDir(parentDir(path));
}

Result<std::unique_ptr<FileLock>> lockFileWaiting(FileSystem& fs, const std::string& path,
                                                  std::string_view holder,
                                                  std::chrono::milliseconds timeout) {
  constexpr std::chrono::milliseconds kRetry{5};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto lock = fs.lockFile(path, holder);
    if (lock.isOk() || lock.status().reason() != "lock-held" ||
        std::chrono::steady_clock::now() >= deadline) {
      return lock;
    }
    std::this_thread::sleep_for(kRetry);
  }
}

}  // namespace shoal
