#include "mcp/schema_check.h"

#include <array>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace shoal::mcp {
namespace json = boost::json;
namespace {

constexpr std::array<std::string_view, 7> kIdentityKeys = {
    "from", "sender", "seat", "as", "identity", "principal", "on_behalf_of"};

constexpr std::array<std::string_view, 6> kPropertyTypes = {"string",  "integer", "number",
                                                            "boolean", "object",  "array"};

bool contains(std::span<const std::string_view> set, std::string_view key) {
  for (std::string_view s : set) {
    if (s == key) return true;
  }
  return false;
}

Status unsupported(const std::string& message) {
  return invalidArgument("unsupported-schema", message);
}

// Checks one property's schema against the subset.
Status checkPropertySchema(std::string_view name, const json::value& v) {
  if (!v.is_object()) {
    return unsupported(fmt::format("property `{}`: schema is not an object", name));
  }
  const json::object& p = v.as_object();
  const json::value* type = p.if_contains("type");
  if (type == nullptr || !type->is_string() || !contains(kPropertyTypes, type->as_string())) {
    return unsupported(fmt::format(
        "property `{}`: \"type\" must be one of string, integer, number, boolean, object, array",
        name));
  }
  std::string_view t = type->as_string();
  for (const auto& kv : p) {
    std::string_view k = kv.key();
    if (k == "type" || k == "title" || k == "description" || k == "default" || k == "examples") {
      continue;
    }
    if (k == "enum" && t == "string") {
      const json::value& e = kv.value();
      bool ok = e.is_array() && !e.as_array().empty();
      if (ok) {
        for (const json::value& item : e.as_array()) {
          ok = ok && item.is_string();
        }
      }
      if (!ok) {
        return unsupported(
            fmt::format("property `{}`: \"enum\" must be a non-empty array of strings", name));
      }
      continue;
    }
    if (k == "items" && t == "array") {
      const json::value& items = kv.value();
      const json::value* itemType =
          items.is_object() ? items.as_object().if_contains("type") : nullptr;
      bool ok = itemType != nullptr && itemType->is_string() && itemType->as_string() == "string";
      if (ok) {
        for (const auto& ikv : items.as_object()) {
          ok = ok && (ikv.key() == "type" || ikv.key() == "description" || ikv.key() == "title");
        }
      }
      if (!ok) {
        return unsupported(
            fmt::format("property `{}`: only arrays of strings are supported "
                        "(\"items\":{{\"type\":\"string\"}})",
                        name));
      }
      continue;
    }
    return unsupported(fmt::format(
        "property `{}`: keyword \"{}\" is not checked by Shoal's argument checker; drop it or "
        "check it in the tool",
        name, k));
  }
  if (t == "array" && !p.contains("items")) {
    return unsupported(fmt::format(
        "property `{}`: an array needs \"items\":{{\"type\":\"string\"}} (arrays of strings only)",
        name));
  }
  return Status::ok();
}

std::string kindName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
      return "integer";
    case json::kind::double_:
      return "number";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "array";
    case json::kind::object:
      return "object";
  }
  return "unknown";
}

std::string typePhrase(std::string_view type) {
  if (type == "array") return "an array of strings";
  if (type == "integer" || type == "object") return fmt::format("an {}", type);
  return fmt::format("a {}", type);
}

std::string quotedList(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += "`" + n + "`";
  }
  return out;
}

struct Problems {
  std::string reason;  // of the first problem
  std::string message;

  void add(std::string_view why, const std::string& text) {
    if (reason.empty()) reason = std::string(why);
    if (!message.empty()) message += "; ";
    message += text;
  }
};

