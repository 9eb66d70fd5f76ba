// SseDecoder: the Server-Sent Events grammar, fed in pieces, so the caller may read the bytes any
// way it likes. StreamParser (stream_parser.h) feeds it the body of OpenCode's `GET /event` as
// Beast's parser takes the body's framing off; sseEventData (client.h) runs it over a whole body.
// No I/O: bytes in, events out.
//
// Thread safety: one object per stream, used from one thread at a time.
// Lifetime: a value; it holds only the bytes of the event being read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace shoal::http
