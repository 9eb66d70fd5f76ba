// fake_stdin_agent logs every stdin line it reads and can stop reading to fill the pipe.
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "piped_child.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::testing {
namespace {

namespace json = boost::json;

class FakeStdinAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("fake-stdin");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(*dir));
  }

  std::unique_ptr<PipedChild> start(const std::vector<std::string>& extra) {
    std::vector<std::string> argv{FAKE_STDIN_AGENT_BINARY, "--log", dir_->join("lines.log")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return PipedChild::start(argv, dir_->join("stderr.txt"));
  }

  // The logged lines (the "line" fields), in order.
  std::vector<std::string> logged() const {
    std::ifstream in(dir_->join("lines.log"));
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
      out.emplace_back(json::parse(line).at("line").as_string());
    }
    return out;
  }

  std::optional<TempDir> dir_;
};

// Every line is logged, a 1 MiB one and a last one without its line feed included.
TEST_F(FakeStdinAgentTest, LogsEveryLineUntilEof) {
  auto child = start({});
  ASSERT_NE(child, nullptr);
  const std::string big(1 << 20, 'x');
  ASSERT_TRUE(child->write("one\n" + big + "\n\"quoted\"\nlast"));
  child->closeStdin();
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success());
  EXPECT_EQ(logged(), (std::vector<std::string>{"one", big, "\"quoted\"", "last"}));
}

// --exit-after N: exit 0 right after line N.
TEST_F(FakeStdinAgentTest, ExitAfterNLines) {
  auto child = start({"--exit-after", "2"});
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->write("a\nb\n"));
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success());
  EXPECT_EQ(logged(), (std::vector<std::string>{"a", "b"}));
}

// --stop-reading-after N: after N lines the agent stays alive but reads nothing, so the pipe
// fills up.
TEST_F(FakeStdinAgentTest, StopReadingAfterNFillsThePipe) {
  auto child = start({"--stop-reading-after", "1"});
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->write("first\n"));
  ASSERT_TRUE(eventually([&] { return logged().size() == 1; }));
  const size_t limit = size_t{64} << 20;
  size_t written = child->writeUntilFull(std::string(4096, 'y') + "\n", limit);
  EXPECT_LT(written, limit);
  EXPECT_FALSE(child->waitExit(std::chrono::milliseconds(0)));
  EXPECT_EQ(logged(), (std::vector<std::string>{"first"}));
}

}  // namespace
}  // namespace shoal::testing
