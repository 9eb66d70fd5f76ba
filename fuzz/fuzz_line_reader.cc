// fuzz_line_reader: arbitrary bytes as a runtime's output stream through the bounded line
// framing (runtime/line_reader.h, LineReader), read from an in-memory source that hands them
// over in input-chosen fragments, with input-chosen limits, checked against a model of the
// seed's rules.
//
// Input: byte 0 sets the line cap (1..256 bytes, newline included), byte 1 the read chunk
// (1..32), byte 2 the fragment sizes, byte 3 flags (bit 0: the source fails at its end instead
// of reporting EOF; bit 1: a frame validator refuses lines starting with '!'); the rest is the
// stream.
//
// Properties (besides "no crash, no sanitizer report"):
// - the lines and the outcome are exactly the model's: every complete line that fits the cap
//   (newline included) comes back without its newline, in order; then a clean end, or
//   `line-too-long` at the first line that cannot fit, `malformed-frame` at the first refused
//   line, `unexpected-eof` for a partial last line, or the source's own error — nothing is
//   truncated or skipped;
// - the reader never reads more than one cap past the last line it returned;
// - an error is sticky: later calls return the same Status and never touch the source again.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "runtime/line_reader.h"

namespace shoal::runtime {
namespace {

// The stream in fragments of 1..16 bytes (never more than asked), then EOF or an error.
class FragmentSource final : public ByteSource {
 public:
  FragmentSource(std::string_view bytes, uint32_t seed, bool failAtEnd, size_t* reads)
      : bytes_(bytes), sizes_(seed), failAtEnd_(failAtEnd), reads_(reads) {}

  Result<size_t> read(std::span<char> buffer) override {
    FUZZ_REQUIRE(!buffer.empty());
    ++*reads_;
    if (at_ == bytes_.size()) {
      if (failAtEnd_) return unavailable("read-failed", "read(fd 7): Input/output error");
      return size_t{0};
    }
    const size_t n = std::min({sizes_.next(16), buffer.size(), bytes_.size() - at_});
    std::copy_n(bytes_.data() + at_, n, buffer.data());
    at_ += n;
    return n;
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
  fuzz::PieceSizes sizes_;
  bool failAtEnd_;
  size_t* reads_;
};

struct Expected {
  std::vector<std::string> lines;
  std::string_view errorReason;  // empty: a clean end
};

Expected model(std::string_view stream, size_t cap, bool failAtEnd, bool validate) {
  Expected out;
  size_t at = 0;
  for (;;) {
    const size_t nl = stream.find('\n', at);
    if (nl == std::string_view::npos) {
      const size_t partial = stream.size() - at;
      if (partial >= cap) {
        out.errorReason = "line-too-long";
      } else if (failAtEnd) {
        out.errorReason = "read-failed";
      } else if (partial > 0) {
        out.errorReason = "unexpected-eof";
      }
      return out;
    }
    if (nl + 1 - at > cap) {
      out.errorReason = "line-too-long";
      return out;
    }
    std::string_view line = stream.substr(at, nl - at);
    if (validate && !line.empty() && line.front() == '!') {
      out.errorReason = "malformed-frame";
      return out;
    }
    out.lines.emplace_back(line);
    at = nl + 1;
  }
}

void run(const uint8_t* data, size_t size) {
  if (size < 4) return;
  const size_t cap = 1 + size_t{data[0]};
  const size_t chunk = 1 + size_t{data[1] & 31U};
  const bool failAtEnd = (data[3] & 1U) != 0;
  const bool validate = (data[3] & 2U) != 0;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 4, size - 4);

  size_t reads = 0;
  LineReaderOptions options;
  options.maxLineBytes = cap;
  options.chunkBytes = chunk;
  options.streamName = "stdout of 'fuzz' (pid 1)";
  if (validate) {
    options.validateFrame = [](std::string_view line) {
      return !line.empty() && line.front() == '!' ? invalidArgument("bang", "starts with '!'")
                                                  : Status::ok();
    };
  }
  LineReader reader(std::make_unique<FragmentSource>(stream, data[2], failAtEnd, &reads),
                    std::move(options));
  const Expected expected = model(stream, cap, failAtEnd, validate);

  size_t returned = 0;  // bytes of the lines returned, newlines included
  Result<std::optional<std::string>> got = reader.next();
  for (; got.isOk() && got->has_value(); got = reader.next()) {
    FUZZ_REQUIRE(reader.linesRead() <= expected.lines.size());
    FUZZ_REQUIRE(**got == expected.lines[reader.linesRead() - 1]);
    returned += (*got)->size() + 1;
    FUZZ_REQUIRE(reader.bytesRead() >= returned && reader.bytesRead() <= returned + cap);
  }
  FUZZ_REQUIRE(reader.linesRead() == expected.lines.size());
  FUZZ_REQUIRE(reader.finished());
  FUZZ_REQUIRE(reader.bytesRead() <= returned + cap);
  if (expected.errorReason.empty()) {
    FUZZ_REQUIRE(got.isOk() && !got->has_value());
    FUZZ_REQUIRE(reader.fatal().isOk());
  } else {
    FUZZ_REQUIRE(!got.isOk());
    FUZZ_REQUIRE(got.status().reason() == expected.errorReason);
    FUZZ_REQUIRE(!got.status().message().empty());
    FUZZ_REQUIRE(reader.fatal() == got.status());
  }
  // Sticky: the same answer again, without another read.
  const size_t readsAtEnd = reads;
  const Result<std::optional<std::string>> again = reader.next();
  FUZZ_REQUIRE(again.isOk() == got.isOk());
  if (!again.isOk()) FUZZ_REQUIRE(again.status() == got.status());
  if (again.isOk()) FUZZ_REQUIRE(!again->has_value());
  FUZZ_REQUIRE(reads == readsAtEnd);
}

}  // namespace
}  // namespace shoal::runtime

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  shoal::runtime::run(data, size);
  return 0;
}
