#include "runtime/line_reader.h"

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "runtime/byte_source.h"
#include "runtime/reasons.h"

#include <gtest/gtest.h>

namespace shoal::runtime {
namespace {

// What a scripted source saw, kept by the test (the reader owns the source).
struct SourceLog {
  size_t reads = 0;
  size_t bytes = 0;
  size_t largestAsk = 0;
};

// Serves `data` in fragments of at most `fragment` bytes (and at most what the reader asks),
// then EOF — or `endError` instead of EOF.
class ScriptedSource final : public ByteSource {
 public:
  ScriptedSource(std::string data, size_t fragment, SourceLog* log, Status endError = {})
      : data_(std::move(data)), fragment_(fragment), log_(log), endError_(std::move(endError)) {}

  Result<size_t> read(std::span<char> buffer) override {
    ++log_->reads;
    log_->largestAsk = std::max(log_->largestAsk, buffer.size());
    if (pos_ == data_.size()) {
      if (!endError_.isOk()) return endError_;
      return size_t{0};
    }
    size_t n = std::min({buffer.size(), fragment_, data_.size() - pos_});
    std::copy_n(data_.data() + pos_, n, buffer.data());
    pos_ += n;
    log_->bytes += n;
    return n;
  }

 private:
  std::string data_;
  size_t fragment_;
  SourceLog* log_;
  Status endError_;
  size_t pos_ = 0;
};

// An endless line: 'x' forever, never a newline.
class EndlessSource final : public ByteSource {
 public:
  explicit EndlessSource(SourceLog* log) : log_(log) {}
  Result<size_t> read(std::span<char> buffer) override {
    ++log_->reads;
    log_->largestAsk = std::max(log_->largestAsk, buffer.size());
    std::fill(buffer.begin(), buffer.end(), 'x');
    log_->bytes += buffer.size();
    return buffer.size();
  }

 private:
  SourceLog* log_;
};

// Serves a stream in fragments whose sizes a seeded generator picks per read.
class RandomFragmentSource final : public ByteSource {
 public:
  RandomFragmentSource(std::string data, uint32_t seed, size_t maxFragment)
      : data_(std::move(data)), rng_(seed), maxFragment_(maxFragment) {}
  Result<size_t> read(std::span<char> buffer) override {
    if (pos_ == data_.size()) return size_t{0};
    std::uniform_int_distribution<size_t> pick(1, maxFragment_);
    size_t n = std::min({buffer.size(), pick(rng_), data_.size() - pos_});
    std::copy_n(data_.data() + pos_, n, buffer.data());
    pos_ += n;
    return n;
  }

