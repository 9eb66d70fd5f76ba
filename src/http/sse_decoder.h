// SseDecoder and ChunkedDecoder: the two pure framings under a text/event-stream response — the
// Server-Sent Events grammar (fed in pieces, so the caller may read the socket any way it
// likes), and HTTP/1.1 chunked transfer coding. EventStream (event_stream.h) stacks them for
// OpenCode's `GET /event`; sseEventData (http_client.h) runs the SSE grammar over a whole body.
// No I/O: bytes in, events or payload out.
//
// Thread safety: one object per stream, used from one thread at a time.
// Lifetime: values; they hold only the bytes of the event (or chunk header) being read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace shoal::http {

// The SSE grammar: lines end with CRLF, LF or CR; `data:` lines accumulate (one leading space
// dropped, several joined with "\n"); a blank line dispatches a non-empty data; comments and
// other fields are ignored. The output depends only on the bytes, never on how they were split
// across feed() calls; an event holds no CR or LF but the "\n" that joins its data lines.
class SseDecoder {
 public:
  // Appends the data of every event completed by `bytes` to `out`.
  void feed(std::string_view bytes, std::vector<std::string>& out);
  // The end of the body: a last event without its blank line is dispatched.
  void finish(std::vector<std::string>& out);
  // Bytes held for the event being read (to bound it).
  size_t pendingBytes() const { return line_.size() + data_.size(); }

 private:
  void line(std::string_view text, std::vector<std::string>& out);

  std::string line_;
  std::string data_;
  bool hasData_ = false;
  bool lastWasCr_ = false;
};

// HTTP/1.1 chunked transfer coding, decoded from the front of a buffer the caller keeps
// appending to: each chunk is a size line read as hex by strtoull (what follows the number, an
// extension, is ignored), CRLF, that many payload bytes, CRLF; the size-0 chunk ends the body
// (trailers are not read). Errors (the stream is then unusable): kInvalidArgument
// `event-stream-malformed` for a size line that does not start with a number, a size line over
// 1 KiB without its CRLF, or a chunk not followed by CRLF.
class ChunkedDecoder {
 public:
  // Decodes what it can of `bytes`: payload goes to the end of `payload`, and the bytes used
  // are erased from the front of `bytes` (what stays is an incomplete size line or chunk CRLF;
  // after the last chunk, which ends decoding, nothing). On an error `payload` keeps what was
  // decoded before it and `bytes` is not consumed.
  Status decode(std::string& bytes, std::string& payload);
  // The last chunk was read: the body is complete.
  bool ended() const { return ended_; }

 private:
  size_t chunkLeft_ = 0;       // payload bytes left in the current chunk
  bool chunkTrailer_ = false;  // a chunk's CRLF is due
  bool ended_ = false;
};

}  // namespace shoal::http
