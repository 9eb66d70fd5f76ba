// The refusal table is the one source of every refusal's remedy: each reason appears once, and
// docs/troubleshooting.md carries each row exactly as the table says it.
#include "cli/refusals.h"

#include <set>
#include <string>

#include "base/file_system.h"

#include <gtest/gtest.h>

namespace shoal::cli {
namespace {

std::string escapedForTable(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

TEST(RefusalsTest, EveryReasonIsListedOnceAndDocumentedRowForRow) {
  auto doc =
      FileSystem::posix().readFile(std::string(SHOAL_SOURCE_DIR) + "/docs/troubleshooting.md");
  ASSERT_TRUE(doc.isOk()) << doc.status().toString();
  std::set<std::string_view> seen;
  for (const Refusal& r : refusals()) {
    EXPECT_TRUE(seen.insert(r.reason).second) << "listed twice: " << r.reason;
    EXPECT_FALSE(r.cause.empty() || r.remedy.empty()) << r.reason;
    const std::string row = "| `" + std::string(r.reason) + "` | " + escapedForTable(r.cause) +
                            " | " + escapedForTable(r.remedy) + " |";
    EXPECT_NE(doc->find(row), std::string::npos)
        << "docs/troubleshooting.md lacks (or differs from) the row\n"
        << row;
    EXPECT_EQ(findRefusal(r.reason), &r);
  }
  EXPECT_EQ(findRefusal("no-such-reason"), nullptr);
}

}  // namespace
}  // namespace shoal::cli
