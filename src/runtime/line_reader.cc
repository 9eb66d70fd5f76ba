#include "runtime/line_reader.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <utility>

#include "base/assert.h"
#include "runtime/reasons.h"

namespace shoal::runtime {

LineReader::LineReader(std::unique_ptr<ByteSource> source, LineReaderOptions options)
    : source_(std::move(source)), options_(std::move(options)) {
  SHOAL_CHECK(source_ != nullptr, "LineReader needs a source");
  SHOAL_CHECK(options_.maxLineBytes >= 1 && options_.chunkBytes >= 1,
              "LineReader limits must be >= 1 (maxLineBytes %zu, chunkBytes %zu)",
              options_.maxLineBytes, options_.chunkBytes);
}

Status LineReader::poison(Status error) {
  fatal_ = std::move(error);
  std::vector<char>().swap(buffer_);  // a poisoned reader holds no memory
  start_ = scanned_ = 0;
  return fatal_;
}

Status LineReader::lineTooLong(size_t atLeastBytes) const {
  return resourceExhausted(
      reason::kLineTooLong,
      options_.streamName + ": line " + std::to_string(linesRead_ + 1) + " (at byte offset " +
          std::to_string(lineOffset_) + ") is at least " + std::to_string(atLeastBytes) +
          " bytes including its newline, over the " + std::to_string(options_.maxLineBytes) +
          "-byte line cap; the stream is transport-fatal and was not truncated");
}

Result<size_t> LineReader::fill() {
  // Move the partial line to the front, so the buffer holds only the current line.
  const size_t partial = buffer_.size() - start_;
  if (start_ > 0) {
    if (partial > 0) std::memmove(buffer_.data(), buffer_.data() + start_, partial);
    buffer_.resize(partial);
    scanned_ -= start_;
    start_ = 0;
  }
  // Never ask for more than the cap leaves room for: the current line stays <= the cap.
  const size_t want = std::min(options_.chunkBytes, options_.maxLineBytes - partial);
  const size_t needed = partial + want;
  if (needed > buffer_.capacity()) {
    // Grow geometrically, but never past one line's cap.
    buffer_.reserve(std::min(options_.maxLineBytes, std::max(needed, 2 * buffer_.capacity())));
  }
  buffer_.resize(needed);
  auto got = source_->read(std::span<char>(buffer_.data() + partial, want));
  if (!got.isOk()) {
    buffer_.resize(partial);
    return got.status();
  }
  if (*got > want) {
    buffer_.resize(partial);
    return internalError(reason::kReadFailed, options_.streamName + ": the byte source returned " +
                                                  std::to_string(*got) + " bytes for a " +
                                                  std::to_string(want) + "-byte buffer");
  }
  buffer_.resize(partial + *got);
  bytesRead_ += *got;
  return *got;
}

Result<std::optional<std::string>> LineReader::next() {
  if (!fatal_.isOk()) return fatal_;
  if (atEnd_) return std::optional<std::string>();
  for (;;) {
    // A complete line already buffered?
    const size_t size = buffer_.size();
    if (scanned_ < size) {
      const char* base = buffer_.data();
      const void* nl = std::memchr(base + scanned_, '\n', size - scanned_);
      if (nl != nullptr) {
        const size_t end = static_cast<size_t>(static_cast<const char*>(nl) - base);
        const size_t rawLen = end + 1 - start_;
        if (rawLen > options_.maxLineBytes) return poison(lineTooLong(rawLen));
        std::string line(base + start_, end - start_);
        start_ = scanned_ = end + 1;
        if (options_.validateFrame) {
          Status valid = options_.validateFrame(line);
          if (!valid.isOk()) {
            return poison(invalidArgument(
                reason::kMalformedFrame,
                options_.streamName + ": line " + std::to_string(linesRead_ + 1) + " (" +
                    std::to_string(rawLen) + " bytes) is not a valid frame: " +
                    std::string(valid.message().empty() ? valid.reason() : valid.message()) +
                    "; the stream is transport-fatal"));
          }
        }
        lineOffset_ += rawLen;
        ++linesRead_;
        return std::optional<std::string>(std::move(line));
      }
      scanned_ = size;
    }
    // No newline in the partial line. If it already fills the cap, its newline cannot fit.
    const size_t partial = size - start_;
    if (partial >= options_.maxLineBytes) return poison(lineTooLong(partial + 1));
    auto got = fill();
    if (!got.isOk()) return poison(got.status());
    if (*got == 0) {
      if (partial > 0) {
        return poison(unavailable(
            reason::kUnexpectedEof,
            options_.streamName + ": end of stream in the middle of line " +
                std::to_string(linesRead_ + 1) + " (" + std::to_string(partial) +
                " bytes without a terminating newline); the writer died or closed mid-frame"));
      }
      atEnd_ = true;
      std::vector<char>().swap(buffer_);
      start_ = scanned_ = 0;
      return std::optional<std::string>();
    }
  }
}

}  // namespace shoal::runtime
