#include "http/sse_decoder.h"

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

}  // namespace shoal::http