 private:
  std::string data_;
  std::mt19937 rng_;
  size_t maxFragment_;
  size_t pos_ = 0;
};

struct Drained {
  std::vector<std::string> lines;
  Status end;  // OK = clean end of stream
};

Drained drain(LineReader& reader, size_t maxLines = 100000) {
  Drained out;
  for (size_t i = 0; i < maxLines; ++i) {
    auto next = reader.next();
    if (!next.isOk()) {
      out.end = next.status();
      return out;
    }
    if (!next->has_value()) return out;
    out.lines.push_back(std::move(**next));
  }
  ADD_FAILURE() << "reader did not finish";
  return out;
}

LineReaderOptions smallCap(size_t cap, size_t chunk = kReadChunkBytes) {
  LineReaderOptions o;
  o.maxLineBytes = cap;
  o.chunkBytes = chunk;
  o.streamName = "test stream";
  return o;
}

constexpr size_t kCap = 64;

// A line whose raw length (newline included) is exactly the cap is accepted, whatever the
// fragment boundaries and chunk size.
TEST(LineReader, LineExactlyAtTheCapIsAcceptedAcrossEveryFragmentSize) {
  const std::string atCap(kCap - 1, 'a');
  const std::string stream = "first\n" + atCap + "\n" + "\n" + atCap + "\nlast\n";
  for (size_t fragment = 1; fragment <= stream.size(); ++fragment) {
    for (size_t chunk : {size_t{1}, size_t{7}, kCap, kReadChunkBytes}) {
      SourceLog log;
      LineReader reader(std::make_unique<ScriptedSource>(stream, fragment, &log),
                        smallCap(kCap, chunk));
      Drained d = drain(reader);
      ASSERT_TRUE(d.end.isOk()) << "fragment " << fragment << " chunk " << chunk << ": "
                                << d.end.toString();
      EXPECT_EQ(d.lines, (std::vector<std::string>{"first", atCap, "", atCap, "last"}))
          << "fragment " << fragment << " chunk " << chunk;
      EXPECT_LE(log.largestAsk, std::min(chunk, kCap));
      EXPECT_EQ(log.bytes, stream.size());
    }
  }
}

// One byte over the cap (newline included) is line-too-long, for every fragment size; the
// lines before it are delivered, nothing after it is.
TEST(LineReader, LineOneByteOverTheCapIsLineTooLongAcrossEveryFragmentSize) {
  const std::string over(kCap, 'b');  // kCap + 1 bytes with its newline
  const std::string stream = "before\n" + over + "\nafter\n";
  for (size_t fragment = 1; fragment <= stream.size(); ++fragment) {
    for (size_t chunk : {size_t{1}, size_t{5}, kCap, kReadChunkBytes}) {
      SourceLog log;
      LineReader reader(std::make_unique<ScriptedSource>(stream, fragment, &log),
                        smallCap(kCap, chunk));
      Drained d = drain(reader);
      EXPECT_EQ(d.lines, std::vector<std::string>{"before"}) << "fragment " << fragment;
      ASSERT_FALSE(d.end.isOk()) << "fragment " << fragment << " chunk " << chunk;
      EXPECT_EQ(d.end.code(), StatusCode::kResourceExhausted);
      EXPECT_EQ(d.end.reason(), reason::kLineTooLong);
      // Detected while reading: never more than the cap past the start of the bad line.
      EXPECT_LE(log.bytes, std::string("before\n").size() + kCap);
    }
  }
}

// A line without a newline that fills the cap is refused at the cap even at EOF: with its
// newline it could not have fit.
TEST(LineReader, PartialLineFillingTheCapAtEofIsLineTooLong) {
  SourceLog log;
  LineReader reader(std::make_unique<ScriptedSource>(std::string(kCap, 'c'), 3, &log),
                    smallCap(kCap));
  auto next = reader.next();
  ASSERT_FALSE(next.isOk());
  EXPECT_EQ(next.status().reason(), reason::kLineTooLong);
}

// An endless line is refused after at most `cap` bytes were read: the cap is enforced while
// reading, never after buffering an unbounded line.
TEST(LineReader, EndlessLineIsRefusedAfterReadingAtMostTheCap) {
  SourceLog log;
  LineReader reader(std::make_unique<EndlessSource>(&log), smallCap(kCap, 10));
  auto next = reader.next();
  ASSERT_FALSE(next.isOk());
  EXPECT_EQ(next.status().reason(), reason::kLineTooLong);
  EXPECT_EQ(log.bytes, kCap);
  EXPECT_LE(log.largestAsk, size_t{10});

  // The real cap, too: 32 MiB and not a byte more.
  SourceLog big;
  LineReader real(std::make_unique<EndlessSource>(&big));
  auto refused = real.next();
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().reason(), reason::kLineTooLong);
  EXPECT_EQ(big.bytes, kMaxLineBytes);
  EXPECT_EQ(big.largestAsk, kReadChunkBytes);
}

// CRLF is not special: the '\r' belongs to the line.
TEST(LineReader, CarriageReturnIsPartOfTheLine) {
  SourceLog log;
  LineReader reader(std::make_unique<ScriptedSource>("a\r\nb\r\n\r\n\rc\n", 2, &log),
                    smallCap(kCap));
  Drained d = drain(reader);
  ASSERT_TRUE(d.end.isOk()) << d.end.toString();
  EXPECT_EQ(d.lines, (std::vector<std::string>{"a\r", "b\r", "\r", "\rc"}));
}

// Empty lines are lines (a newline alone is a 1-byte line).
TEST(LineReader, EmptyLinesAreReturned) {
  SourceLog log;
  LineReader reader(std::make_unique<ScriptedSource>("\n\n\nx\n\n", 1, &log), smallCap(1 + 1));
  Drained d = drain(reader);
  ASSERT_TRUE(d.end.isOk()) << d.end.toString();
  EXPECT_EQ(d.lines, (std::vector<std::string>{"", "", "", "x", ""}));
}

// EOF at a line boundary is a clean end of stream, reported again on every later call.
TEST(LineReader, CleanEofIsEndOfStreamAndSticky) {
  SourceLog log;
  LineReader reader(std::make_unique<ScriptedSource>("one\n", 100, &log), smallCap(kCap));
  auto first = reader.next();
  ASSERT_TRUE(first.isOk());
  EXPECT_EQ(first->value(), "one");
  for (int i = 0; i < 3; ++i) {
    auto end = reader.next();
    ASSERT_TRUE(end.isOk());
    EXPECT_FALSE(end->has_value());
  }
  EXPECT_TRUE(reader.finished());
  EXPECT_TRUE(reader.fatal().isOk());
  EXPECT_EQ(reader.linesRead(), 1u);

  SourceLog emptyLog;
  LineReader empty(std::make_unique<ScriptedSource>("", 1, &emptyLog), smallCap(kCap));
  auto none = empty.next();
  ASSERT_TRUE(none.isOk());
  EXPECT_FALSE(none->has_value());
}

// EOF with a partial line pending is unexpected-eof, never a short last line.
TEST(LineReader, EofMidLineIsUnexpectedEof) {
  for (size_t fragment = 1; fragment <= 20; ++fragment) {
    SourceLog log;
    LineReader reader(std::make_unique<ScriptedSource>("complete\npartial", fragment, &log),
                      smallCap(kCap));
    Drained d = drain(reader);
    EXPECT_EQ(d.lines, std::vector<std::string>{"complete"});
    ASSERT_FALSE(d.end.isOk());
    EXPECT_EQ(d.end.code(), StatusCode::kUnavailable);
    EXPECT_EQ(d.end.reason(), reason::kUnexpectedEof);
    EXPECT_NE(d.end.message().find("7 bytes"), std::string_view::npos) << d.end.toString();
  }
}

// A read error is fatal: the reader is poisoned, returns the same error forever and never
// reads its source again.
TEST(LineReader, ReadErrorPoisonsTheReader) {
  SourceLog log;
  Status broken = unavailable(reason::kReadFailed, "read(fd 9): Input/output error (EIO)");
  LineReader reader(std::make_unique<ScriptedSource>("ok\npart", 2, &log, broken), smallCap(kCap));
  Drained d = drain(reader);
  EXPECT_EQ(d.lines, std::vector<std::string>{"ok"});
  EXPECT_EQ(d.end, broken);
  const size_t reads = log.reads;
  for (int i = 0; i < 3; ++i) {
    auto again = reader.next();
    ASSERT_FALSE(again.isOk());
    EXPECT_EQ(again.status(), broken);
  }
  EXPECT_EQ(log.reads, reads);
  EXPECT_TRUE(reader.finished());
  EXPECT_EQ(reader.fatal(), broken);
}

// After line-too-long every call returns the same error without reading; a valid line that
// follows in the stream is never returned.
TEST(LineReader, LineTooLongPoisonsTheReader) {
  SourceLog log;
  LineReader reader(std::make_unique<ScriptedSource>(std::string(100, 'z') + "\nfine\n", 8, &log),
                    smallCap(kCap));
  auto first = reader.next();
  ASSERT_FALSE(first.isOk());
  const size_t reads = log.reads;
  for (int i = 0; i < 3; ++i) {
    auto again = reader.next();
    ASSERT_FALSE(again.isOk());
    EXPECT_EQ(again.status(), first.status());
  }
  EXPECT_EQ(log.reads, reads);
}

// The frame validator makes a malformed line transport-fatal (malformed-frame), the same way.
TEST(LineReader, MalformedFrameIsFatal) {
  SourceLog log;
  auto options = smallCap(kCap);
  std::vector<std::string> seen;
  options.validateFrame = [&seen](std::string_view line) {
    seen.emplace_back(line);
    if (line.size() >= 2 && line.front() == '{' && line.back() == '}') return Status::ok();
    return invalidArgument("not-json-object", "not a JSON object");
  };
  LineReader reader(std::make_unique<ScriptedSource>("{}\n{\"a\":1}\nnot json\n{}\n", 3, &log),
                    options);
  Drained d = drain(reader);
  EXPECT_EQ(d.lines, (std::vector<std::string>{"{}", "{\"a\":1}"}));
  ASSERT_FALSE(d.end.isOk());
  EXPECT_EQ(d.end.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d.end.reason(), reason::kMalformedFrame);
  EXPECT_NE(d.end.message().find("not a JSON object"), std::string_view::npos);
  // The validator saw lines without their newline, and nothing after the bad one.
  EXPECT_EQ(seen, (std::vector<std::string>{"{}", "{\"a\":1}", "not json"}));
  EXPECT_EQ(reader.linesRead(), 2u);  // the refused line was not returned
  auto again = reader.next();
  ASSERT_FALSE(again.isOk());
  EXPECT_EQ(again.status(), d.end);
}

// Framing matches a reference splitter on random streams cut into random fragments.
TEST(LineReader, RandomStreamsMatchAReferenceSplitter) {
  std::mt19937 rng(20240521);
  for (int round = 0; round < 400; ++round) {
    const size_t cap = 1 + rng() % 40;
    std::string stream;
    const int nLines = static_cast<int>(rng() % 12);
    for (int i = 0; i < nLines; ++i) {
      size_t len = rng() % (cap + 2);  // sometimes over the cap
      for (size_t k = 0; k < len; ++k) {
        stream.push_back("ab\r{}"[rng() % 5]);
      }
      if (rng() % 8 != 0 || i + 1 < nLines) stream.push_back('\n');
    }
    // Reference.
    std::vector<std::string> want;
    std::string_view wantReason;
    size_t pos = 0;
    for (;;) {
      size_t nl = stream.find('\n', pos);
      if (nl == std::string::npos) {
        size_t partial = stream.size() - pos;
        if (partial >= cap) {
          wantReason = reason::kLineTooLong;
        } else if (partial > 0) {
          wantReason = reason::kUnexpectedEof;
        }
        break;
      }
      if (nl + 1 - pos > cap) {
        wantReason = reason::kLineTooLong;
        break;
      }
      want.push_back(stream.substr(pos, nl - pos));
      pos = nl + 1;
    }
    LineReader reader(std::make_unique<RandomFragmentSource>(stream, rng(), 1 + rng() % 9),
                      smallCap(cap, 1 + rng() % 16));
    Drained d = drain(reader);
    EXPECT_EQ(d.lines, want) << "round " << round;
    EXPECT_EQ(d.end.reason(), wantReason) << "round " << round << ": " << d.end.toString();
  }
}

// FdByteSource: lines written to a pipe come back; the writer closing is a clean end.
TEST(FdByteSource, ReadsLinesFromAPipe) {
  auto pipe = Pipe::create();
  ASSERT_TRUE(pipe.isOk()) << pipe.status().toString();
  const std::string text = "alpha\nbeta\r\n\ngamma\n";
  ASSERT_EQ(::write(pipe->write.get(), text.data(), text.size()),
            static_cast<ssize_t>(text.size()));
  pipe->write.reset();
  auto source = FdByteSource::create(std::move(pipe->read));
  ASSERT_TRUE(source.isOk());
  LineReader reader(std::move(*source), smallCap(kCap, 3));
  Drained d = drain(reader);
  ASSERT_TRUE(d.end.isOk()) << d.end.toString();
  EXPECT_EQ(d.lines, (std::vector<std::string>{"alpha", "beta\r", "", "gamma"}));
}

// A read(2) failure is read-failed and names errno.
TEST(FdByteSource, ReadFailureNamesErrno) {
  UniqueFd dir(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir.valid());
  auto source = FdByteSource::create(std::move(dir));
  ASSERT_TRUE(source.isOk());
  LineReader reader(std::move(*source), smallCap(kCap));
  auto next = reader.next();
  ASSERT_FALSE(next.isOk());
  EXPECT_EQ(next.status().reason(), reason::kReadFailed);
  EXPECT_NE(next.status().message().find("EISDIR"), std::string_view::npos)
      << next.status().toString();
}

// A stop request wakes a reader blocked on a pipe whose writer is still open.
TEST(FdByteSource, StopRequestWakesABlockedRead) {
  auto pipe = Pipe::create();
  ASSERT_TRUE(pipe.isOk());
  std::stop_source stop;
  auto source = FdByteSource::create(std::move(pipe->read), stop.get_token());
  ASSERT_TRUE(source.isOk());
  LineReader reader(std::move(*source), smallCap(kCap));
  ASSERT_EQ(::write(pipe->write.get(), "half", 4), 4);
  Status result;
  std::thread t([&] {
    auto next = reader.next();
    result = next.isOk() ? internalError("unexpected", "a line or EOF") : next.status();
  });
  stop.request_stop();
  t.join();
  EXPECT_EQ(result.code(), StatusCode::kCancelled);
  EXPECT_EQ(result.reason(), reason::kReadCancelled);
}

}  // namespace
}  // namespace shoal::runtime
