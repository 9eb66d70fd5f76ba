// The state behind a connection's nats.c callbacks (event_sink.h). nats.c 3.4.1 can post an async
// error AFTER the closed callback, handing over a subscription it has already freed: the sink
// names subscriptions from its own registry (never from the pointer), and once disarmed every
// callback is a no-op on a sink that is never freed.
#include "transport/event_sink.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "testing/eventually.h"

#include <gtest/gtest.h>

namespace shoal::transport::detail {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A subscription pointer that must never be dereferenced: it points into the zero page, so any
// use (natsSubscription_GetSubject, a lock) crashes the test.
natsSubscription* untouchable(std::uintptr_t n) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a made-up address is the point.
  return reinterpret_cast<natsSubscription*>(n * 64);
}

// Every event the sink delivered, for the test thread to inspect.
class Recorder {
 public:
  ConnectionEventHandler handler() {
    return [this](const ConnectionEvent& e) {
      std::lock_guard lock(mu_);
      events_.push_back(e);
    };
  }
  std::vector<ConnectionEvent> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<ConnectionEvent> events_;
};

std::unique_ptr<EventSink> makeSink(ConnectionEventHandler handler) {
  return std::make_unique<EventSink>(std::move(handler), 50, 1000);
}

// An async error on a subscription Shoal made names its subject from the registry, without
// touching the subscription.
TEST(EventSinkTest, AsyncErrorNamesTheSubjectFromTheRegistryNotFromTheSubscription) {
  Recorder recorder;
  auto sink = makeSink(recorder.handler());
  sink->rememberSubject(untouchable(1), "demo.>");

  EventSink::onAsyncError(nullptr, untouchable(1), NATS_SLOW_CONSUMER, sink.get());

  auto events = recorder.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ConnectionEventKind::kAsyncError);
  EXPECT_EQ(events[0].subject, "demo.>");
  EXPECT_EQ(events[0].status.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(events[0].status.message().find("demo.>"), std::string_view::npos);
  EXPECT_EQ(sink->stats().asyncErrors, 1u);
  EXPECT_EQ(sink->lastAsyncError().code(), StatusCode::kResourceExhausted);
}

// A subscription the registry does not know (a KV watcher's, inside nats.c, or one already
// forgotten) is reported without a subject.
TEST(EventSinkTest, AsyncErrorOnAnUnknownSubscriptionHasNoSubject) {
  Recorder recorder;
  auto sink = makeSink(recorder.handler());
  sink->rememberSubject(untouchable(1), "gone.soon");
  sink->forgetSubject(untouchable(1));

  EventSink::onAsyncError(nullptr, untouchable(1), NATS_CONNECTION_CLOSED, sink.get());
  EventSink::onAsyncError(nullptr, untouchable(2), NATS_CONNECTION_CLOSED, sink.get());

  auto events = recorder.events();
  ASSERT_EQ(events.size(), 2u);
  for (const auto& e : events) {
    EXPECT_EQ(e.subject, "");
    EXPECT_EQ(e.status.code(), StatusCode::kUnavailable);
    EXPECT_NE(e.status.message().find("unknown subject"), std::string_view::npos)
        << e.status.toString();
  }
}

// The closed callback is not the last one: an async error (with a freed subscription) after it
// and after disarm() reaches neither the handler nor the counters, and the handler's state is
// released at disarm().
TEST(EventSinkTest, CallbacksAfterDisarmAreNoOps) {
  Recorder recorder;
  auto token = std::make_shared<int>(0);
  auto sink = makeSink([token, inner = recorder.handler()](const ConnectionEvent& e) {
    (void)token;
    inner(e);
  });
  sink->rememberSubject(untouchable(1), "demo.>");
  EventSink::onClosed(nullptr, sink.get());
  EXPECT_TRUE(sink->waitClosed(milliseconds(1)));
  ASSERT_EQ(recorder.events().size(), 1u);
  EXPECT_EQ(recorder.events()[0].kind, ConnectionEventKind::kClosed);

  EXPECT_TRUE(sink->disarm(seconds(10)));
  EXPECT_FALSE(sink->armed());
  EXPECT_EQ(token.use_count(), 1) << "the handler (and what it captured) is dropped at disarm";

  EventSink::onAsyncError(nullptr, untouchable(1), NATS_CONNECTION_CLOSED, sink.get());
  EventSink::onAsyncError(nullptr, untouchable(2), NATS_NOT_PERMITTED, sink.get());
  EventSink::onDisconnected(nullptr, sink.get());
  EventSink::onReconnected(nullptr, sink.get());
  EventSink::onClosed(nullptr, sink.get());

  EXPECT_EQ(recorder.events().size(), 1u);
  auto stats = sink->stats();
  EXPECT_EQ(stats.asyncErrors, 0u);
  EXPECT_EQ(stats.permissionViolations, 0u);
  EXPECT_EQ(stats.disconnects, 0u);
  EXPECT_EQ(stats.reconnects, 0u);
  EXPECT_TRUE(sink->lastAsyncError().isOk());
  EXPECT_TRUE(sink->disarm(seconds(10))) << "idempotent";
}

// disarm() returns only once a handler already running has returned, so nothing the handler
// uses may be freed under it.
TEST(EventSinkTest, DisarmWaitsForARunningHandler) {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool release = false;
  std::atomic<bool> handlerReturned{false};
  auto sink = makeSink([&](const ConnectionEvent&) {
    std::unique_lock lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    handlerReturned = true;
  });
  std::thread natsThread([&] { EventSink::onDisconnected(nullptr, sink.get()); });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return entered; });
  }
  std::atomic<bool> returnedBeforeHandler{false};
  std::atomic<bool> drained{false};
  std::thread owner([&] {
    drained = sink->disarm(seconds(10));
    returnedBeforeHandler = !handlerReturned.load();
  });
  // disarm() has begun (the sink is disarmed) while the handler is still blocked.
  ASSERT_TRUE(shoal::testing::eventually([&] { return !sink->armed(); }));
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  owner.join();
  natsThread.join();
  EXPECT_TRUE(drained.load());
  EXPECT_FALSE(returnedBeforeHandler.load());
}

// A handler that disarms its own sink (its owner destroyed from inside a callback) does not wait
// for itself.
TEST(EventSinkTest, DisarmFromInsideItsOwnHandlerDoesNotWaitForItself) {
  EventSink* self = nullptr;
  bool drained = false;
  auto sink = makeSink([&](const ConnectionEvent&) { drained = self->disarm(seconds(10)); });
  self = sink.get();
  std::thread natsThread([&] { EventSink::onDisconnected(nullptr, sink.get()); });
  natsThread.join();
  EXPECT_TRUE(drained);
  EXPECT_FALSE(sink->armed());
}

// A retired sink is kept (never freed), so nats.c may still call into it, harmlessly.
TEST(EventSinkTest, ARetiredSinkIsKeptAndStaysSafeToCall) {
  Recorder recorder;
  auto sink = makeSink(recorder.handler());
  EventSink::onClosed(nullptr, sink.get());
  ASSERT_TRUE(sink->disarm(seconds(10)));
  EventSink* kept = sink.get();
  const uint64_t before = EventSink::retiredCount();
  EventSink::retire(std::move(sink));
  EXPECT_EQ(EventSink::retiredCount(), before + 1);

  EventSink::onAsyncError(nullptr, untouchable(3), NATS_CONNECTION_CLOSED, kept);
  EXPECT_EQ(recorder.events().size(), 1u);  // only the closed event
  EXPECT_EQ(kept->stats().asyncErrors, 0u);
}

}  // namespace
}  // namespace shoal::transport::detail
