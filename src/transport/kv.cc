#include "transport/kv.h"

#include <atomic>

#include "transport/nats_internal.h"

namespace shoal::transport {
namespace {

using detail::natsError;
using detail::timeoutMs;

constexpr int64_t kNanosPerMs = 1'000'000;
constexpr int kMaxHistory = 64;

struct KvStoreDeleter {
  void operator()(kvStore* kv) const { kvStore_Destroy(kv); }
};
struct KvEntryDeleter {
  void operator()(kvEntry* e) const { kvEntry_Destroy(e); }
};
using EntryPtr = std::unique_ptr<kvEntry, KvEntryDeleter>;

KvEntry toEntry(kvEntry* e) {
  KvEntry out;
  if (const char* b = kvEntry_Bucket(e)) out.bucket = b;
  if (const char* k = kvEntry_Key(e)) out.key = k;
  const void* value = kvEntry_Value(e);
  int len = kvEntry_ValueLen(e);
  if (value != nullptr && len > 0)
    out.value.assign(static_cast<const char*>(value), static_cast<size_t>(len));
  out.revision = kvEntry_Revision(e);
  out.createdMs = kvEntry_Created(e) / kNanosPerMs;
  out.delta = kvEntry_Delta(e);
  switch (kvEntry_Operation(e)) {
    case kvOp_Delete:
      out.operation = KvOperation::kDelete;
      break;
    case kvOp_Purge:
      out.operation = KvOperation::kPurge;
      break;
    default:
      out.operation = KvOperation::kPut;
      break;
  }
  return out;
}

}  // namespace

std::string_view kvOperationName(KvOperation op) {
  switch (op) {
    case KvOperation::kPut:
      return "put";
    case KvOperation::kDelete:
      return "delete";
    case KvOperation::kPurge:
      return "purge";
  }
  return "unknown";
}

struct KeyValue::Impl {
  std::unique_ptr<kvStore, KvStoreDeleter> kv;
  jsCtx* js = nullptr;  // not owned (the kvStore holds a reference to it)
  std::string bucket;

