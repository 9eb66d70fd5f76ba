// A person reads and answers their own mail (issue 17 item 5): what peers send to
// `local.<login>` is in `shoal inbox` — stored before the first look included, bodies
// neutralised, unread marked until read — `read` shows one whole, `reply` answers with
// `replyTo` set and the right routing (a DM back to its sender, a post on its channel),
// `history --dm` shows both directions, and `inbox --follow` shows what arrives.
#include <boost/json.hpp>

#include "cli_fixture.h"
#include "mesh/operator_identity.h"

namespace shoal {
namespace {

namespace json = boost::json;

class CliInboxTest : public CliTest {
 protected:
  // bob joins, runs `lines`, and leaves.
  void bobSays(const std::string& lines) {
    CliRun bob = shoalWithInput({"join", "--name", "bob"}, lines + "/quit\n");
    ASSERT_EQ(bob.code, 0) << bob.out << bob.err;
  }
  json::value jsonOf(std::vector<std::string> args) {
    args.push_back("--json");
    CliRun run = shoal(args);
    EXPECT_EQ(run.code, 0) << run.out << run.err;
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    EXPECT_FALSE(ec) << run.out;
    return v;
  }
};

TEST_F(CliInboxTest, APersonReadsAndAnswersTheirOwnMail) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  const std::string me = mesh::localOperator().principal.dotForm();
  // Sent before this person ever looked: a DM with a terminal escape sequence in it.
  ASSERT_NO_FATAL_FAILURE(bobSays("/dm " + me + " hello \x1b[31mred\x1b[0m from bob\n"));

  json::value inbox = jsonOf({"inbox"});
  ASSERT_EQ(inbox.at("messages").as_array().size(), 1u) << json::serialize(inbox);
  const json::object first = inbox.at("messages").at(0).as_object();
  EXPECT_EQ(first.at("from").at("id").as_string(), "local.bob");
  EXPECT_TRUE(first.at("unread").as_bool());
  EXPECT_EQ(inbox.at("unread").as_int64(), 1);
  const std::string id(first.at("id").as_string());
  CliRun human = shoal({"inbox"});
  EXPECT_EQ(human.out.find('\x1b'), std::string::npos) << "a raw escape reached the terminal";
  EXPECT_NE(human.out.find("\\x1B[31mred"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("● "), std::string::npos) << human.out;

  // `read` by the short id the listing shows: the whole message, then it is read.
  const std::string shortId = id.substr(id.size() - 8);
  CliRun read = shoal({"read", shortId});
  ASSERT_EQ(read.code, 0) << read.err;
  EXPECT_NE(read.out.find("from:     bob (local.bob)"), std::string::npos) << read.out;
  EXPECT_NE(read.out.find("id:       " + id), std::string::npos) << read.out;
  EXPECT_EQ(jsonOf({"inbox"}).at("unread").as_int64(), 0);

  // `reply` to a DM goes back to its sender with replyTo set.
  json::value replied = jsonOf({"reply", shortId, "hi bob"});
  EXPECT_EQ(replied.at("to").as_string(), "local.bob");
  EXPECT_EQ(replied.at("replyTo").as_string(), id);
  EXPECT_EQ(replied.at("stream").as_string(), "DM_itest");
  json::value conversation = jsonOf({"history", "--dm", "local.bob"});
  const json::array& both = conversation.at("messages").as_array();
  ASSERT_EQ(both.size(), 2u) << json::serialize(conversation);
  EXPECT_EQ(both.at(0).at("from").at("id").as_string(), "local.bob");
  EXPECT_EQ(both.at(1).at("from").at("id").as_string(), me);
  EXPECT_EQ(both.at(1).at("replyTo").as_string(), id);

  // `reply` to a channel post posts on that channel.
  ASSERT_NO_FATAL_FAILURE(bobSays("/msg team.inbox a post to answer\n"));
  CliRun history = shoal({"history", "team.inbox", "--json"});
  ASSERT_EQ(history.code, 0);
  const std::string postId(json::parse(history.out).at("posts").at(0).at("id").as_string());
  json::value onChannel = jsonOf({"reply", postId, "answered on the channel"});
  EXPECT_EQ(onChannel.at("to").as_string(), "#team.inbox");
  EXPECT_EQ(onChannel.at("stream").as_string(), "CHAT_itest");
  json::value answer = jsonOf({"read", std::string(onChannel.at("id").as_string())});
  EXPECT_EQ(answer.at("message").at("kind").as_string(), "channel");
  EXPECT_EQ(answer.at("message").at("replyTo").as_string(), postId);

  // An unknown id is refused by name.
  CliRun unknown = shoal({"read", "zzzzzzzz", "--json"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_EQ(json::parse(unknown.out).at("error").at("reason").as_string(), "unknown-message");

  // --follow shows what arrives after the listing, once.
  Background* follow = spawnShoal({"inbox", "--follow", "--json"});
  ASSERT_NE(follow, nullptr);
  ASSERT_TRUE(outputShows(*follow, "\"messages\"")) << follow->output();
  ASSERT_NO_FATAL_FAILURE(bobSays("/dm " + me + " arrived while following\n"));
  ASSERT_TRUE(outputShows(*follow, "arrived while following")) << follow->output();
  const std::string out = follow->output();
  EXPECT_NE(out.find("\"event\":\"message\""), std::string::npos) << out;
  EXPECT_EQ(out.find("arrived while following"), out.rfind("arrived while following")) << out;
}

}  // namespace
}  // namespace shoal
