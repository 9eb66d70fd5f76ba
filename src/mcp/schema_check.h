// Tool argument checking: the subset of JSON Schema a Shoal tool's inputSchema may use, and
// the check every `tools/call` passes before the tool runs (mcp/tool.h).
//
// The subset (normalizeInputSchema refuses anything else, naming the keyword):
// - top level: "type":"object", "properties":{…}, "required":[names of properties],
//   "additionalProperties":false, plus the annotations "$schema", "title", "description".
//   Missing "type", "properties" or "additionalProperties" are filled in; the arguments are
//   always closed, so "additionalProperties" may only be false.
// - each property: "type" one of string, integer, number, boolean, object, array; an array must
//   have "items":{"type":"string"} (an array of strings); a string may have "enum":[strings].
//   Annotations "title", "description", "default", "examples" are kept and not checked.
//   No other keyword: a constraint the model is shown must be one the checker enforces.
// - no property may be named like an identity (`from`, `sender`, `seat`, `as`, `identity`,
//   `principal`, `on_behalf_of`): on the mesh, identity comes from the seat the MCP endpoint
//   belongs to, never from an argument.
//
// checkArguments reports every problem at once, joined by "; ", in a message written for the
// model (it becomes an isError tool result):
//   identity key       "identity comes from the seat; `from` is not an argument"
//   undeclared key     "unknown argument `x`; allowed arguments: `text`, `loud`"
//   missing required   "missing required argument `text` (string)"
//   wrong type         "argument `text` must be a string, got integer"
//   not in enum        "argument `mode` must be one of `a`, `b`, got `c`"
// The Status code is kInvalidArgument; its reason is the first problem's kind
// (identity-argument, unknown-argument, missing-argument, wrong-type, not-in-enum).
// JSON null is a value like any other: it is the wrong type for every property.
//
// Thread safety: pure functions; call from any thread.
#pragma once

#include <string_view>

#include <boost/json/object.hpp>

#include "base/result.h"

namespace shoal::mcp {

// True for the argument names that would claim an identity (see above).
bool isIdentityKey(std::string_view key);

// The schema as it will be listed and checked against, or kInvalidArgument (reason
// `unsupported-schema`) naming what is outside the subset.
Result<boost::json::object> normalizeInputSchema(boost::json::object schema);

// Checks `args` against a schema returned by normalizeInputSchema. Returns the arguments the
// tool receives (an integral double for an `integer` property becomes int64), or
// kInvalidArgument with the message above.
Result<boost::json::object> checkArguments(const boost::json::object& schema,
                                           const boost::json::object& args);

}  // namespace shoal::mcp