  std::string where(std::string_view key) const {
    return "key '" + std::string(key) + "' of bucket '" + bucket + "'";
  }
};

struct KvWatcher::Impl {
  kvWatcher* watcher = nullptr;
  bool updatesOnly = false;
  std::atomic<bool> initialDone{false};
  std::atomic<bool> stopped{false};
  std::string what;
  ~Impl() {
    if (watcher != nullptr) kvWatcher_Destroy(watcher);
  }
};

KeyValue::KeyValue(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KeyValue::KeyValue(KeyValue&&) noexcept = default;
KeyValue& KeyValue::operator=(KeyValue&&) noexcept = default;
KeyValue::~KeyValue() = default;

const std::string& KeyValue::bucket() const {
  return impl_->bucket;
}

Result<KeyValue> KeyValue::createBucket(JetStream& js, const KvConfig& config) {
  if (config.history < 1 || config.history > kMaxHistory) {
    return invalidArgument("bad-history", "KV history must be 1.." + std::to_string(kMaxHistory) +
                                              ", got " + std::to_string(config.history));
  }
  kvConfig c;
  kvConfig_Init(&c);
  c.Bucket = config.bucket.c_str();
  if (!config.description.empty()) c.Description = config.description.c_str();
  c.History = static_cast<uint8_t>(config.history);
  c.TTL = config.ttl.count() * kNanosPerMs;  // nats.c copies TTL into the stream's MaxAge (ns)
  c.MaxBytes = config.maxBytes;
  c.MaxValueSize = config.maxValueSize;
  c.StorageType = config.storage == StorageType::kMemory ? js_MemoryStorage : js_FileStorage;
  c.Replicas = config.replicas;
  auto impl = std::make_unique<Impl>();
  impl->js = detail::NatsAccess::context(js);
  impl->bucket = config.bucket;
  kvStore* kv = nullptr;
  natsStatus s = js_CreateKeyValue(&kv, impl->js, &c);
  if (s != NATS_OK) return natsError(s, "creating KV bucket '" + config.bucket + "'");
  impl->kv.reset(kv);
  return KeyValue(std::move(impl));
}

Result<KeyValue> KeyValue::openBucket(JetStream& js, std::string_view bucket) {
  auto impl = std::make_unique<Impl>();
  impl->js = detail::NatsAccess::context(js);
  impl->bucket = std::string(bucket);
  kvStore* kv = nullptr;
  natsStatus s = js_KeyValue(&kv, impl->js, impl->bucket.c_str());
  if (s != NATS_OK) {
    Status st = natsError(s, "opening KV bucket '" + impl->bucket + "'");
    if (st.code() == StatusCode::kNotFound) {
      return notFound("bucket-not-found", "KV bucket '" + impl->bucket + "' does not exist");
    }
    return st;
  }
  impl->kv.reset(kv);
  return KeyValue(std::move(impl));
}

Status KeyValue::deleteBucket(JetStream& js, std::string_view bucket) {
  std::string b(bucket);
  natsStatus s = js_DeleteKeyValue(detail::NatsAccess::context(js), b.c_str());
  if (s != NATS_OK) return natsError(s, "deleting KV bucket '" + b + "'");
  return Status::ok();
}

Result<KvEntry> KeyValue::get(std::string_view key) {
  std::string k(key);
  kvEntry* raw = nullptr;
  natsStatus s = kvStore_Get(&raw, impl_->kv.get(), k.c_str());
  EntryPtr e(raw);
  if (s != NATS_OK) {
    Status st = natsError(s, "reading " + impl_->where(k));
    if (st.code() == StatusCode::kNotFound) {
      return notFound("key-not-found", impl_->where(k) + " does not exist");
    }
    return st;
  }
  return toEntry(e.get());
}

Result<uint64_t> KeyValue::put(std::string_view key, std::string_view value) {
  std::string k(key);
  uint64_t rev = 0;
  natsStatus s =
      kvStore_Put(&rev, impl_->kv.get(), k.c_str(), value.data(), static_cast<int>(value.size()));
  if (s != NATS_OK) return natsError(s, "writing " + impl_->where(k));
  return rev;
}

Result<uint64_t> KeyValue::create(std::string_view key, std::string_view value) {
  std::string k(key);
  uint64_t rev = 0;
  natsStatus s = kvStore_Create(&rev, impl_->kv.get(), k.c_str(), value.data(),
                                static_cast<int>(value.size()));
  if (s != NATS_OK) {
    Status st = natsError(s, "creating " + impl_->where(k));
    if (st.reason() == "wrong-last-sequence") {
      return alreadyExists("key-exists", impl_->where(k) + " already exists");
    }
    return st;
  }
  return rev;
}

Result<uint64_t> KeyValue::update(std::string_view key, std::string_view value,
                                  uint64_t expectedRevision) {
  std::string k(key);
  uint64_t rev = 0;
  natsStatus s = kvStore_Update(&rev, impl_->kv.get(), k.c_str(), value.data(),
                                static_cast<int>(value.size()), expectedRevision);
  if (s != NATS_OK) {
    return natsError(
        s, "updating " + impl_->where(k) + " at revision " + std::to_string(expectedRevision));
  }
  return rev;
}

Result<uint64_t> KeyValue::updateOwn(std::string_view key, std::string_view value,
                                     uint64_t expectedRevision) {
  auto updated = update(key, value, expectedRevision);
  if (updated.isOk() || updated.status().reason() != "wrong-last-sequence") return updated;
  auto latest = get(key);
  if (latest.isOk() && latest->operation == KvOperation::kPut && latest->value == value &&
      latest->revision > expectedRevision) {
    return latest->revision;
  }
  return updated;
}

Status KeyValue::remove(std::string_view key, std::optional<uint64_t> expectedRevision) {
  std::string k(key);
  if (!expectedRevision) {
    natsStatus s = kvStore_Delete(impl_->kv.get(), k.c_str());
    if (s != NATS_OK) return natsError(s, "deleting " + impl_->where(k));
    return Status::ok();
  }
  // nats.c 3.4 has no conditional delete: publish the delete marker ourselves, with the
  // expected last subject sequence.
  Headers headers = {{"KV-Operation", "DEL"},
                     {"Nats-Expected-Last-Subject-Sequence", std::to_string(*expectedRevision)}};
  SHOAL_ASSIGN_OR_RETURN(auto msg,
                         detail::makeMsg("$KV." + impl_->bucket + "." + k, "", "", headers));
  jsErrCode err = static_cast<jsErrCode>(0);
  natsStatus s = js_PublishMsg(nullptr, impl_->js, msg.get(), nullptr, &err);
  if (s != NATS_OK) {
    return natsError(
        s, "deleting " + impl_->where(k) + " at revision " + std::to_string(*expectedRevision),
        err);
  }
  return Status::ok();
}

Status KeyValue::purge(std::string_view key) {
  std::string k(key);
  natsStatus s = kvStore_Purge(impl_->kv.get(), k.c_str(), nullptr);
  if (s != NATS_OK) return natsError(s, "purging " + impl_->where(k));
  return Status::ok();
}

Result<std::vector<std::string>> KeyValue::keys() {
  kvKeysList list{nullptr, 0};
  natsStatus s = kvStore_Keys(&list, impl_->kv.get(), nullptr);
  std::vector<std::string> out;
  if (s == NATS_NOT_FOUND) return out;  // no keys
  if (s != NATS_OK) return natsError(s, "listing keys of bucket '" + impl_->bucket + "'");
  for (int i = 0; i < list.Count; ++i) {
    if (list.Keys[i] != nullptr) out.emplace_back(list.Keys[i]);
  }
  kvKeysList_Destroy(&list);
  return out;
}

Result<KvWatcher> KeyValue::watch(std::string_view keyPattern, const KvWatchOptions& options) {
  std::string pattern(keyPattern);
  if (pattern.empty()) return invalidArgument("empty-pattern", "a KV watch needs a key pattern");
  kvWatchOptions o;
  kvWatchOptions_Init(&o);
  o.IncludeHistory = options.includeHistory;
  o.IgnoreDeletes = options.ignoreDeletes;
  auto impl = std::make_unique<KvWatcher::Impl>();
  impl->updatesOnly = options.updatesOnly;
  impl->what = "watch of '" + pattern + "' on bucket '" + impl_->bucket + "'";
  natsStatus s = kvStore_Watch(&impl->watcher, impl_->kv.get(), pattern.c_str(), &o);
  if (s != NATS_OK) return natsError(s, "starting " + impl->what);
  return KvWatcher(std::move(impl));
}

Result<KvWatcher> KeyValue::watchAll(const KvWatchOptions& options) {
  return watch(">", options);
}

KvWatcher::KvWatcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvWatcher::KvWatcher(KvWatcher&&) noexcept = default;
KvWatcher& KvWatcher::operator=(KvWatcher&&) noexcept = default;
KvWatcher::~KvWatcher() = default;

bool KvWatcher::initialValuesDone() const {
  return impl_ && impl_->initialDone.load(std::memory_order_acquire);
}

void KvWatcher::stop() {
  if (!impl_) return;
  impl_->stopped.store(true, std::memory_order_release);
  kvWatcher_Stop(impl_->watcher);
}

Result<std::optional<KvEntry>> KvWatcher::next(std::chrono::milliseconds timeout) {
  using SteadyClock = std::chrono::steady_clock;
  const auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    if (impl_->stopped.load(std::memory_order_acquire)) {
      return cancelled("watcher-stopped", impl_->what + " was stopped");
    }
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    kvEntry* raw = nullptr;
    natsStatus s = kvWatcher_Next(&raw, impl_->watcher, timeoutMs(left));
    EntryPtr e(raw);
    if (s == NATS_TIMEOUT) return std::optional<KvEntry>();
    if (s != NATS_OK) {
      if (impl_->stopped.load(std::memory_order_acquire)) {
        return cancelled("watcher-stopped", impl_->what + " was stopped");
      }
      return natsError(s, impl_->what);
    }
    if (!e) {
      // The "initial values done" marker.
      impl_->initialDone.store(true, std::memory_order_release);
      if (!impl_->updatesOnly) return std::optional<KvEntry>();
    } else if (!impl_->updatesOnly || impl_->initialDone.load(std::memory_order_acquire)) {
      return std::optional<KvEntry>(toEntry(e.get()));
    }
    if (SteadyClock::now() >= deadline) return std::optional<KvEntry>();
  }
}

}  // namespace shoal::transport
