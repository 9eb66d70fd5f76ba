// The refusals a user can meet at the `shoal` command line: each reason token with its cause
// and its remedy, in one table. It is the source of the `remedy` field of every `--json` error
// object, of `shoal help refusals`, and of docs/troubleshooting.md (a test checks that every
// row is documented there).
//
// Thread safety: immutable data.
#pragma once

#include <span>
#include <string_view>

namespace shoal::cli {

struct Refusal {
  std::string_view reason;
  std::string_view cause;
  std::string_view remedy;
};

std::span<const Refusal> refusals();
// nullptr when `reason` is not in the table.
const Refusal* findRefusal(std::string_view reason);

}  // namespace shoal::cli
