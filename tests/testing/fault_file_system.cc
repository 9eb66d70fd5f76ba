#include "testing/fault_file_system.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <set>

namespace shoal {

struct FaultFileSystem::Inode {
  bool dir = false;
  std::string data;
  std::string synced;
};

namespace {

using InodePtr = std::shared_ptr<FaultFileSystem::Inode>;
using Entries = std::map<std::string, InodePtr>;

std::string parentOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == 0) return "/";
  return path.substr(0, slash);
}
std::string baseName(const std::string& path) {
  return path.substr(path.find_last_of('/') + 1);
}

bool validPath(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  if (path.size() > 1 && path.back() == '/') return false;
  return path.find("//") == std::string::npos && path.find("/../") == std::string::npos;
}

struct Rule {
  FsOp op;
  int err;
  std::string pathContains;
  bool once;
};

}  // namespace

struct FaultFileSystem::Impl {
  mutable std::mutex mu;
  std::map<std::string, Entries> entries;  // directory path → current entries
  std::map<std::string, Entries> durable;  // directory path → entries as of its last syncDir
  std::vector<Rule> rules;
  std::map<uint64_t, int> opFaults;  // call number → errno
  uint64_t ops = 0;
  std::optional<uint64_t> crashAt;
  uint64_t bootEpoch = 0;                 // bumped by powerLoss: older files/locks are dead
  std::map<std::string, uint64_t> locks;  // path → boot epoch of the holder
  std::vector<std::string> trace;

  // Counts the call and decides whether it fails. Requires mu.
  int check(FsOp op, const std::string& path, const std::string& detail = {}) {
    uint64_t n = ops++;
    int err = 0;
    if (crashAt && n >= *crashAt) {
      err = EIO;
    } else if (auto it = opFaults.find(n); it != opFaults.end()) {
      err = it->second;
      opFaults.erase(it);
    } else {
      for (auto it2 = rules.begin(); it2 != rules.end(); ++it2) {
        if (it2->op == op && path.find(it2->pathContains) != std::string::npos) {
          err = it2->err;
          if (it2->once) rules.erase(it2);
          break;
        }
      }
    }
    std::string line = "#" + std::to_string(n) + " " + std::string(fsOpName(op)) + " " + path;
    if (!detail.empty()) line += " " + detail;
    if (err != 0) line += " = " + std::string(std::strerror(err));
    trace.push_back(std::move(line));
    return err;
  }

  InodePtr lookup(const std::string& path) const {
    if (path == "/") return nullptr;
    auto dir = entries.find(parentOf(path));
    if (dir == entries.end()) return nullptr;
    auto it = dir->second.find(baseName(path));
    return it == dir->second.end() ? nullptr : it->second;
  }

  // Drops directories no longer reachable from "/" (their entry was lost).
  void pruneUnreachable() {
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = entries.begin(); it != entries.end();) {
        if (it->first != "/") {
          InodePtr node = lookup(it->first);
          if (node == nullptr || !node->dir) {
            durable.erase(it->first);
            it = entries.erase(it);
            changed = true;
            continue;
          }
        }
        ++it;
      }
    }
  }
};

