// EventStream: one `GET` of a text/event-stream URL held open and read event by event — what
// the OpenCode driver uses for `GET /event` (runtime/opencode/driver.h). The response — head,
// chunked or sized or close-delimited body, SSE grammar — is parsed by http/stream_parser.h
// (Beast's HTTP/1.1 parser under the SSE decoder); this class owns the socket and the waiting.
//
// The stream is plain http on one TCP connection (no TLS, redirects or reconnection: a stream
// that ends is over, and the caller decides what that means — OpenCode's has no replay cursor,
// so a lost stream cannot be resumed). The response must be 200 with a `text/event-stream`
// content type; its body may be chunked, sized or end with the connection.
//
// Errors from open(): kInvalidArgument `bad-url`; kUnavailable `http-connect-failed`;
// kDeadlineExceeded `http-timeout` (no response head in time); kFailedPrecondition
// `not-an-event-stream` (another status or content type; the message carries the status and the
// start of the body). From next(): kUnavailable `event-stream-ended` (the server closed it),
// `event-stream-failed` (a read error); kInvalidArgument `event-stream-malformed` (bad chunk
// framing); kResourceExhausted `event-too-large`; kCancelled `event-stream-closed` (close()).
//
// Thread safety: next() from one thread at a time; close() from any thread, also while next()
// waits (it wakes it).
// Lifetime: owns the socket; the destructor closes it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "http/stream_parser.h"

namespace shoal::http {

struct EventStreamOptions {
  std::chrono::milliseconds connectTimeout{5000};
  std::chrono::milliseconds headTimeout{10000};  // from connected to the response head
  size_t maxEventBytes = size_t{16} * 1024 * 1024;
  // Extra request headers (e.g. Authorization), name and value, no CR or LF.
  std::vector<std::pair<std::string, std::string>> headers;
};

class EventStream {
 public:
  static Result<std::unique_ptr<EventStream>> open(std::string_view url,
                                                   EventStreamOptions options = {});
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // The next event's data, waiting up to `timeout`; nullopt when none came in that time (the
  // stream is still open).
  Result<std::optional<std::string>> next(std::chrono::milliseconds timeout);
  // Ends the stream; a waiting or later next() returns kCancelled. Idempotent.
  void close();

 private:
  EventStream(int fd, EventStreamOptions options, std::unique_ptr<StreamParser> parser,
              std::string bytes, std::vector<std::string> events);

  const int fd_;
  const EventStreamOptions options_;
  std::atomic<bool> closed_{false};
  std::unique_ptr<StreamParser> parser_;  // the response: head, body framing, SSE grammar
  std::string bytes_;                     // received, not yet parsed
  std::vector<std::string> ready_;        // decoded events not handed out yet
  size_t readyAt_ = 0;
};

}  // namespace shoal::http
