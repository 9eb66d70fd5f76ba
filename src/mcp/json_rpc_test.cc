// JSON-RPC framing (mcp/json_rpc.h): what a POST body is read as, and the response shapes.
#include "mcp/json_rpc.h"

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace shoal::mcp::jsonrpc {
namespace {

namespace json = boost::json;

// A request, a notification and a response are told apart by method and id.
TEST(JsonRpcFraming, ClassifiesRequestNotificationAndResponse) {
  auto req = parseBody(R"({"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":1}})");
  ASSERT_FALSE(req.error);
  ASSERT_EQ(req.messages.size(), 1u);
  EXPECT_EQ(req.messages[0].kind, Message::Kind::kRequest);
  EXPECT_EQ(req.messages[0].id, json::value(7));
  EXPECT_EQ(req.messages[0].method, "ping");
  EXPECT_EQ(req.messages[0].params.at("a"), json::value(1));
  EXPECT_FALSE(req.isBatch);

  auto note = parseBody(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_FALSE(note.error);
  EXPECT_EQ(note.messages[0].kind, Message::Kind::kNotification);
  EXPECT_TRUE(note.messages[0].params.empty());

  auto resp = parseBody(R"({"jsonrpc":"2.0","id":"s-1","result":{}})");
  ASSERT_FALSE(resp.error);
  EXPECT_EQ(resp.messages[0].kind, Message::Kind::kResponse);
  EXPECT_EQ(resp.messages[0].id, json::value("s-1"));
}

// Bytes that are not JSON are a parse error (-32700) with a null id.
TEST(JsonRpcFraming, MalformedJsonIsParseError) {
  auto p = parseBody(R"({"jsonrpc":"2.0","id":1,"method":)");
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, kParseError);
  EXPECT_TRUE(p.errorId.is_null());
}

// JSON that is not a JSON-RPC 2.0 message is an invalid request (-32600), keeping a readable id.
TEST(JsonRpcFraming, NonMessagesAreInvalidRequests) {
  for (const char* body :
       {R"(42)", R"("x")", R"({"id":1,"method":"ping"})",
        R"({"jsonrpc":"1.0","id":1,"method":"ping"})",
        R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
        R"({"jsonrpc":"2.0","id":{},"method":"ping"})", R"({"jsonrpc":"2.0","id":1,"method":5})",
        R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})", R"({"jsonrpc":"2.0","id":1})",
        R"({"jsonrpc":"2.0","id":1,"result":{},"error":{}})"}) {
    auto p = parseBody(body);
    ASSERT_TRUE(p.error) << body;
    EXPECT_EQ(p.error->code, kInvalidRequest) << body;
    EXPECT_TRUE(p.messages.empty()) << body;
  }
  auto p = parseBody(R"({"jsonrpc":"2.0","id":9,"method":"ping","params":[]})");
  EXPECT_EQ(p.errorId, json::value(9));
}

// An id whose number overflows (1e999 reads as infinity, 0e400 as NaN) cannot be echoed in
// valid JSON: the message is an invalid request, answered with a null id (found by
// fuzz_json_rpc).
TEST(JsonRpcFraming, AnIdThatCannotBeWrittenBackIsInvalid) {
  for (const char* body : {R"({"jsonrpc":"2.0","id":1e999,"method":"ping"})",
                           R"({"jsonrpc":"2.0","id":-1e999,"method":"ping"})",
                           R"({"jsonrpc":"2.0","id":0e400,"method":"ping"})",
                           R"({"jsonrpc":"2.0","id":1e999,"result":{}})"}) {
    auto p = parseBody(body);
    ASSERT_TRUE(p.error) << body;
    EXPECT_EQ(p.error->code, kInvalidRequest) << body;
    EXPECT_TRUE(p.errorId.is_null()) << body;
  }
  auto fine = parseBody(R"({"jsonrpc":"2.0","id":2.5e3,"method":"ping"})");
  ASSERT_FALSE(fine.error);
  EXPECT_EQ(fine.messages[0].id, json::value(2500.0));
}

// A batch is read element by element; an empty or partly invalid batch is refused whole.
TEST(JsonRpcFraming, BatchIsAllOrNothing) {
  auto ok =
      parseBody(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}])");
  ASSERT_FALSE(ok.error);
  EXPECT_TRUE(ok.isBatch);
  EXPECT_EQ(ok.messages.size(), 2u);

  auto empty = parseBody("[]");
  ASSERT_TRUE(empty.error);
  EXPECT_EQ(empty.error->code, kInvalidRequest);

  auto partly = parseBody(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"id":2}])");
  ASSERT_TRUE(partly.error);
  EXPECT_EQ(partly.error->code, kInvalidRequest);
  EXPECT_TRUE(partly.messages.empty());
  EXPECT_TRUE(partly.errorId.is_null());
}

// Responses carry jsonrpc 2.0, the id, and either the result or {code, message, data?}.
TEST(JsonRpcFraming, ResponseShapes) {
  EXPECT_EQ(json::serialize(resultResponse(3, json::object{{"x", 1}})),
            R"({"jsonrpc":"2.0","id":3,"result":{"x":1}})");
  EXPECT_EQ(json::serialize(errorResponse(nullptr, {kMethodNotFound, "nope", nullptr})),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"nope"}})");
  EXPECT_EQ(json::serialize(errorResponse("a", {kInvalidParams, "bad", json::value(1)})),
            R"({"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad","data":1}})");
}

}  // namespace
}  // namespace shoal::mcp::jsonrpc
