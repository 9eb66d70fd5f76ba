// KeyValue: a handle on one JetStream KV bucket; KvWatcher: a live view of its keys.
//
// A bucket is the stream `KV_<bucket>` with subjects `$KV.<bucket>.>`. Every write returns the
// key's new revision (the stream sequence), which is what compare-and-set compares:
//   put(k, v)                 unconditional write
//   create(k, v)              only if k is absent (or deleted)   → kAlreadyExists `key-exists`
//   update(k, v, rev)         only if k's latest revision is rev → kAborted `wrong-last-sequence`
//   updateOwn(k, v, rev)      update, adopting its own write whose answer was lost (below)
//   remove(k)                 delete marker (history kept until purge / max age)
//   remove(k, rev)            CAS delete                         → kAborted `wrong-last-sequence`
//   purge(k)                  removes k's history, leaves one purge marker
// `get` of an absent, deleted or purged key is kNotFound (reason `key-not-found`).
//
// KvConfig::ttl is the bucket's max age (a key not rewritten within it disappears WITHOUT a
// delete marker). nats.c passes kvConfig.TTL straight into the stream's max_age, which is
// nanoseconds; this class converts from milliseconds.
//
// Watching: `watch(pattern)` first delivers the latest value of every matching key (or every
// revision with includeHistory), then the "initial values done" marker, then live updates.
// `KvWatcher::next` returns an entry, or nullopt when the marker was reached (the call that
// reaches it flips `initialValuesDone()` to true) or the timeout passed. Delete / purge markers
// arrive as entries with operation kDelete / kPurge and an empty value. With updatesOnly the
// initial values are skipped and `next` starts with live updates.
//
// Thread safety: KeyValue methods may be called from any thread. A KvWatcher is used by one
// thread, except stop(), which may be called from any thread to wake a blocked next().
// Lifetime: move-only; neither may outlive the Connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "transport/jetstream.h"

namespace shoal::transport {

struct KvConfig {
  std::string bucket{};  // [A-Za-z0-9_-]+
  std::string description{};
  int history = 1;                   // revisions kept per key, 1..64
  std::chrono::milliseconds ttl{0};  // 0: values never expire
  int64_t maxBytes = -1;             // -1: unlimited
  int32_t maxValueSize = -1;         // -1: unlimited
  StorageType storage = StorageType::kFile;
  int replicas = 1;
};

enum class KvOperation { kPut, kDelete, kPurge };
std::string_view kvOperationName(KvOperation op);

struct KvEntry {
  std::string bucket{};
  std::string key{};
  std::string value{};  // empty for kDelete / kPurge
  uint64_t revision = 0;
  int64_t createdMs = 0;  // when this revision was stored (Unix epoch ms)
  uint64_t delta = 0;     // distance from the latest revision (watchers)
  KvOperation operation = KvOperation::kPut;
};

struct KvWatchOptions {
  bool includeHistory = false;  // every stored revision, not only the latest
  bool updatesOnly = false;     // skip the initial values
  bool ignoreDeletes = false;   // do not report delete / purge markers
};

class KvWatcher;

class KeyValue {
 public:
  // Creates the bucket (or binds to it if it exists with the same config).
  static Result<KeyValue> createBucket(JetStream& js, const KvConfig& config);
  // Binds to an existing bucket: kNotFound (`bucket-not-found`) if it does not exist.
  static Result<KeyValue> openBucket(JetStream& js, std::string_view bucket);
  static Status deleteBucket(JetStream& js, std::string_view bucket);

  KeyValue(KeyValue&&) noexcept;
  KeyValue& operator=(KeyValue&&) noexcept;
  KeyValue(const KeyValue&) = delete;
  KeyValue& operator=(const KeyValue&) = delete;
  ~KeyValue();

  const std::string& bucket() const;

  Result<KvEntry> get(std::string_view key);
  Result<uint64_t> put(std::string_view key, std::string_view value);
  Result<uint64_t> create(std::string_view key, std::string_view value);
  Result<uint64_t> update(std::string_view key, std::string_view value, uint64_t expectedRevision);
  // A renewal whose answer may have been lost: an update that timed out can still land (a
  // stalled broker applies it after the client gave up), and the next renewal at the old
  // revision then fails `wrong-last-sequence` against the writer's own value. On that refusal
  // this reads the key: a latest value byte-equal to `value` is that landed write, and its
  // revision is returned; anything else is the refusal. Only for values no other writer can
  // produce (they carry an incarnation token), else a stranger's equal value would be adopted.
  Result<uint64_t> updateOwn(std::string_view key, std::string_view value,
                             uint64_t expectedRevision);
  Status remove(std::string_view key, std::optional<uint64_t> expectedRevision = std::nullopt);
  Status purge(std::string_view key);
  // Keys whose latest entry is a value (not a delete / purge marker). Empty bucket: empty.
  Result<std::vector<std::string>> keys();

  // `keyPattern` may use NATS wildcards ("presence.*", ">"); ">" watches the whole bucket.
  Result<KvWatcher> watch(std::string_view keyPattern, const KvWatchOptions& options = {});
  Result<KvWatcher> watchAll(const KvWatchOptions& options = {});

  struct Impl;

 private:
  explicit KeyValue(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class KvWatcher {
 public:
  KvWatcher(KvWatcher&&) noexcept;
  KvWatcher& operator=(KvWatcher&&) noexcept;
  KvWatcher(const KvWatcher&) = delete;
  KvWatcher& operator=(const KvWatcher&) = delete;
  ~KvWatcher();

  // The next entry; nullopt at the initial-values marker or when `timeout` passed. After
  // stop(): kCancelled (`watcher-stopped`).
  Result<std::optional<KvEntry>> next(std::chrono::milliseconds timeout);
  // True once every initial value has been returned ("snapshot complete").
  bool initialValuesDone() const;
  // Ends the watch; a next() blocked on another thread returns kCancelled. Idempotent.
  void stop();

  struct Impl;

 private:
  explicit KvWatcher(std::unique_ptr<Impl> impl);
  friend class KeyValue;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal::transport
