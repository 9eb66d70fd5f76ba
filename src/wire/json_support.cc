#include "wire/json_support.h"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <utility>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_stack.hpp>

#include "wire/reasons.h"

namespace shoal::wire::internal {

namespace {

// NOLINTBEGIN(readability-identifier-naming): the handler interface names are Boost's.
// boost::json's own DOM-building handler, except that floating-point literals are re-read with
// std::from_chars from their exact text.
struct ExactHandler {
  static constexpr size_t max_object_size = json::object::max_size();
  static constexpr size_t max_array_size = json::array::max_size();
  static constexpr size_t max_key_size = json::string::max_size();
  static constexpr size_t max_string_size = json::string::max_size();

  json::value_stack st;
  std::string numberText;  // pieces of a number split across input buffers

  ExactHandler() = default;

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return true; }
  bool on_object_end(size_t n, json::error_code&) {
    st.push_object(n);
    return true;
  }
  bool on_array_begin(json::error_code&) { return true; }
  bool on_array_end(size_t n, json::error_code&) {
    st.push_array(n);
    return true;
  }
  bool on_key_part(json::string_view s, size_t, json::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, size_t, json::error_code&) {
    st.push_key(s);
    return true;
  }
  bool on_string_part(json::string_view s, size_t, json::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, size_t, json::error_code&) {
    st.push_string(s);
    return true;
  }
  bool on_number_part(json::string_view s, json::error_code&) {
    numberText.append(s.data(), s.size());
    return true;
  }
  bool on_int64(int64_t i, json::string_view, json::error_code&) {
    numberText.clear();
    st.push_int64(i);
    return true;
  }
  bool on_uint64(uint64_t u, json::string_view, json::error_code&) {
    numberText.clear();
    st.push_uint64(u);
    return true;
  }
  bool on_double(double d, json::string_view s, json::error_code&) {
    std::string_view text(s.data(), s.size());
    if (!numberText.empty()) {
      numberText.append(s.data(), s.size());
      text = numberText;
    }
    double exact = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), exact);
    // Out of range (overflow to infinity, underflow to zero): keep Boost's value, which is
    // ±inf or ±0 and is refused (or accepted) by the finite-number checks downstream.
    if (ec == std::errc() && ptr == text.data() + text.size()) d = exact;
    numberText.clear();
    st.push_double(d);
    return true;
  }
  bool on_bool(bool b, json::error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(json::error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};
// NOLINTEND(readability-identifier-naming)

json::parse_options strictOptions() {
  json::parse_options opt;
  opt.max_depth = kMaxJsonDepth;
  opt.allow_comments = false;
  opt.allow_trailing_commas = false;
  opt.allow_invalid_utf8 = false;
  return opt;
}

Status malformedJson(std::string_view why) {
  return invalidArgument(reason::kMalformedJson,
                         "payload is not valid UTF-8 JSON: " + std::string(why));
}

// Appends `.key` or `[i]` path segments while unwinding from the first non-finite number.
bool findNonFinite(const json::value& v, std::string& path) {
  switch (v.kind()) {
    case json::kind::double_:
      return !std::isfinite(v.get_double());
    case json::kind::array: {
      const json::array& a = v.get_array();
      for (size_t i = 0; i < a.size(); ++i) {
        if (findNonFinite(a[i], path)) {
          path.insert(0, "[" + std::to_string(i) + "]");
          return true;
        }
      }
      return false;
    }
    case json::kind::object:
      for (const auto& kv : v.get_object()) {
        if (findNonFinite(kv.value(), path)) {
          path.insert(0, "." + std::string(kv.key()));
          return true;
        }
      }
      return false;
    default:
      return false;
  }
}

}  // namespace

Result<json::value> parseJson(std::string_view text, json::storage_ptr sp) {
  json::basic_parser<ExactHandler> parser(strictOptions());
  parser.handler().st.reset(std::move(sp));
  json::error_code ec;
  const size_t n = parser.write_some(false, text.data(), text.size(), ec);
  if (ec) {
    if (ec == json::error::too_deep) {
      return malformedJson("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    return malformedJson(ec.message() + " at byte " + std::to_string(n));
  }
  if (n < text.size()) {
    return malformedJson("extra data after the value at byte " + std::to_string(n));
  }
  if (!parser.done()) return malformedJson("incomplete document");
  return parser.handler().st.release();
}

Result<json::value> parseJsonObject(std::string_view text, json::storage_ptr sp) {
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseJson(text, std::move(sp)));
  if (!v.is_object()) return malformedJson("the document is not a JSON object");
  return v;
}

std::string toJson(const json::value& v) {
  return json::serialize(v);
}
std::string toJson(const json::object& o) {
  return json::serialize(o);
}

std::optional<double> asNumber(const json::value& v) {
  switch (v.kind()) {
    case json::kind::int64:
      return static_cast<double>(v.get_int64());
    case json::kind::uint64:
      return static_cast<double>(v.get_uint64());
    case json::kind::double_:
      return v.get_double();
    default:
      return std::nullopt;
  }
}

json::value numberValue(double d) {
  constexpr double kSafe = static_cast<double>(kMaxSafeInteger);
  if (std::isfinite(d) && d >= -kSafe && d <= kSafe && std::trunc(d) == d) {
    return json::value(static_cast<int64_t>(d));
  }
  return json::value(d);
}

Status checkFinite(const json::value& v, std::string_view path, std::string_view reason) {
  std::string where;
  if (!findNonFinite(v, where)) return Status::ok();
  return invalidArgument(reason, std::string(path) + where +
                                     ": number is out of range (not finite); JSON numbers must "
                                     "be finite");
}

}  // namespace shoal::wire::internal
