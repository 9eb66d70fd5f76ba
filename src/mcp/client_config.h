// The MCP client config a seat writes to <cwd>/.shoal/mcp.json (and `$SHOAL_MCP_CONFIG`
// names): which endpoint to reach and the headers to send it.
//
//   {"mcpServers":{"shoal":{"type":"http","url":"http://127.0.0.1:PORT/mcp",
//                           "headers":{"Authorization":"Bearer <token>"}}}}
//
// The server named `shoal` is used, or the only one. Errors: kNotFound `no-mcp-config` (no such
// file); kInvalidArgument `bad-mcp-config` naming what is wrong (not JSON, no server, a stdio or
// non-http server, no url, an https or malformed url, a header that is not a string).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"
#include "base/result.h"
#include "http/client.h"

namespace shoal::mcp {

// The endpoint an MCP client config names.
struct McpEndpoint {
  std::string url;
  std::vector<http::HttpHeader> headers;  // sent with every request (e.g. Authorization)
};

Result<McpEndpoint> parseMcpClientConfig(std::string_view text);
Result<McpEndpoint> readMcpClientConfig(FileSystem& fs, const std::string& path);

}  // namespace shoal::mcp
