#include "transport/event_sink.h"

#include <algorithm>
#include <random>
#include <utility>

#include "base/log.h"
#include "transport/status_map.h"

namespace shoal::transport::detail {
namespace {

// The sink whose callback runs on this thread right now (disarm from inside a handler).
thread_local const EventSink* tInsideSink = nullptr;

// Every retired sink, newest first, linked through EventSink::nextRetired_. Constant-initialized
// and trivially destructible, so it stays valid (and its sinks reachable) during and after static
// destruction, when a nats.c thread may still call in.
std::atomic<EventSink*> gRetired{nullptr};
std::atomic<uint64_t> gRetiredCount{0};

std::uintptr_t keyOf(const natsSubscription* sub) {
  return reinterpret_cast<std::uintptr_t>(sub);
}

// The text between the first pair of double quotes: the subject in nats-server's
// `Permissions Violation for Subscription to "foo.bar"`.
std::string quotedSubject(std::string_view text) {
  auto open = text.find('"');
  if (open == std::string_view::npos) return "";
  auto close = text.find('"', open + 1);
  if (close == std::string_view::npos) return "";
  return std::string(text.substr(open + 1, close - open - 1));
}

}  // namespace

// One callback's passage through the sink. entered() is false once the sink is disarmed; while
// an entered Visit lives, disarm() waits for it.
class EventSink::Visit {
 public:
  explicit Visit(EventSink& sink) : sink_(sink) {
    MutexLock lock(sink_.mu_);
    entered_ = sink_.armed_;
    if (!entered_) return;
    ++sink_.running_;
    outer_ = tInsideSink;
    tInsideSink = &sink_;
  }
  ~Visit() {
    if (!entered_) return;
    tInsideSink = outer_;
    MutexLock lock(sink_.mu_);
    if (--sink_.running_ == 0) sink_.cv_.notifyAll();
  }
  Visit(const Visit&) = delete;
  Visit& operator=(const Visit&) = delete;

  bool entered() const { return entered_; }

