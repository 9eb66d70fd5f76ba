// LineReader: bounded newline framing over a ByteSource (seed 004 §1.2).
//
// Reads in chunks of at most `chunkBytes`, accumulates fragments across reads, and applies ONE
// hard cap, `maxLineBytes` (default 32 MiB), to the complete raw line INCLUDING its terminating
// '\n'. Lines come back without the '\n'; nothing else is special ('\r' of a CRLF stays in the
// line, an empty line is an empty string). A chunk boundary, a decoded field size or a
// character count is never the limit, only the raw line length.
//
// The cap is enforced while reading: a read never asks for more than the cap leaves room for,
// so the reader never holds more than `maxLineBytes` bytes of one line, and an endless line is
// refused after at most `maxLineBytes` bytes were read from the source.
//
// Outcomes of next():
//   a line                       the next complete line, newline removed
//   nullopt                      clean end of stream: EOF at a line boundary (sticky)
//   kResourceExhausted           `line-too-long`: the line cannot fit the cap
//   kInvalidArgument             `malformed-frame`: the frame validator refused a complete line
//   kUnavailable                 `unexpected-eof`: EOF with a partial line pending
//   the source's error           e.g. `read-failed` (errno named), `read-cancelled`
// Every error is transport-fatal (reasons.h): the reader is then poisoned and every later call
// returns the same Status without touching the source again. Nothing is truncated or skipped.
//
// Thread safety: one thread at a time (the generation's reader thread).
// Lifetime: owns its source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "runtime/byte_source.h"
#include "runtime/limits.h"

namespace shoal::runtime {

// A frame validator: OK accepts the line; any other Status refuses it (its message is kept in
// the `malformed-frame` error). Called on the reader's thread with the line without '\n'.
using FrameValidator = std::function<Status(std::string_view line)>;

struct LineReaderOptions {
  // The complete raw line, newline included, may be at most this long. Must be >= 1.
  size_t maxLineBytes = kMaxLineBytes;
  // The most bytes asked of the source at once. Must be >= 1.
  size_t chunkBytes = kReadChunkBytes;
  // Optional (empty = accept every line).
  FrameValidator validateFrame{};
  // Names the stream in messages, e.g. "stdout of 'claude' (pid 4242)".
  std::string streamName = "runtime output";
};

class LineReader {
 public:
  explicit LineReader(std::unique_ptr<ByteSource> source, LineReaderOptions options = {});
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, clean end of stream (nullopt), or the fatal error (see the header comment).
  Result<std::optional<std::string>> next();

  // Lines returned so far.
  uint64_t linesRead() const { return linesRead_; }
  // Bytes taken from the source so far.
  uint64_t bytesRead() const { return bytesRead_; }
  // True after clean end of stream or a fatal error.
  bool finished() const { return atEnd_ || !fatal_.isOk(); }
  // The fatal error, or OK.
  const Status& fatal() const { return fatal_; }

 private:
  Status poison(Status error);
  Status lineTooLong(size_t atLeastBytes) const;
  // Reads more bytes after the pending partial line. Returns how many (0 = EOF).
  Result<size_t> fill();

  // Constant after construction.
  const std::unique_ptr<ByteSource> source_;
  const LineReaderOptions options_;

  std::vector<char> buffer_;  // [start_, size) is unconsumed; never more than one line's cap
  size_t start_ = 0;          // first byte of the current line
  size_t scanned_ = 0;        // [start_, scanned_) holds no '\n'
  uint64_t linesRead_ = 0;
  uint64_t bytesRead_ = 0;
  uint64_t lineOffset_ = 0;  // stream offset of the current line's first byte
  bool atEnd_ = false;
  Status fatal_;
};

}  // namespace shoal::runtime
