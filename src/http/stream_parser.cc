#include "http/stream_parser.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

#include "http/sse_decoder.h"

namespace shoal::http {
namespace {

namespace bhttp = boost::beast::http;
using boost::beast::error_code;
using BeastView = boost::beast::string_view;

constexpr std::uint32_t kMaxHeadBytes = 64 * 1024;
constexpr size_t kBodyStartBytes = 200;

std::string_view view(BeastView s) {
  return {s.data(), s.size()};
}

// The media type of a Content-Type value (parameters dropped), lower-cased.
std::string mediaType(BeastView value) {
  std::string_view v = view(value).substr(0, view(value).find(';'));
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
    v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
    v.remove_suffix(1);
  std::string out(v);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

// Beast calls these as it parses; the body's pieces, whatever the framing, go to the SSE grammar.
class StreamParser::Impl final : public bhttp::basic_parser<false> {
 public:
  Impl() {
    header_limit(kMaxHeadBytes);
    body_limit(boost::none);  // an event stream has no end of its own
    eager(true);              // the body bytes that came with the head are parsed at once
  }

  SseDecoder sse;
  std::vector<std::string>* out = nullptr;  // where feed() and eof() want events
  int status = 0;
  bool eventStream = false;
  bool finished = false;  // the SSE grammar saw the end of the body
  std::string bodyStart;

  void finish() {
    if (finished) return;
    finished = true;
    sse.finish(*out);
  }

 private:
  void on_request_impl(bhttp::verb, BeastView, BeastView, int, error_code&) override {}
  void on_response_impl(int code, BeastView, int, error_code&) override { status = code; }
  void on_field_impl(bhttp::field name, BeastView, BeastView value, error_code&) override {
    if (name == bhttp::field::content_type) eventStream = mediaType(value) == "text/event-stream";
  }
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code&) override {}
  size_t on_body_impl(BeastView body, error_code&) override { return take(body); }
  void on_chunk_header_impl(std::uint64_t, BeastView, error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, BeastView body, error_code&) override {
    return take(body);
  }
  void on_finish_impl(error_code&) override {}

  size_t take(BeastView body) {
    if (bodyStart.size() < kBodyStartBytes)
      bodyStart.append(body.data(), std::min(body.size(), kBodyStartBytes - bodyStart.size()));
    sse.feed(view(body), *out);
    return body.size();
  }
};

namespace {

Status parseFailure(const error_code& ec, bool headDone) {
  if (ec == bhttp::error::header_limit) {
    return failedPrecondition("not-an-event-stream", "the response head is over 64 KiB");
  }
  if (!headDone) {
    return failedPrecondition("not-an-event-stream",
                              "the response head is not HTTP/1.x: " + ec.message());
  }
  return invalidArgument("event-stream-malformed", "bad body framing: " + ec.message());
}

}  // namespace

StreamParser::StreamParser() : impl_(std::make_unique<Impl>()) {}
StreamParser::~StreamParser() = default;

Status StreamParser::feed(std::string& bytes, std::vector<std::string>& out) {
  impl_->out = &out;
  size_t used = 0;
  while (used < bytes.size() && !impl_->is_done()) {
    error_code ec;
    const size_t n = impl_->put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    used += n;
    if (ec == bhttp::error::need_more) break;  // a partial head or chunk header: wait for more
    if (ec) {
      bytes.erase(0, used);
      return parseFailure(ec, impl_->is_header_done());
    }
    if (n == 0) break;
  }
  if (impl_->is_done()) {
    bytes.clear();  // nothing after the body is read
    impl_->finish();
  } else {
    bytes.erase(0, used);
  }
  return Status::ok();
}

Status StreamParser::eof(std::vector<std::string>& out) {
  impl_->out = &out;
  if (!impl_->is_header_done()) {
    return unavailable("event-stream-ended",
                       "the connection closed before the response head was whole");
  }
  if (!impl_->is_done()) {
    error_code ec;
    impl_->put_eof(ec);  // ends a close-delimited body; a sized or chunked one is cut short
    if (ec) return unavailable("event-stream-ended", "the server closed the event stream mid-body");
  }
  impl_->finish();
  return Status::ok();
}

bool StreamParser::headDone() const {
  return impl_->is_header_done();
}
int StreamParser::status() const {
  return impl_->status;
}
bool StreamParser::eventStream() const {
  return impl_->eventStream;
}
bool StreamParser::ended() const {
  return impl_->is_done();
}
const std::string& StreamParser::bodyStart() const {
  return impl_->bodyStart;
}
size_t StreamParser::pendingBytes() const {
  return impl_->sse.pendingBytes();
}

}  // namespace shoal::http
