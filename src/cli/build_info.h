// What this `shoal` binary was built from (written at build time by cmake/WriteBuildInfo.cmake).
//
// Thread safety: constant data.
#pragma once

#include <string_view>

namespace shoal::cli {

// The source commit (`git rev-parse --short=12`), with `-dirty` when tracked files differed,
// or "unknown" outside a git checkout.
std::string_view buildCommit();

}  // namespace shoal::cli