namespace {

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultFileSystem::Impl* fs, InodePtr inode, std::string path, uint64_t boot)
      : fs_(fs), inode_(std::move(inode)), path_(std::move(path)), boot_(boot) {}

  Status append(std::string_view data) override {
    std::lock_guard<std::mutex> l(fs_->mu);
    if (int err = gate(FsOp::kAppend, std::to_string(data.size()) + "B")) {
      return statusFromErrno(err, "write", path_);
    }
    inode_->data.append(data);
    return Status::ok();
  }
  Status sync() override {
    std::lock_guard<std::mutex> l(fs_->mu);
    if (int err = gate(FsOp::kSync)) return statusFromErrno(err, "fsync", path_);
    inode_->synced = inode_->data;
    return Status::ok();
  }
  Status close() override {
    std::lock_guard<std::mutex> l(fs_->mu);
    if (closed_) return statusFromErrno(EBADF, "close", path_);
    closed_ = true;
    if (int err = gate(FsOp::kClose)) return statusFromErrno(err, "close", path_);
    return Status::ok();
  }

 private:
  int gate(FsOp op, const std::string& detail = {}) {
    int err = fs_->check(op, path_, detail);
    if (err == 0 && (closed_ && op != FsOp::kClose)) err = EBADF;
    if (err == 0 && boot_ != fs_->bootEpoch) err = EIO;
    return err;
  }

  FaultFileSystem::Impl* fs_;
  InodePtr inode_;
  std::string path_;
  uint64_t boot_;
  bool closed_ = false;
};

class FaultLock final : public FileLock {
 public:
  FaultLock(FaultFileSystem::Impl* fs, std::string path, uint64_t boot)
      : fs_(fs), path_(std::move(path)), boot_(boot) {}
  ~FaultLock() override {
    std::lock_guard<std::mutex> l(fs_->mu);
    auto it = fs_->locks.find(path_);
    if (it != fs_->locks.end() && it->second == boot_) fs_->locks.erase(it);
  }

 private:
  FaultFileSystem::Impl* fs_;
  std::string path_;
  uint64_t boot_;
};

}  // namespace

std::string_view fsOpName(FsOp op) {
  switch (op) {
    case FsOp::kOpen:
      return "open";
    case FsOp::kAppend:
      return "append";
    case FsOp::kSync:
      return "sync";
    case FsOp::kClose:
      return "close";
    case FsOp::kRename:
      return "rename";
    case FsOp::kSyncDir:
      return "syncDir";
    case FsOp::kRemove:
      return "remove";
    case FsOp::kCreateDirs:
      return "createDirs";
    case FsOp::kRead:
      return "read";
    case FsOp::kLock:
      return "lock";
  }
  return "?";
}

FaultFileSystem::FaultFileSystem() : impl_(std::make_unique<Impl>()) {
  impl_->entries["/"];
  impl_->durable["/"];
}
FaultFileSystem::~FaultFileSystem() = default;

Result<std::unique_ptr<WritableFile>> FaultFileSystem::openForWrite(const std::string& path,
                                                                    CreateMode mode) {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (int err = impl_->check(FsOp::kOpen, path)) return statusFromErrno(err, "open", path);
  if (!validPath(path)) return statusFromErrno(EINVAL, "open", path);
  auto dir = impl_->entries.find(parentOf(path));
  if (dir == impl_->entries.end()) return statusFromErrno(ENOENT, "open", path);
  InodePtr node = impl_->lookup(path);
  if (node != nullptr) {
    if (node->dir) return statusFromErrno(EISDIR, "open", path);
    if (mode == CreateMode::kExclusive) return statusFromErrno(EEXIST, "open", path);
    node->data.clear();  // O_TRUNC: the truncation itself is not durable until sync
  } else {
    node = std::make_shared<Inode>();
    dir->second[baseName(path)] = node;
  }
  return std::unique_ptr<WritableFile>(
      new FaultWritableFile(impl_.get(), node, path, impl_->bootEpoch));
}

Result<std::string> FaultFileSystem::readFile(const std::string& path) {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (int err = impl_->check(FsOp::kRead, path)) return statusFromErrno(err, "read", path);
  InodePtr node = impl_->lookup(path);
  if (node == nullptr) return statusFromErrno(ENOENT, "open", path);
  if (node->dir) return statusFromErrno(EISDIR, "read", path);
  return node->data;
}