 private:
  EventSink& sink_;
  bool entered_ = false;
  const EventSink* outer_ = nullptr;
};

EventSink::EventSink(ConnectionEventHandler handler, int64_t reconnectWaitMs,
                     int64_t reconnectWaitMaxMs)
    : reconnectWaitMs_(std::max<int64_t>(1, reconnectWaitMs)),
      reconnectWaitMaxMs_(std::max(reconnectWaitMs_, reconnectWaitMaxMs)),
      handler_(std::move(handler)) {}

void EventSink::emit(const ConnectionEvent& event) {
  if (!handler_) return;
  try {
    handler_(event);
  } catch (const std::exception& e) {
    log::error("transport: connection event handler threw: {}", e.what());
  } catch (...) {
    log::error("transport: connection event handler threw a non-exception");
  }
}

void EventSink::onDisconnected(natsConnection*, void* closure) {
  auto* sink = static_cast<EventSink*>(closure);
  Visit visit(*sink);
  if (!visit.entered()) return;
  sink->disconnects_.fetch_add(1, std::memory_order_relaxed);
  sink->emit({ConnectionEventKind::kDisconnected, Status::ok(), ""});
}

void EventSink::onReconnected(natsConnection*, void* closure) {
  auto* sink = static_cast<EventSink*>(closure);
  Visit visit(*sink);
  if (!visit.entered()) return;
  sink->reconnects_.fetch_add(1, std::memory_order_relaxed);
  sink->emit({ConnectionEventKind::kReconnected, Status::ok(), ""});
}

void EventSink::onClosed(natsConnection*, void* closure) {
  auto* sink = static_cast<EventSink*>(closure);
  {
    Visit visit(*sink);
    if (visit.entered()) sink->emit({ConnectionEventKind::kClosed, Status::ok(), ""});
  }
  MutexLock lock(sink->mu_);
  sink->closed_ = true;
  sink->cv_.notifyAll();
}

void EventSink::onAsyncError(natsConnection* nc, natsSubscription* sub, natsStatus err,
                             void* closure) {
  auto* sink = static_cast<EventSink*>(closure);
  Visit visit(*sink);
  if (!visit.entered()) return;  // disarmed: the connection (and maybe `sub`) are gone
  ConnectionEvent event;
  event.kind = ConnectionEventKind::kAsyncError;
  std::string text;
  if (err == NATS_NOT_PERMITTED && nc != nullptr) {
    // Armed, so the Connection has not destroyed `nc` yet (it does so only after disarm()).
    const char* last = nullptr;
    natsConnection_GetLastError(nc, &last);
    if (last != nullptr) text = last;
  }
  // Never natsSubscription_GetSubject(sub): nats.c can hand over a freed subscription.
  event.subject = sink->subjectOf(sub);
  if (err == NATS_NOT_PERMITTED) {
    std::string denied = quotedSubject(text);
    if (!denied.empty()) event.subject = denied;
    event.status =
        permissionDenied("permission-violation",
                         (text.empty() ? std::string("permissions violation") : text) +
                             (event.subject.empty() ? "" : " (subject '" + event.subject + "')"));
    sink->permissionViolations_.fetch_add(1, std::memory_order_relaxed);
  } else {
    std::string what = "asynchronous error";
    if (!event.subject.empty()) {
      what += " on subscription '" + event.subject + "'";
    } else if (sub != nullptr) {
      what +=
          " on a subscription of unknown subject (not made by Shoal's transport, e.g. a KV "
          "watcher's, or already destroyed)";
    }
    event.status = statusFromNats(static_cast<int>(err), 0, what, natsStatus_GetText(err));
  }
  sink->asyncErrors_.fetch_add(1, std::memory_order_relaxed);
  {
    MutexLock lock(sink->mu_);
    sink->lastAsyncError_ = event.status;
  }
  sink->emit(event);
}

int64_t EventSink::reconnectDelay(natsConnection*, int attempts, void* closure) {
  // Reads only the sink's constants, so it is safe (and harmless) armed or not.
  const auto* sink = static_cast<const EventSink*>(closure);
  int64_t delay = sink->reconnectWaitMs_;
  for (int i = 1; i < attempts && delay < sink->reconnectWaitMaxMs_; ++i) {
    delay *= 2;
  }
  delay = std::min(delay, sink->reconnectWaitMaxMs_);
  // ±10 % jitter so that many clients of one broker do not reconnect in lockstep.
  thread_local std::minstd_rand rng(std::random_device{}());
  int64_t span = delay / 10;
  if (span > 0) {
    delay += std::uniform_int_distribution<int64_t>(-span, span)(rng);
  }
  return std::max<int64_t>(delay, 1);
}

void EventSink::rememberSubject(const natsSubscription* sub, std::string subject) {
  if (sub == nullptr) return;
  MutexLock lock(mu_);
  if (!armed_) return;
  subjects_[keyOf(sub)] = std::move(subject);
}

void EventSink::forgetSubject(const natsSubscription* sub) {
  std::string dropped;
  MutexLock lock(mu_);
  auto it = subjects_.find(keyOf(sub));
  if (it == subjects_.end()) return;
  dropped = std::move(it->second);  // freed after the lock is released
  subjects_.erase(it);
}

std::string EventSink::subjectOf(const natsSubscription* sub) const {
  if (sub == nullptr) return "";
  MutexLock lock(mu_);
  auto it = subjects_.find(keyOf(sub));
  return it == subjects_.end() ? std::string() : it->second;
}

ConnectionStats EventSink::stats() const {
  return {disconnects_.load(), reconnects_.load(), asyncErrors_.load(),
          permissionViolations_.load()};
}

Status EventSink::lastAsyncError() const {
  MutexLock lock(mu_);
  return lastAsyncError_;
}

bool EventSink::waitClosed(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  MutexLock lock(mu_);
  while (!closed_) {
    if (!cv_.waitUntil(mu_, deadline)) break;
  }
  return closed_;
}

bool EventSink::disarm(std::chrono::milliseconds limit) {
  ConnectionEventHandler droppedHandler;  // destroyed after the lock is released
  std::unordered_map<std::uintptr_t, std::string> droppedSubjects;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  MutexLock lock(mu_);
  armed_ = false;
  // A handler that disarms its own sink cannot wait for itself.
  const int own = tInsideSink == this ? 1 : 0;
  while (running_ > own) {
    if (!cv_.waitUntil(mu_, deadline)) break;
  }
  const bool drained = running_ <= own;
  if (running_ == 0) {
    droppedHandler = std::move(handler_);
    handler_ = nullptr;
  }
  droppedSubjects.swap(subjects_);
  return drained;
}

bool EventSink::armed() const {
  MutexLock lock(mu_);
  return armed_;
}

void EventSink::retire(std::unique_ptr<EventSink> sink) {
  if (!sink) return;
  EventSink* kept = sink.release();
  kept->nextRetired_ = gRetired.load(std::memory_order_relaxed);
  while (!gRetired.compare_exchange_weak(kept->nextRetired_, kept, std::memory_order_release,
                                         std::memory_order_relaxed)) {
  }
  gRetiredCount.fetch_add(1, std::memory_order_relaxed);
}

uint64_t EventSink::retiredCount() {
  return gRetiredCount.load(std::memory_order_relaxed);
}

}  // namespace shoal::transport::detail
