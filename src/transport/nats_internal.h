// Private to transport/: the nats.c handles behind the public classes, and small helpers for
// the .cc files. Never included by a public header (no nats.h type leaks out of transport/).
//
// Thread safety: helpers are stateless except nats.c's thread-local last error, which
// natsError() reads on the calling thread right after the failing call.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <nats/nats.h>

#include "base/result.h"
#include "base/status.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/message.h"

namespace shoal::transport {

class JetStream;
class PullConsumer;
class KeyValue;

namespace detail {

class EventSink;  // event_sink.h

// Frees a natsMsg.
struct MsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
using MsgPtr = std::unique_ptr<natsMsg, MsgDeleter>;

// The Status for a failed nats.c call made just now on this thread (reads nats_GetLastError).
Status natsError(natsStatus s, std::string_view operation,
                 jsErrCode js = static_cast<jsErrCode>(0));

// Milliseconds for nats.c timeouts: at least 1 (nats.c refuses 0 for most waits).
int64_t timeoutMs(std::chrono::milliseconds d);

std::string nulTerminated(std::string_view s);

// All headers of `msg`, in nats.c's order.
Headers readHeaders(natsMsg* msg);
// An owned copy of `msg` (does not take ownership of `msg`).
Message toMessage(natsMsg* msg);
// A new natsMsg with the given subject, reply, data and headers.
Result<MsgPtr> makeMsg(std::string_view subject, std::string_view reply, std::string_view data,
                       const Headers& headers);

// The headers a publish with `options` carries: its own, then the msgId and expectations
// (jetstream.cc).
Headers publishHeaders(const PublishOptions& options);

// Shoal's view of a nats.c consumer info (jetstream.cc).
ConsumerInfo toConsumerInfo(const jsConsumerInfo* ci);

// Access to the raw handles of the public classes, for other transport/ .cc files.
struct NatsAccess {
  static natsConnection* connection(const Connection& c);
  // The connection's callback state: never freed, so it may be kept past the Connection.
  static EventSink* sink(const Connection& c);
  static jsCtx* context(const JetStream& js);
  static const Connection& owner(const JetStream& js);
};

}  // namespace detail
}  // namespace shoal::transport