Status FaultFileSystem::rename(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (int err = impl_->check(FsOp::kRename, from, "-> " + to)) {
    return statusFromErrno(err, "rename", from);
  }
  InodePtr node = impl_->lookup(from);
  if (node == nullptr) return statusFromErrno(ENOENT, "rename", from);
  if (node->dir) return statusFromErrno(EISDIR, "rename", from);
  auto toDir = impl_->entries.find(parentOf(to));
  if (!validPath(to) || toDir == impl_->entries.end()) return statusFromErrno(ENOENT, "rename", to);
  InodePtr target = impl_->lookup(to);
  if (target != nullptr && target->dir) return statusFromErrno(EISDIR, "rename", to);
  impl_->entries[parentOf(from)].erase(baseName(from));
  toDir->second[baseName(to)] = node;
  return Status::ok();
}

Status FaultFileSystem::syncDir(const std::string& dir) {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (int err = impl_->check(FsOp::kSyncDir, dir))
    return statusFromErrno(err, "fsync directory", dir);
  auto it = impl_->entries.find(dir);
  if (it == impl_->entries.end()) return statusFromErrno(ENOENT, "open directory", dir);
  impl_->durable[dir] = it->second;
  return Status::ok();
}

Status FaultFileSystem::remove(const std::string& path) {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (int err = impl_->check(FsOp::kRemove, path)) return statusFromErrno(err, "remove", path);
  InodePtr node = impl_->lookup(path);
  if (node == nullptr) return statusFromErrno(ENOENT, "remove", path);
  if (node->dir) return statusFromErrno(EISDIR, "remove", path);
  impl_->entries[parentOf(path)].erase(baseName(path));
  return Status::ok();
}

Result<std::vector<std::string>> FaultFileSystem::createDirs(const std::string& dir) {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (int err = impl_->check(FsOp::kCreateDirs, dir)) return statusFromErrno(err, "mkdir", dir);
  if (!validPath(dir)) return statusFromErrno(EINVAL, "mkdir", dir);
  std::vector<std::string> created;
  for (size_t pos = 1; pos <= dir.size();) {
    size_t slash = dir.find('/', pos);
    if (slash == std::string::npos) slash = dir.size();
    std::string prefix = dir.substr(0, slash);
    if (impl_->entries.count(prefix) == 0) {
      InodePtr existing = impl_->lookup(prefix);
      if (existing != nullptr) return statusFromErrno(ENOTDIR, "mkdir", prefix);
      auto node = std::make_shared<Inode>();
      node->dir = true;
      impl_->entries[parentOf(prefix)][baseName(prefix)] = node;
      impl_->entries[prefix];
      created.push_back(prefix);
    }
    pos = slash + 1;
  }
  return created;
}

bool FaultFileSystem::exists(const std::string& path) {
  std::lock_guard<std::mutex> l(impl_->mu);
  return path == "/" || impl_->lookup(path) != nullptr;
}

Result<std::unique_ptr<FileLock>> FaultFileSystem::lockFile(const std::string& path,
                                                            std::string_view holder) {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (int err = impl_->check(FsOp::kLock, path)) return statusFromErrno(err, "open lock", path);
  auto dir = impl_->entries.find(parentOf(path));
  if (!validPath(path) || dir == impl_->entries.end()) {
    return statusFromErrno(ENOENT, "open lock", path);
  }
  InodePtr node = impl_->lookup(path);
  if (node == nullptr) {
    node = std::make_shared<Inode>();
    dir->second[baseName(path)] = node;
  }
  if (impl_->locks.count(path) != 0) {
    return failedPrecondition("lock-held", path + " is locked by " + node->data +
                                               " (stop that process, or use another directory)");
  }
  node->data = std::string(holder);
  impl_->locks[path] = impl_->bootEpoch;
  return std::unique_ptr<FileLock>(new FaultLock(impl_.get(), path, impl_->bootEpoch));
}

void FaultFileSystem::failOnce(FsOp op, int err, std::string pathContains) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->rules.push_back({op, err, std::move(pathContains), true});
}

void FaultFileSystem::failAlways(FsOp op, int err, std::string pathContains) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->rules.push_back({op, err, std::move(pathContains), false});
}

