#include "http/sse_decoder.h"

#include <algorithm>
#include <cstdlib>

namespace shoal::http {

void SseDecoder::feed(std::string_view bytes, std::vector<std::string>& out) {
  for (char c : bytes) {
    if (c == '\n' && lastWasCr_) {  // the LF of a CRLF: the line ended at the CR
      lastWasCr_ = false;
      continue;
    }
    lastWasCr_ = c == '\r';
    if (c == '\r' || c == '\n') {
      std::string text = std::move(line_);
      line_.clear();
      line(text, out);
      continue;
    }
    line_ += c;
  }
}

void SseDecoder::finish(std::vector<std::string>& out) {
  if (!line_.empty()) {
    std::string text = std::move(line_);
    line_.clear();
    line(text, out);
  }
  line("", out);
}

void SseDecoder::line(std::string_view text, std::vector<std::string>& out) {
  if (text.empty()) {
    if (hasData_ && !data_.empty()) out.push_back(std::move(data_));
    data_.clear();
    hasData_ = false;
    return;
  }
  if (text.front() == ':') return;  // a comment
  const size_t colon = text.find(':');
  std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;
  if (hasData_) data_ += '\n';
  data_ += value;
  hasData_ = true;
}

Status ChunkedDecoder::decode(std::string& bytes, std::string& payload) {
  if (ended_) {  // what follows the last chunk (trailers) does not matter
    bytes.clear();
    return Status::ok();
  }
  size_t at = 0;
  while (at < bytes.size()) {
    if (chunkTrailer_) {
      if (bytes.size() - at < 2) break;
      if (bytes.compare(at, 2, "\r\n") != 0) {
        return invalidArgument("event-stream-malformed", "a chunk does not end with CRLF");
      }
      at += 2;
      chunkTrailer_ = false;
      continue;
    }
    if (chunkLeft_ > 0) {
      const size_t take = std::min(chunkLeft_, bytes.size() - at);
      payload.append(bytes, at, take);
      at += take;
      chunkLeft_ -= take;
      if (chunkLeft_ == 0) chunkTrailer_ = true;
      continue;
    }
    const size_t eol = bytes.find("\r\n", at);
    if (eol == std::string::npos) {
      if (bytes.size() - at > 1024) {
        return invalidArgument("event-stream-malformed", "a chunk size line is over 1 KiB");
      }
      break;
    }
    const std::string sizeText = bytes.substr(at, eol - at);
    char* stop = nullptr;
    const unsigned long long size = std::strtoull(sizeText.c_str(), &stop, 16);
    if (stop == sizeText.c_str()) {
      return invalidArgument("event-stream-malformed", "a bad chunk size: " + sizeText);
    }
    at = eol + 2;
    if (size == 0) {
      ended_ = true;  // the last chunk: trailers do not matter
      at = bytes.size();
      break;
    }
    chunkLeft_ = static_cast<size_t>(size);
  }
  bytes.erase(0, at);
  return Status::ok();
}

}  // namespace shoal::http