// Checks one value against its property schema; may rewrite an integral double to int64.
void checkValue(const std::string& name, const json::object& prop, json::value& value,
                Problems& problems) {
  std::string_view type = prop.at("type").as_string();
  bool ok = false;
  if (type == "string") {
    ok = value.is_string();
  } else if (type == "integer") {
    if (value.is_int64() || value.is_uint64()) {
      ok = true;
    } else if (value.is_double()) {
      double d = value.as_double();
      // 2^63 is exactly representable; every integral double below it fits int64.
      if (std::isfinite(d) && std::trunc(d) == d && d >= -9223372036854775808.0 &&
          d < 9223372036854775808.0) {
        value = static_cast<int64_t>(d);
        ok = true;
      }
    }
  } else if (type == "number") {
    ok = value.is_number();
  } else if (type == "boolean") {
    ok = value.is_bool();
  } else if (type == "object") {
    ok = value.is_object();
  } else if (type == "array") {
    if (value.is_array()) {
      const json::array& a = value.as_array();
      for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_string()) {
          problems.add("wrong-type",
                       fmt::format("argument `{}` must be an array of strings, got {} at index {}",
                                   name, kindName(a[i]), i));
          return;
        }
      }
      ok = true;
    }
  }
  if (!ok) {
    std::string got = kindName(value);
    if (type == "integer" && value.is_double()) got = "a non-integral number";
    problems.add("wrong-type",
                 fmt::format("argument `{}` must be {}, got {}", name, typePhrase(type), got));
    return;
  }
  if (const json::value* e = prop.if_contains("enum")) {
    for (const json::value& allowed : e->as_array()) {
      if (allowed == value) return;
    }
    std::vector<std::string> names;
    for (const json::value& allowed : e->as_array()) {
      names.emplace_back(allowed.as_string());
    }
    problems.add("not-in-enum",
                 fmt::format("argument `{}` must be one of {}, got `{}`", name, quotedList(names),
                             std::string_view(value.as_string())));
  }
}

}  // namespace

bool isIdentityKey(std::string_view key) {
  return contains(kIdentityKeys, key);
}

Result<json::object> normalizeInputSchema(json::object schema) {
  for (const auto& kv : schema) {
    std::string_view k = kv.key();
    if (k != "type" && k != "properties" && k != "required" && k != "additionalProperties" &&
        k != "$schema" && k != "title" && k != "description") {
      return unsupported(fmt::format(
          "top-level keyword \"{}\" is not supported (allowed: type, properties, required, "
          "additionalProperties, $schema, title, description)",
          k));
    }
  }
  if (const json::value* t = schema.if_contains("type")) {
    if (!t->is_string() || t->as_string() != "object") {
      return unsupported("\"type\" must be \"object\"");
    }
  } else {
    schema["type"] = "object";
  }
  if (const json::value* a = schema.if_contains("additionalProperties")) {
    if (!a->is_bool() || a->as_bool()) {
      return unsupported(
          "\"additionalProperties\" must be false: tool arguments are always closed");
    }
  } else {
    schema["additionalProperties"] = false;
  }
  if (!schema.contains("properties")) schema["properties"] = json::object();
  const json::value& props = schema.at("properties");
  if (!props.is_object()) return unsupported("\"properties\" must be an object");
  for (const auto& kv : props.as_object()) {
    if (isIdentityKey(kv.key())) {
      return unsupported(
          fmt::format("property `{}` names an identity; identity comes from the seat, never "
                      "from an argument",
                      std::string_view(kv.key())));
    }
    SHOAL_RETURN_IF_ERROR(checkPropertySchema(kv.key(), kv.value()));
  }
  if (const json::value* r = schema.if_contains("required")) {
    if (!r->is_array()) return unsupported("\"required\" must be an array of property names");
    for (const json::value& name : r->as_array()) {
      if (!name.is_string() || !props.as_object().contains(name.as_string())) {
        return unsupported(
            fmt::format("\"required\" entry {} is not a declared property", json::serialize(name)));
      }
    }
  }
  return schema;
}

Result<json::object> checkArguments(const json::object& schema, const json::object& args) {
  const json::object& props = schema.at("properties").as_object();
  std::vector<std::string> allowed;
  for (const auto& kv : props) {
    allowed.emplace_back(kv.key());
  }

  Problems problems;
  json::object out = args;
  for (auto& kv : out) {
    std::string key(kv.key());
    if (isIdentityKey(key)) {
      problems.add("identity-argument",
                   fmt::format("identity comes from the seat; `{}` is not an argument", key));
    } else if (!props.contains(key)) {
      problems.add("unknown-argument",
                   allowed.empty()
                       ? fmt::format("unknown argument `{}`; this tool takes no arguments", key)
                       : fmt::format("unknown argument `{}`; allowed arguments: {}", key,
                                     quotedList(allowed)));
    }
  }
  if (const json::value* r = schema.if_contains("required")) {
    for (const json::value& name : r->as_array()) {
      if (!args.contains(name.as_string())) {
        std::string_view type = props.at(name.as_string()).as_object().at("type").as_string();
        problems.add("missing-argument", fmt::format("missing required argument `{}` ({})",
                                                     std::string_view(name.as_string()), type));
      }
    }
  }
  for (auto& kv : out) {
    const json::value* prop = props.if_contains(kv.key());
    if (prop != nullptr) checkValue(std::string(kv.key()), prop->as_object(), kv.value(), problems);
  }
  if (!problems.message.empty()) return invalidArgument(problems.reason, problems.message);
  return out;
}

}  // namespace shoal::mcp
