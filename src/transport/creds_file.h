// CredsFile: a standard NATS `.creds` file read back — the user JWT, who it names, when it
// expires, and the reply inbox its grants allow (issue 19 item 4).
//
// A connection under a Shoal credential must use the inbox its JWT allows: the agent, plane,
// observer and admin profiles grant subscribe on `_INBOX_<connId>.>` for one connId (grants.h),
// so inboxPrefix is `_INBOX_<connId>`, taken from the first such allow row. A credential without
// one (a foreign or hand-written `.creds`) gives an empty prefix: the connection's default.
//
// The seed is never kept: only the JWT part is parsed. The file must be owner-only
// (`secret-exposed` otherwise): it holds a seed.
//
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/file_system.h"
#include "base/result.h"

namespace shoal::transport {

struct CredsInfo {
  std::string path;
  std::string userKey;      // "U…": the JWT's subject
  std::string name;         // the JWT's name
  std::string issuer;       // the account or signing key that signed it
  int64_t expiresAt = 0;    // Unix seconds; 0: never
  int64_t issuedAt = 0;     // Unix seconds
  std::string inboxPrefix;  // "_INBOX_<connId>", or empty
};

// The JWT between the BEGIN/END NATS USER JWT markers of `text` (kInvalidArgument `bad-creds`
// when there is none), decoded and its signature checked against its issuer.
Result<CredsInfo> parseCreds(std::string_view text);

// The user seed between the BEGIN/END USER NKEY SEED markers of `text` (a secret; `bad-creds`
// when there is none). A renewal keeps the key: the new JWT goes beside the same seed.
Result<std::string> credsSeed(std::string_view text);

// Reads `path` (owner-only) and parses it; errors name the file.
Result<CredsInfo> readCredsFile(FileSystem& fs, const std::string& path);

}  // namespace shoal::transport
