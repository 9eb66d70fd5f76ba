// Sample tools for mcp/ tests and tests/mcp_sdk/ (test support only; no production code uses
// them): `echo` {text, loud?} answers with its text (upper-cased when loud) and a `_meta`,
// `fail` always answers isError, `boom` throws.
//
// Thread safety: the tools keep no state; call from any thread.
#pragma once

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "mcp/tool.h"

namespace shoal::mcp {

inline std::vector<ToolSpec> sampleToolsForTest() {
  namespace json = boost::json;
  std::vector<ToolSpec> tools;
  tools.push_back(ToolSpec{
      "echo", "Echo", "Answers with `text`, upper-cased when `loud` is true.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"text", json::object{{"type", "string"}}},
                                               {"loud", json::object{{"type", "boolean"}}}}},
                   {"required", json::array{"text"}},
                   {"additionalProperties", false}},
      [](const json::object& args) {
        std::string text(args.at("text").as_string());
        if (const json::value* loud = args.if_contains("loud"); loud && loud->as_bool()) {
          std::transform(text.begin(), text.end(), text.begin(),
                         [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        }
        ToolResult r = ToolResult::ok(text);
        r.meta["shoal.test/length"] = text.size();
        return r;
      }});
  tools.push_back(ToolSpec{
      "fail", "Fail", "Always fails, as a tool error the model sees.",
      json::object{{"type", "object"}, {"additionalProperties", false}},
      [](const json::object&) { return ToolResult::error("fail: this tool always fails"); }});
  tools.push_back(
      ToolSpec{"boom", "Boom", "Always throws.",
               json::object{{"type", "object"}, {"additionalProperties", false}},
               [](const json::object&) -> ToolResult { throw std::runtime_error("kaboom"); }});
  return tools;
}

}  // namespace shoal::mcp