void FaultFileSystem::failAtOp(uint64_t n, int err) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->opFaults[n] = err;
}

void FaultFileSystem::clearFaults() {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->rules.clear();
  impl_->opFaults.clear();
}

uint64_t FaultFileSystem::opCount() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->ops;
}

void FaultFileSystem::crashAtOp(uint64_t n) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->crashAt = n;
}

bool FaultFileSystem::crashed() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->crashAt.has_value() && impl_->ops > *impl_->crashAt;
}

void FaultFileSystem::powerLoss(PowerLossMode mode, uint64_t seed) {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::mt19937_64 rng(seed);
  auto coin = [&rng] { return (rng() & 1) != 0; };
  // Directory entries.
  for (auto& [dir, current] : impl_->entries) {
    Entries& synced = impl_->durable[dir];
    if (mode == PowerLossMode::kDropUnsynced) {
      current = synced;
    } else if (mode == PowerLossMode::kRandom) {
      std::set<std::string> names;
      for (const auto& [name, node] : current)
        names.insert(name);
      for (const auto& [name, node] : synced)
        names.insert(name);
      Entries mixed;
      for (const std::string& name : names) {
        const Entries& pick = coin() ? current : synced;
        auto it = pick.find(name);
        if (it != pick.end()) mixed[name] = it->second;
      }
      current = std::move(mixed);
    }
  }
  impl_->pruneUnreachable();
  // File contents, and everything that survived is now durable.
  std::set<Inode*> seen;
  for (auto& [dir, current] : impl_->entries) {
    for (auto& [name, node] : current) {
      if (node->dir || !seen.insert(node.get()).second) continue;
      if (mode == PowerLossMode::kDropUnsynced) {
        node->data = node->synced;
      } else if (mode == PowerLossMode::kRandom && node->data != node->synced) {
        // Only what was not synced is at risk: old bytes, new bytes, or a torn write.
        const std::string& d = node->data;
        bool appended =
            d.size() > node->synced.size() && d.compare(0, node->synced.size(), node->synced) == 0;
        size_t keepFrom = appended ? node->synced.size() : 0;
        switch (rng() % 3) {
          case 0:
            node->data = node->synced;
            break;
          case 1:
            break;
          default:
            node->data.resize(keepFrom + rng() % (d.size() - keepFrom + 1));
        }
      }
      node->synced = node->data;
    }
    impl_->durable[dir] = current;
  }
  impl_->crashAt.reset();
  impl_->locks.clear();
  impl_->bootEpoch++;
}

std::optional<std::string> FaultFileSystem::contents(const std::string& path) const {
  std::lock_guard<std::mutex> l(impl_->mu);
  InodePtr node = impl_->lookup(path);
  if (node == nullptr || node->dir) return std::nullopt;
  return node->data;
}

std::optional<std::string> FaultFileSystem::durableContents(const std::string& path) const {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (!validPath(path) || path == "/") return std::nullopt;
  std::string dir = "/";
  InodePtr node;
  for (size_t pos = 1; pos <= path.size();) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string name = path.substr(pos, slash - pos);
    auto d = impl_->durable.find(dir);
    if (d == impl_->durable.end()) return std::nullopt;
    auto it = d->second.find(name);
    if (it == d->second.end()) return std::nullopt;
    node = it->second;
    dir = path.substr(0, slash);
    pos = slash + 1;
  }
  if (node == nullptr || node->dir) return std::nullopt;
  return node->synced;
}

std::vector<std::string> FaultFileSystem::listDir(const std::string& dir) const {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::vector<std::string> out;
  auto it = impl_->entries.find(dir);
  if (it == impl_->entries.end()) return out;
  for (const auto& [name, node] : it->second)
    out.push_back(name);
  return out;
}

std::vector<std::string> FaultFileSystem::trace() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->trace;
}

}  // namespace shoal
