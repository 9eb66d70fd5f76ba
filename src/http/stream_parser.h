// StreamParser: the response to a text/event-stream GET, read by Beast's HTTP/1.1 response
// parser — the status line, the fields, and a chunked, sized or close-delimited body — with the
// body's bytes fed to the SSE grammar (sse_decoder.h) as they arrive. EventStream
// (event_stream.h) reads the socket and feeds it. No I/O: bytes in, events out.
//
// Errors (the parser is then unusable): kFailedPrecondition `not-an-event-stream` for a head
// over 64 KiB or one that is not HTTP/1.x; kInvalidArgument `event-stream-malformed` for bad
// body framing (a chunk size that is not hex, a chunk not followed by CRLF); from eof(),
// kUnavailable `event-stream-ended` when the connection closed before the head was whole or a
// sized or chunked body ended.
//
// Thread safety: one object per response, used from one thread at a time.
// Lifetime: holds the bytes of the event being read and of a partial head or chunk header.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace shoal::http {

class StreamParser {
 public:
  StreamParser();
  ~StreamParser();
  StreamParser(const StreamParser&) = delete;
  StreamParser& operator=(const StreamParser&) = delete;

  // Consumes what it can of `bytes` (erased from the front: what stays is an incomplete head or
  // chunk header); the data of every event completed goes to the end of `out`. Once the body
  // ended, a last event without its blank line is dispatched too.
  Status feed(std::string& bytes, std::vector<std::string>& out);
  // The connection closed: a close-delimited body ends here (its last event dispatched).
  Status eof(std::vector<std::string>& out);

  bool headDone() const;
  int status() const;                    // the status code, once the head is done
  bool eventStream() const;              // the content type is text/event-stream
  bool ended() const;                    // the body is complete
  const std::string& bodyStart() const;  // the first 200 bytes of the body (for diagnostics)
  size_t pendingBytes() const;           // held for the event being read

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal::http
