// The `shoal` command line: parses arguments (CLI11) and dispatches to the modules.
//
// Exit codes: 0 success; 1 the operation failed (a `✗` line says why and what to do);
// 2 bad usage (CLI11's message). Human lines go to stdout (errors to stderr); `--json` output
// goes to stdout only and is the parse contract.
//
// Thread safety: call once, from main().
#pragma once

namespace shoal::cli {

int run(int argc, char** argv);

}  // namespace shoal::cli
